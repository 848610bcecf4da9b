"""Energy to train: per run from its power logs, and the olympic mean the round reports (power rules §4 "Scoring").

The figures follow mlperf-logging's result summarizer (4.1.68, `_compute_total_power` and the power part of
`_compute_strong_score_standalone`), the tool the results tables come from:

- a node log's energy is `eff × Σ reading × (t − t_prev) × time_to_train / (stop − start)`: the rectangle sum of
  the readings between the measurement start and stop (power_measurement.adoc §4 L84), scaled from the measured
  window to the run's time to train, times the AC/DC efficiency (`conversion_eff`, §3.2 L44; 1.0 when absent);
- a switch log's energy is `eff × interconnect_power_est × time_to_train` (§4 L86);
- a run's energy is the sum over its `node_*.txt` and `sw_*.txt` files, in joules (W × s);
- the result's energy is the mean of the runs the performance score keeps, chosen by time to train (§4 L88),
  times the same RCP scaling factor as the score.

Where the summarizer would stop with a traceback (no node log, no measurement start, a zero-length window, a
reading that is not a number), the run has no energy and the reason says why; the result then has none either.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.checker import EFFICIENCY, INTERCONNECT, READING, START, STOP, PowerLog, power_number, read_power_log
from mlsubmit.report.scoring import RunResult, Score, max_dropped


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


def has_power(results_folder: Path) -> bool:
    return (results_folder / "power").is_dir()


def run_name(log_path: str) -> str:
    """The power folder name of a result log, as the summarizer derives it (basename up to the first dot)."""
    return os.path.basename(log_path).split(".")[0]


def olympic_energy(runs: Sequence[RunResult], energy: Mapping[str, RunEnergy], benchmark: str) -> float | None:
    """Mean energy of the runs the olympic time-to-train mean keeps (unscaled), or None.

    Runs are ordered by time to train; the fastest k are dropped and as many of the slowest as runs that do not
    count leave room for (the summarizer's `_index_olympic_average`)."""
    counted = [r for r in runs if r.counted and r.minutes is not None]
    dropped = len(runs) - len(counted)
    k = max_dropped(benchmark)
    if dropped > k:
        return None
    values = [energy[r.path].joules if r.path in energy else None for r in counted]
    if any(v is None for v in values):
        return None
    order = sorted(range(len(counted)), key=lambda i: counted[i].minutes or 0.0)
    kept = [values[i] for i in order][k : len(counted) - (k - dropped)]
    mean = sum(v for v in kept if v is not None) / len(kept) if kept else None
    return mean if mean is None or math.isfinite(mean) else None


@dataclass(frozen=True)
class EnergyResult:
    """A result's energy to train: the summarizer's `<benchmark>:Energy` (olympic mean × scaling factor)."""

    joules: float | None
    olympic_joules: float | None
    runs: dict[str, RunEnergy]  # by the result log's display path
    note: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"joules": self.joules, "olympic_joules": self.olympic_joules, "unit": "J", "note": self.note}


def _ms(run: RunResult) -> float:
    return run.time_ms if run.time_ms is not None else (run.minutes or 0.0) * 60000.0


def result_energy(score: Score, logs: Mapping[str, Path]) -> EnergyResult | None:
    """Energy of a scored result whose results folder has power/ (None without one): each counted run from its
    power/<result name>/ logs over its time to train, then the olympic mean of the runs the score keeps."""
    paths = list(logs.values())
    if not paths or not has_power(paths[0].parent):
        return None
    runs: dict[str, RunEnergy] = {}
    for run in score.runs:
        if not run.counted or run.minutes is None or run.path not in logs:
            continue
        name = run_name(run.path)
        shown = os.path.join(os.path.dirname(run.path), "power", name)
        runs[run.path] = run_energy(logs[run.path].parent / "power" / name, shown, _ms(run))
    olympic = olympic_energy(score.runs, runs, score.benchmark)
    missing = next((e.reason for e in runs.values() if e.joules is None), None)
    note = f"no energy: {missing}" if missing else None
    if olympic is None and note is None:
        note = "no energy: the runs give no olympic mean"
    joules = olympic * score.scaling_factor if olympic is not None else None
    return EnergyResult(joules=joules, olympic_joules=olympic, runs=runs, note=note)
