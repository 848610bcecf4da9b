"""Fit run planning's priors (checker/tables/rcp-risk.yaml) from the published closed sets of the corpus, and
validate the model honestly: cross-validated by organisation and round, a set is never judged by priors fitted on
it.

For every closed results folder with an RCP and its full N runs: its runs in start order; the prediction from the
first k (k = 2 .. N-1) against the verdict of all N (mlperf-logging's RCP check, as `check` gives it). Prints the
reliability table (predicted P(RCP fail) in bands against the observed rate, with its binomial 95 % interval), the
Brier score against always predicting the base rate, overall and per k, and how often the 10-90 % score band
holds the final score. Sets read at 1 sample (v1.0/v1.1 BERT logs whose eval says `epoch_num: 1`) are left out of
the scores: their verdict is a reading artefact no model of convergence predicts.

The chance shown is the draws' own mapped by a calibration (logit p -> a + b logit p, two parameters) fitted on
out-of-fold predictions. In the cross-validation it is nested: fold f's map is fitted on predictions for the other
folds made by priors that never saw f (INNER_DRAWS draws each, for time); `--write` ships the map fitted on every
set's out-of-fold prediction.

    .venv/bin/python tools/rcp_risk_fit.py [CORPUS] [--write]     # --write: refit checker/tables/rcp-risk.yaml
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from mlsubmit.checker.rcp import planning, risk  # noqa: E402
from mlsubmit.checker.rounds import benchmarks  # noqa: E402
from mlsubmit.checker.rounds import window as rule  # noqa: E402
from mlsubmit.checker.upstream.rcp_adapted import Window  # noqa: E402
from rcp_calibration import BANDS, judged_sets  # noqa: E402

INNER_DRAWS = 2_000  # draws per prediction of the nested fits of the calibration map
PRIOR_SD = 1.0  # the calibration map's prior: a ~ N(0, 1), b ~ N(1, 1)
POOL = 20.0  # runs' worth of the pooled rate each benchmark's rate of not converging is shrunk towards
STRENGTHS = (2.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0)  # the Beta prior's strengths tried (runs' worth)
DOFS = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0)  # the spread prior's worth tried (runs)
MARGIN_POOL = 5.0  # sets' worth of the pooled margin each benchmark's is shrunk towards
FLOOR = 0.005  # the smallest spread kept (0.5 %): runs converging at one evaluation point are not certainty


@dataclass(frozen=True)
class Set:
    name: str
    fold: str  # organisation and round: the unit of cross-validation
    benchmark: str
    runs: tuple[risk.Run, ...]
    window: Window
    passed: bool
    score: float  # the final normalised score in minutes (inf when it fails)
    at_one: bool  # read at 1 sample: left out of the scores


def corpus_sets(corpus: Path) -> list[Set]:
    out = []
    for ruleset, folder, facts, verdict in judged_sets(corpus):
        runs, batch = planning.runs_of(facts, ruleset)
        win = planning.window_for(ruleset, folder.name, batch)
        if win is None or win.kind == "above":
            continue
        rel = folder.relative_to(corpus)
        minutes = [rule.scored_minutes(f.minutes, f.converged) for f in facts]
        score = rule.olympic(minutes, folder.name) * verdict.scaling_factor if verdict.passed else math.inf
        conv = [r.to_converge for r in runs if r.to_converge is not None]
        at_one = folder.name == "bert" and bool(conv) and sorted(conv)[len(conv) // 2] <= 1.0
        out.append(Set(str(rel), f"{rel.parts[1]} {rel.parts[0]}", folder.name, tuple(runs), win,
                       verdict.passed, score, at_one))
    return out


# --- fitting ----------------------------------------------------------------------------------------------------


def _betabinom(f: int, n: int, a: float, b: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(f + 1) - math.lgamma(n - f + 1) + math.lgamma(f + a)
            + math.lgamma(n - f + b) - math.lgamma(n + a + b) - math.lgamma(a) - math.lgamma(b)
            + math.lgamma(a + b))


def _log_f(x: float, d1: float, d2: float) -> float:
    """log density of the F(d1, d2) distribution at x > 0."""
    return (0.5 * (d1 * math.log(d1 * x) + d2 * math.log(d2) - (d1 + d2) * math.log(d1 * x + d2)) - math.log(x)
            - (math.lgamma(d1 / 2) + math.lgamma(d2 / 2) - math.lgamma((d1 + d2) / 2)))


def _spreads(s: Set) -> tuple[float, int] | None:
    """A set's log-scale variance of its converged runs (floored) and its degrees of freedom."""
    conv = [r.to_converge for r in s.runs if r.to_converge is not None and r.to_converge > 0]
    if len(conv) < 3:
        return None
    logs = [math.log(v) for v in conv]
    mean = sum(logs) / len(logs)
    var = sum((v - mean) ** 2 for v in logs) / (len(logs) - 1)
    return max(var, FLOOR**2), len(logs) - 1


