"""The benchmark table is mlperf-logging's own tables, so nothing that reads it can drift from the reference."""

from __future__ import annotations

import pytest
from mlperf_logging.benchmark_meta import _ALL_ALLOWED_BENCHMARKS, get_result_file_counts
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.upstream import rcp_adapted as reference


def test_every_rulesets_benchmarks_are_the_references() -> None:
    for ruleset, listed in benchmarks.table()["rulesets"].items():
        assert sorted(listed) == sorted(set(_ALL_ALLOWED_BENCHMARKS["training"][ruleset[:3]])), ruleset
    assert set(benchmarks.table()["rulesets"]) == {f"{r}.0" for r in _ALL_ALLOWED_BENCHMARKS["training"]
                                                   if r >= "1.0"}  # fmt: skip


def test_run_counts_are_the_package_checkers_and_the_rcp_checkers() -> None:
    counts = get_result_file_counts("training")
    rcp_runs = reference.module().submission_runs["training"]
    for name in benchmarks.table()["benchmarks"]:
        assert benchmarks.runs(name) == counts[name], name
        if name in rcp_runs:
            assert benchmarks.runs(name) == rcp_runs[name], name
    listed = {b for names in benchmarks.table()["rulesets"].values() for b in names}
    assert listed <= set(benchmarks.table()["benchmarks"])


@pytest.mark.parametrize(("name", "ruleset", "unit", "dropped"), [
    ("unet3d", "1.0.0", "epochs", 4), ("bert", "1.0.0", "samples", 1), ("llama2_70b_lora", "5.1.0", "samples", 1),
    ("stable_diffusion", "3.1.0", "steps", 1), ("stable_diffusion", "5.0.0", "samples", 1),
    ("gpt3", "3.0.0", "tokens", 1),
])  # fmt: skip
def test_units_and_drops(name: str, ruleset: str, unit: str, dropped: int) -> None:
    assert (benchmarks.unit(name, ruleset), benchmarks.dropped(name)) == (unit, dropped)


def test_unknown_benchmarks_and_rulesets() -> None:
    assert benchmarks.runs("gpt9") is None and benchmarks.allowed("9.9.0") == []
    assert not benchmarks.has_rcp("minigo") and benchmarks.has_rcp("resnet")


def test_the_one_olympic_mean() -> None:
    from mlsubmit.checker.rounds.benchmarks import olympic_mean

    assert olympic_mean([5.0, 1.0, 3.0, 2.0, 4.0], 1) == 3.0  # drops 1.0 and 5.0
    assert olympic_mean([5.0, 1.0, 3.0, 2.0], 1, failed=1) == 10 / 3  # the failed run is the one slowest dropped
    assert olympic_mean([1.0, 2.0, 3.0], 1, failed=2) is None  # more failed runs than the round tolerates
    assert olympic_mean([1.0, 2.0], 1) is None  # nothing left
    assert olympic_mean([1.0, 2.0, 3.0, 4.0], 1, mean=lambda kept: -1.0) == -1.0  # another summation
