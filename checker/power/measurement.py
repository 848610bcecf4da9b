"""The rules of power_measurement.adoc (MLPerf Training power rules) that one power log can show.

Each check cites the rule's section and line in /work/shared/docs/policies/power_measurement.adoc (`PM §x Ly`):

- PM §3.5 L60 "Measure max(a run, 60 power samples)": the measurement starts before run_start and stops after
  run_stop (POW011 no start, POW012 no stop, POW013 window does not cover the run); L58/L62: at least 60 readings
  (POW015);
- PM §3.4 L56 "Report 1 Measurement per Second": no gap over a second between readings over the timed run (POW014);
- PM §4 L84: readings are power in watts, finite and not negative (POW016);
- PM §3.2 L44: the AC/DC efficiency factor is a number in (0, 1] (POW017);
- PM §3.1.3 L34-36: a switch log carries the interconnect's estimated power (POW020).

The run's times come from its result log's facts (run_start, run_stop); both files are stamped by the same
clock in mllog's power tooling (`time_ms`), so a window that misses the run is either a late start, an early stop
or a clock that differs, and the score's energy would be wrong in each case.
"""

from __future__ import annotations

import itertools

from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.power.power_log import (
    EFFICIENCY,
    INTERCONNECT,
    READING,
    START,
    STOP,
    Mark,
    PowerLog,
    number,
)

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity

MAX_GAP_MS = 1000.0  # PM §3.4 L56: at least one reading every second
MIN_READINGS = 60  # PM §3.5 L58/L62


def _unreadable(log: PowerLog) -> list[Finding]:
    if not log.readable:
        reasons = "; ".join(f.message for f in log.read_findings) or "cannot read it"
        return [finding("POW010", log.path, f"unreadable power log: {reasons}")]
    bad = [f for f in log.read_findings if f.severity.value == "error"]
    if bad or log.parse_errors:
        first = bad[0] if bad else None
        where = f" (first: line {first.line}: {first.message})" if first is not None and first.line else ""
        count = max(len(bad), log.parse_errors)
        line = first.line if first is not None else None
        return [finding("POW010", log.path, f"{count} MLLOG line(s) could not be read{where}", line=line)]
    return []


def _efficiency(log: PowerLog) -> list[Finding]:
    out = []
    for mark in log.all(EFFICIENCY):
        value = number(mark.value)
        if value is None or not 0.0 < value <= 1.0:
            why = f"conversion_eff {mark.value!r} is not an efficiency in (0, 1]"
            out.append(finding("POW017", log.path, why, line=mark.line))
    return out


def _window(log: PowerLog, facts: LogFacts | None) -> list[Finding]:
    start, stop = log.first(START), log.first(STOP)
    if start is None:
        return [finding("POW011", log.path, "no power_measurement_start: the energy cannot be computed")]
    out = []
    if stop is None:
        out.append(finding("POW012", log.path, "no power_measurement_stop: the last reading stands in for it"))
    window = log.window()
    if window is None or window[1] <= window[0]:
        return [*out, finding("POW013", log.path, "the measurement window has no length", line=start.line)]
    run_start = facts.run_start_ms if facts is not None else None
    run_stop = facts.run_stop.time_ms if facts is not None and facts.run_stop is not None else None
    if run_start is not None and window[0] > run_start:
        why = f"measurement starts {(window[0] - run_start) / 1000:.3f} s after run_start ({facts and facts.path})"
        out.append(finding("POW013", log.path, why, line=start.line))
    if run_stop is not None and window[1] < run_stop:
        why = f"measurement stops {(run_stop - window[1]) / 1000:.3f} s before run_stop ({facts and facts.path})"
        out.append(finding("POW013", log.path, why, line=stop.line if stop else None))
    return out


def _gaps(readings: list[Mark], lo: float, hi: float) -> list[tuple[float, Mark | None]]:
    """Gaps (ms, a reading at one end) between readings over [lo, hi]: from the last reading at or before lo (else
    lo) through the readings inside to the first reading at or after hi (else hi)."""
    before = [m for m in readings if m.time_ms <= lo]
    after = [m for m in readings if m.time_ms >= hi]
    points: list[tuple[float, Mark | None]] = [(before[-1].time_ms, before[-1]) if before else (lo, None)]
    points += [(m.time_ms, m) for m in readings if lo < m.time_ms < hi]
    points.append((after[0].time_ms, after[0]) if after else (hi, None))
    return [(b[0] - a[0], b[1] or a[1]) for a, b in itertools.pairwise(points)]


def _sampling(log: PowerLog, facts: LogFacts | None) -> list[Finding]:
    readings = log.readings()
    window = log.window()
    out = []
    if window is not None:
        inside = sum(1 for m in readings if window[0] <= m.time_ms <= window[1])
        if inside < MIN_READINGS:
            why = f"{inside} power reading(s) in the measurement window; the rules ask for at least {MIN_READINGS}"
            out.append(finding("POW015", log.path, why))
    lo = facts.run_start_ms if facts is not None else None
    hi = facts.run_stop.time_ms if facts is not None and facts.run_stop is not None else None
    if lo is None or hi is None:
        lo, hi = window if window is not None else (None, None)
    if lo is None or hi is None or hi <= lo:
        return out
    if not readings:
        why = "no power reading at all during the timed run: its energy counts as 0 J"
        return [*out, finding("POW014", log.path, why, severity=Severity.ERROR)]
    long = [(gap, m) for gap, m in _gaps(readings, lo, hi) if gap > MAX_GAP_MS]
    if long:
        gap, mark = max(long, key=lambda g: g[0])
        why = (f"{len(long)} gap(s) over 1 s between power readings during the timed run, the longest "
               f"{gap / 1000:.3f} s")  # fmt: skip
        out.append(finding("POW014", log.path, why, line=mark.line if mark else None))
    return out


def _values(log: PowerLog) -> list[Finding]:
    for mark in log.all(READING):
        value = number(mark.value)
        if value is None or value < 0:
            why = f"power_reading {mark.value!r} is not a power in watts (a finite number, not negative)"
            return [finding("POW016", log.path, why, line=mark.line)]
    return []


def check_node_log(log: PowerLog, facts: LogFacts | None) -> list[Finding]:
    """A node's measured power: readable, a window covering the run, sampled each second, numeric readings."""
    unreadable = _unreadable(log)
    if not log.readable:
        return unreadable
    return [*unreadable, *_window(log, facts), *_sampling(log, facts), *_values(log), *_efficiency(log)]


def check_switch_log(log: PowerLog, facts: LogFacts | None) -> list[Finding]:
    """An interconnect's estimate: readable, an interconnect_power_est in watts, a valid efficiency."""
    unreadable = _unreadable(log)
    if not log.readable:
        return unreadable
    out = [*unreadable, *_efficiency(log)]
    estimate = log.first(INTERCONNECT)
    if estimate is None:
        out.append(finding("POW020", log.path, "no interconnect_power_est: the switch counts as 0 W"))
    elif (value := number(estimate.value)) is None or value < 0:
        why = f"interconnect_power_est {estimate.value!r} is not a power in watts"
        out.append(finding("POW020", log.path, why, line=estimate.line))
    return out