def fit(sets: Sequence[Set]) -> dict[str, object]:
    """The priors, from these sets only (the data of risk.prior_for). Sets read at 1 sample are left out."""
    kept = [s for s in sets if not s.at_one]
    missed = {s.name: sum(r.to_converge is None for r in s.runs) for s in kept}
    runs_total = sum(len(s.runs) for s in kept)
    pooled_rate = (sum(missed.values()) + 0.5) / (runs_total + 1.0)
    by_bench: dict[str, list[Set]] = {}
    for s in kept:
        by_bench.setdefault(s.benchmark, []).append(s)
    rates = {b: (sum(missed[s.name] for s in ss) + POOL * pooled_rate) / (sum(len(s.runs) for s in ss) + POOL)
             for b, ss in by_bench.items()}

    def strength_loglik(k: float) -> float:
        return sum(_betabinom(missed[s.name], len(s.runs), k * rates[s.benchmark], k * (1 - rates[s.benchmark]))
                   for s in kept)

    strength = max(STRENGTHS, key=strength_loglik)
    variances = {b: [v for v in map(_spreads, ss) if v is not None] for b, ss in by_bench.items()}
    pooled_var = _typical_variance(variances)
    scales = {b: ((sum(v * d for v, d in vs) + 4 * pooled_var) / (sum(d for _, d in vs) + 4))
              for b, vs in variances.items()}

    def dof_loglik(nu: float) -> float:
        return sum(_log_f(v / scales[b], d, nu) for b, vs in variances.items() for v, d in vs)

    dof = max(DOFS, key=dof_loglik)
    pooled_m, pooled_sd, centres, margin_sds = _margins(by_bench)
    pooled_t, time_vars = _times(by_bench)

    def row(rate: float, var: float, margin: float, margin_sd: float, tvar: float, sets_: int, runs_: int,
            missed_: int) -> dict[str, object]:
        return {"alpha": round(strength * rate, 6), "beta": round(strength * (1 - rate), 6),
                "spread": round(max(math.sqrt(var), FLOOR), 6), "dof": dof, "margin": round(margin, 6),
                "margin_sd": round(max(margin_sd, FLOOR), 6), "time_spread": round(max(math.sqrt(tvar), FLOOR), 6),
                "sets": sets_, "runs": runs_, "not_converged": missed_}

    return {
        "model": risk.MODEL,
        "pooled": row(pooled_rate, pooled_var, pooled_m, pooled_sd, pooled_t, len(kept), runs_total,
                      sum(missed.values())),
        "benchmarks": {b: row(rates[b], scales[b], centres[b], margin_sds[b], time_vars[b], len(ss),
                              sum(len(s.runs) for s in ss), sum(missed[s.name] for s in ss))
                       for b, ss in sorted(by_bench.items())},
    }


def _typical_variance(variances: dict[str, list[tuple[float, int]]]) -> float:
    """The spread a benchmark without sets of its own is given, and what each benchmark's is shrunk towards: the
    geometric mean over benchmarks of each benchmark's pooled within-set variance, one vote per benchmark. Pooling
    runs instead let unet3d's two 40-run sets (a spread of 30 %, 74 of the 600-odd degrees of freedom) set it
    at 12 % and widen every benchmark with few sets (retinanet's 0.5 % became 4.5 %): the cause of predictions
    too wide, and of pessimistic 1-50 % bands, in predictive-1."""
    logs = [math.log(sum(v * d for v, d in vs) / sum(d for _, d in vs)) for vs in variances.values() if vs]
    return math.exp(sum(logs) / len(logs)) if logs else 0.05**2


