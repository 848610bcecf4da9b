"""Run planning: how likely a closed run set still in progress is to fail its RCP once all N runs are in, how
likely it is to be normalised, and the score it will get; and how strict an RCP is for reference-like runs.

The final set is resampled, DRAWS times with a fixed SEED (numpy's default generator), all draws at once:

- the k runs seen are kept; each of the N - k runs to come does not converge with the set's own rate so far
  (runs that did not converge / k), and otherwise converges at a value drawn with replacement
  - from the set's own converged runs (epochs or samples to converge, with their minutes) once it has
    OWN_FROM of them ("own" model);
  - before that, from the reference runs of the RCP record the check uses (both neighbours' for an interpolated
    one), each as its ratio to its record's mean, times the set's mean so far ("reference" model); its minutes
    are the set's minutes per unit of convergence times that value;
- each final set is then judged as the RCP check judges it (mlperf-logging's check_directory): more runs that did
  not converge than the round drops at each end is a fail; else the olympic mean of the sorted values, less the
  round's drop at each end, fails below the fastest allowed mean and is normalised below the RCP mean (factor RCP
  mean / mean);
- the score is the olympic mean of the minutes (TR1.1 §Scoring, a run that did not converge counts as infinitely
  slow) times that factor, over the draws that pass.

Strictness (`strictness`) is mlperf-logging's `rcp_viewer.py --bootstrap GBS` (May 2026): N draws with replacement
from a measured record's reference runs, ceil(10 %) trimmed from each end, the mean against the record's Min Epochs.

numpy is imported here and only here at run time; the checker imports this module only when a set needs it, so a
`check` without run sets does not pay for numpy (docs/architecture.md: the numpy stand-ins).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.upstream.rcp_adapted import Window

SEED = 48  # fixed, shown with every figure: the same set gives the same figures on every machine
DRAWS = 10_000
OWN_FROM = 5  # converged runs from which the set's own spread replaces the reference runs' spread
BINS = 12  # the score histogram's bars


@dataclass(frozen=True)
class Run:
    """One run of the set as the RCP check reads it: its epochs or samples to converge (None: did not converge)
    and its time to train in minutes (None: not known)."""

    to_converge: float | None
    minutes: float | None


@dataclass(frozen=True)
class Risk:
    """The figures of one run set (see the module docstring). p_fail includes p_insufficient (more runs that did
    not converge than tolerated). score: 10 %, 50 % and 90 % quantiles of the normalised score in minutes over
    the passing draws (None when none passes or no minutes are known); histogram: (low, high, count) bars."""

    runs: int
    required: int
    model: str
    p_fail: float
    p_insufficient: float
    p_normalised: float
    score: tuple[float, float, float] | None
    histogram: tuple[tuple[float, float, int], ...] = field(default=())
    seed: int = SEED
    draws: int = DRAWS
    own_from: int = OWN_FROM

    def words(self, unit: str) -> str:
        """The figures in one sentence, with where they come from."""
        shown = (f"final score median {self.score[1]:.2f} min (10-90 %: {self.score[0]:.2f}-{self.score[2]:.2f})"
                 if self.score is not None else "no passing draw has a score")
        if self.runs >= self.required:
            return (f"all {self.required} runs are in: RCP fail {self.p_fail:.0%}, normalised "
                    f"{self.p_normalised:.0%}; {shown}")
        model = (f"the set's own {unit} to converge" if self.model == "own" else
                 f"the reference runs' spread around the set's mean (the set's own from {self.own_from} converged "
                 "runs)")
        return (f"with {self.required - self.runs} more run(s): P(RCP fail) {self.p_fail:.1%} (of which too many "
                f"runs not converging {self.p_insufficient:.1%}), P(normalised) {self.p_normalised:.1%}; {shown}; "
                f"resampled from {model}, seed {self.seed}, {self.draws:,} draws")

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "required": self.required, "model": self.model, "p_fail": self.p_fail,
                "p_insufficient": self.p_insufficient, "p_normalised": self.p_normalised,
                "score": None if self.score is None else {"p10": self.score[0], "median": self.score[1],
                                                          "p90": self.score[2]},
                "histogram": [{"low": lo, "high": hi, "count": c} for lo, hi, c in self.histogram],
                "seed": self.seed, "draws": self.draws, "own_from": self.own_from}


def _relative(window: Window) -> np.ndarray:
    """The reference runs of the record(s) behind the window, each as its ratio to its own record's mean."""
    parts = [np.asarray(runs, dtype=float) / np.mean(runs) for _, runs in window.references if runs]
    return np.concatenate(parts) if parts else np.ones(1)


def _draws(seen: Sequence[Run], more: int, window: Window, rng: np.random.Generator, draws: int
           ) -> tuple[np.ndarray, np.ndarray, str]:
    """(to converge, minutes) of the runs to come, shape (draws, more); NaN where a run does not converge."""
    conv = [r for r in seen if r.to_converge is not None]
    values = np.array([r.to_converge for r in conv], dtype=float)
    timed = [r for r in conv if r.minutes is not None]
    per_unit = (sum(r.minutes for r in timed if r.minutes is not None) / sum(r.to_converge for r in timed
                if r.to_converge is not None)) if timed else math.nan  # fmt: skip
    if len(conv) >= OWN_FROM:
        model = "own"
        pick = rng.integers(0, len(conv), size=(draws, more))
        epochs = values[pick]
        times = np.array([math.nan if r.minutes is None else r.minutes for r in conv])[pick]
    else:
        model = "reference"
        epochs = float(values.mean()) * rng.choice(_relative(window), size=(draws, more))
        times = epochs * per_unit
    failed = rng.random((draws, more)) < (len(seen) - len(conv)) / len(seen)
    return np.where(failed, np.nan, epochs), np.where(failed, np.nan, times), model


