"""The RCP advisor: its reading of mlperf-logging's RCP data against the reference RCP checker's own, the match at a
batch size, and the hyperparameter differences, on every RCP file the installed mlperf-logging ships."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp import prediction as ra
from mlsubmit.checker.upstream.installed import rcp_data_folder as rcp_folder

from mlsubmit.core.findings import Severity

RULESETS = ("1.0.0", "1.1.0", "2.0.0", "2.1.0", "3.0.0", "3.1.0", "4.0.0", "4.1.0", "5.0.0", "5.1.0", "6.0.0",
            "6.1.0")


def rcp_files() -> list[tuple[str, str]]:
    out = []
    for ruleset in RULESETS:
        folder = rcp_folder(ruleset)
        assert folder is not None
        out.extend((ruleset, p.name[len("rcps_"):-len(".json")]) for p in sorted(folder.glob("rcps_*.json")))
    return out


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> Any:
    from mlperf_logging.rcp_checker import rcp_checker as rc

    # The reference lost dlrm's run count (logging#306) and raises KeyError for it; the count (5, as the 1.x rules
    # ask) only enters its t-test, not the means or the pruning compared here.
    monkeypatch.setitem(rc.submission_runs["training"], "dlrm", rc.submission_runs["training"].get("dlrm", 5))
    return lambda ruleset, benchmark: rc.RCP_Checker("training", ruleset, benchmark, False)


@pytest.mark.parametrize(("ruleset", "benchmark"), rcp_files())
def test_means_and_pruning_are_the_reference_checkers(reference: Any, ruleset: str, benchmark: str) -> None:
    ref = reference(ruleset, benchmark)
    ours = ra.points(ruleset, benchmark)
    assert ours is not None and len(ours) == len(ref.rcp_data)
    by_name = {p.name: p for p in ours}
    for name, rec in ref.rcp_data.items():
        assert by_name[name].batch_size == rec["BS"] and by_name[name].mean == rec["RCP Mean"]
        assert dict(by_name[name].hyperparameters) == rec["Hyperparams"]
    assert [p.name for p in ra.pruned_rcps(ours)] == list(ref.pruned_rcp_data)


@pytest.mark.parametrize(("ruleset", "benchmark"), rcp_files())
def test_the_match_at_every_batch_size_is_the_rcps_the_reference_uses(reference: Any, ruleset: str,
                                                                      benchmark: str) -> None:
    ref = reference(ruleset, benchmark)
    ours = ra.points(ruleset, benchmark)
    assert ours is not None
    sizes = sorted({p.batch_size for p in ours})
    probes = {*sizes, *(s + 1 for s in sizes), *(s - 1 for s in sizes if s > 1), sizes[0] // 2 or 1, sizes[-1] * 2}
    for bs in sorted(probes):
        m = ra.match(ours, bs)
        found = ref._find_rcp(bs, "pruned_rcps")
        low, high = ref._find_top_min_rcp(bs, "pruned_rcps"), ref._find_bottom_max_rcp(bs, "pruned_rcps")
        if found is not None:
            assert (m.kind, m.points[0].batch_size) == ("found", found["BS"])
        elif low is not None and high is not None:
            assert (m.kind, [p.batch_size for p in m.points]) == ("interpolation", [low["BS"], high["BS"]])
        elif high is not None:
            assert (m.kind, m.points[0].batch_size) == ("below", ref._find_min_rcp("pruned_rcps")["BS"])
        else:
            assert m.kind == "above"
        assert (m.same_size is None) == all(p.batch_size != bs for p in ours)


def test_graphcore_like_bert_at_3072_differs_from_the_rcp_in_three_values(tmp_path: Path) -> None:
    hps = {"global_batch_size": 3072, "opt_base_learning_rate": 0.002, "opt_epsilon": 1e-06,
           "opt_learning_rate_training_steps": 1127, "num_warmup_steps": 0, "start_warmup_step": 0,
           "opt_lamb_beta_1": 0.8, "opt_lamb_beta_2": 0.998, "opt_lamb_weight_decay_rate": 0.01,
           "gradient_accumulation_steps": 96}  # as Graphcore's v1.0 POD64 closed BERT logged them
    logs = [read_log(write_run(tmp_path / f"result_{i}.txt", RunSpec(benchmark="bert", hyperparameters=hps)))
            for i in range(3)]
    first, *rest = ra.advise_runs(logs, "1.0.0")
    diffs = [f for f in rest if f.code == "HP007"]
    # the predicted verdict comes last, then the set's risk once complete (run planning)
    assert [f.code for f in rest if f.code != "HP007"] == ["HP008", "RUN009"]
    assert first.code == "HP006" and first.path == logs[0].path
    assert "RCP found: bert_ref_3072 (batch size 3072" in first.message and "(3 closed runs in" in first.message
    got = {f.message.split("'")[1]: f for f in diffs}
    assert sorted(got) == ["num_warmup_steps", "opt_lamb_beta_1", "opt_learning_rate_training_steps"]
    assert got["opt_lamb_beta_1"].message == "'opt_lamb_beta_1': run 0.8, RCP bert_ref_3072 (batch size 3072) 0.66"
    assert got["opt_lamb_beta_1"].line == logs[0].first("opt_lamb_beta_1").line  # type: ignore[union-attr]
    assert all(f.code == "HP007" and f.severity.value == "info" for f in diffs)


def test_rcp_names_are_read_as_log_keys_and_unlogged_ones_are_said(tmp_path: Path) -> None:
    hps = {"global_batch_size": 8, "opt_base_learning_rate": 0.0004, "opt_gradient_clip_norm": 0.3, "lora_rank": 16}
    log = read_log(write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama2_70b_lora", ruleset="5.1.0",
                                                                hyperparameters=hps)))
    msgs = [f.message for f in ra.advise_runs([log], "5.1.0")[1:]]
    assert not any("lora_r'" in m or "opt_max_grad_norm" in m for m in msgs)
    assert "'max_steps': run not logged, RCP llama2_70b_lora_ref_8 (batch size 8) 1024" in msgs


def test_between_below_above_and_open_runs(tmp_path: Path) -> None:
    def advice(bs: int, division: str = "closed") -> list[str]:
        log = read_log(write_run(tmp_path / f"{bs}{division}.txt", RunSpec(
            benchmark="llama31_405b", ruleset="5.1.0", division=division,
            hyperparameters={"global_batch_size": bs})))
        return [f.message for f in ra.advise_runs([log], "5.1.0")]

    between = advice(3456)[0]
    assert "the check interpolates between llama31_405b_ref_2304" in between and "llama31_405b_ref_4608" in between
    assert "smaller than every RCP; the check compares with llama31_405b_ref_1152" in advice(576)[0]
    assert "larger than every RCP" in advice(100000)[0]
    # an open run is told the RCP it would be measured against as closed
    assert advice(1152, "open")[0].startswith("open llama31_405b at global_batch_size 1152 as closed, ruleset 5.1.0: "
                                              "RCP found: llama31_405b_ref_1152")


def test_no_batch_size_or_no_rcp_data_is_said(tmp_path: Path) -> None:
    log = read_log(write_run(tmp_path / "r.txt", RunSpec(benchmark="minigo", hyperparameters={"global_batch_size": 1})))
    (only,) = ra.advise_runs([log], "1.0.0")
    assert only.code == "HP006" and "no RCP data for minigo" in only.message
    bare = read_log(write_run(tmp_path / "b.txt", RunSpec(benchmark="bert", omit=("global_batch_size",))))
    (only,) = ra.advise_runs([bare], "1.0.0")
    assert "no usable global_batch_size" in only.message
    for odd in (float("nan"), float("inf"), 0, -8, "8", True):
        spec = RunSpec(benchmark="bert", hyperparameters={"global_batch_size": odd})
        log = read_log(write_run(tmp_path / "o.txt", spec))
        (only,) = ra.advise_runs([log], "1.0.0")
        assert "no usable global_batch_size" in only.message, odd


@pytest.mark.parametrize("raw", [b"\xff\x00not json", b"[1, 2]", b'{"x": {"BS": "8", "Epochs to converge": [1]}}',
                                 b'{"x": {"BS": 8, "Epochs to converge": [1, 2]}}', b'{"x": NaN}'])
def test_a_damaged_rcp_file_is_no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    bad = tmp_path / "rcps_bert.json"
    bad.write_bytes(raw)
    monkeypatch.setattr(ra, "data_file", lambda ruleset, benchmark: bad)
    ra.points.cache_clear()
    try:
        log = read_log(write_run(tmp_path / "r.txt", RunSpec(benchmark="bert")))
        (only,) = ra.advise_runs([log], "1.0.0")
        assert only.code == "HP006" and "no RCP data for bert" in only.message
    finally:
        ra.points.cache_clear()


def test_a_trial_log_gets_the_window_its_runs_must_land_in(tmp_path: Path) -> None:
    spec = RunSpec(benchmark="llama2_70b_lora", ruleset="6.0.0", converge_at=3400)
    log = read_log(write_run(tmp_path / "trial.txt", spec))
    (predicted,) = [f for f in ra.advise_runs([log], "6.0.0") if f.code == "HP008"]
    assert predicted.message.startswith("if every run converged as this trial did, the RCP check passes")
    assert "submission olympic mean 3400.0000 samples" in predicted.message
    assert "must be at least" in predicted.message and "samples (fastest allowed)" in predicted.message
    fast = read_log(write_run(tmp_path / "fast.txt", RunSpec(benchmark="llama2_70b_lora", ruleset="6.0.0",
                                                              converge_at=2400)))
    (predicted,) = [f for f in ra.advise_runs([fast], "6.0.0") if f.code == "HP008"]
    assert "the RCP check fails" in predicted.message and predicted.severity is Severity.INFO
    # --fail-on rcp: the same prediction is an error, so CI stops on it; a passing one stays info
    (failing,) = [f for f in ra.advise_runs([fast], "6.0.0", fail_on_rcp=True) if f.code == "HP008"]
    assert failing.severity is Severity.ERROR and failing.message == predicted.message
    (passing,) = [f for f in ra.advise_runs([log], "6.0.0", fail_on_rcp=True) if f.code == "HP008"]
    assert passing.severity is Severity.INFO


def test_an_interpolated_rcp_gives_each_differing_hyperparameter_once(tmp_path: Path) -> None:
    # between two RCPs the check compares with both: each value used to be said twice (12 HP007 for 6 values)
    log = read_log(write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama31_405b", ruleset="5.1.0",
                                                                hyperparameters={"global_batch_size": 3456})))
    found = ra.advise_runs([log], "5.1.0")
    assert "interpolates between" in found[0].message
    diffs = [f.message for f in found if f.code == "HP007"]
    keys = [m.split("'")[1] for m in diffs]
    assert diffs and len(keys) == len(set(keys)), diffs
    assert all(m.count("RCP ") == 2 for m in diffs), diffs  # both RCPs named in the one finding
    assert any(" and RCP " in m for m in diffs) or any(", RCP " in m for m in diffs)