def _margins(by_bench: dict[str, list[Set]]) -> tuple[float, float, dict[str, float], dict[str, float]]:
    """The margin prior: the pooled centre and spread, and each benchmark's, shrunk towards them. The spread is a
    set's distance from its own benchmark's centre (not from the pooled one: benchmarks differ)."""
    margins = {b: [m for m in map(_margin, ss) if m is not None] for b, ss in by_bench.items()}
    every = [m for ms in margins.values() for m in ms]
    pooled = sum(every) / len(every)
    centres = {b: (sum(ms) + MARGIN_POOL * pooled) / (len(ms) + MARGIN_POOL) for b, ms in margins.items()}
    squares = {b: sum((m - sum(ms) / len(ms)) ** 2 for m in ms) for b, ms in margins.items() if ms}
    within = sum(squares.values()) / max(1, len(every) - len(squares))
    sds = {b: math.sqrt((squares.get(b, 0.0) + MARGIN_POOL * within) / (max(0, len(ms) - 1) + MARGIN_POOL))
           for b, ms in margins.items()}
    return pooled, math.sqrt(within), centres, sds


def _times(by_bench: dict[str, list[Set]]) -> tuple[float, dict[str, float]]:
    """The pooled within-set variance of minutes per unit of convergence (log scale), and each benchmark's."""
    times = {b: [v for v in map(_time_spreads, ss) if v is not None] for b, ss in by_bench.items()}
    every = [v for vs in times.values() for v in vs]
    pooled = sum(v * d for v, d in every) / max(1, sum(d for _, d in every)) if every else 0.03**2
    return pooled, {b: (sum(v * d for v, d in vs) + 4 * pooled) / (sum(d for _, d in vs) + 4)
                    for b, vs in times.items()}


def _margin(s: Set) -> float | None:
    """log(the set's olympic mean / the fastest allowed mean): where a published set sits against its window."""
    conv = sorted(r.to_converge for r in s.runs if r.to_converge is not None and r.to_converge > 0)
    drop = benchmarks.dropped(s.benchmark)
    if len(conv) <= 2 * drop or s.window.fastest <= 0:
        return None
    kept = conv[drop : len(conv) - drop]
    return math.log(sum(kept) / len(kept) / s.window.fastest)


def _time_spreads(s: Set) -> tuple[float, int] | None:
    """A set's log-scale variance of minutes per unit of convergence and its degrees of freedom."""
    logs = [math.log(r.minutes / r.to_converge) for r in s.runs
            if r.minutes is not None and r.to_converge is not None and r.to_converge > 0 and r.minutes > 0]
    if len(logs) < 3:
        return None
    mean = sum(logs) / len(logs)
    return max(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1), FLOOR**2), len(logs) - 1


# --- validation -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    name: str
    k: int
    p: float
    failed: bool
    certain: bool
    covered: bool | None  # whether the 10-90 % band holds the final score (passing sets with a band)
    at_one: bool
    raw: float = 0.0  # the draws' own chance, before the calibration map


def predict(s: Set, fitted: dict[str, object], ks: Iterable[int] | None = None, *,
            calibrate: risk.Calibration = risk.IDENTITY, draws: int = risk.DRAWS) -> list[Row]:
    prior = risk.prior_for(s.benchmark, fitted)
    out = []
    for k in ks if ks is not None else range(2, len(s.runs)):
        found = risk.assess(s.runs[:k], s.window, s.benchmark, prior=prior, calibrate=calibrate, draws=draws)
        if found is None:
            continue
        covered = None
        if s.passed and found.score is not None and math.isfinite(s.score):
            covered = found.score[0] <= s.score <= found.score[2]
        raw = found.p_fail if found.p_model is None else found.p_model
        out.append(Row(s.name, k, found.p_fail, not s.passed, found.certain, covered, s.at_one, raw))
    return out


