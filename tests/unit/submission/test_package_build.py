"""Build-folder housekeeping: only folders of dead mlsubmit runs beside `out` are ever removed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mlsubmit.submission.build import not_ours
from mlsubmit.submission.buildfolder import MARKER, remove_stale_builds


def test_only_builds_of_finished_processes_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "submission"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folders = {}
    for name, marker in (("dead", dead.stdout.strip()), ("alive", str(os.getpid())), ("foreign", None),
                         ("garbled", "not a pid")):
        folder = tmp_path / f".submission.build-{name}"
        folder.mkdir()
        if marker is not None:
            (folder / MARKER).write_text(marker)
        folders[name] = folder
    (tmp_path / ".other.build-x").mkdir()
    removed = remove_stale_builds(out)
    assert removed == [folders["dead"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".other.build-x", ".submission.build-alive", ".submission.build-foreign", ".submission.build-garbled"
    ]


def _replaceable(path: Path) -> bool:
    return not_ours(path) is None


def test_only_empty_folders_and_previous_builds_are_replaceable(tmp_path: Path) -> None:
    assert _replaceable(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    assert _replaceable(tmp_path / "empty")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    assert not _replaceable(tmp_path / "mine")
    (tmp_path / "file").write_text("x")
    assert not _replaceable(tmp_path / "file")
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / "manifest.json").write_text("{}")  # a manifest.json mlsubmit did not write
    assert "did not write" in str(not_ours(tmp_path / "stray"))
    os.symlink(tmp_path / "stray", tmp_path / "link")
    assert not _replaceable(tmp_path / "link")
