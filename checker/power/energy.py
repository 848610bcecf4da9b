"""Energy to train from power logs, one home for the checker (`review preview`) and the report
(`report/scored_energy.py`, which adds the RCP scaling factor).

The figures follow mlperf-logging's result summarizer (4.1.68, `_compute_total_power`): a node log's energy is the
rectangle sum of its readings inside the measurement window (power_measurement.adoc §4 L84), scaled from that
window to the run's time to train, times the AC/DC efficiency (§3.2 L44; 1.0 when absent); a switch log's is
`efficiency x interconnect_power_est x time_to_train` (§4 L86); a run's is the sum over its `node_*.txt` and
`sw_*.txt`, in joules. A result's energy is the mean over the runs its olympic time-to-train mean keeps (§4 L88).
Where the summarizer would raise, the run has no figure and the reason says why.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.power.power_log import (
    EFFICIENCY,
    INTERCONNECT,
    READING,
    START,
    STOP,
    PowerLog,
    read_power_log,
)
from mlsubmit.checker.power.power_log import number as power_number
from mlsubmit.checker.rounds import benchmarks


@dataclass(frozen=True)
class RunEnergy:
    joules: float | None
    reason: str | None = None  # why there is no figure


def node_energy(log: PowerLog, time_to_train_ms: float) -> RunEnergy:
    """One node's energy over the run, as the summarizer integrates it (readings in time order, ties in file
    order; readings before the first start or after the first stop do not count)."""
    prev = start = stop = last = agg = 0.0
    eff = 1.0
    started = stopped = False
    for mark in sorted(log.marks, key=lambda m: m.time_ms):
        if mark.key == START:
            start = prev = mark.time_ms
            started = True
        elif mark.key == READING and started and not stopped:
            watts = power_number(mark.value)
            if watts is None:
                return RunEnergy(None, f"{log.path}:{mark.line}: power_reading {mark.value!r} is not a number")
            agg += watts * (mark.time_ms - prev)
            prev = mark.time_ms
            last = max(last, mark.time_ms)
        elif mark.key == STOP:
            stop, stopped = mark.time_ms, True
        elif mark.key == EFFICIENCY:
            value = power_number(mark.value)
            if value is None:
                return RunEnergy(None, f"{log.path}:{mark.line}: conversion_eff {mark.value!r} is not a number")
            eff = value
    if not started:
        return RunEnergy(None, f"{log.path}: no power_measurement_start")
    if not stopped:
        stop = last
    if stop == start:
        return RunEnergy(None, f"{log.path}: the measurement window has zero length")
    return RunEnergy(eff * agg * time_to_train_ms / (stop - start) / 1000.0)


def switch_energy(log: PowerLog, time_to_train_ms: float) -> RunEnergy:
    """An interconnect's estimated energy: the first estimate (0 W when none) × efficiency × time to train."""
    eff, watts = 1.0, 0.0
    for mark in log.marks:
        if mark.key == EFFICIENCY:
            value = power_number(mark.value)
            if value is None:
                return RunEnergy(None, f"{log.path}:{mark.line}: conversion_eff {mark.value!r} is not a number")
            eff = value
        elif mark.key == INTERCONNECT:
            value = power_number(mark.value)
            if value is None:
                return RunEnergy(None, f"{log.path}:{mark.line}: {INTERCONNECT} {mark.value!r} is not a number")
            watts = value
            break
    return RunEnergy(eff * watts * time_to_train_ms / 1000.0)


def power_files(folder: Path, prefix: str) -> list[str]:
    """`<prefix>*.txt` in a run's power folder as the summarizer globs them (hidden names excluded)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [n for n in names if n.startswith(prefix) and n.endswith(".txt") and len(n) >= len(prefix) + 4]


def run_energy(power_dir: Path, shown: str, time_to_train_ms: float) -> RunEnergy:
    """Energy of one run from power/<result_name>/: the sum over its node and switch logs."""
    nodes, switches = power_files(power_dir, "node_"), power_files(power_dir, "sw_")
    if not nodes:
        return RunEnergy(None, f"{shown}: no node_*.txt power log")
    total = 0.0
    for names, measure in ((nodes, node_energy), (switches, switch_energy)):
        for name in names:
            path = power_dir / name
            if not path.is_file():
                return RunEnergy(None, f"{shown}/{name}: not a regular file")
            part = measure(read_power_log(path, f"{shown}/{name}"), time_to_train_ms)
            if part.joules is None:
                return part
            total += part.joules
    if not math.isfinite(total):  # finite readings can still multiply past a float's range; JSON has no Infinity
        return RunEnergy(None, f"{shown}: the energy is out of a float's range")
    return RunEnergy(total)


def run_name(log_path: str) -> str:
    """The power folder name of a result log, as the summarizer derives it (basename up to the first dot)."""
    return os.path.basename(log_path).split(".")[0]


def entry_energy(folder: Path, runs: list[LogFacts], benchmark: str) -> RunEnergy | None:
    """The unscaled energy to train of a results folder's runs: the mean over the converged runs its olympic time
    mean keeps (fastest and slowest dropped, failed runs standing in for slow ones). None without power/."""
    if not (folder / "power").is_dir():
        return None
    timed = sorted(((r.minutes, r) for r in runs if r.converged and r.minutes is not None), key=lambda t: t[0])
    drop, failed = benchmarks.dropped(benchmark), len(runs) - len(timed)
    if failed > drop:
        return RunEnergy(None, f"{folder}: {failed} run(s) failed; no olympic mean")
    kept = timed[drop : len(timed) - (drop - failed)]
    total = 0.0
    for minutes, run in kept:
        name = run_name(run.path)
        shown = os.path.join(os.path.dirname(run.path), "power", name)
        energy = run_energy(folder / "power" / name, shown, minutes * 60000.0)
        if energy.joules is None:
            return energy
        total += energy.joules
    if not kept:
        return RunEnergy(None, f"{folder}: no run left for the olympic mean")
    mean = total / len(kept)
    if not math.isfinite(mean):
        return RunEnergy(None, f"{folder}: the energy is out of a float's range")
    return RunEnergy(mean)
