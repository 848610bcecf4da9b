"""The options of `mlsubmit verify` (the command: mlsubmit/cli/commands/verify.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import add_output_options


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
    parser.add_argument("--unconfined", action="store_true",
                        help="with --official: run the reference tools even where bubblewrap (bwrap) cannot confine "
                        "them (they could then read this user's files and reach the network); said in the output")
    add_output_options(parser)
