"""mlsubmit runs show --ledger FILE [--format text|json|html] [-o FILE]: the run ledger, per run set."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlsubmit.core.errors import UsageError
from mlsubmit.report.runs import WRITERS, views


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("runs", help="the run ledger that check --ledger keeps")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    show = actions.add_parser("show", help="every run per run set: start order, windows of N, convergence over time")
    show.add_argument("--ledger", type=Path, required=True, metavar="FILE", help="the ledger (check --ledger FILE)")
    show.add_argument("--format", choices=sorted(WRITERS), default="text", help="text (default), json or html")
    show.add_argument("--output", "-o", type=Path, metavar="FILE", help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    from mlsubmit.checker.base.ledger import (
        read as read_ledger,  # SQLite is imported only by the commands that open a ledger
    )

    entries = read_ledger(args.ledger)
    text = WRITERS[args.format](views(entries), entries)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output {args.output}: cannot write it: {exc.strerror or exc}") from None
    return 0
