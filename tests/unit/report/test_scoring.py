"""Scoring pieces: olympic mean, which runs count, convergence points, throughput, RCP factor, prices, systems."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.rcpfix import line
from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.rcp.verdict import RcpResult

from mlsubmit.core.codes import finding
from mlsubmit.report.inputs import read_system
from mlsubmit.report.rcp_scaling import rcp_outcome, summarizer_status
from mlsubmit.report.scoring import (
    RcpOutcome,
    RunResult,
    build_score,
    committed_scaling,
    convergence_point,
    mark_olympic_drops,
    olympic_mean,
    run_result,
    samples_to_converge,
    settled_factor,
    throughput,
)


@pytest.mark.parametrize(
    ("minutes", "dropped", "benchmark", "expected"),
    [
        ([5, 1, 3, 2, 4], 0, "resnet", 3.0),  # drop 1 and 5
        ([1, 2, 3, 4], 1, "resnet", 3.0),  # one run failed: it is the slowest, drop only the fastest (1)
        ([1, 2, 3], 2, "resnet", None),  # two failed: more than the round tolerates
        ([1, 2], 0, "bert", None),  # nothing left after dropping
        (list(range(1, 41)), 0, "unet3d", sum(range(5, 37)) / 32),  # U-Net3D drops 4 and 4
        (list(range(1, 37)), 4, "unet3d", sum(range(5, 37)) / 32),  # four failures stand in for the slowest four
        (list(range(1, 36)), 5, "unet3d", None),
    ],
)
def test_olympic_mean(minutes: list[float], dropped: int, benchmark: str, expected: float | None) -> None:
    got = olympic_mean(minutes, dropped, benchmark)
    assert got == (pytest.approx(expected) if expected is not None else None)


def run(path: str, minutes: float, counted: bool = True) -> RunResult:
    return RunResult(path=path, minutes=minutes, status="success", converged=True, compliant=counted,
                     reason=None if counted else "fails")  # fmt: skip


def test_olympic_drops_are_marked() -> None:
    marked = mark_olympic_drops([run("a", 3), run("b", 1), run("c", 2), run("d", 5), run("e", 4)], "resnet")
    assert [r.olympic_dropped for r in marked] == [False, True, False, True, False]
    marked = mark_olympic_drops([run("a", 3), run("b", 1), run("c", 2), run("x", 9, counted=False)], "resnet")
    assert [r.olympic_dropped for r in marked] == [False, True, False, False]  # the failed run is the slowest


def facts(*, minutes: float = 10.0, epochs: list[float] | None = None, status: str = "success",
          train_samples: int | None = 1000) -> LogFacts:  # fmt: skip
    f = LogFacts(path="r.txt")
    f.first["run_start"] = Occurrence(None, {}, 0.0, 10)
    f.series["run_start"] = [f.first["run_start"]]
    evals = [Occurrence(0.5, {"epoch_num": e}, 1.0, 20 + i) for i, e in enumerate(epochs or [1, 2, 3])]
    f.series["eval_accuracy"] = evals
    f.series["run_stop"] = [Occurrence(None, {"status": status}, minutes * 60000, 100)]
    if train_samples is not None:
        f.first["train_samples"] = Occurrence(train_samples, {}, 0.0, 5)
    records = [("eval_accuracy", o.value, o.metadata) for o in evals] + [("run_stop", None, {"status": status})]
    f.rcp_lines = tuple(line(k, v, **m) for k, v, m in records)
    return f


def test_convergence_point_and_throughput() -> None:
    f = facts(minutes=10, epochs=[1, 2, 3.33333])
    assert convergence_point(f) == 3.333  # rounded to 3 places, as the RCP checker does
    assert throughput(f, "resnet", 3.333, 10) == pytest.approx(3.333 * 1000 / 600)
    assert throughput(f, "bert", 3.333, 10) is None  # no global_batch_size: cannot tell samples from epochs
    f.first["global_batch_size"] = Occurrence(448, {}, 0.0, 6)
    assert throughput(f, "bert", 2_500_000, 10) == pytest.approx(2_500_000 / 600)  # BERT's epoch_num counts samples
    # NVIDIA's v1.0 BERT logs say epoch_num 1 at every evaluation: fewer samples than one batch is not a count.
    assert throughput(f, "bert", 1.0, 10) is None
    assert throughput(facts(train_samples=None), "resnet", 3.0, 10) is None
    assert throughput(f, "minigo", 3.0, 10) is None
    assert convergence_point(facts(status="aborted")) is None


def test_run_counts_only_when_the_log_rules_pass() -> None:
    clean = run_result("r.txt", facts(), [], "resnet")
    assert clean.counted and clean.minutes == 10 and clean.to_converge == 3 and clean.throughput is not None
    other = finding("TREE013", "r.txt", "no implementation")  # an error outside LOG/RULE: the reference scores it
    assert run_result("r.txt", facts(), [other], "resnet").counted
    broken = run_result("r.txt", facts(), [finding("RULE001", "r.txt", "check failed")], "resnet")
    assert not broken.counted and broken.reason == "fails the round's log rules" and broken.throughput is None
    warned = run_result("r.txt", facts(), [finding("RULE003", "r.txt", "repeated")], "resnet")
    assert warned.counted  # a warning is not a compliance failure


def test_samples_to_converge_olympic() -> None:
    runs = [facts(epochs=[e]) for e in (30, 31, 32, 35, 40)]
    assert samples_to_converge(runs, "resnet") == pytest.approx((31 + 32 + 35) / 3)
    two_failed = [*runs[:3], facts(status="aborted"), facts(status="aborted")]
    assert samples_to_converge(two_failed, "resnet") is None


@pytest.mark.parametrize(
    ("division", "rcp", "committed", "expected"),
    [
        ("closed", RcpOutcome("Pass", evaluated=True, factor=1.02), None, 1.02),
        ("closed", RcpOutcome("Pass", evaluated=True, factor=1.02), 1.5, 1.02),  # the reference rewrites the file
        ("closed", RcpOutcome("Fail", evaluated=True, factor=1.3), 1.5, 1.0),  # ... or deletes it on a fail
        ("closed", RcpOutcome("Unknown state"), 1.5, 1.5),  # check stopped early: the file stays in force
        ("closed", RcpOutcome(""), None, 1.0),
        ("open", RcpOutcome(""), 1.2, 1.2),  # open results are never RCP-checked, a committed file still applies
        ("close", RcpOutcome(""), None, 1.0),  # PCL's spelling: the reference does not treat it as closed
    ],
)
def test_settled_factor(division: str, rcp: RcpOutcome, committed: float | None, expected: float) -> None:
    assert settled_factor(division, rcp, committed) == expected


def test_committed_scaling_reads_but_tolerates(tmp_path: Path) -> None:
    assert committed_scaling(tmp_path) is None
    (tmp_path / "scaling.json").write_text('{"scaling_factor": 1.25}', encoding="utf-8")
    assert committed_scaling(tmp_path) == 1.25
    (tmp_path / "scaling.json").write_bytes(b"\xff{not json")
    assert committed_scaling(tmp_path) is None
    (tmp_path / "scaling.json").write_text('{"scaling_factor": "big"}', encoding="utf-8")
    assert committed_scaling(tmp_path) is None


def test_score_is_olympic_mean_times_settled_factor() -> None:
    runs = [run(str(i), m) for i, m in enumerate([10, 11, 12, 13, 14])]
    score = build_score(system="s", benchmark="resnet", division="closed", runs=runs, facts=[],
                        rcp=RcpOutcome("Pass", evaluated=True, factor=1.1))  # fmt: skip
    assert score.olympic_minutes == 12 and score.time_to_train_minutes == pytest.approx(13.2)
    assert score.counted_runs == 5 and score.notes == ()


def rcp_result(reference: str, passed: bool, *, mean: float | None = 30.0, crash: str | None = None) -> RcpResult:
    return RcpResult("pass" if passed else "fail", passed, 1.01, "msg", reference, 3264, mean, crash=crash)


@pytest.mark.parametrize(
    ("reference", "passed", "column"),
    [
        ("RCP found", True, "Pass"),
        ("RCP found", False, "Fail"),
        ("RCP Interpolation", False, "Interp. Fail"),
        ("Missing RCP, please submit RCP with BS = 7", False, "Missing"),
        ("Cannot find any RCPs", False, "No RCP"),
        ("Insufficient convergence", False, "Unknown state"),
    ],
)
def test_summarizer_rcp_column(reference: str, passed: bool, column: str) -> None:
    assert summarizer_status(rcp_result(reference, passed)) == column


def test_rcp_outcome_when_the_reference_would_raise() -> None:
    got = rcp_outcome(rcp_result("", False, mean=None, crash="KeyError: 'dlrm'"))
    assert got.status == "" and not got.evaluated and got.message == "the reference's RCP check stops here: msg"
    assert "KeyError" not in got.message  # no upstream exception text shown to a user
    assert rcp_outcome(rcp_result("RCP found", True)).evaluated
    assert not rcp_outcome(rcp_result("Could not detect global_batch_size", False, mean=None)).evaluated


def test_read_system_totals_and_broken_files(tmp_path: Path) -> None:
    good = tmp_path / "pod64.json"
    good.write_text('{"system_name": "IPU-POD64", "number_of_nodes": 1, "accelerators_per_node": "64", '
                    '"host_processors_per_node": "8", "host_processor_model_name": "AMD EPYC 7742"}',
                    encoding="utf-8")  # fmt: skip
    s = read_system(good, "systems/pod64.json")
    assert s.id == "pod64" and s.accelerators == 64 and s.host_processors == 8
    assert s.to_dict()["host_servers"] == 4
    huge = b'{"a": "' + b"x" * (1 << 20) + b'"}'
    for name, raw in (("trunc.json", b'{"a": '), ("list.json", b"[1, 2]"), ("bin.json", b"\xff\xfe\x00"),
                      ("huge.json", huge)):
        (tmp_path / name).write_bytes(raw)
        broken = read_system(tmp_path / name, name)
        assert not broken.readable and broken.accelerators is None


def test_an_rcp_check_that_raises_leaves_the_score_unscaled(monkeypatch: pytest.MonkeyPatch) -> None:
    import mlsubmit.report.rcp_scaling as rs

    def boom(*args: object, **kwargs: object) -> RcpResult:
        raise TypeError("'<' not supported between instances of 'int' and 'list'")

    monkeypatch.setattr(rs, "rcp_verdict", boom)
    got = rs.evaluate("resnet", "1.1.0", [facts()])
    assert got.status == "" and not got.evaluated and "TypeError" in got.message
    assert settled_factor("closed", got, None) == 1.0


def test_too_few_runs_give_no_score_and_say_why() -> None:
    score = build_score(system="s", benchmark="resnet", division="open", runs=[run("a", 10), run("b", 11)], facts=[],
                        rcp=RcpOutcome(""))  # fmt: skip
    assert score.time_to_train_minutes is None
    assert score.notes == ("2 run(s) count: too few to drop the fastest and slowest, no score",)
