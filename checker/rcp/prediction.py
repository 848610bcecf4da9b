"""What the RCP check will say, predicted for `mlsubmit advise`: the reference convergence point a closed run will be
measured against (or an open run would be, as closed), and where the run's hyperparameters differ from the RCP's,
before the team spends its runs.

The data is mlperf-logging's own (`rcp_checker/training_X.Y.Z/rcps_<benchmark>.json`), read here as plain JSON; the
file is found by listing the ruleset's folder, never built from a log value. The RCPs are pruned as the reference's
RCP checker prunes them before its check (the package checker uses the pruned set): the fastest-converging RCP drops
every smaller batch size, and an RCP slower than the interpolation of its two neighbours is dropped. Means are the
reference's olympic means, computed with numpy's own summation order (upstream/npstats.py). Then, for the run's
global batch size: the RCP found at that size, or the two neighbours the check interpolates between, or the one it
falls back to. The hyperparameters compared are those of the RCP at the run's batch size (pruned or not), else of
the neighbours. The predicted verdict and normalisation factor are the tree check's (rcp/verdict.py).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mlsubmit.checker.hyperparameters.constraints import Tolerance, show_value
from mlsubmit.checker.logs.facts import LogFacts, extract
from mlsubmit.checker.logs.reader import ParsedLog
from mlsubmit.checker.rcp.verdict import evaluate, rcp_file, runs_key
from mlsubmit.checker.rounds import benchmarks, window
from mlsubmit.checker.upstream import npstats

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity

_TOLERANCE = Tolerance()
# RCP files name some hyperparameters otherwise than the logs (and mllog's constants) do: RCP name -> log key.
LOG_KEYS: dict[str, dict[str, str]] = {
    "llama2_70b_lora": {"lora_r": "lora_rank", "opt_max_grad_norm": "opt_gradient_clip_norm"},
    "resnet": {"optimizer": "opt_name", "epsilon": "lars_epsilon", "opt_momentum": "lars_opt_momentum",
               "opt_learning_rate_decay_poly_power": "lars_opt_learning_rate_decay_poly_power"},
    "rnnt": {"model_eva_ema_factor": "model_eval_ema_factor",
             "opt_gradient_accumulation_steps": "gradient_accumulation_steps"},
    "maskrcnn": {"opt_learning_decay_steps": "opt_learning_rate_decay_steps",
                 "opt_learning_decay_factor": "opt_learning_rate_decay_factor"},
}


@dataclass(frozen=True)
class Point:
    """One RCP record: its name in the data file, batch size, hyperparameters and olympic mean."""

    name: str
    batch_size: float
    hyperparameters: Mapping[str, Any]
    mean: float
    runs: int


@dataclass(frozen=True)
class Match:
    """Which RCPs the check uses at a batch size.

    kind: "found" (an RCP at this size), "interpolation" (between `points`), "below" (smaller than every RCP: the
    check compares with the smallest), "above" (larger than every RCP: a new RCP is needed), "none" (no data).
    `same_size` is the RCP at exactly this batch size, also when pruning dropped it.
    """

    kind: str
    points: tuple[Point, ...]
    same_size: Point | None


def data_file(ruleset: str, benchmark: str) -> Path | None:
    """The benchmark's RCP file, found by listing the folder (a log value is compared, never joined into a path)."""
    return rcp_file(ruleset, benchmark)


def _point(name: str, raw: Any) -> Point | None:
    # Every record counts, whatever its Benchmark says (3.1.0's stable_diffusion file says "sd"), as in the reference.
    if not isinstance(raw, dict):
        return None
    benchmark = raw.get("Benchmark")
    runs = raw.get(runs_key(benchmark))
    bs, hps = raw.get("BS"), raw.get("Hyperparams", {})
    if not isinstance(runs, list) or not runs or not all(isinstance(r, (int, float)) for r in runs):
        return None
    if isinstance(bs, bool) or not isinstance(bs, (int, float)) or not isinstance(hps, dict):
        return None
    mean = benchmarks.olympic_mean(runs, benchmarks.dropped(str(benchmark)), mean=npstats.mean)
    return None if mean is None else Point(name, bs, hps, float(mean), len(runs))


