"""The run set's risk (rcp/risk.py) where users see it: RUN009 in `check` (raw folders, a tree's results folders,
the ledger's sets) and `advise`, and the figures `runs show` draws. A set's runs are read as the RCP check reads
them (`run_convergence`: its epochs or samples to converge, and its batch size); the RCP window is the record
the check would use at that batch size (upstream/rcp_adapted.py `window`).

numpy comes in with rcp/risk.py, imported at the top here: the checks and commands that use this module import it
only when a set is assessed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rcp.risk import Risk, Run, assess, convergence_text, percent, strictness
from mlsubmit.checker.rcp.verdict import NOT_CONVERGED, run_convergence
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds import window as rule
from mlsubmit.checker.upstream.rcp_adapted import Window, checker, window

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support import numbers

__all__ = ["convergence_text", "percent"]  # runs show writes chances and amounts as RUN009 does


def runs_of(facts: Sequence[LogFacts], ruleset: str, *, train_samples: bool = False
            ) -> tuple[list[Run], float | None]:
    """Each run as the RCP check reads it (with the tree's `rcp_bert_train_samples` when `train_samples`), and
    the first batch size the runs log."""
    out, batch = [], None
    for f in facts:
        conv = run_convergence(f, ruleset, train_samples=train_samples)
        size = numbers.finite(conv.batch_size)
        if batch is None and size is not None and size > 0:
            batch = size
        value = numbers.finite(conv.epochs)
        ok = conv.converged and value is not None and value != NOT_CONVERGED
        out.append(Run(value if ok else None, numbers.finite(f.minutes)))
    return out, batch


def window_for(ruleset: str, benchmark: str, batch_size: float | None, rcps: str | None = None) -> Window | None:
    """The RCP record a set of this batch size is judged against, or None (no batch size, no RCP data, or the
    reference cannot build one)."""
    if batch_size is None or not benchmarks.has_rcp(benchmark):
        return None

    try:
        return window(ruleset, benchmark, batch_size, rcps)
    except Exception:  # the reference's own raise (no run count, no data file): the RCP check reports it
        return None


def assess_facts(benchmark: str, ruleset: str, facts: Sequence[LogFacts], rcps: str | None = None, *,
                 train_samples: bool = False) -> tuple[Risk | None, Window | None]:
    """The risk of a closed set whose scored runs so far are `facts` (start order)."""
    runs, batch = runs_of(facts, ruleset, train_samples=train_samples)
    win = window_for(ruleset, benchmark, batch, rcps)
    if win is None or win.kind == "above" or not runs:
        return None, win

    return assess(runs, win, benchmark), win


def risk_finding(where: str, benchmark: str, ruleset: str, facts: Sequence[LogFacts], *, limit: float | None,
                 rcps: str | None = None, window_note: str = "", train_samples: bool = False) -> Finding | None:
    """RUN009 for a closed set short of its N runs, or with more (`window_note` then says what the median-window
    rule does); None when the benchmark has no RCP check, no run converged yet or the set has exactly N runs. An
    error when `limit` is given and the chance of an RCP fail is above it (--fail-on rcp-risk)."""
    if not benchmarks.has_rcp(benchmark) or not facts:
        return None
    n = benchmarks.runs(benchmark)
    if n is not None and len(facts) >= n and not window_note:
        return None  # a complete set: TREE018/TREE019 is the verdict itself, nothing is left to chance
    risk, win = assess_facts(benchmark, ruleset, facts, rcps, train_samples=train_samples)
    if win is not None and win.kind == "above":
        return finding("RUN009", where, "no RCP at this batch size (the largest is smaller): the check asks for a "
                       "new RCP, so the set fails until one is submitted" + window_note,
                       severity=Severity.ERROR if limit is not None else None)
    if risk is None:
        return None
    unit = benchmarks.unit(benchmark, ruleset)
    assert win is not None
    text = (f"{risk.words(unit)}; RCP window {convergence_text(win.fastest, unit)} (fastest allowed) to "
            f"{convergence_text(win.rcp_mean, unit)} (RCP mean) "
            f"({win.kind}: {', '.join(name for name, _ in win.references)})"
            f"{' (read from train_samples: rcp_bert_train_samples)' if train_samples else ''}{window_note}")
    over = limit is not None and risk.p_fail > limit
    if over:
        text += f"; above the project's limit of {limit:.1%} (--fail-on rcp-risk)"
    found = finding("RUN009", where, text, severity=Severity.ERROR if over else None)
    data = {**risk.to_dict(), "unit": unit, "window": window_data(win)}
    if risk.p_fail < LOW_RISK and not over:  # the hint's "time to change hyperparameters" is not for a safe set
        found = replace(found, hint="Nothing to do: the set is unlikely to fail its RCP. `check --fail-on "
                        "rcp-risk=0.05` makes a riskier set an error, for CI.")
    return replace(found, risk=data)


LOW_RISK = 0.01  # below this chance of an RCP fail, RUN009's hint says there is nothing to change


def window_data(win: Window) -> dict[str, Any]:
    """The RCP window behind a risk, for RUN009's data."""
    return {"kind": win.kind, "fastest": win.fastest, "rcp_mean": win.rcp_mean,
            "records": [name for name, _ in win.references]}


def window_effect(minutes: Sequence[float], n: int, benchmark: str) -> str:
    """With more runs than N: the score of the median window the rules take against the first N runs' score and
    the best window's, in words."""
    if len(minutes) <= n:
        return ""
    chosen = rule.median_window(minutes, n, benchmark)
    first = rule.olympic(minutes[:n], benchmark)
    best = min(chosen.scores)

    def show(v: float) -> str:
        return f"{v:.2f} min" if math.isfinite(v) else "invalid"

    return (f"; with {len(minutes)} runs the median-window rule scores {show(chosen.score)} (runs {chosen.start}.."
            f"{chosen.stop - 1}), where the first {n} would score {show(first)} and the best window {show(best)}")


def strictness_rows(ruleset: str, benchmark: str, batch_size: float | None = None, rcps: str | None = None
                    ) -> list[Any]:
    """rcp_viewer --bootstrap's figures for each measured RCP record of the benchmark (its unpruned records, as
    the script asks `_find_rcp(GBS, 'full_rcps')`), or only the one at `batch_size`."""
    check = checker(ruleset, benchmark, rcps)
    return [strictness(name, rec, int(check.submission_runs)) for name, rec in check.rcp_data.items()
            if batch_size is None or rec["BS"] == batch_size]


def strictness_findings(ruleset: str, asked: str) -> list[Finding]:
    """HP011 for `advise --strictness BENCHMARK[:GBS]`; a benchmark without RCPs or a batch size without a
    measured record is a usage error."""
    benchmark, _, size = asked.partition(":")
    if benchmark not in benchmarks.allowed(ruleset) or not benchmarks.has_rcp(benchmark):
        known = ", ".join(b for b in benchmarks.allowed(ruleset) if benchmarks.has_rcp(b))
        raise UsageError(f"--strictness {asked!r}: no RCPs for {benchmark!r} in ruleset {ruleset} (those with "
                         f"RCPs: {known})")
    try:
        batch = float(size) if size else None
    except ValueError:
        raise UsageError(f"--strictness {asked!r}: the batch size after ':' must be a number") from None
    try:
        rows = strictness_rows(ruleset, benchmark, batch)
    except Exception as exc:  # the reference's own raise on its data (no run count for the benchmark)
        raise UsageError(f"--strictness {asked!r}: mlperf-logging's RCP checker cannot read it: {exc}") from None
    if not rows:
        raise UsageError(f"--strictness {asked!r}: no measured RCP record at global batch size {size}")
    unit, where = benchmarks.unit(benchmark, ruleset), f"rcp_checker/training_{ruleset}/rcps_{benchmark}.json"
    # the batch size first, right-aligned: findings of one file are listed by message, so the records come out in
    # batch-size order, as a column
    width = max(len(f"{r.batch_size:g}") for r in rows)
    return [finding("HP011", where, f"batch size {r.batch_size:>{width}g}: {r.name} ({r.reference_runs} reference "
                    f"runs), RCP mean {convergence_text(r.rcp_mean, unit)}, fastest allowed (the record's Min "
                    f"Epochs) {convergence_text(r.min_epochs, unit)}, max speedup {r.max_speedup:.4f}; P(score < "
                    f"fastest allowed) "
                    f"{r.p_below:.4f} for a reference-like set of {benchmarks.runs(benchmark)} runs (rcp_viewer "
                    f"--bootstrap; seed {r.seed}, {r.draws:,} draws)")
            for r in rows]


def ledger_risk(ruleset: str, benchmark: str, runs: Sequence[tuple[float | None, float | None]],
                rcp_mean: float | None, fastest: float | None) -> Risk | None:
    """The risk of a ledger's set (`runs show`): (to converge, minutes) per scored run in start order, None for a
    run that did not converge; the RCP window as the ledger recorded it. The ledger keeps no batch size, so the
    reference runs behind the window are the pruned record with that RCP mean, else the two whose means bracket
    it (an interpolation), else the smallest (the check's fallback)."""
    if rcp_mean is None or fastest is None or not benchmarks.has_rcp(benchmark) or not runs:
        return None

    try:
        check = checker(ruleset, benchmark)
    except Exception:  # no RCP data the reference can read
        return None
    pruned = sorted(check.pruned_rcp_data.items(), key=lambda item: item[1]["BS"])
    if not pruned:
        return None
    same = [item for item in pruned if math.isclose(item[1]["RCP Mean"], rcp_mean, rel_tol=1e-12)]
    pairs = [(a, b) for a, b in itertools.pairwise(pruned)
             if a[1]["RCP Mean"] < rcp_mean < b[1]["RCP Mean"]]
    behind = same[:1] or (list(pairs[0]) if pairs else pruned[:1])
    refs = tuple((name, tuple(float(e) for e in rec["Epochs to converge"])) for name, rec in behind)
    kind = "found" if same else "interpolation" if pairs else "below"
    win = Window(kind, rcp_mean, fastest, fastest, int(check.submission_runs), refs)
    return assess([Run(c, m) for c, m in runs], win, benchmark)
