"""One power log (`power/result_<i>/node_<j>.txt` or `sw_<k>.txt`) read into what the power rules and the energy
score look at.

Power logs are MLLOG files written with mlperf_logging.mllog (its examples/power/power_measurement.py): a
`power_measurement_start` interval start, a `conversion_eff` (AC/DC efficiency, metadata `measurement_type`), one
`power_reading` per meter sample (watts), `power_measurement_stop`; a switch log carries `interconnect_power_est`
(watts) instead of readings. They are read with the same reader as result logs (as mlperf-logging's parser reads
them, `checker/logs/reader.py`), so bad bytes, broken JSON and huge lines become findings, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker.logs.reader import read_log

from mlsubmit.core.findings import Finding
from mlsubmit.core.support import numbers

START = "power_measurement_start"
STOP = "power_measurement_stop"
READING = "power_reading"
EFFICIENCY = "conversion_eff"
INTERCONNECT = "interconnect_power_est"
KEYS = frozenset({START, STOP, READING, EFFICIENCY, INTERCONNECT})


@dataclass(frozen=True)
class Mark:
    """One power record: its key, time (ms), logged value and 1-based line in the file."""

    key: str
    time_ms: float
    value: Any
    line: int


def number(value: Any) -> float | None:
    """A finite int or float (not bool), else None (an integer beyond a float's range too)."""
    return numbers.finite(value)


@dataclass(frozen=True)
class PowerLog:
    """The power records of one file, in file order, and what reading the file found wrong with it."""

    path: str  # display path
    readable: bool = True
    marks: tuple[Mark, ...] = ()
    read_findings: tuple[Finding, ...] = field(default=())  # LOG findings of the reader (bad bytes, JSON, ...)
    parse_errors: int = 0

    def all(self, key: str) -> list[Mark]:
        return [m for m in self.marks if m.key == key]

    def first(self, key: str) -> Mark | None:
        return next((m for m in self.marks if m.key == key), None)

    def last(self, key: str) -> Mark | None:
        found = self.all(key)
        return found[-1] if found else None

    def readings(self) -> list[Mark]:
        """Power readings in time order (ties keep file order), as the reference summarizer sorts them."""
        return sorted(self.all(READING), key=lambda m: m.time_ms)

    def window(self) -> tuple[float, float] | None:
        """(start, stop) of the measurement in time order: the first start and the first stop after it (a missing
        stop is the last reading's time). None without a start."""
        ordered = sorted(self.marks, key=lambda m: m.time_ms)
        start = next((m.time_ms for m in ordered if m.key == START), None)
        if start is None:
            return None
        stop = next((m.time_ms for m in ordered if m.key == STOP and m.time_ms >= start), None)
        if stop is None:
            stop = max((m.time_ms for m in ordered if m.key == READING), default=start)
        return start, stop


def read_power_log(path: Path, shown: str) -> PowerLog:
    """Read one power log; unreadable files and bad lines come back as findings on the log."""
    parsed = read_log(path, shown, digest=False, rcp_lines=False)
    marks = tuple(
        Mark(r.key, r.timestamp, r.payload, r.line) for r in parsed.records if r.key in KEYS
    )
    return PowerLog(
        path=shown,
        readable=parsed.readable,
        marks=marks,
        read_findings=tuple(parsed.findings),
        parse_errors=parsed.parse_errors,
    )