@functools.cache
def points(ruleset: str, benchmark: str) -> tuple[Point, ...] | None:
    """Every RCP of the benchmark in file order; None when there is no file or it cannot be read."""
    path = data_file(ruleset, benchmark)
    if path is None:
        return None
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    return tuple(p for p in (_point(n, r) for n, r in raw.items()) if p is not None)


def pruned_rcps(all_points: Sequence[Point]) -> tuple[Point, ...]:
    """The RCPs the reference's check uses, by batch size (its `_prune_rcps` on its BS-sorted data, step for step)."""
    ordered = sorted(all_points, key=lambda p: p.batch_size)  # stable, as the reference's sorted()
    if not ordered:
        return ()
    fastest = min(ordered, key=lambda p: p.mean)
    kept = [p for p in ordered if p.batch_size >= fastest.batch_size]
    i = 1
    while i < len(kept) - 1:
        low, high = kept[i - 1], kept[i + 1]
        between = npstats.interp(kept[i].batch_size, [low.batch_size, high.batch_size], [low.mean, high.mean])
        if kept[i].mean > between:
            del kept[i]
            i -= 1
        i += 1
    sizes = {p.batch_size for p in kept}
    return tuple(p for p in ordered if p.batch_size in sizes)


def match(all_points: Sequence[Point], batch_size: float) -> Match:
    """The RCPs the check measures a run of this global batch size against."""
    same = next((p for p in all_points if p.batch_size == batch_size), None)
    used = pruned_rcps(all_points)
    if not used:
        return Match("none", (), same)
    found = next((p for p in used if p.batch_size == batch_size), None)
    if found is not None:
        return Match("found", (found,), same)
    below = [p for p in used if p.batch_size < batch_size]
    above = [p for p in used if p.batch_size > batch_size]
    low = max(below, key=lambda p: p.batch_size) if below else None
    high = min(above, key=lambda p: p.batch_size) if above else None
    if low is not None and high is not None:
        return Match("interpolation", (low, high), same)
    if high is not None:
        return Match("below", (min(used, key=lambda p: p.batch_size),), same)
    return Match("above", (low,) if low is not None else (), same)


def unmatched_hyperparameters(point: Point, lookup: Callable[[str], Any]) -> list[tuple[str, Any, Any]]:
    """(key, run value, RCP value) for each RCP hyperparameter the run does not log with the same value."""
    out = []
    for key, want in point.hyperparameters.items():
        got = lookup(key)
        if not _same(got, want):
            out.append((key, got, want))
    return out


def _same(got: Any, want: Any) -> bool:
    numbers = (int, float)
    if isinstance(got, numbers) and isinstance(want, numbers) and not isinstance(got, bool) and not isinstance(
            want, bool):
        return _TOLERANCE.close(float(got), float(want))
    return bool(got == want)


# --- findings for `mlsubmit advise` ---------------------------------------------------------------------------


def _last(log: ParsedLog, key: str) -> tuple[Any, int | None]:
    """The last value of a key and its line (the reference's RCP reader keeps the last global_batch_size)."""
    rec = next((r for r in reversed(log.records) if r.key == key), None)
    return (rec.payload, rec.line) if rec is not None else (None, None)


def _describe(point: Point, benchmark: str) -> str:
    unit = benchmarks.unit(benchmark)
    return (f"{point.name} (batch size {show_value(point.batch_size)}, {point.runs} reference runs, "
            f"olympic mean {show_value(round(point.mean, 4))} {unit} to converge)")


def _where(m: Match, benchmark: str, batch: Any) -> str:
    if m.kind == "found":
        return f"RCP found: {_describe(m.points[0], benchmark)}"
    pruned = (f"; the RCP at this batch size, {m.same_size.name}, is pruned (slower than its neighbours' "
              "interpolation)" if m.same_size is not None else "")
    if m.kind == "interpolation":
        low, high = m.points
        return (f"no RCP at this batch size{pruned}; the check interpolates between {_describe(low, benchmark)} "
                f"and {_describe(high, benchmark)}")
    if m.kind == "below":
        return (f"smaller than every RCP{pruned}; the check compares with {_describe(m.points[0], benchmark)} and "
                f"asks for an RCP at batch size {show_value(batch)} if the runs converge faster")
    if m.kind == "above":
        largest = f" (the largest is {_describe(m.points[0], benchmark)})" if m.points else ""
        return f"larger than every RCP{largest}; the check asks for a new RCP at batch size {show_value(batch)}"
    return "mlperf-logging has no RCP data for it"


