"""RCP check from facts: each branch of the reference's decision, the factor, and parity with the reference."""

from __future__ import annotations

import glob
import logging
import os
from pathlib import Path

import pytest
from mlsubmit.checker.facts import LogFacts, Occurrence, extract
from mlsubmit.checker.logs import read_log
from mlsubmit.checker.rcp import _checker, evaluate, read_convergence


def run(
    name: str,
    epoch: float | None,
    *,
    bs: object = 3264,
    status: str | None = "success",
    bench: str = "resnet",
    division: str = "closed",
) -> LogFacts:
    """Facts of a run converging at `epoch` (its last eval before run_stop)."""
    facts = LogFacts(path=name)

    def add(key: str, value: object, metadata: object, line: int) -> None:
        occ = Occurrence(value, metadata, 0.0, line)
        facts.first.setdefault(key, occ)
        facts.series.setdefault(key, []).append(occ)

    add("submission_benchmark", bench, {}, 1)
    add("submission_division", division, {}, 2)
    if bs is not None:
        add("global_batch_size", bs, {}, 3)
    if epoch is not None:
        add("eval_accuracy", 0.5, {"epoch_num": epoch - 1}, 10)
        add("eval_accuracy", 0.76, {"epoch_num": epoch}, 11)
    add("run_stop", None, {} if status is None else {"status": status}, 12)
    return facts


def runs(epochs: list[float | None], **kw: object) -> list[LogFacts]:
    return [run(f"result_{i}.txt", e, **kw) for i, e in enumerate(epochs)]  # type: ignore[arg-type]


def test_exact_rcp_passes_without_normalisation_when_slower() -> None:
    res = evaluate("resnet", "1.0.0", runs([40, 40, 41, 42, 43]))
    assert (res.status, res.passed, res.scaling_factor, res.reference) == ("pass", True, 1.0, "RCP found")
    assert res.submission_mean == pytest.approx(41.0)


def test_faster_than_the_mean_but_within_the_speedup_is_normalised() -> None:
    res = evaluate("resnet", "1.0.0", runs([34, 35, 35, 35, 36]))  # olympic mean 35 < RCP mean 35.154
    rcp_mean = _checker("1.0.0", "resnet")._find_rcp(3264, "pruned_rcps")["RCP Mean"]
    assert res.status == "pass"
    assert res.scaling_factor == pytest.approx(rcp_mean / 35.0, abs=1e-9)
    assert "normalisation factor" in res.message


def test_too_fast_fails_and_still_reports_the_factor() -> None:
    res = evaluate("resnet", "1.0.0", runs([30, 30, 30, 30, 30]))
    assert (res.status, res.passed) == ("fail", False)
    assert res.scaling_factor > 1.0


def test_bypass_turns_a_failure_into_a_pass_marked_as_such() -> None:
    res = evaluate("resnet", "1.0.0", runs([30] * 5), bypass=True)
    assert (res.status, res.passed) == ("bypassed", True)
    assert res.reference == "RCP found passed using rcp_bypass"


def test_interpolated_rcp_between_batch_sizes() -> None:
    res = evaluate("resnet", "1.0.0", runs([60] * 5, bs=8192))
    assert (res.status, res.reference) == ("pass", "RCP Interpolation")


def test_batch_size_above_every_rcp_needs_new_rcps() -> None:
    res = evaluate("resnet", "1.0.0", runs([90] * 5, bs=100_000))
    assert (res.status, res.passed) == ("error", False)
    assert res.reference.startswith("Missing RCP")


def test_one_non_converged_run_is_dropped_two_are_insufficient() -> None:
    assert evaluate("resnet", "1.0.0", runs([40, 40, 40, 40, None])).status == "pass"
    two = evaluate("resnet", "1.0.0", runs([40, 40, 40, None, None]))
    assert (two.status, two.reference) == ("error", "Insufficient convergence")
    failed_status = evaluate("resnet", "1.0.0", [*runs([40] * 3), run("a", 40, status="aborted"), run("b", None)])
    assert failed_status.reference == "Insufficient convergence"


def test_mixed_batch_sizes_are_an_error_where_the_reference_crashes() -> None:
    res = evaluate("resnet", "1.0.0", [*runs([40] * 4), run("odd.txt", 40, bs=1632)])
    assert (res.status, res.reference) == ("error", "Batch sizes in files do not match")
    assert res.crash and "benchmark=None" in res.crash


