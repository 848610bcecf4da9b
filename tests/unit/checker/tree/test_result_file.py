"""TREE049: a result file of 6.1.0 or later must hold the framework output too (training_policies PR #588)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.synth import write_run
from mlsubmit.checker.base.options import CheckOptions
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.tree.resultfile import check_log

from mlsubmit.cli import main


def codes(path: Path, ruleset: str) -> list[tuple[str, str, int | None]]:
    return [(f.code, f.path, f.line) for f in check_log(read_log(path), CheckOptions(ruleset=ruleset))]


def test_records_only_in_6_1_is_a_warning(tmp_path: Path) -> None:
    path = write_run(tmp_path / "result_0.txt", benchmark="llama31_8b", ruleset="6.1.0")
    assert codes(path, "6.1.0") == [("TREE049", str(path), None)]


def test_framework_lines_pass(tmp_path: Path) -> None:
    path = write_run(tmp_path / "result_0.txt", benchmark="llama31_8b", ruleset="6.1.0", raw_output=True)
    assert codes(path, "6.1.0") == []


@pytest.mark.parametrize("ruleset", ["5.1.0", "6.0.0"])
def test_earlier_rounds_are_not_checked(tmp_path: Path, ruleset: str) -> None:
    path = write_run(tmp_path / "result_0.txt", benchmark="llama31_8b", ruleset=ruleset)
    assert codes(path, ruleset) == []


def test_raw_job_output_is_no_result_file(tmp_path: Path) -> None:
    path = write_run(tmp_path / "job.log", benchmark="llama31_8b", ruleset="6.1.0")
    assert codes(path, "6.1.0") == []


def test_the_full_profile_runs_it_not_the_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_run(tmp_path / "result_0.txt", benchmark="llama31_8b", ruleset="6.1.0")
    assert main(["check", "--ruleset", "6.1.0", "--format", "json", str(path)]) == 0
    assert '"TREE049"' in capsys.readouterr().out
    assert main(["check", "--ruleset", "6.1.0", "--profile", "reference", "--format", "json", str(path)]) == 0
    assert '"TREE049"' not in capsys.readouterr().out