def assess(seen: Sequence[Run], window: Window, benchmark: str, *, seed: int = SEED, draws: int = DRAWS
           ) -> Risk | None:
    """The figures of a set whose runs so far are `seen` (in start order; the rules' scored runs). None when no
    run converged yet (nothing to resample from)."""
    if not any(r.to_converge is not None for r in seen):
        return None
    n, drop = window.runs, benchmarks.dropped(benchmark)
    more = max(0, n - len(seen))
    rng = np.random.default_rng(seed)
    rows = 1 if more == 0 else draws
    new_e, new_t, model = _draws(seen, more, window, rng, rows) if more else (np.empty((1, 0)),) * 2 + ("seen",)
    old_e = np.array([math.nan if r.to_converge is None else r.to_converge for r in seen], dtype=float)
    old_t = np.array([math.nan if r.to_converge is None or r.minutes is None else r.minutes for r in seen])
    epochs = np.concatenate([np.broadcast_to(old_e, (rows, len(seen))), new_e], axis=1)
    minutes = np.concatenate([np.broadcast_to(old_t, (rows, len(seen))), new_t], axis=1)
    mean, short = _olympic(epochs, drop)
    fail = short | (mean < window.fastest)
    factor = np.where(~fail & (mean < window.rcp_mean), window.rcp_mean / np.where(fail, 1.0, mean), 1.0)
    score = (_olympic(minutes, drop)[0] * factor)[~fail]
    score = score[np.isfinite(score)]
    return Risk(len(seen), n, model, float(fail.mean()), float(short.mean()),
                float((~fail & (factor > 1.0)).mean()), _quantiles(score), _histogram(score))


def _olympic(values: np.ndarray, drop: int) -> tuple[np.ndarray, np.ndarray]:
    """Row by row: the mean after the `drop` lowest and highest (a NaN, a run that did not converge, sorts
    last, as the reference's 1e9 does), and whether more than `drop` runs did not converge (then the mean is inf)."""
    short = np.isnan(values).sum(axis=1) > drop
    ordered = np.sort(np.where(np.isnan(values), np.inf, values), axis=1)
    kept = ordered[:, drop : values.shape[1] - drop]
    with np.errstate(invalid="ignore"):
        mean = kept.mean(axis=1)
    return np.where(short, np.inf, mean), short


def _quantiles(score: np.ndarray) -> tuple[float, float, float] | None:
    if not score.size:
        return None
    p10, p50, p90 = np.quantile(score, [0.1, 0.5, 0.9])
    return float(p10), float(p50), float(p90)


def _histogram(score: np.ndarray) -> tuple[tuple[float, float, int], ...]:
    if not score.size:
        return ()
    low, high = np.quantile(score, [0.005, 0.995])
    if high - low <= 1e-9 * max(1.0, abs(high)):  # one value, give or take rounding
        return ((float(low), float(high), int(score.size)),)
    counts, edges = np.histogram(np.clip(score, low, high), bins=BINS, range=(low, high))
    return tuple((float(edges[i]), float(edges[i + 1]), int(c)) for i, c in enumerate(counts))


# --- how strict an RCP is (rcp_viewer.py --bootstrap) ----------------------------------------------------------


@dataclass(frozen=True)
class Strictness:
    name: str
    batch_size: float
    reference_runs: int
    rcp_mean: float
    min_epochs: float
    max_speedup: float
    p_below: float
    seed: int
    draws: int


def bootstrap(samples: Sequence[float], runs: int, *, seed: int = SEED, draws: int = DRAWS) -> np.ndarray:
    """`draws` submission-sized trimmed means of the reference runs: `runs` draws with replacement, ceil(10 %)
    trimmed from each end (rcp_viewer's bootstrap_scores, vectorised)."""
    cut = math.ceil(0.10 * runs)
    if runs - 2 * cut <= 0:
        raise ValueError(f"trimming {cut} from each end of {runs} runs leaves none")
    rng = np.random.default_rng(seed)
    drawn = np.sort(rng.choice(np.asarray(samples, dtype=float), size=(draws, runs), replace=True), axis=1)
    return np.asarray(drawn[:, cut : runs - cut].mean(axis=1))


def strictness(name: str, record: dict[str, Any], runs: int, *, seed: int = SEED, draws: int = DRAWS
               ) -> Strictness:
    """One measured RCP record (with the reference's statistics): max speedup and P(score < min)."""
    samples = [float(v) for v in record["Epochs to converge"]]
    least, mean = float(record["Min Epochs"]), float(record["RCP Mean"])
    p = float(np.mean(bootstrap(samples, runs, seed=seed, draws=draws) < least))
    return Strictness(name, float(record["BS"]), len(samples), mean, least, mean / least, p, seed, draws)
