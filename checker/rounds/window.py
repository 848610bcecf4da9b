"""TR1.1 §Scoring (TR6.0 L516-526): of M > N runs launched as one group, the N consecutive runs by start time whose
olympic score is the median are scored; a window with too many runs that did not converge scores infinity, and a
median window that is itself invalid makes the whole result invalid. The one home of that rule: `package`'s run
selection and the run-set check (tree/runset.py) both ask here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mlsubmit.checker.rounds import benchmarks

FIRST_RULESET = (1, 1, 0)  # the rule came with TR1.1 §Scoring; TR1.0 has no way to choose N of M runs


def olympic(minutes: Sequence[float], benchmark: str) -> float:
    """Mean after dropping the fastest and slowest run(s); infinite when too many runs did not converge (a run that
    did not converge counts as infinitely slow)."""
    score = benchmarks.olympic_mean(minutes, benchmarks.dropped(benchmark))
    return math.inf if score is None else score


def scored_minutes(minutes: float | None, converged: bool) -> float:
    """A run's time to train as the window and the olympic mean count it: infinity for a run that did not
    converge (TR1.1 §Scoring) or has no time."""
    return minutes if converged and minutes is not None else math.inf


@dataclass(frozen=True)
class Window:
    """The window the rules take: runs `start`..`start + n - 1` (in start order) and its olympic score; `scores`
    holds every window's score by its first run."""

    start: int
    n: int
    score: float
    scores: tuple[float, ...]

    @property
    def valid(self) -> bool:
        return math.isfinite(self.score)

    @property
    def stop(self) -> int:
        return self.start + self.n

    def why(self, total: int) -> str:
        """The choice in plain words (which windows there were, which one is the median and its score)."""
        shown = ", ".join("invalid" if math.isinf(s) else f"{s:.2f}" for s in self.scores)
        score = "invalid" if math.isinf(self.score) else f"{self.score:.2f} min"
        even = " (an even number of windows: the slower middle one)" if len(self.scores) % 2 == 0 else ""
        return (f"runs {self.start}..{self.stop - 1} of 0..{total - 1} by start time: the median{even} of "
                f"{len(self.scores)} windows of {self.n} (olympic minutes {shown}), scoring {score}")


def window_applies(ruleset: str) -> bool:
    return tuple(int(p) for p in ruleset.split(".")) >= FIRST_RULESET


def median_window(minutes: Sequence[float], n: int, benchmark: str) -> Window:
    """Every window of `n` consecutive runs olympic-scored; the median one. With an even number of windows the
    slower of the two middle ones is taken, so a tie never favours the submitter. `minutes` in start order,
    infinity for a run that did not converge; at least `n` of them."""
    if n <= 0 or len(minutes) < n:
        raise ValueError(f"a window of {n} runs needs at least {n} runs, not {len(minutes)}")
    scores = tuple(olympic(minutes[i : i + n], benchmark) for i in range(len(minutes) - n + 1))
    score, start = sorted((s, i) for i, s in enumerate(scores))[len(scores) // 2]
    return Window(start, n, score, scores)
