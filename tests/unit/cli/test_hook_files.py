"""--hook-files, which ends the pre-commit hooks' entry: a later argument starting with - that names an existing
file is that file (issue 54 case 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsubmit.cli import hook_files


def test_only_existing_files_after_the_marker_are_taken_as_files(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "--output=x.txt").write_text("")
    argv = ["check", "--output=x.txt", "--hook-files", "--ruleset", "4.1.0", "--output=x.txt", "-", "--"]
    assert hook_files(argv) == ["check", "--output=x.txt", "--hook-files", "--ruleset", "4.1.0", "./--output=x.txt",
                                "-", "--"]
    assert hook_files(["check", "--output=x.txt"]) == ["check", "--output=x.txt"]  # only under the hooks' marker
