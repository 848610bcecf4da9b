"""Student's t-test from summary statistics, in plain Python (the RCP check's only need for scipy).

Importing scipy.stats costs about a second, more than checking a whole tree of logs. The RCP check makes one kind
of test: two independent samples with equal variances, from their means, standard deviations and sizes. The
two-sided p-value is 2·P(T > |t|) with T Student-distributed, and P(T > t) = ½·I_x(df/2, ½) with
x = df / (df + t²), the regularised incomplete beta function, evaluated here by its continued fraction (modified
Lentz). tests/unit/checker/upstream/test_tstat.py compares the results with scipy on thousands of inputs.
"""

from __future__ import annotations

import math

_TINY = 1e-300
_EPS = 1e-16
_MAX_TERMS = 1000


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of I_x(a, b) (converges fast for x < (a + 1) / (a + b + 2))."""

    def guard(v: float) -> float:
        return v if abs(v) >= _TINY else _TINY

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, _MAX_TERMS):
        two_m = 2 * m
        even = m * (b - m) * x / ((a - 1.0 + two_m) * (a + two_m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + 1.0 + two_m))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """Regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1.

    `y` is 1 - x when the caller can compute it without cancellation (x close to 1 loses it otherwise).
    """
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, y) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t distribution with df degrees of freedom."""
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tt = t * t
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + tt), tt / (df + tt))
    return tail if t >= 0 else 1.0 - tail


def ttest_ind_from_stats(
    mean1: float, std1: float, nobs1: float, mean2: float, std2: float, nobs2: float, equal_var: bool = True
) -> tuple[float, float]:
    """(t, two-sided p) for two independent samples with equal variances, as scipy.stats.ttest_ind_from_stats."""
    if not equal_var:
        raise ValueError("only the equal-variance test is implemented")
    df = nobs1 + nobs2 - 2.0
    pooled = ((nobs1 - 1) * std1 * std1 + (nobs2 - 1) * std2 * std2) / df
    denom = math.sqrt(pooled * (1.0 / nobs1 + 1.0 / nobs2))
    diff = mean1 - mean2
    if denom == 0.0:  # as numpy's division: ±inf, or nan for 0/0
        t = math.nan if diff == 0.0 or math.isnan(diff) else math.copysign(math.inf, diff)
    else:
        t = diff / denom
    p = 2.0 * t_sf(abs(t), df)
    return t, 1.0 if p > 1.0 else p  # nan stays nan, as in scipy
