"""mlsubmit runs show --ledger FILE|URL [--format text|json|csv|html] [-o FILE]: the run ledger, per run set;
mlsubmit runs init --ledger URL: a PostgreSQL ledger's tables made."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlsubmit.checker.base import ledger_pg
from mlsubmit.checker.base.ledger_pg import LedgerUrl

from mlsubmit.checker.base.ledger_rows import Reader
from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.atomic import replacing
from mlsubmit.report.runs import WRITERS


def run(args: argparse.Namespace) -> int:
    if args.action == "init":
        return _init(args.ledger)
    return _show(args)


def _init(where: Path | LedgerUrl) -> int:
    if not isinstance(where, LedgerUrl):
        raise FatalError(f"--ledger {where}: runs init is for a PostgreSQL ledger (postgresql://...); a ledger FILE "
                         "is made by its first check --ledger")
    print(f"mlsubmit: ledger {where}: {ledger_pg.init(where)}", file=sys.stderr)
    return 0


def _show(args: argparse.Namespace) -> int:
    """0, or 1 when rows of the ledger are no entries (each named on stderr, left out of what is shown)."""
    write = WRITERS[args.format]
    with Reader(args.ledger) as reader:
        if args.output is None:
            reconfigure = getattr(sys.stdout, "reconfigure", None)
            if reconfigure is not None:  # a name the terminal's encoding lacks is shown as an escape, not exit 3
                reconfigure(errors="backslashreplace")
            write(reader, sys.stdout)
        else:
            try:
                with replacing(args.output) as stream:
                    write(reader, stream)
            except OSError as exc:
                raise FatalError(f"--output {args.output}: cannot write it: {exc.strerror or exc}; left as it "
                                 "was") from None
    for note in reader.notes():
        print(f"mlsubmit: ledger {args.ledger}: left out {note} (not a ledger entry)", file=sys.stderr)
    return 1 if reader.left_out else 0
