"""`check` and `advise` read what `package` reads: raw job output under any name, gzip-compressed or not."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
from fixtures.demo import raw_run
from fixtures.synth import RunSpec
from mlsubmit.checker.engine.discover import discover
from mlsubmit.checker.engine.pipeline import CheckOptions, run_check
from mlsubmit.checker.logs.input import CHUNK, holds_records
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.submission.run_selection import stage_run


def _raw(path: Path, *, compressed: bool = False, **spec: object) -> Path:
    data = raw_run(RunSpec(ruleset="1.1.0", **spec))  # type: ignore[arg-type]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0) if compressed else data)
    return path


def test_a_compressed_run_reads_like_its_plain_copy(tmp_path: Path) -> None:
    plain = _raw(tmp_path / "job.out")
    packed = _raw(tmp_path / "job.out.gz", compressed=True)
    a, b = read_log(plain, unpack=True), read_log(packed, unpack=True)
    assert b.records == a.records and b.findings == a.findings == [] and b.lines == a.lines
    assert b.sha256 == hashlib.sha256(packed.read_bytes()).hexdigest()  # the file's hash, as stored


def test_a_result_file_is_read_as_stored(tmp_path: Path) -> None:
    """A gzip-compressed result_*.txt in a tree is what mlperf-logging would fail: it is not unpacked."""
    packed = _raw(tmp_path / "result_0.txt", compressed=True)
    log = read_log(packed)
    assert not log.records and "LOG009" in {f.code for f in log.findings}


@pytest.mark.parametrize("damage", ["truncated", "not gzip after the magic"])
def test_a_damaged_compressed_run_is_a_finding(tmp_path: Path, damage: str) -> None:
    packed = _raw(tmp_path / "job.out.gz", compressed=True)
    data = packed.read_bytes()
    packed.write_bytes(data[: len(data) // 2] if damage == "truncated" else data[:2] + b"\x00" * 40)
    log = read_log(packed, unpack=True)
    assert [f.code for f in log.findings] == ["LOG001"] and not log.readable


def test_package_and_check_read_the_same_records(tmp_path: Path) -> None:
    packed = _raw(tmp_path / "job.out.gz", compressed=True, crlf=True)
    run, problems = stage_run(packed, "job.out.gz", tmp_path / "staged.txt")
    assert run is not None and not problems
    staged = read_log(tmp_path / "staged.txt")
    checked = read_log(packed, unpack=True)
    assert [(r.key, r.value, r.timestamp) for r in staged.records] == [
        (r.key, r.value, r.timestamp) for r in checked.records
    ]


def test_holds_records_finds_the_token_across_a_chunk_boundary(tmp_path: Path) -> None:
    record = b':::MLLOG {"key": "x", "value": 1, "metadata": {}, "time_ms": 1}\n'
    across = tmp_path / "across"
    across.write_bytes(b"x" * (CHUNK - 4) + record)
    assert holds_records(across)
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"launch script\n" * 1000)
    assert not holds_records(notes)
    assert not holds_records(across, limit=CHUNK // 2)  # past the limit: not looked at
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"\x1f\x8b" + b"\x00" * 10)
    assert holds_records(broken)  # kept, so that reading it reports the damage


def test_a_folder_of_raw_job_output_is_checked(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "pod16-bert"
    _raw(folder / "job-00.out", seed=1)
    _raw(folder / "job-01.out.gz", compressed=True, seed=2)  # a run set: two runs with one seed would be TREE015
    (folder / "launch.sh").write_text("#!/bin/sh\npoprun python train.py\n")
    (folder / ".job-00.out.swp").write_bytes(b":::MLLOG {}\n")
    targets = discover([str(folder)])
    assert [(Path(r.display).name, r.unpack) for r in targets.loose_logs] == [("job-00.out", True),
                                                                              ("job-01.out.gz", True)]
    run = run_check([str(folder)], CheckOptions(ruleset="1.1.0", jobs=1))
    assert run.report.exit_code() == 0 and len(run.report.files) == 2
    assert "RUN001" in {f.code for f in run.report.all_findings()}  # 2 of 10 BERT runs


def test_result_logs_in_a_folder_keep_the_reference_reading(tmp_path: Path) -> None:
    """Where result_*.txt files are, only they are read, as the package checker reads them; nothing is unpacked."""
    folder = tmp_path / "bert"
    _raw(folder / "result_0.txt")
    _raw(folder / "job-01.out")
    refs = discover([str(folder)]).loose_logs
    assert [(Path(r.display).name, r.unpack) for r in refs] == [("result_0.txt", False)]
    named = discover([str(folder / "job-01.out"), str(folder / "result_0.txt")]).loose_logs
    assert [r.unpack for r in named] == [True, False]


def test_the_cache_keeps_raw_and_stored_readings_apart(tmp_path: Path) -> None:
    packed = _raw(tmp_path / "a" / "job.out.gz", compressed=True)
    same = tmp_path / "b" / "result_0.txt"
    same.parent.mkdir()
    same.write_bytes(packed.read_bytes())
    options = CheckOptions(ruleset="1.1.0", jobs=1, cache_dir=tmp_path / "cache")
    for _ in range(2):  # cold, then warm
        raw = run_check([str(packed)], options).report
        stored = run_check([str(same)], options).report
        assert raw.exit_code() == 0 and stored.exit_code() == 1