def test_missing_batch_size() -> None:
    res = evaluate("resnet", "1.0.0", runs([40] * 5, bs=None))
    assert (res.status, res.reference) == ("error", "Could not detect global_batch_size")


def test_empty_folder_is_an_error_not_a_crash() -> None:
    res = evaluate("resnet", "1.0.0", [], closed=True)
    assert res.status == "error" and res.crash


def test_dlrm_is_evaluated_although_the_reference_crashes() -> None:
    res = evaluate("dlrm", "1.0.0", runs([0.9] * 5, bs=65536, bench="dlrm"))
    assert res.status in ("pass", "fail")
    assert res.crash and "dlrm" in res.crash


def test_open_division_and_minigo_are_not_applicable() -> None:
    assert evaluate("resnet", "1.0.0", runs([30] * 5, division="open")).status == "not_applicable"
    assert evaluate("minigo", "1.0.0", runs([30] * 5, bench="minigo")).status == "not_applicable"
    assert evaluate("resnet", "1.0.0", runs([30] * 5, division="open"), closed=True).status == "fail"


def test_reader_mirrors_the_reference_on_odd_shapes() -> None:
    no_status = read_convergence(run("x", 40, status=None))
    assert not no_status.converged and "no status" in (no_status.problem or "")
    early = read_convergence(run("y", None))
    assert not early.converged and "before any eval_accuracy" in (early.problem or "")
    assert read_convergence(run("z", 40.12345)).epochs == 40.123  # rounded to 3 places, as the reference


def test_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    evaluate("resnet", "1.0.0", runs([34, 35, 35, 35, 36]))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.corpus
def test_same_verdict_and_factor_as_the_reference_on_the_corpus(corpus: Path) -> None:
    """Every results folder of the corpus, closed or not, through the reference's check_directory and ours."""
    from mlperf_logging.rcp_checker import rcp_checker as rc

    logging.disable(logging.CRITICAL)
    compared = crashed = 0
    try:
        for rnd, ruleset in (("training_results_v1.0", "1.0.0"), ("training_results_v1.1", "1.1.0")):
            for folder in sorted(glob.glob(str(corpus / rnd / "*" / "results" / "*" / "*"))):
                files = sorted(glob.glob(folder + "/result_*.txt"))
                ours = evaluate(os.path.basename(folder), ruleset, [extract(read_log(f)) for f in files], closed=True)
                try:  # set_scaling=False: the reference then writes no scaling.json into the (read-only) corpus
                    passed, _, factor = rc.check_directory(folder, "training", ruleset, False, False,
                                                           rcp_pass="pruned_rcps", set_scaling=False)  # fmt: skip
                except Exception:
                    crashed += 1
                    assert ours.crash, folder  # we name the crash and still give a verdict
                    continue
                compared += 1
                assert ours.passed == passed, folder
                assert ours.scaling_factor == float(factor), folder  # bit for bit (npstats), not just 1e-6
    finally:
        logging.disable(logging.NOTSET)
    assert compared >= 40 and crashed == 3  # the three v1.0 dlrm folders (KeyError 'dlrm')


@pytest.mark.parametrize("bs", ["3264", [3264], True, float("nan")])
def test_batch_size_that_is_not_a_number_is_an_error(bs: object) -> None:
    res = evaluate("resnet", "1.0.0", runs([40] * 5, bs=bs))
    assert (res.status, res.passed) == ("error", False) and res.crash


def test_epoch_that_is_not_a_number_is_named_as_a_reference_crash() -> None:
    odd = run("odd", None)
    odd.series["eval_accuracy"] = [Occurrence(0.76, {"epoch_num": "40"}, 0.0, 11)]
    conv = read_convergence(odd)
    assert conv.converged and conv.epochs == 40.0 and "non-numeric" in (conv.problem or "")
    assert evaluate("resnet", "1.0.0", [*runs([40] * 4), odd]).crash


