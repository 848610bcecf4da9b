"""Hostile input for mlsubmit review: an unreadable folder, a folder with no logs, runs with non-finite times, a
system description that is not a JSON object. Each is a finding or exit 2 with a message, never a traceback."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fixtures.reviewfix import THEIRS, preview_tree, trees
from fixtures.synth_org import runs, system, write_org

from mlsubmit.cli import main


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def test_unreadable_folder_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    # Tests run as root, where chmod 000 does not stop a read: the listing fails as it would for another user.
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    real = os.listdir

    def listdir(path: str | os.PathLike[str] = ".") -> list[str]:
        if os.fspath(path) == before:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    rc, out, err = _run(["review", "preview", "--previous", before, "--current", before], capsys)
    assert rc == 2 and out == ""
    assert f"--previous {before}: cannot read the folder (Permission denied)" in err


@pytest.mark.parametrize("step", ["preview", "since"])
def test_a_tree_with_no_logs_is_exit_2(tmp_path: Path, step: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    empty = tmp_path / "empty"
    write_org(empty, {"pod16": system()}, {})  # a systems/ folder and no results
    rc, out, err = _run(["review", step, "--ruleset", "1.0.0", "--previous", before, "--current", str(empty)]
                        if step == "since" else ["review", step, "--previous", before, "--current", str(empty)],
                        capsys)
    assert rc == 2 and out == ""
    assert f"--current {empty}: no results/<system>/<benchmark> folder with result logs" in err


def _set_run_stop(folder: Path, value: str) -> None:
    for log in folder.glob("result_*.txt"):
        text = log.read_text(encoding="utf-8")
        log.write_text(re.sub(r'("time_ms": )[0-9]+(, "event_type": "INTERVAL_END", "key": "run_stop")',
                              rf"\g<1>{value}\g<2>", text), encoding="utf-8")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_times_leave_the_entry_out_with_a_finding(tmp_path: Path, value: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    now = preview_tree(tmp_path / "b", "onprem", {16: 20.0})
    _set_run_stop(Path(now) / "results" / "pod16" / "bert", value)
    rc, out, _ = _run(["review", "preview", "--previous", before, "--current", now], capsys)
    assert rc == 1
    assert "warning REV024 pod16/bert: no score (too many runs without a finite time to train" in out
    assert "REV021" in out


def test_finite_times_are_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    now = preview_tree(tmp_path / "b", "onprem", {16: 20.0})
    rc, out, _ = _run(["review", "preview", "--previous", before, "--current", now], capsys)
    assert rc == 0 and "REV020" in out and "REV024" not in out


def test_system_not_an_object_in_borrow_is_one_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = trees(tmp_path, THEIRS)
    (tmp_path / "resub/systems/pod16.json").write_text("[1, 2]\n", encoding="utf-8")
    rc, out, _ = _run(["review", "borrow", "--ruleset", "1.0.0", "--format", "json",
                       *(x for k in ("original", "resubmitted", "donor") for x in (f"--{k}", str(paths[k])))], capsys)
    assert rc == 0  # REV013 is a warning, as for a missing system description (--strict makes it fail)
    assert "systems/pod16.json is a JSON array, not an object: the software, system and scale rules" in out
    assert '"REV006"' not in out  # not one error per field of the original


def test_system_not_json_in_borrow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = trees(tmp_path, THEIRS)
    (tmp_path / "ours/systems/pod16.json").write_text("{not json\n", encoding="utf-8")
    rc, out, _ = _run(["review", "borrow", "--ruleset", "1.0.0", "--strict",
                       *(x for k in ("original", "resubmitted", "donor") for x in (f"--{k}", str(paths[k])))], capsys)
    assert rc == 1 and "warning REV013" in out and "systems/pod16.json is not readable JSON" in out


def test_system_not_an_object_in_preview_and_since(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    now = preview_tree(tmp_path / "b", "onprem", {16: 20.0})
    (Path(now) / "systems" / "pod16.json").write_text('"a string"\n', encoding="utf-8")
    rc, out, _ = _run(["review", "preview", "--previous", before, "--current", now], capsys)
    assert rc == 1 and "REV024 pod16/bert: systems/pod16.json is a JSON string, not an object" in out
    rc, out, _ = _run(["review", "since", "--ruleset", "1.0.0", "--previous-ruleset", "1.0.0", "--previous", before,
                       "--current", now], capsys)
    assert rc == 0 and "systems/pod16.json changed since the previous round: a JSON object -> a JSON string" in out


def test_an_entry_of_one_run_is_said_to_have_too_few_runs(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """One run, finite and converged: the olympic mean has nothing left after dropping, which is not a run
    without a finite time."""
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    now = tmp_path / "b"
    write_org(now, {"pod16": system(status="onprem", system_name="IPU-POD16")}, {("pod16", "bert"): runs([20.0])})
    rc, out, _ = _run(["review", "preview", "--previous", before, "--current", str(now)], capsys)
    assert rc == 1
    assert "warning REV024 pod16/bert: no score (1 run with a finite time to train: too few for the olympic mean" \
        in out, out
