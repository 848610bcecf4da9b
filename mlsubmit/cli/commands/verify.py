"""mlsubmit verify ARCHIVE: checksums, decryption, a refusing unpack, the manifest, and the full check."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker import mlperf_logging_version
from mlsubmit.cli.output import add_output_options, emit
from mlsubmit.cli.progress import tracker
from mlsubmit.cli.rulesets import validate_ruleset
from mlsubmit.core.errors import UsageError


def add_parser(sub: argparse._SubParsersAction) -> None:
    # No abbreviated options: `--passphrase SECRET` must be refused, not taken for --passphrase-file.
    parser = sub.add_parser("verify", allow_abbrev=False,
                            help="verify a packaged (and possibly encrypted) submission archive")
    parser.add_argument("archive", type=Path, metavar="ARCHIVE",
                        help="mlperf_submission_<org>.tar.gz (encrypted or not)")
    parser.add_argument("--passphrase-file", type=Path, metavar="FILE",
                        help="file whose first line is the passphrase of an encrypted archive")
    parser.add_argument("--ruleset", metavar="X.Y.Z", help="ruleset to check with (default: the manifest's)")
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes for the check")
    parser.add_argument("more", nargs="*", type=Path, metavar="ARCHIVE",
                        help="with --official: the other uploads <org>_2 ... of a split organisation; each is checked "
                        "alone, then all of them together as <org>")
    parser.add_argument("--official", action="store_true",
                        help="run the results chair's own flow instead: pack_submission.sh --unpack and the round's "
                        "verify script with the installed mlperf-logging, then report --against the chair's summary "
                        "(ARCHIVE may also be an organisation folder or a folder of them)")
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    if args.official:
        # the reference tools' harness only with --official (start-up)
        from mlsubmit.cli.official import run as official

        return official(args)
    if args.more:
        raise UsageError("several ARCHIVEs are for --official (the uploads of one organisation)")
    # jsonschema and SQLite when an archive is verified, not for `verify --help` (start-up)
    from mlsubmit.submission.verify import verify

    ruleset = validate_ruleset(args.ruleset) if args.ruleset else None
    result = verify(args.archive, args.passphrase_file, ruleset, max(0, args.jobs), progress=tracker)
    if result.ruleset and not ruleset:
        validate_ruleset(result.ruleset)
    result.report.meta.update({"command": "verify", "ruleset": result.ruleset or "", "version": __version__,
                               "mlperf_logging": mlperf_logging_version()})
    code = emit(result.report, args)
    verdict = "FAILED" if code else "OK"
    sums = ", ".join(result.checked) or "none"
    print(f"mlsubmit: {args.archive}: {verdict} ({result.files} file(s) unpacked; checksums matched: {sums})",
          file=sys.stderr)
    return code
