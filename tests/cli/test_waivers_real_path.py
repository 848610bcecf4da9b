"""Waivers match by the real path: written through a symlinked path, they hold when the same tree is checked by its
real path, and the other way round (checker/policy/waivers.py, relative_to)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.demo import write_runs

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(("written_by", "applied_by"), [("link", "real"), ("real", "link")])
def test_waivers_hold_by_either_spelling_of_the_tree(tmp_path: Path, run_cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                     written_by: str, applied_by: str) -> None:  # fmt: skip
    project = tmp_path / "project"
    write_runs(project / "real" / "runs", "bert", "IPU-POD16", 10, non_converged=[2, 5])  # TREE007: exit 1
    os.symlink(project / "real", project / "link")
    (project / "ci").mkdir()
    monkeypatch.chdir(project)
    code, _, err = run_cli("check", "--ruleset", "1.1.0", f"{written_by}/runs", "--write-waivers", "ci/w.toml")
    assert code == 1, err
    count = (project / "ci" / "w.toml").read_text(encoding="utf-8").count("[[waiver]]")
    assert count >= 3  # TREE007, TREE020 and each run's RULE004
    code, out, err = run_cli("check", "--ruleset", "1.1.0", f"{applied_by}/runs", "--waivers", "ci/w.toml",
                             "--format", "json")  # fmt: skip
    report = json.loads(out)
    assert code == 0, (out[-3000:], err)  # before: every waiver WVR001, exit 1
    assert report["summary"]["waived"] >= count and "WVR001" not in out


def test_a_result_file_that_links_to_another_run_keeps_its_own_name(tmp_path: Path) -> None:
    from mlsubmit.checker.policy.waiver_pass import relative_to

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "result_0.txt").write_text("x")
    os.symlink(tmp_path / "real" / "result_0.txt", tmp_path / "real" / "result_1.txt")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert relative_to("link/result_1.txt", tmp_path, tmp_path) == "real/result_1.txt"
    assert relative_to(str(tmp_path / "real" / "result_0.txt"), tmp_path / "link", Path("/")) == "result_0.txt"
