"""A folder of raw job output is judged as run sets, by the tree check's own set-level code (issue 37)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import demo
from fixtures.demo import write_runs
from mlsubmit.checker.engine.pipeline import CheckOptions, run_check
from mlsubmit.checker.rounds.window import median_window
from mlsubmit.submission.package_config import load_config
from mlsubmit.submission.run_selection import collect

from mlsubmit.cli import main

RULESET = "1.1.0"
CapSys = pytest.CaptureFixture[str]
SYSTEM = "ipu-pod16-POPART-closed"


def _codes(report: object) -> list[str]:
    return sorted(f.code for f in report.all_findings())  # type: ignore[attr-defined]


def _check(folder: Path, **options: object) -> list:  # type: ignore[type-arg]
    run = run_check([str(folder)], CheckOptions(ruleset=RULESET, jobs=1, **options))  # type: ignore[arg-type]
    return [f for f in run.report.all_findings() if f.path == str(folder)]


def test_too_few_runs_say_how_many_more(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "bert", SYSTEM, 4)
    found = _check(tmp_path / "runs")
    by_code = {f.code: f for f in found}
    assert sorted(by_code) == ["RUN001", "RUN006", "RUN009", "TREE019"]
    assert "4 of 10 runs: 6 more runs needed" in by_code["RUN001"].message
    assert by_code["RUN001"].message.startswith(f"run set {SYSTEM}/bert (closed): ")
    assert "so far (4 of 10 runs); RCP pass" in by_code["RUN006"].message


def test_a_complete_set_gets_its_rcp_verdict_and_projected_score(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "bert", SYSTEM, 10, gzip_index=3)
    found = {f.code: f for f in _check(tmp_path / "runs")}
    assert sorted(found) == ["RUN006", "TREE019"]  # no RUN009: with its N runs the verdict is no longer a chance
    assert "projected score" in found["RUN006"].message and "normalisation factor" in found["RUN006"].message


def test_an_rcp_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(demo.EPOCH_SCALE, "bert", 300_000)  # converge at 1.2M samples: faster than the RCP allows
    write_runs(tmp_path / "runs", "bert", SYSTEM, 10)
    found = {f.code: f for f in _check(tmp_path / "runs")}
    assert "TREE018" in found and "converged faster than the reference allows" in found["TREE018"].message
    assert "RCP fail" in found["RUN006"].message and "projected score" not in found["RUN006"].message


def test_non_converged_runs_against_the_olympic_tolerance(tmp_path: Path) -> None:
    write_runs(tmp_path / "one", "bert", SYSTEM, 10, non_converged=[2])
    write_runs(tmp_path / "two", "bert", SYSTEM, 10, non_converged=[2, 5])
    assert "TREE008" in {f.code for f in _check(tmp_path / "one")}
    two = {f.code: f for f in _check(tmp_path / "two")}
    assert "TREE007" in two and "job_02.out" in two["TREE007"].message  # the raw files, not result_<i>.txt


def test_an_m_over_n_group_whose_median_window_is_invalid(tmp_path: Path) -> None:
    """14 runs, N = 10: runs 4..9 did not converge, so every window holds more than one: the median is invalid.
    package, choosing from the same runs, takes the same window and says the same (one rule)."""
    runs = tmp_path / "runs"
    write_runs(runs, "bert", SYSTEM, 14, non_converged=[4, 5, 6, 7, 8, 9])
    found = {f.code: f for f in _check(runs)}
    assert "RUN003" in found and "the whole result is invalid" in found["RUN003"].message
    assert "runs 2..11 of 0..13" in found["RUN002"].message
    assert "no valid score" in found["RUN006"].message
    config = tmp_path / "package.toml"
    config.write_text(f'org = "X"\nruleset = "{RULESET}"\nout = "out"\n[[results]]\nsystem = "{SYSTEM}"\n'
                      'benchmark = "bert"\nlogs = ["runs/*"]\nselect = "median-window"\n', encoding="utf-8")
    cfg = load_config(config)
    sel = collect(cfg, cfg.results[0], _staging(tmp_path))
    assert "PKG007" in {f.code for f in sel.findings}
    assert [r.display for r in sel.chosen] == [f"runs/job_{k:02d}.out" for k in range(2, 12)]


def _staging(tmp_path: Path) -> Path:
    staging = tmp_path / "staging"
    staging.mkdir()
    return staging


def test_a_valid_median_window_and_select_all(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_runs(runs, "bert", SYSTEM, 12, minutes=[20 + k for k in range(12)])
    found = {f.code: f for f in _check(runs)}
    assert "RUN002" in found and "RUN003" not in found and "runs 1..10 of 0..11" in found["RUN002"].message
    assert len(found["RUN002"].related) == 2
    every = {f.code for f in _check(runs, run_select="all")}
    assert "RUN007" in every and "RUN002" not in every


def test_the_window_rule_takes_the_slower_middle_window() -> None:
    window = median_window([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 5, "resnet")
    assert window.scores == (3.0, 4.0, 5.0) and window.start == 1
    even = median_window([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 5, "resnet")
    assert even.start == 1 and even.score == 4.0


def test_runs_are_grouped_by_system_benchmark_and_division(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_runs(runs / "a", "bert", SYSTEM, 3)
    write_runs(runs / "b", "resnet", "ipu-pod64-TF-closed", 2, start_ms=1_640_000_000_000)
    found = [f for f in _check(runs) if f.code == "RUN001"]
    assert sorted(f.message for f in found) == [
        f"run set {SYSTEM}/bert (closed): 3 of 10 runs: 7 more runs needed",
        "run set ipu-pod64-TF-closed/resnet (closed): 2 of 5 runs: 3 more runs needed",
    ]
    named = [f for f in _check(runs, run_system="pod") if f.code == "RUN001"]
    assert all(f.message.startswith("run set pod/") for f in named)


def test_check_on_a_raw_folder_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(tmp_path / "runs", "bert", SYSTEM, 4)
    assert main(["check", "--ruleset", RULESET, "--format", "json", str(tmp_path / "runs")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {f["code"] for f in report["findings"]} == {"RUN001", "RUN006", "RUN009", "TREE019"}


def test_advise_on_a_raw_folder_predicts_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(tmp_path / "runs", "bert", SYSTEM, 10, gzip_index=3)
    main(["advise", "--ruleset", RULESET, "--color", "never", str(tmp_path / "runs")])
    out = capsys.readouterr().out
    assert "HP008 the RCP check passes: RCP Interpolation" in out and "KeyError" not in out


def test_a_package_config_names_the_systems(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "bert", "platform-the-logs-say", 3)
    config = tmp_path / "package.toml"
    config.write_text(f'org = "X"\nruleset = "{RULESET}"\nout = "out"\n[[results]]\nsystem = "{SYSTEM}"\n'
                      'benchmark = "bert"\nlogs = ["runs/*.out"]\n', encoding="utf-8")
    from mlsubmit.cli.commands.check import _run_systems

    found = _check(tmp_path / "runs", run_systems=_run_systems(config))
    assert {f.message.split(":")[0] for f in found} == {f"run set {SYSTEM}/bert (closed)"}


def test_runs_of_no_set_or_of_a_benchmark_the_round_lacks(tmp_path: Path) -> None:
    from fixtures.demo import raw_run
    from fixtures.synth import RunSpec

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.out").write_bytes(raw_run(RunSpec(ruleset=RULESET, omit=("submission_benchmark",), seed=1)))
    (runs / "b.out").write_bytes(raw_run(RunSpec(ruleset=RULESET, benchmark="gpt3", seed=2)))
    found = {f.code: f.message for f in _check(runs)}
    assert "1 run(s) log no submission_benchmark (a.out)" in found["RUN004"]
    assert "'gpt3' is not a benchmark of ruleset 1.1.0 (b.out)" in found["RUN005"]


def test_advise_on_m_over_n_runs_predicts_on_the_median_window(tmp_path: Path, capsys: CapSys) -> None:
    """12 runs, N = 10: advise judges the runs `check` scores (the median window, runs 1..10), with the same RCP
    numbers as the run set's TREE019, not all 12."""
    runs = tmp_path / "runs"
    write_runs(runs, "bert", SYSTEM, 12, minutes=[20 + k for k in range(12)])
    main(["advise", "--ruleset", RULESET, "--color", "never", "--format", "json", str(runs)])
    advice = [f for entry in json.loads(capsys.readouterr().out)["files"] for f in entry["findings"]
              if f["code"] == "HP008"]  # fmt: skip
    assert len(advice) == 1
    head, _, numbers = advice[0]["message"].partition(": ")
    assert head == "the RCP check passes on the median window of 10 of the 12 runs (job_01.out to job_10.out)"
    checked = {f.code: f.message for f in _check(runs)}
    assert checked["TREE019"].endswith(numbers)  # the same olympic mean and RCP figures as the check's
