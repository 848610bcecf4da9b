"""The options of `mlsubmit package` (the command: mlsubmit/cli/commands/package.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import add_output_options, add_policy_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    # No abbreviated options: `--passphrase SECRET` must be refused, not taken for --passphrase-file.
    parser = sub.add_parser("package", allow_abbrev=False, help="build a submission tree (and archive) from raw runs")
    parser.add_argument("config", type=Path, metavar="CONFIG.toml",
                        help="package configuration (see docs/packaging.md)")
    parser.add_argument("--archive", action="store_true",
                        help="also write out/mlperf_submission_<org>.tar.gz and .sha1 (as pack_submission.sh names "
                        "them) with a .tar.gz.sha256")
    parser.add_argument("--encrypt", action="store_true",
                        help="make that archive the encrypted one, as pack_submission.sh does (needs --archive)")
    parser.add_argument("--passphrase-file", type=Path, metavar="FILE",
                        help="file whose first line is the passphrase (never given on the command line)")
    parser.add_argument("--generate-passphrase", action="store_true",
                        help="write a new long random passphrase to --passphrase-file (mode 0600; never replaces "
                        "a file) and encrypt with it")
    parser.add_argument("--key-derivation", choices=("openssl", "pbkdf2"), default="openssl",
                        help="openssl (default): openssl enc's own, what pack_submission.sh --unpack opens; pbkdf2: "
                        "PBKDF2-SHA256 with 600,000 iterations, opened with the openssl line printed")
    parser.add_argument("--allow-findings", action="store_true",
                        help="finalise the tree even when the check finds errors (exit status is still 1)")
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes for the check")
    parser.add_argument("--waivers", type=Path, metavar="FILE", action="append", default=[],
                        help="TOML file of [[waiver]] tables (paths as the report shows them, relative to the "
                             "config's folder); a waived error does not stop the build, and manifest.json records "
                             "each waiver applied. The nearest mlsubmit.toml above the config applies too")
    parser.add_argument("--no-project-waivers", action="store_true",
                        help="leave out the [[waiver]] tables of mlsubmit.toml")

    add_policy_options(parser)  # the build is checked under the project's policy, as `check` applies it
    add_output_options(parser)
