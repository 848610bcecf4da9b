"""--changed-since: the work tree is compared under the checked folder only, with paths relative to the top."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mlsubmit.core.support.git import changed_paths

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})  # fmt: skip


def test_changes_under_the_folder_are_found_and_others_are_not_walked(tmp_path: Path) -> None:
    for org in ("A", "B"):
        (tmp_path / org / "benchmarks" / "x").mkdir(parents=True)
        (tmp_path / org / "benchmarks" / "x" / "train.py").write_text("x = 1\n", encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "c")
    for org in ("A", "B"):
        (tmp_path / org / "benchmarks" / "x" / "train.py").write_text("x = 2\n", encoding="utf-8")
        (tmp_path / org / "benchmarks" / "x" / "new.py").write_text("y = 1\n", encoding="utf-8")
    top = tmp_path.resolve()
    assert changed_paths(tmp_path / "A", "HEAD") == {str(top / "A/benchmarks/x/train.py"),
                                                     str(top / "A/benchmarks/x/new.py")}  # fmt: skip
    assert len(changed_paths(tmp_path, "HEAD")) == 4  # from the top: everything
    assert changed_paths(tmp_path / "A" / "benchmarks" / "x" / "train.py", "HEAD") == changed_paths(
        tmp_path / "A", "HEAD")  # a file means its folder
