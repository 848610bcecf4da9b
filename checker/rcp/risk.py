"""Run planning: how likely a closed run set still in progress is to fail its RCP once all N runs are in, how
likely it is to be normalised, and the score it will get; and how strict an RCP is for reference-like runs.

k runs say little, so the runs to come are drawn from a predictive model that carries what k runs leave unknown
(issue 55), DRAWS times with a fixed SEED (numpy's default generator), all draws at once:

- whether a run converges: its chance of not converging is drawn from a Beta prior per benchmark (the published
  sets' rate, checker/tables/rcp-risk.yaml) updated by the set's own runs so far, then each run to come fails
  with it;
- where a run converges, on a log scale: the set's centre so far (the median from 3 converged runs, which the
  olympic mean would drop an outlier from anyway) and spread, with the uncertainty of both. The spread is drawn
  from a scaled inverse chi-square whose prior is the benchmark's typical within-set spread (the same table),
  worth `dof` runs, updated by the set's own runs; the centre from a normal around the set's centre with that
  spread over the converged runs seen. The RCP record's reference runs do not set the spread: a record whose
  runs all converged at the same epoch would make the verdict look certain;
- its minutes: its convergence value times the set's median minutes per unit so far.

Each final set (the runs seen, kept as they are, and the runs drawn) is then judged as the RCP check judges it
(mlperf-logging's check_directory): more runs that did not converge than the round drops at each end is a fail;
else the olympic mean of the sorted values, less the round's drop at each end, fails below the fastest allowed
mean and is normalised below the RCP mean (factor RCP mean / mean). The score is the olympic mean of the minutes
(TR1.1 §Scoring: a run that did not converge counts as infinitely slow) times that factor, over passing draws.

The draws' chance is then mapped by the calibration the table ships (logit p -> a + b logit p, fitted by
tools/rcp_risk_fit.py on predictions for sets the model was not fitted on, docs/runs.md). The continuous model is
pessimistic between 1 % and 90 % on published sets: they were tuned to converge at the first evaluation at or
just above their fastest allowed mean, and none that published a run that did not converge published a second
(7 resnet sets with exactly one), which neither the normal spread nor the Beta prior knows. The parts keep their
shares of the mapped chance; a certain verdict is not mapped; `p_model` keeps the draws' own chance.

`certain` is true only when the runs in hand already decide the verdict (more runs that did not converge than
tolerated, or all N runs in); only then is a chance shown as 100 %. `convergence_drift` flags converged runs that
trend from first to last (the model assumes they do not).

Strictness (`strictness`) is mlperf-logging's `rcp_viewer.py --bootstrap GBS` (May 2026): N draws with replacement
from a measured record's reference runs, ceil(10 %) trimmed from each end, the mean against the record's Min Epochs.

numpy is imported here and only here at run time; the checker imports this module only when a set needs it, so a
`check` without run sets does not pay for numpy (docs/architecture.md: the numpy stand-ins).
"""

from __future__ import annotations

import functools
import importlib.resources
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.upstream.rcp_adapted import Window

from mlsubmit.core.support.datafiles import load_validated

SEED = 48  # fixed, shown with every figure: the same set gives the same figures on every machine
DRAWS = 10_000
MODEL = "predictive-2"  # the model's name and version, in every figure: a refit table keeps it, a new model not
BINS = 12  # the score histogram's bars
TABLE = "tables/rcp-risk.yaml"
# Convergence values are taken on a log scale within these bounds: a value of 0, a subnormal or a 4,000-digit
# count from a log is clipped, never a division by zero or an overflow.
LOW, HIGH = 1e-300, 1e300
DRIFT_T = 3.0  # a trend of the converged runs against their order with |t| at least this is flagged


@dataclass(frozen=True)
class Run:
    """One run of the set as the RCP check reads it: its epochs or samples to converge (None: did not converge)
    and its time to train in minutes (None: not known)."""

    to_converge: float | None
    minutes: float | None


@dataclass(frozen=True)
class Prior:
    """A benchmark's prior (checker/tables/rcp-risk.yaml): a run's chance of not converging ~ Beta(alpha, beta);
    the log-scale spread of converged runs within a set, worth `dof` runs."""

    alpha: float
    beta: float
    spread: float
    dof: float
    margin: float = 0.0  # where published sets' centres sit: log(olympic mean / fastest allowed), ...
    margin_sd: float = math.inf  # ... and how far apart (inf: no prior on the centre)
    time_spread: float = 0.0  # the log-scale spread of minutes per unit of convergence within a set

    def to_dict(self) -> dict[str, float]:
        return {"alpha": self.alpha, "beta": self.beta, "spread": self.spread, "dof": self.dof,
                "margin": self.margin, "margin_sd": self.margin_sd, "time_spread": self.time_spread}