@pytest.mark.parametrize("ruleset", ["1.0.0", "1.1.0"])
def test_statistics_kept_as_data_equal_the_computed_ones(ruleset: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The RCP statistics come from the data cache after the first run: same values and types (plain floats),
    pruned records the same objects as the full ones, as when the reference computes them."""
    from mlsubmit.checker import rcp

    def snapshot(checker: object) -> object:
        full = checker.rcp_data  # type: ignore[attr-defined]
        pruned = checker.pruned_rcp_data  # type: ignore[attr-defined]
        assert all(pruned[n] is full[n] for n in pruned)
        return [(name, {k: (type(v).__name__, repr(v)) for k, v in rec.items()}) for name, rec in full.items()], list(
            pruned)

    benchmarks = sorted(p.name[5:-5] for p in rcp._rcp_folder(ruleset).iterdir() if p.name.startswith("rcps_"))
    assert benchmarks
    for cache in ("off", str(tmp_path), str(tmp_path)):  # computed, computed and stored, read back
        monkeypatch.setenv("MLSUBMIT_DATA_CACHE", cache)
        _checker.cache_clear()
        got = {b: snapshot(c) for b in benchmarks if (c := _checker(ruleset, b)) is not None}
        if cache == "off":
            first = got
        assert got == first
    assert list(tmp_path.glob("rcp-*.json"))
    assert all(type(rec["RCP Mean"]) is float for c in [_checker(ruleset, benchmarks[0])] for rec in
               c.rcp_data.values())
    _checker.cache_clear()


def _convergence_by_sorting(facts: LogFacts) -> tuple[bool, float, str | None]:
    """The obvious reading, as the reference does it: every eval_accuracy and run_stop sorted by line (an eval
    before a run_stop on the same line), the last run_stop deciding."""
    from mlsubmit.checker.rcp import NOT_CONVERGED

    events = sorted([(o.line, 0, o) for o in facts.all("eval_accuracy")]
                    + [(o.line, 1, o) for o in facts.all("run_stop")], key=lambda t: (t[0], t[1]))
    epoch, converged, epochs, problem = None, False, NOT_CONVERGED, None
    for _, kind, occ in events:
        meta = occ.metadata if isinstance(occ.metadata, dict) else {}
        if kind == 0:
            if "epoch_num" not in meta:
                problem = problem or f"eval_accuracy on line {occ.line} has no epoch_num"
                continue
            value = meta["epoch_num"]
            if not (isinstance(value, (int, float)) and not isinstance(value, bool)):
                problem = problem or f"eval_accuracy on line {occ.line} has a non-numeric epoch_num {value!r}"
            try:
                epoch = round(float(value), 3)
            except (TypeError, ValueError, OverflowError):
                pass
        elif "status" not in meta:
            problem = problem or f"run_stop on line {occ.line} has no status"
            converged, epochs = False, NOT_CONVERGED
        elif meta["status"] == "success" and epoch is not None:
            converged, epochs = True, epoch
        else:
            if meta["status"] == "success":
                problem = problem or f"run_stop on line {occ.line} comes before any eval_accuracy"
            converged, epochs = False, NOT_CONVERGED
    return converged, epochs, problem


def test_convergence_merges_evals_and_stops_by_line_as_sorting_would() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    epoch_nums = st.one_of(st.integers(-3, 90), st.floats(allow_nan=False), st.booleans(), st.text(max_size=3),
                           st.none(), st.just("missing"))
    evals = st.lists(st.tuples(st.integers(1, 40), epoch_nums), max_size=12)
    stops = st.lists(st.tuples(st.integers(1, 40), st.sampled_from(["success", "aborted", None])), max_size=3)

    @settings(max_examples=400, deadline=None)
    @given(evals, stops)
    def check(ev: list[tuple[int, object]], sp: list[tuple[int, str | None]]) -> None:
        facts = LogFacts(path="x")
        for line, num in sorted(ev, key=lambda t: t[0]):  # facts keep each key's records in line order
            meta = {} if num == "missing" else {"epoch_num": num}
            facts.series.setdefault("eval_accuracy", []).append(Occurrence(0.7, meta, 0.0, line))
        for line, status in sorted(sp, key=lambda t: t[0]):
            meta = {} if status is None else {"status": status}
            facts.series.setdefault("run_stop", []).append(Occurrence(None, meta, 0.0, line))
        got = read_convergence(facts)
        assert (got.converged, got.epochs, got.problem) == _convergence_by_sorting(facts)

    check()
