"""The options of `mlsubmit runs` (the command: mlsubmit/cli/commands/runs.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import RUNS_FORMATS


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("runs", help="the run ledger that check --ledger keeps")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    show = actions.add_parser("show", help="every run per run set: start order, windows of N, convergence over time")
    show.add_argument("--ledger", type=Path, required=True, metavar="FILE", help="the ledger (check --ledger FILE)")
    show.add_argument("--format", choices=RUNS_FORMATS, default="text", help="text (default), json, csv or html")
    show.add_argument("--output", "-o", type=Path, metavar="FILE", help="write here instead of stdout (whole or "
                      "not at all: a failed write leaves FILE as it was)")
