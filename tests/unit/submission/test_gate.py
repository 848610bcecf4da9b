"""Issue 54: the gate before `verify --official` reads what the reference reads. The result logs the tools open are
found with their own globs (mlsubmit.checker.upstream.reads, held here to the installed release's source) and
compared with ours (PKG075); glob characters in folder names are refused (PKG072); a record our reader drops that
the reference reads keeps the unit from the tools (PKG074); the private copy is bounded by apparent size before
anything is written, and the records the tools read are counted once per path they open (PKG071)."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from mlsubmit.checker.upstream import installed, reads
from mlsubmit.submission import handover

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding


def org(root: Path, name: str = "Graphcore") -> Path:
    folder = root / name
    (folder / "results" / "sys-a" / "bert").mkdir(parents=True)
    (folder / "systems").mkdir()
    (folder / "systems" / "sys-a.json").write_text("{}\n", encoding="utf-8")
    (folder / "results" / "sys-a" / "bert" / "result_0.txt").write_text(":::MLLOG {}\n", encoding="utf-8")
    return folder


def _source(relative: str) -> str:
    folder = installed.package_folder()
    assert folder is not None
    return (folder / relative).read_text(encoding="utf-8")


def test_the_patterns_are_the_installed_tools_own() -> None:
    """Each tool's discovery, in its own source: the listing of folders and the globs with recursive=True."""
    for tool in ("package_checker/package_checker.py", "result_summarizer/result_summarizer.py",
                 "rcp_checker/rcp_checker.py"):  # fmt: skip
        text = _source(tool)
        assert "'{folder}/result_*.txt'" in text or '"{folder}/result_*.txt"' in text, tool
        assert re.search(r"glob\.glob\(pattern, recursive=True\)", text), tool
    summarizer = _source("result_summarizer/result_summarizer.py")
    for pattern in reads.POWER_PATTERNS:
        assert f"'{pattern}'" in summarizer
    for tool in ("package_checker/package_checker.py", "result_summarizer/result_summarizer.py"):
        text = _source(tool)
        assert "os.listdir(folder)" in text and "os.path.isdir(sub_folder)" in text
    parser = _source("compliance_checker/mlp_parser/ruleset_610.py")
    assert "TOKEN = ':::MLLOG '" in parser and "re.sub(\".*\"+TOKEN, TOKEN, l)" in parser
    assert "json.loads(line[len(TOKEN):])" in parser and "float(m['time_ms'])" in parser


def test_result_files_follow_links_and_globs_as_the_tools_do(tmp_path: Path) -> None:
    root = org(tmp_path)
    os.symlink("sys-a", root / "results" / "sys-link")  # a folder link: listed again, its logs opened again
    (root / "results" / "sys-a" / "bert" / "result_1.txt").mkdir()  # a folder the glob takes as a log
    (root / "results" / "sys-a" / "bert" / "notes.txt").write_text("x\n", encoding="utf-8")
    assert reads.result_files(str(tmp_path), "Graphcore") == [
        "Graphcore/results/sys-a/bert/result_0.txt", "Graphcore/results/sys-a/bert/result_1.txt",
        "Graphcore/results/sys-link/bert/result_0.txt", "Graphcore/results/sys-link/bert/result_1.txt"]


def test_a_system_folder_named_double_star_reaches_logs_at_any_depth(tmp_path: Path) -> None:
    """What the tools would read (the glob, recursive=True), and the gate that never computes it: PKG072."""
    root = org(tmp_path)
    deep = root / "results" / "**" / "x" / "bert"
    deep.mkdir(parents=True)
    (deep / "result_0.txt").write_text(":::MLLOG {}\n", encoding="utf-8")
    (root / "results" / "**" / "bert").mkdir()
    found = reads.result_files(str(tmp_path), "Graphcore")
    assert "Graphcore/results/**/x/bert/result_0.txt" in found  # what our check never reads
    assert "Graphcore/results/sys-a/bert/result_0.txt" in found  # reached twice: directly and through `**`
    assert handover.opened_logs(tmp_path, "Graphcore") is None
    assert handover.unlike_ours(tmp_path, "Graphcore", "x") == []
    names = handover.unsafe_names(tmp_path, "Graphcore", "x")
    assert [(f.code, f.path) for f in names] == [("PKG072", "x/results/**")]
    assert "glob character" in names[0].message


