"""Energy to train of a scored result, as the round reports it (power rules §4 "Scoring"): the mean energy of the
runs the performance score keeps, chosen by time to train (§4 L88), times the same RCP scaling factor as the score.

Each run's energy comes from the checker (`checker/power/energy.py`: the summarizer's rectangle sum of node
readings, plus switch estimates). Where a run has no figure, the reason says why and the result has none either.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.checker.power.energy import RunEnergy, run_energy, run_name
from mlsubmit.report.scoring import RunResult, Score, max_dropped


def has_power(results_folder: Path) -> bool:
    return (results_folder / "power").is_dir()


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
