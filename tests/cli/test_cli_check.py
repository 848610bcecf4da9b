"""`mlsubmit check` through main(argv): exit codes, output formats, read-only behaviour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import tree_digest
from fixtures.synth import RunSpec

from mlsubmit.core.support.schema_loader import errors, load_schema


def test_clean_log_exits_0_and_lists_the_file(run_cli, make_run) -> None:  # type: ignore[no-untyped-def]
    log = make_run()
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", log)
    assert code == 0, out + err
    report = json.loads(out)
    assert [f["path"] for f in report["files"]] == [str(log)]
    assert report["files"][0]["verdict"] == "pass"
    assert report["summary"]["exit_code"] == 0
    assert errors(report, load_schema("report.schema.json")) == []


def test_findings_exit_1_with_codes_and_real_lines(run_cli, make_run) -> None:  # type: ignore[no-untyped-def]
    log = make_run(spec=RunSpec(converge=False))
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", log)
    assert code == 1
    report = json.loads(out)
    found = report["files"][0]["findings"]
    assert report["files"][0]["verdict"] == "fail"
    rule004 = [f for f in found if f["code"] == "RULE004"]
    assert len(rule004) == 1
    last_eval = max(i for i, line in enumerate(log.read_text().splitlines(), 1) if '"eval_accuracy"' in line)
    assert rule004[0]["line"] == last_eval
    assert rule004[0]["hint"]
    assert errors(report, load_schema("report.schema.json")) == []


def test_text_output_groups_by_file_and_summarises(run_cli, make_run) -> None:  # type: ignore[no-untyped-def]
    bad = make_run("result_1.txt", spec=RunSpec(converge=False))
    good = make_run("result_0.txt")
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--color", "never", good, bad)
    assert code == 1
    lines = out.splitlines()
    assert f"{good}: PASS" in lines
    assert f"{bad}: FAIL" in lines
    assert any(line.startswith(f"  {bad}:") and " error RULE004 " in line for line in lines)
    # the info: POL001, what the failing run's results folder will make of it (the log is checked alone)
    assert lines[-1] == "2 file(s) checked, 1 failed; 1 error(s), 0 warning(s), 1 info"


def test_warnings_fail_only_with_strict(run_cli, make_run) -> None:  # type: ignore[no-untyped-def]
    log = make_run(spec=RunSpec(extra=[("submission_org", "Graphcore", {})]))  # repeated with the same value
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", log)
    found = json.loads(out)["files"][0]["findings"]
    assert [f["code"] for f in found] == ["RULE003"]
    assert code == 0
    code, _, _ = run_cli("check", "--ruleset", "1.0.0", "--strict", log)
    assert code == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--ruleset", "9.9.9", "x.txt"],
        ["check", "x.txt"],
        ["check", "--ruleset", "1.0.0", "does-not-exist.txt"],
        ["nonsense"],
        [],
        ["explain", "NOPE999"],
    ],
)
def test_usage_errors_exit_2_with_one_line(run_cli, argv: list[str]) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(*argv)
    assert code == 2
    assert "Traceback" not in out + err


def test_internal_error_exits_3_with_a_crash_log(run_cli, make_run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import mlsubmit.checker.engine.pipeline as pipeline

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(pipeline, "check_jobs", boom)
    code, _, err = run_cli("check", "--ruleset", "1.0.0", make_run())
    assert code == 3
    assert "Traceback" not in err
    assert "internal error: RuntimeError: simulated bug" in err
    crash = Path(err.strip().rsplit(" ", 1)[-1])
    assert "Traceback" in crash.read_text()
    crash.unlink()


def test_checking_never_writes_into_the_checked_tree(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from fixtures.synth import write_run

    org = tmp_path / "Graphcore"
    for i in range(3):
        write_run(org / "results" / "ipu-pod16-POPART-closed" / "bert" / f"result_{i}.txt", RunSpec(seed=i))
    (org / "systems").mkdir()
    before = tree_digest(tmp_path)
    code, _, err = run_cli("check", "--ruleset", "1.0.0", org)
    assert code in (0, 1), err
    assert tree_digest(tmp_path) == before


def test_python_dash_m_works_in_a_subprocess(make_run) -> None:  # type: ignore[no-untyped-def]
    log = make_run()
    proc = subprocess.run(
        [sys.executable, "-m", "mlsubmit", "check", "--ruleset", "1.0.0", "--format", "json", str(log)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["files"] == 1


def test_explain_lists_and_explains(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("explain")
    assert code == 0
    assert "RULE008" in out and "LOG004" in out
    code, out, _ = run_cli("explain", "rule008")
    assert code == 0
    assert out.startswith("RULE008 (error)")
    assert "How to fix:" in out


def test_explain_list_is_in_fixed_columns(run_cli) -> None:  # type: ignore[no-untyped-def]
    from mlsubmit.core.codes import catalogue

    code, out, _ = run_cli("explain")
    assert code == 0
    rows = [line for line in out.splitlines() if line[:1].isupper() and line.split(" ")[0] in catalogue()]
    assert len(rows) == len(catalogue())
    width = max(len(c) for c in catalogue())
    for row in rows:  # the code padded to the widest, then the severity padded to "warning", then the title
        assert row[width : width + 2] == "  " and row[width + 2 : width + 9].rstrip() in ("error", "warning", "info")
        assert row[width + 9 : width + 11] == "  " and row[width + 11] != " ", row
    listing = out.split("\n\n")[0].splitlines()  # the notes follow a blank line
    assert all(len(line) <= 100 for line in listing)
    assert all(line[: width + 11].isspace() and line[width + 11] != " " for line in listing if line not in rows)
    _, family, _ = run_cli("explain", "hp")
    assert family.splitlines()[0].startswith("HP001  error    ")  # a family's own width


def test_a_folder_with_nothing_to_check_is_a_usage_error(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "notes.txt").write_text("not a log\n")
    code, out, err = run_cli("check", "--ruleset", "1.0.0", tmp_path)
    assert code == 2
    assert "nothing to check" in err
    assert out == ""


def _two_rounds(root: Path) -> tuple[Path, Path]:
    from fixtures.synth import write_run

    log = "Graphcore/results/pod16/bert/result_0.txt"
    old = write_run(root / "training_results_v1.0" / log, RunSpec(ruleset="1.0.0"))
    new = write_run(root / "training_results_v1.1" / log, RunSpec(ruleset="1.1.0", converge=False))
    return old, new


def test_without_ruleset_each_path_is_checked_with_its_rounds_rules(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old, new = _two_rounds(tmp_path)
    code, out, err = run_cli("check", "--format", "json", old, new)
    assert code == 1, err
    report = json.loads(out)
    assert report["tool"]["ruleset"] == "1.0.0, 1.1.0"
    by_path = {f["path"]: f for f in report["files"]}
    assert by_path[str(old)]["verdict"] == "pass"
    assert "RULE004" in {f["code"] for f in by_path[str(new)]["findings"]}  # did not converge
    for log, ruleset in ((old, "1.0.0"), (new, "1.1.0")):  # the same findings as a run with the ruleset given
        _, alone, _ = run_cli("check", "--ruleset", ruleset, "--format", "json", log)
        assert json.loads(alone)["files"][0]["findings"] == by_path[str(log)]["findings"]


def test_a_folder_of_rounds_is_checked_in_one_run(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old, new = _two_rounds(tmp_path)
    code, out, _ = run_cli("check", "--ruleset", "auto", "--format", "json", tmp_path)
    report = json.loads(out)
    listed = {f["path"] for f in report["files"]}
    assert {str(old), str(new)} <= listed
    assert code == 1


def test_without_ruleset_a_path_outside_any_round_is_a_usage_error(run_cli, make_run) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli("check", make_run())
    assert code == 2
    assert out == ""
    assert "cannot tell its round" in err and "--ruleset" in err


@pytest.mark.parametrize("ruleset", ["1.0.0", "auto"])
def test_a_rounds_documents_given_as_paths_are_passed_over(tmp_path: Path, run_cli, ruleset: str  # type: ignore[no-untyped-def]
                                                           ) -> None:
    """`mlsubmit check training_results_v1.0/*` names the round's README.md and CONTRIBUTING.md too: they are
    documents, not run logs, so they get no LOG009 and no verdict; the log beside them is checked as alone."""
    from fixtures.synth import write_run

    round_dir = tmp_path / "training_results_v1.0"
    log = write_run(round_dir / "result_0.txt")
    docs = [round_dir / "README.md", round_dir / "CONTRIBUTING.md"]
    for doc in docs:
        doc.write_text("# MLPerf Training v1.0 results\n", encoding="utf-8")
    code, out, err = run_cli("check", "--ruleset", ruleset, "--format", "json", *docs, log)
    assert code == 0, out + err
    assert [f["path"] for f in json.loads(out)["files"]] == [str(log)]
    code, _out, err = run_cli("check", "--ruleset", ruleset, *docs)
    assert code == 2 and "nothing to check" in err and "passed over as documents" in err