def _hp_findings(log: ParsedLog, m: Match, gbs_line: int | None, benchmark: str) -> tuple[list[Finding], str]:
    """One finding per differing hyperparameter, and the summary for the RCP finding."""
    compared = (m.same_size,) if m.same_size is not None else m.points
    keys = LOG_KEYS.get(benchmark, {})

    def lookup(key: str) -> Any:
        rec = log.first(keys.get(key, key))
        return rec.payload if rec is not None else None

    parts = []
    by_key: dict[str, list[tuple[Point, Any, Any]]] = {}  # an interpolated check compares with two RCPs
    for point in compared:
        diffs = unmatched_hyperparameters(point, lookup)
        for key, run, rcp in diffs:
            by_key.setdefault(key, []).append((point, run, rcp))
        total = len(point.hyperparameters)
        noun = "hyperparameter" if total == 1 else f"{total} hyperparameters"
        parts.append(f"{len(diffs)} of the {noun} of {point.name} differ" if diffs
                     else f"the run matches {'the' if total == 1 else 'all'} {noun} of {point.name}")
    out = [_difference(log, key, seen, keys, gbs_line) for key, seen in by_key.items()]
    return out, "; ".join(parts)


def _difference(log: ParsedLog, key: str, seen: list[tuple[Point, Any, Any]], keys: dict[str, str],
                gbs_line: int | None) -> Finding:
    """HP007, once per hyperparameter: the RCPs it differs from, those with one value named together."""
    rec = log.first(keys.get(key, key))
    shown = "not logged" if rec is None else show_value(seen[0][1])
    named = f"'{key}'" + (f" (logged as {keys[key]})" if key in keys else "")
    by_value: dict[str, list[str]] = {}
    for point, _run, rcp in seen:
        by_value.setdefault(show_value(rcp), []).append(f"RCP {point.name} (batch size {show_value(point.batch_size)})")
    where = ", ".join(f"{' and '.join(names)} {value}" for value, names in by_value.items())
    return finding("HP007", log.path, f"{named}: run {shown}, {where}", line=rec.line if rec is not None else gbs_line)


def advise_runs(logs: Sequence[ParsedLog], ruleset: str, *, fail_on_rcp: bool = False) -> list[Finding]:
    """RCP advice for the runs of one results folder (or one log), on the first run of each batch size: closed
    runs as they will be judged, open runs as they would be judged in closed. fail_on_rcp: a predicted RCP
    failure is an error (HP008), for CI."""
    groups: dict[tuple[str, str, str], list[ParsedLog]] = {}
    for log in logs:
        division, bench = log.first("submission_division"), log.first("submission_benchmark")
        if division is None or division.payload not in ("closed", "open") or bench is None or not isinstance(
                bench.payload, str):
            continue
        gbs, _ = _last(log, "global_batch_size")
        key = (division.payload, bench.payload, json.dumps(gbs, sort_keys=True, default=str))
        groups.setdefault(key, []).append(log)
    out: list[Finding] = []
    for (claimed, benchmark, _), runs in groups.items():
        out.extend(_advise_group(runs, benchmark, ruleset, claimed, fail_on_rcp))
    return out


