"""mlsubmit runs show --ledger FILE|URL [--format text|json|csv|html] [-o FILE]: the run ledger, per run set;
mlsubmit runs init --ledger URL: a PostgreSQL ledger's tables made; runs freeze --ledger URL: no run added any more;
mlsubmit runs export --ledger FILE|URL (--to FILE|URL | -o FILE.jsonl), runs import --ledger FILE|URL FILE.jsonl:
a ledger copied or archived, verified by digests (checker/base/ledger_copy.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlsubmit.checker.base import ledger_copy, ledger_pg
from mlsubmit.checker.base.ledger_rows import Reader
from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.atomic import replacing
from mlsubmit.core.support.display_escape import notice
from mlsubmit.core.support.ledger_url import LedgerUrl
from mlsubmit.report.runs import WRITERS


def run(args: argparse.Namespace) -> int:
    if args.action in ("init", "freeze"):
        return _server(args.action, args.ledger)
    if args.action in ("export", "import"):
        return _transfer(args)
    return _show(args)


def _transfer(args: argparse.Namespace) -> int:
    """runs export / runs import: 0 when every entry is in the destination as it was, else 1 (each named)."""
    if args.action == "import":
        done, source, dest = ledger_copy.import_lines(args.archive, args.ledger), args.archive, str(args.ledger)
    elif args.to is not None:
        done, source, dest = ledger_copy.copy(args.ledger, args.to), str(args.ledger), str(args.to)
    else:
        try:
            with replacing(args.output) as stream:
                done = ledger_copy.export_lines(args.ledger, stream)
        except OSError as exc:
            raise FatalError(f"--output {args.output}: cannot write it: {exc.strerror or exc}; left as it "
                             "was") from None
        print(f"mlsubmit: ledger {args.ledger}: {done.read} entries written to {args.output}", file=sys.stderr)
        source, dest = str(args.ledger), str(args.output)
    if args.action == "import" or args.to is not None:
        print(f"mlsubmit: {done.words(str(source), dest)}", file=sys.stderr)
    for key in done.other_values:
        print(f"mlsubmit: {dest} holds {key} with other values (kept as it was)", file=sys.stderr)
    for key in done.missing:
        print(f"mlsubmit: {dest} lacks {key} after the copy", file=sys.stderr)
    for note in done.left_out:
        print(f"mlsubmit: ledger {source}: left out {note} (not a ledger entry)", file=sys.stderr)
    return 0 if done.whole else 1


def _server(action: str, where: Path | LedgerUrl) -> int:
    """runs init, runs freeze: for a PostgreSQL ledger only (a FILE is made by its first check, and frozen by
    making it read-only)."""
    if not isinstance(where, LedgerUrl):
        how = "is made by its first check --ledger" if action == "init" else \
            "is frozen by making it read-only (chmod a-w FILE, or a read-only mount)"
        raise FatalError(f"--ledger {where}: runs {action} is for a PostgreSQL ledger (postgresql://...); a "
                         f"ledger FILE {how}")
    done = ledger_pg.init(where) if action == "init" else ledger_pg.freeze(where)
    print(f"mlsubmit: ledger {where}: {done}", file=sys.stderr)
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
        notice(f"mlsubmit: ledger {args.ledger}: left out {note} (not a ledger entry)")
    return 1 if reader.left_out else 0
