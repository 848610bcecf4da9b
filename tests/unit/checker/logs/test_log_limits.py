"""What one log may expand to is bounded, and reaching a bound is a finding (issue 26: 4 MB of gzip held 10 M
records and took 5 GB of memory)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from mlsubmit.checker.logs import limits
from mlsubmit.checker.logs.reader import read_log

RECORD = b':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, ' \
         b'"metadata": {}}\n'


def _gzip_of(path: Path, records: int) -> Path:
    with gzip.open(path, "wb") as fh:
        fh.write(RECORD * records)
    return path


def test_records_past_the_limit_are_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_KEPT", 1000)
    log = read_log(_gzip_of(tmp_path / "run.log.gz", 50_000), unpack=True)
    assert len(log.records) == 1000
    found = [f for f in log.findings if f.code == "LOG012"]
    assert len(found) == 1 and "1,000 records or more" in found[0].message and found[0].line == 1000


def test_bytes_past_the_limit_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_BYTES", 1 << 20)
    log = read_log(_gzip_of(tmp_path / "run.log.gz", 100_000), unpack=True)  # ~10 MiB once decompressed
    assert [f.code for f in log.findings] == ["LOG012"]
    assert len(log.records) < 100_000


def test_a_log_within_the_limits_has_no_finding(tmp_path: Path) -> None:
    log = read_log(_gzip_of(tmp_path / "run.log.gz", 5000), unpack=True)
    assert len(log.records) == 5000 and not log.findings
