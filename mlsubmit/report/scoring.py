"""Scores: time to train per run, the round's olympic mean per system × benchmark, and the RCP scaling factor.

The numbers follow mlperf-logging's result summarizer, which the submission rules name as the tool that must be
able to extract the results (SR1.0/SR1.1 §"Verification"):

- a run's time is `run_stop - run_start` in minutes (TR1.0 §"Benchmark results", TR1.1 §"Benchmark results");
- a run counts only if it passes the round's log rules (LOG and RULE findings, as the reference compliance
  checker); up to one run (four for U-Net3D) may fail and is then taken as the slowest run;
- the score drops the fastest and the slowest run (4 + 4 for U-Net3D) and averages the rest (olympic mean);
- a closed result that converges in fewer epochs than the reference convergence point (RCP) mean, but within the
  allowed speed-up, is scaled up by `RCP mean / submission mean` (the reference's `scaling.json`).

The reference reads that factor *before* it computes it, so its first run on a fresh tree reports the unscaled mean
and every later run the scaled one. We report the settled value, the one a second run gives, and never write a file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker import LogFacts
from mlsubmit.checker.rcp.verdict import run_convergence
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.benchmarks import olympic_mean as olympic
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support import jsontext, numbers
from mlsubmit.core.support.safe_io import SMALL_FILE, read_bounded

# Findings that make mlperf-logging's compliance checker or parser reject a log, which drops it from the score.
COMPLIANCE_FAMILIES = frozenset({"LOG", "RULE"})
NOT_CONVERGED = 1e9  # what the reference RCP checker records for a run that did not converge


def max_dropped(benchmark: str) -> int:
    """Runs dropped at each end of the olympic mean (the benchmark table: 4 for U-Net3D, else 1)."""
    return benchmarks.dropped(benchmark)


@dataclass(frozen=True)
class RunResult:
    """One result log as the score sees it."""

    path: str
    minutes: float | None
    status: str | None
    converged: bool
    compliant: bool
    reason: str | None = None  # why the run does not count, when it does not
    to_converge: float | None = None  # epochs (samples for BERT) at the last evaluation before run_stop
    unit: str = "epochs"
    throughput: float | None = None  # training samples per second over the timed run, when the log allows it
    olympic_dropped: bool = False
    time_ms: float | None = None  # run_stop - run_start as logged: the energy's time to train, to the bit

    @property
    def counted(self) -> bool:
        return self.reason is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "minutes": self.minutes,
            "status": self.status,
            "converged": self.converged,
            "compliant": self.compliant,
            "counted": self.counted,
            "olympic_dropped": self.olympic_dropped,
            "reason": self.reason,
            "to_converge": self.to_converge,
            "to_converge_unit": self.unit,
            "throughput_samples_per_second": self.throughput,
        }


def _number(value: Any) -> float | None:
    return numbers.finite(value)


def convergence_point(facts: LogFacts, ruleset: str = "") -> float | None:
    """The run's point of convergence as mlperf-logging's RCP reader takes it (epochs, or samples for bert and the
    LLM-era benchmarks): None when the run did not converge or the reader cannot read it. The same reading as the
    RCP check (checker/rcp), so a run's `to_converge` and its folder's RCP verdict never disagree."""
    conv = run_convergence(facts, ruleset)
    if not conv.converged or conv.problem:
        return None
    return _number(conv.epochs)


def throughput(facts: LogFacts, benchmark: str, point: float | None, minutes: float | None) -> float | None:
    """Training samples per second to convergence: samples for BERT, epochs × dataset size for the others."""
    # a benchmark without an RCP (minigo) counts no dataset epochs or samples to convergence
    if point is None or not minutes or minutes <= 0 or not benchmarks.has_rcp(benchmark):
        return None
    if benchmarks.unit(benchmark) == "samples":
        # NVIDIA's v1.0 BERT logs write epoch_num 1 at every evaluation: not a samples count. A real one is at
        # least one global batch; anything less leaves the throughput unknown rather than wrong.
        batch = _number(facts.value("global_batch_size"))
        if batch is None or point < batch:
            return None
        samples = point
    else:
        per_epoch = _number(facts.value("train_samples"))
        if per_epoch is None:
            return None
        samples = point * per_epoch
    return _number(samples / (minutes * 60.0))  # None past a float's range: reports hold finite numbers only


def is_compliant(findings: Iterable[Finding], error_codes: Iterable[str] = ()) -> bool:
    """No LOG or RULE error among the findings, nor among the run's own error codes (inside a tree the policy shows
    a run's errors as warnings, judged at its folder; the run still does not count in the score)."""
    if any(code.rstrip("0123456789") in COMPLIANCE_FAMILIES for code in error_codes):
        return False
    return not any(f.severity is Severity.ERROR and f.family in COMPLIANCE_FAMILIES for f in findings)


def run_result(path: str, facts: LogFacts, findings: Sequence[Finding], benchmark: str, ruleset: str = "") -> RunResult:
    compliant = is_compliant(findings, facts.error_codes)
    time_ms = _time_ms(facts)
    # the summarizer's own arithmetic (ms / 60 / 1000), so that its printed scores and ours agree to the last digit
    minutes = None if time_ms is None else time_ms / 60 / 1000
    reason = None
    if not compliant:
        reason = "fails the round's log rules"
    elif facts.run_start_ms is None or facts.run_stop is None:
        reason = "no run_start or run_stop"
    if minutes is not None and not 0.0 <= minutes < math.inf:  # a cached or hand-made facts object: never shown
        reason = reason or "its run time is not a finite, non-negative number"
        minutes = None
    point = convergence_point(facts, ruleset)
    return RunResult(
        path=path,
        minutes=minutes,
        status=facts.status,
        converged=facts.converged,
        compliant=compliant,
        reason=reason,
        to_converge=point,
        unit=benchmarks.unit(benchmark, ruleset),
        throughput=throughput(facts, benchmark, point, minutes) if reason is None else None,
        time_ms=time_ms if minutes is not None else None,
    )


