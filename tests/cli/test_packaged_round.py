"""The round travels with the packaged tree: an archive unpacked in a fresh folder is checked with no flags, its
round read from the manifest.json beside `<org>/` (checker/rounds/detect.py)."""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.demo import repository_systems, write_example

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
Cli = Callable[..., tuple[int, str, str]]


def test_an_unpacked_archive_is_checked_in_its_round_with_no_flags(
    tmp_path: Path, run_cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = write_example(tmp_path / "work", repository_systems())
    code, _out, err = run_cli("package", example.config, "--archive", "--color", "never")
    assert code == 0, err
    built = example.root / "build" / "submission"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with tarfile.open(built / "mlperf_submission_Graphcore.tar.gz") as archive:
        assert sorted(m.name for m in archive.getmembers() if "/" not in m.name) == ["Graphcore", "manifest.json"]
        archive.extractall(fresh, filter="data")
    ruleset = json.loads((fresh / "manifest.json").read_text())["ruleset"]
    assert not (fresh / "Graphcore" / ".mlsubmit-round").exists()  # the chair's repo checker refuses dot names
    monkeypatch.chdir(fresh)
    code, out, err = run_cli("check", "Graphcore", "--color", "never")
    assert code == 0, out + err
    assert f"mlsubmit: ruleset {ruleset} (from {fresh / 'manifest.json'})" in err


def test_a_manifest_of_another_tool_states_no_round(tmp_path: Path, run_cli: Cli) -> None:
    org = tmp_path / "Acme"
    (org / "results").mkdir(parents=True)
    (tmp_path / "manifest.json").write_text('{"ruleset": "1.1.0", "name": "not ours"}')
    code, _out, err = run_cli("check", org)
    assert code == 2 and "cannot tell its round" in err and "manifest.json of a packaged tree" in err
    (tmp_path / "manifest.json").write_text('{"format": "mlsubmit-manifest/1", "ruleset": "eleven"}')
    code, _out, err = run_cli("check", org)
    assert code == 2 and f"{tmp_path / 'manifest.json'}: 'eleven' does not name a round" in err