@dataclass(frozen=True)
class Calibration:
    """The map from the draws' chance of an RCP fail to the one shown: logit p -> a + b logit p."""

    a: float = 0.0
    b: float = 1.0

    def __call__(self, p: float) -> float:
        if self.a == 0.0 and self.b == 1.0:
            return p
        q = min(max(p, EDGE), 1.0 - EDGE)
        z = self.a + self.b * math.log(q / (1.0 - q))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


IDENTITY = Calibration()
EDGE = 1e-4  # a chance is taken at least this far from 0 and 1 before the map: 10,000 draws cannot tell closer


def calibration(fitted: Mapping[str, Any] | None = None) -> Calibration:
    """The table's calibration map (the identity when it ships none)."""
    row = (table() if fitted is None else fitted).get("calibration")
    return IDENTITY if not row else Calibration(float(row["a"]), float(row["b"]))


@functools.cache
def table() -> dict[str, Any]:
    """checker/tables/rcp-risk.yaml, validated against schemas/rcp-risk.schema.json."""
    entry = importlib.resources.files("mlsubmit.checker").joinpath(TABLE)
    data: dict[str, Any] = load_validated(entry, "rcp-risk.schema.json", what=TABLE)
    return data


def prior_for(benchmark: str, fitted: Mapping[str, Any] | None = None) -> Prior:
    """The benchmark's fitted prior, else the pooled one (a benchmark no published set of the corpus runs)."""
    data = table() if fitted is None else fitted
    row = data["benchmarks"].get(benchmark) or data["pooled"]
    return Prior(float(row["alpha"]), float(row["beta"]), float(row["spread"]), float(row["dof"]),
                 float(row["margin"]), float(row["margin_sd"]), float(row["time_spread"]))


@dataclass(frozen=True)
class Risk:
    """The figures of one run set (see the module docstring). p_fail = p_insufficient (more runs that did not
    converge than tolerated) + p_fast (an olympic mean below the fastest allowed). score: 10 %, 50 % and 90 %
    quantiles of the normalised score in minutes over the passing draws (None when none passes or no minutes are
    known); histogram: (low, high, count) bars. drift: the converged runs' trend, as a fraction a run, when it is
    clear (None otherwise)."""

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
    certain: bool = False
    drift: float | None = None
    prior: Prior | None = None
    p_model: float | None = None  # the draws' own chance, before the calibration map

    @property
    def p_fast(self) -> float:
        return max(0.0, self.p_fail - self.p_insufficient)

    def words(self, unit: str) -> str:
        """The figures in one sentence, with where they come from."""
        shown = (f"final score median {band_text(*self.score)}" if self.score is not None
                 else "no passing draw has a score")
        if self.runs >= self.required:
            return (f"all {self.required} runs are in: RCP fail {percent(self.p_fail, True)}, normalised "
                    f"{percent(self.p_normalised, True)}; {shown}")
        sure = "; certain from the runs in hand" if self.certain else ""
        drift = "" if self.drift is None else (
            f"; the converged runs so far trend by {self.drift:+.1%} a run, which the model does not follow")
        chance = percent(self.p_fail, self.certain)
        drawn = "" if self.certain or self.p_model is None else percent(self.p_model, False)
        own = f"; the draws' own {drawn} before calibration" if drawn and drawn != chance else ""
        return (f"with {self.required - self.runs} more run(s): P(RCP fail) {chance}"
                f"{sure} (too many runs not converging {percent(self.p_insufficient, self.certain)}, olympic mean "
                f"below the fastest allowed {percent(self.p_fast, self.certain)}{own}), P(normalised) "
                f"{percent(self.p_normalised, self.certain)}; {shown}{drift}; {self.draws:,} draws of model "
                f"{self.model} (the benchmark's published rates, updated by the set's {self.runs} run(s)), seed "
                f"{self.seed}")

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "required": self.required, "model": self.model, "p_fail": self.p_fail,
                "p_insufficient": self.p_insufficient, "p_fast": self.p_fast, "p_normalised": self.p_normalised,
                "certain": self.certain, "drift": self.drift,
                "score": None if self.score is None else {"p10": self.score[0], "median": self.score[1],
                                                          "p90": self.score[2], "unit": "min"},
                "histogram": [{"low": lo, "high": hi, "count": c} for lo, hi, c in self.histogram],
                "seed": self.seed, "draws": self.draws,
                "p_model": self.p_fail if self.p_model is None else self.p_model,
                "prior": None if self.prior is None else self.prior.to_dict()}