def out_of_fold(sets: Sequence[Set], *, draws: int = risk.DRAWS) -> list[Row]:
    """The draws' own chances (no calibration map), each fold (organisation and round) predicted with priors
    fitted on every other fold."""
    rows: list[Row] = []
    for fold in sorted({s.fold for s in sets}):
        fitted = fit([s for s in sets if s.fold != fold])
        rows += [r for s in sets if s.fold == fold for r in predict(s, fitted, draws=draws)]
    return rows


def cross_validate(sets: Sequence[Set]) -> list[Row]:
    """Each fold predicted with priors fitted on every other fold and mapped by a calibration fitted without it,
    nested: the map for fold f is fitted on predictions for the other folds made by priors that never saw f
    (INNER_DRAWS each, for time)."""
    rows: list[Row] = []
    folds = sorted({s.fold for s in sets})
    for fold in folds:
        rest = [s for s in sets if s.fold != fold]
        mapped = fit_calibration(out_of_fold(rest, draws=INNER_DRAWS))
        fitted = fit(rest)
        rows += [r for s in sets if s.fold == fold for r in predict(s, fitted, calibrate=mapped)]
    return rows


def fit_calibration(rows: Sequence[Row]) -> risk.Calibration:
    """The map logit p -> a + b logit p of the draws' own chance (`Row.raw`) by penalised maximum likelihood
    (Newton's method) on these predictions, not certain and not read at 1 sample. Two parameters: each set
    weighs one in all (its predictions at successive k are not independent evidence), and a normal prior of sd
    PRIOR_SD on a and on b - 1 keeps the map near the identity where the few failing sets cannot tell."""
    used = [r for r in rows if not r.at_one and not r.certain]
    per_set: dict[str, int] = {}
    for r in used:
        per_set[r.name] = per_set.get(r.name, 0) + 1
    data = [(_logit(r.raw), float(r.failed), 1.0 / per_set[r.name]) for r in used]
    a, b = 0.0, 1.0
    for _ in range(50):
        ga, gb = -a / PRIOR_SD**2, -(b - 1.0) / PRIOR_SD**2
        haa = hab = hbb = 1.0 / PRIOR_SD**2
        for x, y, w in data:
            q = 1.0 / (1.0 + math.exp(-(a + b * x)))
            ga, gb = ga + w * (y - q), gb + w * (y - q) * x
            c = w * q * (1.0 - q)
            haa, hab, hbb = haa + c, hab + c * x, hbb + c * x * x
        det = haa * hbb - hab * hab
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = a + da, max(b + db, 0.05)
        if abs(da) + abs(db) < 1e-9:
            break
    return risk.Calibration(round(a, 6), round(b, 6))


def _logit(p: float) -> float:
    q = min(max(p, risk.EDGE), 1.0 - risk.EDGE)
    return math.log(q / (1.0 - q))


def interval(hits: int, n: int) -> tuple[float, float]:
    """The Wilson 95 % interval of a rate of hits in n."""
    if n == 0:
        return 0.0, 1.0
    z, p = 1.959964, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def brier(rows: Sequence[Row]) -> tuple[float, float]:
    """(the model's Brier score, always predicting these rows' base rate's)."""
    if not rows:
        return math.nan, math.nan
    rate = sum(r.failed for r in rows) / len(rows)
    return (sum((r.p - r.failed) ** 2 for r in rows) / len(rows),
            sum((rate - r.failed) ** 2 for r in rows) / len(rows))


