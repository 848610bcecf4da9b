"""Whole-output result files (TR6.1 "Result files"): records untouched, redaction outside them, cuts only above
the limit and never of a record."""

from __future__ import annotations

import io
from pathlib import Path

from mlsubmit.submission.fulllog import Redaction, copy_full

NONE = Redaction()

REC = b'[1,0]<stdout>::::MLLOG {"key": "x", "value": "/home/alice/data", "metadata": {"file": "/home/alice/t.py"}}\n'
RAW = (b"poprun: launching\r\n"
       b"export DATA=/home/alice/data WANDB_API_KEY=abc123 MY_WANDB_API_KEY=keep\n"
       + REC
       + b"step 1: loss=3.2 cwd=/home/alice/run\n"
       + b"no newline at the end")


def copy(tmp_path: Path, raw: bytes, redaction: Redaction = NONE, limit: int = 1 << 20) -> tuple[bytes, dict]:
    dest = tmp_path / "result_0.txt"
    done = copy_full(lambda: io.BytesIO(raw), dest, redaction, limit=limit)
    return dest.read_bytes(), done.manifest()


def test_without_rules_every_byte_is_kept(tmp_path: Path) -> None:
    data, manifest = copy(tmp_path, RAW)
    assert data == RAW
    assert manifest == {"kept": "full", "lines": 5, "redacted": [], "truncated": None}


def test_paths_and_environment_values_are_redacted_outside_records_only(tmp_path: Path) -> None:
    data, manifest = copy(tmp_path, RAW, Redaction(paths=("/home/alice",), env=("WANDB_API_KEY",)))
    assert REC in data  # the record's line, prefix included, byte for byte
    assert b"export DATA=<redacted>/data WANDB_API_KEY=<redacted> MY_WANDB_API_KEY=keep\n" in data
    assert b"cwd=<redacted>/run\n" in data and data.startswith(b"poprun: launching\r\n")
    assert manifest["redacted"] == [{"rule": "env:WANDB_API_KEY", "lines": 1}, {"rule": "path:/home/alice", "lines": 2}]


def test_output_within_the_limit_is_never_cut(tmp_path: Path) -> None:
    data, manifest = copy(tmp_path, RAW, limit=len(RAW))
    assert data == RAW and manifest["truncated"] is None


def test_above_the_limit_framework_lines_are_cut_from_the_first_that_does_not_fit_and_records_stay(
        tmp_path: Path) -> None:
    raw = b"".join(b"framework line %04d\n" % i + (REC if i % 10 == 0 else b"") for i in range(100))
    data, manifest = copy(tmp_path, raw, limit=len(raw) // 2)
    assert len(data) <= len(raw) // 2
    assert data.count(REC) == 10  # every record is kept, even after the cut
    cut = manifest["truncated"]
    assert cut is not None and cut["lines"] + data.count(b"framework line") == 100
    kept = [line for line in data.splitlines() if line.startswith(b"framework")]
    assert kept == [b"framework line %04d" % i for i in range(len(kept))]  # the first ones, no holes
    assert cut["from_line"] == raw[: raw.index(b"framework line %04d" % len(kept))].count(b"\n") + 1


def test_a_newline_bomb_is_copied_in_runs_not_line_by_line(tmp_path: Path) -> None:
    """Issue 35: the whole-output copy read line by line (readline), one Python step per newline; it reads runs of
    framework lines now, and gives the same file, counts and cut as before."""
    raw = b"head\n" + b"\n" * 3_000_000 + REC + b"\n" * 1000 + b"tail /home/alice\n"
    data, manifest = copy(tmp_path, raw, Redaction(paths=("/home/alice",)), limit=len(raw) - 500)
    assert data.startswith(b"head\n" + b"\n" * 3_000_000 + REC) and b"/home/alice/t.py" in data
    assert manifest["lines"] == 3_001_003  # the redacted line is then cut, as before
    assert manifest["redacted"] == [{"rule": "path:/home/alice", "lines": 1}]
    assert manifest["truncated"] == {"lines": 484, "bytes": 499, "from_line": 3_000_520}  # as the line-by-line copy cut


def test_the_whole_output_stops_where_check_stops(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mlsubmit.checker.logs import input as log_input
    from mlsubmit.checker.logs import limits
    from mlsubmit.checker.logs.reader import read_stream

    rec = b':::MLLOG {"key": "x", "value": 1, "time_ms": 1, "metadata": {}}\n'  # a record check decodes
    raw = b"".join(b"framework line %04d\n" % i + (rec if i % 10 == 0 else b"") for i in range(100))
    monkeypatch.setattr(log_input, "CHUNK", 256)
    monkeypatch.setattr(limits, "MAX_BYTES", 1000)
    cut: list = []  # type: ignore[type-arg]
    done = copy_full(lambda: io.BytesIO(raw), tmp_path / "r.txt", NONE, display="x", cut=cut)
    from mlsubmit.checker.logs import reader

    monkeypatch.setattr(reader, "CHUNK", 256)
    checked = read_stream(io.BytesIO(raw), "x", sink=lambda batch: None)
    said = [(f.code, f.message, f.line) for f in checked.findings if f.code == "LOG012"]
    assert [(f.code, f.message, f.line) for f in cut] == said and len(said) == 1
    assert done.records == checked.record_count and (tmp_path / "r.txt").read_bytes() == raw[:done_bytes(raw)]


def done_bytes(raw: bytes) -> int:  # what check reads of `raw` at 256-byte chunks and a 1,000-byte limit
    return raw.rfind(b"\n", 0, 1024) + 1