def percent(p: float, certain: bool) -> str:
    """A chance as people read it: 100 % and 0 % only when the runs in hand decide it; else at most "> 99.9 %"
    and at least "< 0.1 %" (10,000 draws cannot tell smaller differences)."""
    if certain or 0.001 <= p <= 0.999:
        return f"{p:.1%}".replace("%", " %")
    return "< 0.1 %" if p < 0.001 else "> 99.9 %"


def band_text(p10: float, median: float, p90: float, unit: str = "min") -> str:
    """The median and 10-90 % band, with as many decimals as it takes for the band's width to show."""
    width = p90 - p10
    places = 2
    if width > 0 and math.isfinite(width):
        places = min(6, max(2, 1 - math.floor(math.log10(width))))
    if width <= 0:
        return f"{median:.{places}f} {unit} (no spread among the draws)"
    return f"{median:.{places}f} {unit} (10-90 %: {p10:.{places}f}-{p90:.{places}f})"


def convergence_text(value: float, unit: str) -> str:
    """A convergence value in the one format the RCP verdict (TREE018/TREE019) writes it: four decimals and its
    unit (an exponent only past 10^15, for hostile values)."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return f"{value:.6g} {unit}"
    return f"{value:.4f} {unit}"


def _logs(values: Sequence[float]) -> np.ndarray:
    return np.log(np.clip(np.asarray(values, dtype=float), LOW, HIGH))


def _centre(y: np.ndarray) -> float:
    """The converged runs' centre on the log scale: the median from 3 runs (an outlier the olympic mean would
    drop does not move it), else the mean."""
    return float(np.median(y) if y.size >= 3 else np.mean(y))


def convergence_drift(seen: Sequence[Run]) -> float | None:
    """The converged runs' trend against their place in the set (a fraction a run), when the least-squares slope
    is at least DRIFT_T standard errors from zero; None with fewer than 4 converged runs or no clear trend."""
    at = [(i, r.to_converge) for i, r in enumerate(seen) if r.to_converge is not None]
    if len(at) < 4:
        return None
    x = np.array([i for i, _ in at], dtype=float)
    y = _logs([v for _, v in at])
    x = x - x.mean()
    sxx = float((x * x).sum())
    if sxx <= 0:
        return None
    slope = float((x * (y - y.mean())).sum() / sxx)
    resid = y - y.mean() - slope * x
    se = math.sqrt(float((resid * resid).sum()) / (len(at) - 2) / sxx)
    if se == 0.0:
        return slope if slope != 0.0 else None
    return slope if abs(slope / se) >= DRIFT_T else None


def _draws(seen: Sequence[Run], more: int, prior: Prior, window: Window, rng: np.random.Generator, draws: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """(to converge, minutes) of the runs to come, shape (draws, more); NaN where a run does not converge."""
    conv = [r for r in seen if r.to_converge is not None]
    y = _logs([r.to_converge for r in conv if r.to_converge is not None])
    m = y.size
    own = float(np.var(y, ddof=1)) if m >= 2 else 0.0
    dof = prior.dof + (m - 1)
    scale2 = (prior.dof * prior.spread**2 + (m - 1) * own) / dof
    var = dof * scale2 / rng.chisquare(dof, size=(draws, 1))
    # the set's centre: its runs so far, weighed against where published sets' centres sit (the margin prior)
    if math.isfinite(prior.margin_sd) and prior.margin_sd > 0 and window.fastest > 0:
        at = math.log(min(max(window.fastest, LOW), HIGH)) + prior.margin
        precision = m / var + 1 / prior.margin_sd**2
        centre = (m / var * _centre(y) + at / prior.margin_sd**2) / precision
    else:
        precision, centre = m / var, np.full_like(var, _centre(y))
    mu = centre + rng.standard_normal((draws, 1)) / np.sqrt(precision)
    values = np.exp(np.clip(mu + np.sqrt(var) * rng.standard_normal((draws, more)), math.log(LOW), math.log(HIGH)))
    return _failures(seen, m, more, prior, rng, draws, values), _minutes(conv, more, prior, rng, draws, values)


def _failures(seen: Sequence[Run], converged: int, more: int, prior: Prior, rng: np.random.Generator, draws: int,
              values: np.ndarray) -> np.ndarray:
    """The values with NaN where a run to come does not converge: its chance drawn from the Beta prior updated
    by the set's runs so far."""
    p_nc = rng.beta(prior.alpha + len(seen) - converged, prior.beta + converged, size=(draws, 1))
    return np.where(rng.random((draws, more)) < p_nc, np.nan, values)