def reliability(rows: Sequence[Row]) -> list[str]:
    """The reliability table: predictions in bands of P(RCP fail) against the observed rate of fails and its
    Wilson 95 % interval; `holds` when the band's mean prediction is inside it."""
    lines = ["| predicted P(RCP fail) | predictions | sets | mean predicted | observed | 95 % interval | holds |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for low, high in BANDS:
        band = [r for r in rows if low <= r.p < high]
        if not band:
            lines.append(f"| {low:.0%}-{min(high, 1):.0%} | 0 | 0 | - | - | - | - |")
            continue
        mean = sum(r.p for r in band) / len(band)
        seen = sum(r.failed for r in band)
        lo, hi = interval(seen, len(band))
        lines.append(f"| {low:.0%}-{min(high, 1):.0%} | {len(band)} | {len({r.name for r in band})} | "
                     f"{mean:.1%} | {seen}/{len(band)} = {seen / len(band):.1%} | {lo:.1%}-{hi:.1%} | "
                     f"{'yes' if lo <= mean <= hi else 'NO'} |")
    return lines


def report(sets: Sequence[Set], rows: Sequence[Row]) -> str:
    scored = [r for r in rows if not r.at_one]
    failed = [s.name for s in sets if not s.passed]
    lines = [f"{len(sets)} closed sets with their N runs ({len(failed)} fail their RCP; "
             f"{sum(s.at_one for s in sets)} read at 1 sample, left out of the scores), {len(scored)} predictions "
             f"(k = 2 .. N-1), cross-validated by organisation and round (model {risk.MODEL})", "",
             *reliability(scored), "", "One prediction per set (k = 2):", "",
             *reliability([r for r in scored if r.k == 2])]
    model, base = brier(scored)
    lines += ["", f"Brier score {model:.4f}, base rate {base:.4f} (ratio {model / base:.2f})", "",
              "| k | predictions | Brier | base rate | ratio | band covers |",
              "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for k in sorted({r.k for r in scored}):
        at = [r for r in scored if r.k == k]
        m, b = brier(at)
        cov = [r.covered for r in at if r.covered is not None]
        lines.append(f"| {k} | {len(at)} | {m:.4f} | {b:.4f} | {m / b if b else math.nan:.2f} | "
                     f"{sum(cov)}/{len(cov)} |")
    low3 = [r for r in scored if r.k <= 3]
    m3, b3 = brier(low3)
    cov = [r.covered for r in scored if r.covered is not None]
    sure = [r for r in scored if r.p >= 0.99 and not r.failed and not r.certain]
    lines += ["", f"k <= 3: Brier {m3:.4f}, base rate {b3:.4f} (ratio {m3 / b3:.2f})",
              f"10-90 % band holds the final score in {sum(cov)}/{len(cov)} = {sum(cov) / max(1, len(cov)):.1%} "
              "of passing-set predictions",
              f"P >= 99 % on a passing set without certainty: {len(sure)}", "", "Sets that fail:",
              *(f"- {f}" for f in failed)]
    return "\n".join(lines)


def fit_shipped(sets: Sequence[Set]) -> dict[str, object]:
    """The table: priors fitted on every set, and the calibration map fitted on every set's out-of-fold
    predictions (no prediction made by priors fitted on its own fold)."""
    rows = out_of_fold(sets, draws=INNER_DRAWS)
    mapped = fit_calibration(rows)
    used = [r for r in rows if not r.at_one and not r.certain]
    fitted = fit(sets)
    return {"model": fitted["model"],
            "calibration": {"a": mapped.a, "b": mapped.b, "predictions": len(used),
                            "sets": len({r.name for r in used}), "failing_sets": len({r.name for r in used
                                                                                     if r.failed})},
            **{k: v for k, v in fitted.items() if k != "model"}}


def write_table(fitted: dict[str, object], path: Path, sets: int) -> None:
    import yaml

    head = ("# Run planning's priors (checker/rcp/risk.py, issue 55), fitted by tools/rcp_risk_fit.py --write from\n"
            f"# {sets} published closed sets of the corpus with their N runs. Do not edit by hand: refit.\n"
            "# alpha, beta: a run's chance of not converging ~ Beta(alpha, beta); spread: the log-scale spread of\n"
            "# converged runs within a set, worth dof runs; sets, runs, not_converged: what it was fitted on.\n")
    path.write_text(head + yaml.safe_dump(fitted, sort_keys=False), encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default=os.environ.get("MLSUBMIT_CORPUS", str(ROOT.parent / "shared"
                                                                                            / "corpus")))
    parser.add_argument("--write", action="store_true", help="refit checker/tables/rcp-risk.yaml")
    args = parser.parse_args(argv)
    sets = corpus_sets(Path(args.corpus))
    if args.write:
        write_table(fit_shipped(sets), ROOT / "checker" / "tables" / "rcp-risk.yaml", len(sets))
    print(report(sets, cross_validate(sets)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
