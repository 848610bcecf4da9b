"""mlsubmit runs show --ledger FILE [--format text|json|csv|html] [-o FILE]: the run ledger, per run set."""

from __future__ import annotations

import argparse
import sys

from mlsubmit.checker.base.ledger_rows import Reader
from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.atomic import replacing
from mlsubmit.core.support.display_escape import notice
from mlsubmit.report.runs import WRITERS


def run(args: argparse.Namespace) -> int:
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
