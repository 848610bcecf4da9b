"""`mlsubmit package` findings point at the user's inputs: the raw log and its line, the package.toml entry."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.demo import Example, write_example

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
Cli = Callable[..., tuple[int, str, str]]


def _break_record(log: Path, key: str) -> int:
    """Cut the record of `key` in half; returns its raw line (1-based)."""
    lines = log.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(lines) if f'"key": "{key}"'.encode() in line)
    lines[number] = lines[number][: len(lines[number]) // 2]
    log.write_bytes(b"\n".join(lines))
    return number + 1


def _raw_line(log: Path, key: str) -> int:
    return next(i for i, line in enumerate(log.read_bytes().split(b"\n"), 1) if f'"key": "{key}"'.encode() in line)


@pytest.fixture
def broken(tmp_path: Path) -> tuple[Example, int]:
    """A bert log with a broken record, and a resnet run among the bert runs."""
    ex = write_example(tmp_path / "work")
    line = _break_record(ex.bert_runs[0], "init_start")
    shutil.copyfile(ex.resnet_runs[0], ex.bert_runs[1])
    return ex, line


def _findings(out: str) -> list[dict[str, Any]]:
    data = json.loads(out)
    return [f for entry in data["files"] for f in entry["findings"]] + data["findings"]


def test_findings_name_the_raw_log_its_line_and_the_config_entry(broken: tuple[Example, int], run_cli: Cli) -> None:
    ex, broken_line = broken
    code, out, err = run_cli("package", ex.config, "--format", "json")
    assert code == 1 and "was NOT written" in err
    found = _findings(out)
    log004 = next(f for f in found if f["code"] == "LOG004")
    assert (log004["path"], log004["line"]) == ("runs/pod16-bert/job_00.out", broken_line)
    consequences = [f for f in found if f["code"] in ("RULE001", "RULE002", "TREE016")]
    assert consequences and all(f["path"] == "runs/pod16-bert/job_00.out" for f in consequences)
    wrong = _raw_line(ex.bert_runs[1], "submission_benchmark")
    sys046 = next(f for f in found if f["code"] == "SYS046")
    pkg009 = next(f for f in found if f["code"] == "PKG009")
    assert (sys046["path"], sys046["line"]) == (pkg009["path"], pkg009["line"]) == ("runs/pod16-bert/job_01.out", wrong)
    assert "results[0].benchmark in package.toml" in sys046["hint"] and "Move the log" not in sys046["hint"]
    assert {"path": str(ex.config), "line": 7, "pointer": "/results/0"} in sys046["related"]
    tree021 = next(f for f in found if f["code"] == "TREE021")  # a folder the build made: the entry that made it
    assert (tree021["path"], tree021["line"], tree021["pointer"]) == (str(ex.config), 7, "/results/0")
    assert tree021["message"].startswith("Graphcore/results/ipu-pod16-POPART-closed/bert: ")
    sys019 = [f["path"] for f in found if f["code"] == "SYS019"]
    assert sorted(sys019) == ["systems/ipu-pod16-POPART-closed.json", "systems/ipu-pod64-TF-closed.json"]
    places = [f["path"] for f in found] + [r["path"] for f in found for r in f.get("related", [])]
    assert not [p for p in places if ".build-" in p or p.startswith(str(ex.root / "build")) or "result_" in p]


def test_text_output_shows_the_raw_lines(broken: tuple[Example, int], run_cli: Cli) -> None:
    ex, broken_line = broken
    code, out, _err = run_cli("package", ex.config, "--color", "never")
    assert code == 1
    # a run's own error inside the built tree: a warning, judged at its folder (TREE007/TREE008)
    assert f"runs/pod16-bert/job_00.out:{broken_line}: warning LOG004" in out
    assert f"runs/pod16-bert/job_01.out:{_raw_line(ex.bert_runs[1], 'submission_benchmark')}: error SYS046" in out
    assert ".submission.build-" not in out and "build/submission" not in out


def test_a_finished_tree_names_the_placed_log_as_a_second_place(tmp_path: Path, run_cli: Cli) -> None:
    ex = write_example(tmp_path / "work")
    shutil.copyfile(ex.resnet_runs[0], ex.bert_runs[1])
    code, out, _err = run_cli("package", ex.config, "--format", "json", "--allow-findings")
    assert code == 1 and (ex.root / "build/submission/manifest.json").is_file()
    sys046 = next(f for f in _findings(out) if f["code"] == "SYS046")
    assert sys046["path"] == "runs/pod16-bert/job_01.out"
    placed = [r["path"] for r in sys046["related"] if r["path"].endswith(".txt")]
    assert len(placed) == 1 and Path(placed[0]).is_file()
    assert placed[0].startswith(str(ex.root / "build/submission/Graphcore/results/ipu-pod16-POPART-closed/bert/"))


def test_ruleset_hints_name_the_config_key(tmp_path: Path, run_cli: Cli) -> None:
    ex = write_example(tmp_path / "work")
    bad = ex.root / "runs" / "pod64-resnet"
    for log in bad.iterdir():  # a benchmark this ruleset does not know: RULE009, whose hint names --ruleset
        log.write_bytes(log.read_bytes().replace(b'"value": "resnet"', b'"value": "resnet_v9"'))
    code, out, _err = run_cli("package", ex.config, "--format", "json")
    assert code == 1
    ruleset_hints = [f for f in _findings(out) if "ruleset" in f["hint"]]
    assert ruleset_hints and all("--ruleset" not in f["hint"] for f in ruleset_hints)
    assert all("the `ruleset` key of package.toml" in f["hint"] for f in ruleset_hints if f["code"] == "RULE009")
    assert any({"path": str(ex.config), "line": 3, "pointer": "/ruleset"} in f["related"] for f in ruleset_hints)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-loop", "dangling"])
def test_what_a_logs_glob_matches_and_cannot_read_is_a_finding(tmp_path: Path, run_cli, kind: str) -> None:
    """Issue 35: a FIFO, a link to /dev/zero and a link loop matched by `logs` were skipped without a word."""
    ex = write_example(tmp_path / "work", None)
    odd = ex.resnet_runs[0].parent / "zz_odd.out"
    if kind == "fifo":
        os.mkfifo(odd)
    elif kind == "dev-zero":
        odd.symlink_to("/dev/zero")
    elif kind == "link-loop":
        odd.symlink_to(odd)
    else:
        odd.symlink_to(tmp_path / "gone.out")
    code, out, err = run_cli("package", ex.config, "--allow-findings", "--format", "json")
    assert code in (1, 2), err
    assert "PKG050" in out and "zz_odd.out" in out
