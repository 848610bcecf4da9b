#!/usr/bin/env bash
# What the test tiers need beyond the Python packages, on a Debian or Ubuntu machine:
#   bubblewrap  `verify --official` confines mlperf-logging's tools with bwrap, and refuses to run them unconfined
#               unless told to (--unconfined); the tests of that confinement need it.
#   postgresql  the shared ledger's tests start a temporary PostgreSQL server of their own (initdb, pg_ctl).
# Run as root with apt-get, it installs what is missing; otherwise it names what to install and exits 0, and the
# tests that need a missing tool say so when they skip.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "note: not installed: ${missing[*]} (install them with your package manager; the tests that need them skip)"
fi