def _advise_group(runs: Sequence[ParsedLog], benchmark: str, ruleset: str, division: str, fail_on_rcp: bool
                  ) -> list[Finding]:
    log = runs[0]
    gbs, line = _last(log, "global_batch_size")
    many = f" ({len(runs)} {division} runs in {os.path.dirname(log.path) or '.'})" if len(runs) > 1 else ""
    judged = "" if division == "closed" else " as closed"
    head = f"{division} {benchmark} at global_batch_size {show_value(gbs)}{many}{judged}, ruleset {ruleset}: "
    if isinstance(gbs, bool) or not isinstance(gbs, (int, float)) or not 0 < gbs < math.inf:
        return [finding("HP006", log.path, head + "no usable global_batch_size: the RCP check cannot be made",
                        line=line)]
    data = points(ruleset, benchmark)
    if not data:
        return [finding("HP006", log.path, head + f"mlperf-logging has no RCP data for {benchmark} in this ruleset",
                        line=line)]
    m = match(data, gbs)
    diffs, summary = _hp_findings(log, m, line, benchmark) if (m.points or m.same_size) else ([], "")
    source = f" [mlperf-logging rcp_checker/training_{ruleset}/rcps_{benchmark}.json]"
    message = head + _where(m, benchmark, gbs) + (f"; {summary}" if summary else "") + source
    return [finding("HP006", log.path, message, line=line), *diffs,
            *_prediction(runs, benchmark, ruleset, line, fail_on_rcp)]


def _as_packaged(facts: list[LogFacts], benchmark: str, ruleset: str) -> tuple[list[LogFacts], str]:
    """Raw job output as `package` would write its results folder: by start time, and with more runs than the
    round's N the median window of N (rounds/window.py, as `check` judges the run set), named result_<i>.txt
    (the reference's RCP checker lists only such names). The words say which runs were taken."""
    facts = sorted(facts, key=lambda f: (math.inf if f.started_ms is None else f.started_ms, f.path))
    n, total, words = benchmarks.runs(benchmark), len(facts), ""
    if n and total > n and window.window_applies(ruleset):
        picked = window.median_window([window.scored_minutes(f.minutes, f.converged) for f in facts], n, benchmark)
        facts = facts[picked.start : picked.stop]
        first, last = (os.path.basename(f.path) for f in (facts[0], facts[-1]))
        words = f" on the median window of {n} of the {total} runs ({first} to {last})"
    folder = os.path.dirname(facts[0].path)
    return [replace(f, path=os.path.join(folder, f"result_{i}.txt")) for i, f in enumerate(facts)], words


def _prediction(runs: Sequence[ParsedLog], benchmark: str, ruleset: str, line: int | None, fail_on_rcp: bool
                ) -> list[Finding]:
    """HP008: the RCP check's verdict on these runs, computed by the tree check's own code (checker/rcp), so the
    advice, `check` and the reference give the same numbers. One trial log stands for a full set of runs that
    all converge as it did: the verdict then says where its convergence point falls in the window."""

    facts = [extract(log) for log in runs]
    seen = facts
    trial = len(facts) == 1
    folder = os.path.dirname(facts[0].path)
    if trial:
        count = benchmarks.runs(benchmark) or 1
        facts = [replace(facts[0], path=os.path.join(folder, f"result_{i}.txt")) for i in range(count)]
    chosen = ""
    if not trial and not all(fnmatch.fnmatchcase(os.path.basename(f.path), "result_*.txt") for f in facts):
        facts, chosen = _as_packaged(facts, benchmark, ruleset)
        seen = facts
    result = evaluate(benchmark, ruleset, facts, closed=True)
    if result.status == "not_applicable":
        return []
    unit = benchmarks.unit(benchmark, ruleset)
    said = {"pass": "passes", "bypassed": "passes by bypass", "fail": "fails", "error": "cannot be made",
            "not_checked": "is not made by the installed mlperf-logging"}.get(result.status, result.status)
    what = "if every run converged as this trial did, the RCP check " if trial else "the RCP check "
    text = f"{what}{said}{chosen}: {result.message}"
    if trial and result.min_epochs is not None and result.rcp_mean is not None:
        text += (f"; the runs' olympic mean must be at least {result.min_epochs:.4f} {unit} (fastest allowed), and "
                 f"at or above the RCP mean {result.rcp_mean:.4f} it is not normalised")
    severity = Severity.ERROR if fail_on_rcp and result.status == "fail" else None
    # the RCP planning's numpy (rcp/risk.py) only once a verdict is made (start-up of `advise`)
    from mlsubmit.checker.rcp.planning import risk_finding

    # RUN009: the set once complete, attached to the set (the runs' folder), not to one of its logs
    risk = risk_finding(folder or runs[0].path, benchmark, ruleset, seen, limit=None)
    return [finding("HP008", runs[0].path, text, line=line, severity=severity), *([risk] if risk else [])]
