"""A run's time is ordered: its first run_stop is not stamped before its first run_start (LOG011).

Kept apart from the reader's hot loop; the reader calls it once a log is read. Finite stamps are the reader's
own check (LOG006).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.logs.reader import Record


def run_order(records: Sequence[Record], display: str) -> list[Finding]:
    """LOG011 when the first run_stop is stamped before the first run_start: a run time is never negative."""
    start = next((r for r in records if r.key == "run_start"), None)
    stop = next((r for r in records if r.key == "run_stop"), None)
    if start is None or stop is None or stop.timestamp >= start.timestamp:
        return []
    return [finding("LOG011", display, f"run_stop (time_ms {stop.timestamp:.0f}) is stamped before run_start on "
                    f"line {start.line} (time_ms {start.timestamp:.0f})", line=stop.line)]