def _minutes(conv: Sequence[Run], more: int, prior: Prior, rng: np.random.Generator, draws: int,
             values: np.ndarray) -> np.ndarray:
    """Minutes of the runs to come: their values times minutes per unit, drawn around the set's so far."""
    ratios = [r.minutes / r.to_converge for r in conv
              if r.minutes is not None and r.to_converge is not None and r.to_converge > 0]
    logs = np.log(np.clip([q for q in ratios if math.isfinite(q) and q > 0], LOW, HIGH))
    if not logs.size:
        return np.full((draws, more), math.nan)
    t = logs.size
    var = (4 * prior.time_spread**2 + (t - 1) * (float(np.var(logs, ddof=1)) if t > 1 else 0.0)) / (3 + t)
    centre = float(np.median(logs)) + math.sqrt(var / t) * rng.standard_normal((draws, 1))
    per = np.exp(np.clip(centre + math.sqrt(var) * rng.standard_normal((draws, more)), math.log(LOW),
                         math.log(HIGH)))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values * per)


def assess(seen: Sequence[Run], window: Window, benchmark: str, *, seed: int = SEED, draws: int = DRAWS,
           prior: Prior | None = None, calibrate: Calibration | None = None) -> Risk | None:
    """The figures of a set whose runs so far are `seen` (in start order; the rules' scored runs). None when no
    run converged yet (nothing to say where the runs to come converge). `calibrate`: the map applied to the
    chance of a fail (the table's when None)."""
    if not any(r.to_converge is not None for r in seen):
        return None
    prior = prior_for(benchmark) if prior is None else prior
    n, drop = window.runs, benchmarks.dropped(benchmark)
    more = max(0, n - len(seen))
    missed = sum(r.to_converge is None for r in seen)
    rng = np.random.default_rng(seed)
    rows = 1 if more == 0 else draws
    new_e, new_t = _draws(seen, more, prior, window, rng, rows) if more else (np.empty((1, 0)), np.empty((1, 0)))
    new_t = np.where(np.isnan(new_e), np.nan, new_t)
    old_e = np.array([math.nan if r.to_converge is None else min(max(r.to_converge, 0.0), HIGH) for r in seen])
    old_t = np.array([math.nan if r.to_converge is None or r.minutes is None else r.minutes for r in seen])
    epochs = np.concatenate([np.broadcast_to(old_e, (rows, len(seen))), new_e], axis=1)
    minutes = np.concatenate([np.broadcast_to(old_t, (rows, len(seen))), new_t], axis=1)
    mean, short = _olympic(epochs, drop)
    fail = short | (mean < window.fastest)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factor = np.where(~fail & (mean < window.rcp_mean), window.rcp_mean / np.where(fail, 1.0, mean), 1.0)
        score = (_olympic(minutes, drop)[0] * factor)[~fail]
    score = score[np.isfinite(score)]
    certain = more == 0 or missed > drop
    raw, insufficient = float(fail.mean()), float(short.mean())
    p = raw if certain else (calibration() if calibrate is None else calibrate)(raw)
    share = insufficient / raw if raw > 0 else 0.0  # the parts keep their shares of the mapped chance
    return Risk(len(seen), n, MODEL, p, p * share, float((~fail & (factor > 1.0)).mean()), _quantiles(score),
                _histogram(score), seed, rows, certain, convergence_drift(seen), prior, raw)


def _olympic(values: np.ndarray, drop: int) -> tuple[np.ndarray, np.ndarray]:
    """Row by row: the mean after the `drop` lowest and highest (a NaN, a run that did not converge, sorts
    last, as the reference's 1e9 does), and whether more than `drop` runs did not converge (then the mean is inf)."""
    short = np.isnan(values).sum(axis=1) > drop
    ordered = np.sort(np.where(np.isnan(values), np.inf, values), axis=1)
    kept = ordered[:, drop : values.shape[1] - drop]
    with np.errstate(invalid="ignore", over="ignore"):
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
