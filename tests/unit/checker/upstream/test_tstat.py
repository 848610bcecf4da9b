"""Our t-test against scipy's on random and edge inputs: the RCP check must decide exactly as the reference does."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from mlsubmit.checker.upstream.tstat import betainc, t_sf, ttest_ind_from_stats


# scipy is imported when a test asks for it, not when the module is collected (about a second of every run)
@pytest.fixture(scope="module")
def scipy_stats() -> Any:
    return pytest.importorskip("scipy.stats")


@pytest.fixture(scope="module")
def scipy_special() -> Any:
    return pytest.importorskip("scipy.special")


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-11, abs_tol=1e-14)


def test_betainc_matches_scipy(scipy_special: Any) -> None:
    rng = random.Random(7)
    for _ in range(3000):
        a, b, x = rng.uniform(0.05, 200), rng.uniform(0.05, 200), rng.random()
        assert close(betainc(a, b, x), float(scipy_special.betainc(a, b, x))), (a, b, x)


def test_t_sf_matches_scipy_including_tails(scipy_stats: Any) -> None:
    rng = random.Random(11)
    for _ in range(3000):
        df = rng.choice([1, 2, 3, 5, 8, 10, 18, 38, 100, 1000]) * rng.uniform(0.5, 1.5)
        t = rng.choice([-1, 1]) * 10 ** rng.uniform(-4, 2)
        assert close(t_sf(t, df), float(scipy_stats.t.sf(t, df))), (t, df)
    assert t_sf(math.inf, 5) == 0.0 and t_sf(-math.inf, 5) == 1.0 and math.isnan(t_sf(math.nan, 5))


@pytest.mark.parametrize("seed", range(4))
def test_ttest_matches_scipy_on_rcp_like_inputs(seed: int, scipy_stats: Any) -> None:
    rng = random.Random(seed)
    for _ in range(1500):
        n1, n2 = rng.choice([3, 5, 8, 10, 38]), rng.choice([5, 10, 20, 40])
        m2 = rng.uniform(1, 3e6)
        m1 = m2 * rng.uniform(0.8, 1.2)
        s1, s2 = m2 * rng.uniform(0, 0.1), m2 * rng.uniform(0, 0.1)
        ours = ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=True)
        ref = scipy_stats.ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=True)
        assert close(ours[0], float(ref[0])) and close(ours[1], float(ref[1])), (m1, s1, n1, m2, s2, n2)


def test_zero_spread_gives_what_numpy_division_gives(scipy_stats: Any) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m1, m2 in ((5.0, 4.0), (4.0, 5.0), (5.0, 5.0)):
            ours = ttest_ind_from_stats(m1, 0.0, 5, m2, 0.0, 10)
            ref = scipy_stats.ttest_ind_from_stats(m1, 0.0, 5, m2, 0.0, 10)
            assert close(ours[0], float(ref[0])) and close(ours[1], float(ref[1]))