@pytest.mark.parametrize(("name", "bad"), [("a*", True), ("a?b", True), ("[ab]", True), ("x]", True),
                                           ("a{b,c}", False), ("plain-name_1.0+x", False)])
def test_glob_characters_in_system_and_benchmark_names_are_refused(tmp_path: Path, name: str, bad: bool) -> None:
    root = org(tmp_path)
    (root / "results" / name).mkdir()
    (root / "results" / "sys-a" / name).mkdir()
    found = handover.unsafe_names(tmp_path, "Graphcore", "x")
    assert [f.code for f in found] == (["PKG072", "PKG072"] if bad else [])


@pytest.mark.parametrize(("name", "bad"), [("a{b,c}", True), ("x}", True), ("a*", True), ("Graphcore", False)])
def test_an_organisation_the_summarizer_reads_as_several_is_refused(tmp_path: Path, name: str, bad: bool) -> None:
    org(tmp_path, name)
    assert [f.code for f in handover.unsafe_names(tmp_path, name, "x")] == (["PKG072"] if bad else [])


def test_a_log_only_the_tools_open_or_only_we_read_is_refused(tmp_path: Path) -> None:
    root = org(tmp_path)
    assert handover.unlike_ours(tmp_path, "Graphcore", "x") == []
    (root / "results" / "sys-a" / "bert" / "result_1.txt").mkdir()
    found = handover.unlike_ours(tmp_path, "Graphcore", "x")
    assert [(f.code, f.path) for f in found] == [("PKG075", "x/results/sys-a/bert/result_1.txt")]
    assert "the reference tools open this as a result log" in found[0].message