def _time_ms(facts: LogFacts) -> float | None:
    start, stop = facts.run_start_ms, facts.run_stop
    return None if start is None or stop is None else stop.time_ms - start


def olympic_mean(minutes: Sequence[float], dropped: int, benchmark: str) -> float | None:
    """The reference's olympic mean of a result: runs that do not count stand in for the slowest ones."""
    return olympic(minutes, max_dropped(benchmark), failed=dropped)


def mark_olympic_drops(runs: Sequence[RunResult], benchmark: str) -> list[RunResult]:
    """Flag the counted runs the olympic mean leaves out (fastest k, and the slowest ones not already dropped)."""
    k = max_dropped(benchmark)
    counted = sorted((r for r in runs if r.counted and r.minutes is not None), key=lambda r: (r.minutes, r.path))
    dropped = sum(1 for r in runs if not r.counted)
    slow = max(0, k - dropped)
    out_paths = {r.path for r in counted[:k]} | {r.path for r in counted[len(counted) - slow :] if slow}
    return [RunResult(**{**r.__dict__, "olympic_dropped": r.path in out_paths}) for r in runs]


@dataclass(frozen=True)
class RcpOutcome:
    """What the reference RCP check concludes for a closed result, and the factor it would store."""

    status: str  # "Pass", "Fail", "Interp. Fail", "Missing", "No RCP", "Unknown state", "" (not checked)
    message: str = ""
    evaluated: bool = False  # a reference point was compared (the reference then rewrites scaling.json)
    factor: float = 1.0  # RCP mean / submission mean when passing and faster than the mean, else 1.0


@dataclass(frozen=True)
class Score:
    """One system × benchmark result: the round's score and what it is made of."""

    system: str
    benchmark: str
    division: str | None
    runs: tuple[RunResult, ...]
    olympic_minutes: float | None
    scaling_factor: float
    rcp: RcpOutcome
    samples_to_converge: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def time_to_train_minutes(self) -> float | None:
        if self.olympic_minutes is None:
            return None
        return self.olympic_minutes * self.scaling_factor

    @property
    def counted_runs(self) -> int:
        return sum(1 for r in self.runs if r.counted)


def samples_to_converge(facts: Sequence[LogFacts], benchmark: str, ruleset: str = "") -> float | None:
    """Mean convergence point without the lowest and highest (the summarizer's `samples_to_converge` column).

    Runs that did not converge count as 1e9, as in the reference; too many of them and there is no value.
    """
    points = [convergence_point(f, ruleset) for f in facts]
    if sum(p is None for p in points) > max_dropped(benchmark) or len(points) < 3:
        return None
    return olympic([NOT_CONVERGED if p is None else p for p in points], 1)  # the summarizer drops one at each end


def committed_scaling(folder: Path | None) -> float | None:
    """A `scaling.json` already in the results folder (read only; the reference reads it before its RCP check)."""
    if folder is None:
        return None
    path = folder / "scaling.json"
    try:
        data = jsontext.loads(read_bounded(path, SMALL_FILE).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    value = data.get("scaling_factor") if isinstance(data, dict) else None
    return _number(value)


def settled_factor(division: str | None, rcp: RcpOutcome, committed: float | None) -> float:
    """The factor the reference applies once its own scaling.json is in place.

    Closed results whose RCP comparison ran get that comparison's factor (the reference deletes the file on a
    fail and writes it only for a pass faster than the RCP mean); otherwise any committed file stays in force.
    """
    if division == "closed" and rcp.evaluated:
        return rcp.factor if rcp.status == "Pass" else 1.0
    return committed if committed is not None else 1.0


def build_score(
    *,
    system: str,
    benchmark: str,
    division: str | None,
    runs: Sequence[RunResult],
    facts: Sequence[LogFacts],
    rcp: RcpOutcome,
    committed: float | None = None,
    ruleset: str = "",
) -> Score:
    marked = mark_olympic_drops(runs, benchmark)
    counted = [r.minutes for r in marked if r.counted and r.minutes is not None]
    dropped = len(marked) - len(counted)
    olympic = olympic_mean(counted, dropped, benchmark)
    notes: list[str] = []
    if dropped > max_dropped(benchmark):
        notes.append(f"{dropped} runs do not count; the round allows {max_dropped(benchmark)}: no score")
    elif olympic is None:
        notes.append(f"{len(counted)} run(s) count: too few to drop the fastest and slowest, no score")
    elif dropped:
        notes.append(f"{dropped} run(s) do not count and stand in for the slowest")
    return Score(
        system=system,
        benchmark=benchmark,
        division=division,
        runs=tuple(marked),
        olympic_minutes=olympic,
        scaling_factor=settled_factor(division, rcp, committed),
        rcp=rcp,
        samples_to_converge=samples_to_converge(facts, benchmark, ruleset) if division == "closed" else None,
        notes=tuple(notes),
    )
