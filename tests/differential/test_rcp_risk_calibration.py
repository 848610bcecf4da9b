"""Run planning's risk (RUN009, issue 55) against the RCP checker's verdict on every published closed set of the
corpus with its N runs (a set added to the corpus later is tested too): the prediction from the first k runs in
start order (k = 2 .. N-1), each fold (organisation and round) judged by priors fitted on every other fold and by
a calibration map fitted, nested, without it (tools/rcp_risk_fit.py, which also refits
checker/tables/rcp-risk.yaml).

What this can show, honestly: the corpus holds ~80 such sets of which 5 fail, all BERT of v1.0/v1.1, one of them
read at 1 sample (left out). The test holds the bounds the issue sets: Brier at most 0.6 x the base rate's
(overall and for k <= 3), the 10-90 % band holding 70-90 % of the final scores, no "≥ 99 %" on a set that passes
unless its runs in hand already fail it, and every band's observed count of fails inside the binomial 95 %
interval (Wilson) around its observed rate, both ways: the model neither reassures nor alarms more than the sets
bear out. Predictions of one set at successive k are not independent, so those intervals are narrower than the
truth; the same two-sided bound is also held with one prediction per set (k = 2, which every set has), where the
predictions are independent but few.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from fixtures.project_tools import load_tool

pytestmark = pytest.mark.corpus



@pytest.fixture(scope="module")
def measured(corpus: Path) -> tuple[ModuleType, list, list]:  # type: ignore[type-arg]
    tool = load_tool("rcp_risk_fit")
    sets = tool.corpus_sets(corpus)
    return tool, sets, tool.cross_validate(sets)


def test_the_corpus_has_failing_and_passing_sets(measured: tuple) -> None:  # type: ignore[type-arg]
    _, sets, rows = measured
    assert len(sets) >= 80 and sum(not s.passed for s in sets) >= 4
    assert {r.name for r in rows} == {s.name for s in sets}  # every set predicted, at every k it has


def test_brier_beats_the_base_rate_overall_and_for_few_runs(measured: tuple) -> None:  # type: ignore[type-arg]
    tool, _, rows = measured
    scored = [r for r in rows if not r.at_one]
    model, base = tool.brier(scored)
    assert model <= 0.6 * base, (model, base)
    few_model, few_base = tool.brier([r for r in scored if r.k <= 3])
    assert few_model <= 0.6 * few_base, (few_model, few_base)


def test_the_score_band_holds_70_to_90_percent_of_final_scores(measured: tuple) -> None:  # type: ignore[type-arg]
    _, _, rows = measured
    covered = [r.covered for r in rows if r.covered is not None and not r.at_one]
    assert 0.70 <= sum(covered) / len(covered) <= 0.90, sum(covered) / len(covered)


def test_no_near_certain_fail_on_a_set_that_passes(measured: tuple) -> None:  # type: ignore[type-arg]
    _, _, rows = measured
    assert [r for r in rows if r.p >= 0.99 and not r.failed and not r.certain] == []


def _bands_outside(tool: ModuleType, rows: list) -> list[tuple[float, float, float, float, float]]:  # type: ignore[type-arg]
    """The bands whose mean prediction is outside the Wilson 95 % interval of their observed rate of fails."""
    out = []
    for low, high in tool.BANDS:
        band = [r for r in rows if low <= r.p < high]
        if not band:
            continue
        mean = sum(r.p for r in band) / len(band)
        lo, hi = tool.interval(sum(r.failed for r in band), len(band))
        if not lo <= mean <= hi:
            out.append((low, high, mean, lo, hi))
    return out


def test_every_band_holds_its_observed_rate_both_ways(measured: tuple) -> None:  # type: ignore[type-arg]
    tool, _, rows = measured
    assert _bands_outside(tool, [r for r in rows if not r.at_one]) == []


def test_one_prediction_per_set_every_band_holds_too(measured: tuple) -> None:  # type: ignore[type-arg]
    """The fairer test for independence: each set once, at k = 2."""
    tool, sets, rows = measured
    first = [r for r in rows if not r.at_one and r.k == 2]
    assert len(first) >= 0.9 * sum(not s.at_one for s in sets)
    assert _bands_outside(tool, first) == []


def test_the_shipped_table_is_the_corpus_fit(measured: tuple) -> None:  # type: ignore[type-arg]
    """checker/tables/rcp-risk.yaml is what tools/rcp_risk_fit.py --write makes of the corpus (refit when a set
    is added)."""
    from mlsubmit.checker.rcp import risk

    tool, sets, _ = measured
    fitted = tool.fit_shipped(sets)
    shipped = risk.table()
    assert shipped["model"] == fitted["model"] == risk.MODEL
    assert shipped["calibration"] == pytest.approx(fitted["calibration"], rel=1e-5)
    assert set(shipped["benchmarks"]) == set(fitted["benchmarks"])
    for name, row in fitted["benchmarks"].items():
        assert shipped["benchmarks"][name] == pytest.approx(row, rel=1e-5), name
