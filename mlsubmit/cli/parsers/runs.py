"""The options of `mlsubmit runs` (the command: mlsubmit/cli/commands/runs.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import RUNS_FORMATS
from mlsubmit.core.support.ledger_url import location


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("runs", help="the run ledger that check --ledger keeps")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    show = actions.add_parser("show", help="every run per run set: start order, windows of N, convergence over time")
    show.add_argument("--ledger", type=location, required=True, metavar="FILE|URL",
                      help="the ledger (check --ledger FILE|URL)")
    show.add_argument("--format", choices=RUNS_FORMATS, default="text", help="text (default), json, csv or html")
    show.add_argument("--output", "-o", type=Path, metavar="FILE", help="write here instead of stdout (whole or "
                      "not at all: a failed write leaves FILE as it was)")
    init = actions.add_parser("init", help="make the run ledger's tables in a PostgreSQL database (its owner's "
                              "role; the one command that changes a ledger's schema)")
    init.add_argument("--ledger", type=location, required=True, metavar="URL", help="postgresql://... (an SQLite "
                      "FILE is made by its first check --ledger)")
    freeze = actions.add_parser("freeze", help="freeze a PostgreSQL ledger once its round is submitted: "
                                "read by all, added to by none (its owner's role)")
    freeze.add_argument("--ledger", type=location, required=True, metavar="URL", help="postgresql://...")
    export = actions.add_parser("export", help="copy the ledger into another (FILE or URL, adding only what is "
                                "missing, verified by digests) or archive it as JSON lines")
    export.add_argument("--ledger", type=location, required=True, metavar="FILE|URL", help="the ledger copied")
    dest = export.add_mutually_exclusive_group(required=True)
    dest.add_argument("--to", type=location, metavar="FILE|URL", help="the ledger copied into (a FILE is made "
                      "when missing; a URL's tables by runs init)")
    dest.add_argument("--output", "-o", type=Path, metavar="FILE", help="JSON lines (whole or not at all)")
    load = actions.add_parser("import", help="add a JSON lines archive (runs export -o) to a ledger: only what "
                              "is missing, verified by digests")
    load.add_argument("--ledger", type=location, required=True, metavar="FILE|URL", help="the ledger added to")
    load.add_argument("archive", type=Path, metavar="FILE", help="the archive (checked whole before anything is "
                      "added)")