def test_links_to_a_system_folder_count_its_records_once_per_path(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Case 15 of issue 54, reduced: 30 records, read again through each of 6 links: 210 records for the tools."""
    root = org(tmp_path)
    (root / "results" / "sys-a" / "bert" / "result_0.txt").write_bytes(b":::MLLOG {}\n" * 30)
    monkeypatch.setattr(handover, "MAX_RECORDS_TOTAL", 209)
    assert handover.over_bounds(tmp_path, "Graphcore", "x") == []  # 30 records, one path
    for i in range(6):
        os.symlink("sys-a", root / "results" / f"sys-{i}")
    found = handover.over_bounds(tmp_path, "Graphcore", "x")
    assert [(f.code, f.path) for f in found] == [("PKG071", "x")]
    assert "hold 210 :::MLLOG lines in all (each counted once per path" in found[0].message
    monkeypatch.setattr(handover, "MAX_RECORDS_TOTAL", 210)
    assert handover.over_bounds(tmp_path, "Graphcore", "x") == []


def test_a_sparse_file_is_refused_by_its_apparent_size_before_anything_is_written(tmp_path: Path) -> None:
    """Case 3 of issue 54: 2 GiB that take no room on disk are not copied (the copy stays a few bytes)."""
    src = org(tmp_path / "src")
    sparse = src / "benchmarks" / "bert" / "blob.bin"
    sparse.parent.mkdir(parents=True)
    with open(sparse, "wb") as fh:
        fh.truncate(2 << 30)
    found = handover.private_copy(src, tmp_path / "copy" / "Graphcore", "src/Graphcore")
    assert [(f.code, f.path) for f in found] == [("PKG071", "src/Graphcore/benchmarks/bert/blob.bin")]
    assert "2,147,483,648 bytes (apparent size), past the 50 MiB a file may be: not written" in found[0].message
    copy = tmp_path / "copy" / "Graphcore"
    assert not (copy / "benchmarks" / "bert" / "blob.bin").exists()
    assert (copy / "results" / "sys-a" / "bert" / "result_0.txt").is_file()


def test_a_tree_past_the_copy_bound_is_not_copied_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = org(tmp_path / "src")
    monkeypatch.setattr(handover, "MAX_COPY_BYTES", 10)
    found = handover.private_copy(src, tmp_path / "copy" / "Graphcore", "src/Graphcore")
    assert [(f.code, f.path) for f in found] == [("PKG071", "src/Graphcore")]
    assert list((tmp_path / "copy" / "Graphcore").iterdir()) == []


@pytest.mark.parametrize(("line", "taken"), [
    ('{"time_ms": 1e999, "key": "k", "value": 1, "metadata": {}}', True),
    ('{"time_ms": NaN, "key": "k", "value": 1, "metadata": {}}', True),
    ('{"time_ms": -Infinity, "key": "k", "value": 1, "metadata": {}}', True),
    ('{"time_ms": "inf", "key": "k", "value": 1, "metadata": {}}', True),
    ('{"time_ms": "1.2.3", "key": "k", "value": 1, "metadata": {}}', False),  # a ValueError: it skips the line
    ('{"time_ms": 1, "key": "k", "value": 1}', False),  # a KeyError: it crashes, no record
    ('{"time_ms": 1, "key": "k", "value": 1, "metadata": {}', False),  # cut off
    ('[1, 2]', False),
])  # fmt: skip
def test_the_reference_reading_of_a_line(line: str, taken: bool) -> None:
    assert reads.reference_takes(f"noise :::MLLOG {line}\n") is taken
    assert reads.reference_takes(f":::MLLOG {{}} :::MLLOG {line}") is taken  # the last token counts


def _dropped(path: Path, line: int, code: str = "LOG006", repeats: int = 0) -> Finding:
    return replace(finding(code, str(path), "time_ms is not a finite number", line=line), repeats=repeats)


def test_a_record_we_drop_and_the_reference_reads_keeps_the_unit_from_the_tools(tmp_path: Path) -> None:
    root = org(tmp_path)
    log = root / "results" / "sys-a" / "bert" / "result_0.txt"
    log.write_text(':::MLLOG {"time_ms": 1, "key": "a", "value": 1, "metadata": {}}\n'
                   ':::MLLOG {"time_ms": NaN, "key": "submission_division", "value": "../evil", "metadata": {}}\n'
                   ':::MLLOG {"time_ms": "1.2.3", "key": "b", "value": 1, "metadata": {}}\n', encoding="utf-8")
    found = [_dropped(log, 2), _dropped(log, 3), _dropped(root / "systems" / "sys-a.json", 1)]
    refused = handover.blocking_findings(found, tmp_path, "Graphcore")
    assert [(f.code, f.path, f.line) for f in refused] == [("PKG074", str(log), 2)]
    assert "our reader dropped this record (LOG006: time_ms is not a finite number)" in refused[0].message
    assert handover.blocking_findings(found, None) == []  # our codes alone: not these


def test_dropped_records_past_the_findings_cap_keep_the_unit_from_the_tools(tmp_path: Path) -> None:
    log = org(tmp_path) / "results" / "sys-a" / "bert" / "result_0.txt"
    for code, repeats in (("LOG006", 5), ("LOG010", 0), ("LOG012", 0)):
        refused = handover.dropped_but_read([_dropped(log, 1, code, repeats)], tmp_path, "Graphcore")
        assert [(f.code, f.line) for f in refused] == [("PKG074", 1)], code
        assert "our reader did not read all of this result log" in refused[0].message


def test_an_archive_member_is_judged_by_its_headers_size() -> None:
    assert handover.past_bound("Graphcore/benchmarks/bert/blob.bin", 2 << 30) is not None
    assert handover.past_bound("Graphcore/results/s/bert/result_0.txt", 100 << 20) is None  # 128 MiB for a log
    assert handover.past_bound("Graphcore/results/s/bert/result_0.txt", 129 << 20) is not None
    assert handover.past_bound("Graphcore/systems/s.json", 1 << 20) is None
