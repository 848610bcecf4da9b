"""The log reader: same records as mlperf-logging's parser, real line numbers, bad bytes as findings."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from mlsubmit.checker.logs import reader as logs
from mlsubmit.checker.logs.reader import read_log, read_stream

REC = (
    ':::MLLOG {"namespace": "", "time_ms": 5, "event_type": "POINT_IN_TIME", "key": "k%d", "value": %d, '
    '"metadata": {}}'
)


def rec(i: int) -> str:
    return REC % (i, i)


def parse(text: bytes) -> logs.ParsedLog:
    return read_stream(io.BytesIO(text), "x.txt")


def codes(log: logs.ParsedLog) -> list[tuple[str, int | None]]:
    return [(f.code, f.line) for f in log.findings]


def test_records_keep_their_physical_line_numbers() -> None:
    text = f"job starting\n{rec(0)}\nnoise\n\n{rec(1)}\n".encode()
    log = parse(text)
    assert [(r.key, r.line, r.lineno) for r in log.records] == [("k0", 2, 0), ("k1", 5, 1)]
    assert log.lines == 5
    assert log.findings == []


def test_prefixes_crlf_and_the_last_token_on_a_line() -> None:
    text = f"[1,0]<stdout>:{rec(0)}\r\n0: {rec(1)}\r\ngarbage :::MLLOG x {rec(2)}\r\n".encode()
    log = parse(text)
    assert [(r.key, r.line) for r in log.records] == [("k0", 1), ("k1", 2), ("k2", 3)]
    assert log.findings == []


def test_bare_cr_splits_records_but_not_the_line_count() -> None:
    log = parse(f"{rec(0)}\r{rec(1)}\n{rec(2)}\n".encode())
    assert [(r.key, r.line, r.lineno) for r in log.records] == [("k0", 1, 0), ("k1", 1, 1), ("k2", 2, 2)]


def test_no_final_newline_and_truncated_last_record() -> None:
    cut = rec(1)[:40]
    log = parse(f"{rec(0)}\n{cut}".encode())
    assert [r.key for r in log.records] == ["k0"]
    assert codes(log) == [("LOG004", 2)]
    assert log.parse_errors == 1


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (":::MLLOG {bad json", "LOG004"),
        (":::MLLOG [1, 2, 3]", "LOG005"),
        (':::MLLOG {"time_ms": 1, "key": "a", "value": 1}', "LOG005"),
        (':::MLLOG {"time_ms": "abc", "key": "a", "value": 1, "metadata": {}}', "LOG006"),
        (':::MLLOG {"time_ms": null, "key": "a", "value": 1, "metadata": {}}', "LOG006"),
        (':::MLLOG {"time_ms": 1, "key": 7, "value": 1, "metadata": {}}', "LOG005"),
        (":::MLLOG ", "LOG004"),
        (":::MLLOG " + "[" * 100_000, "LOG004"),
    ],
)
def test_broken_records_are_findings_with_their_line(line: str, code: str) -> None:
    log = parse(f"{rec(0)}\n{line}\n".encode())
    assert codes(log) == [(code, 2)]
    assert [r.key for r in log.records] == ["k0"]


def test_duplicate_keys_nan_and_non_utf8_are_warnings() -> None:
    dup = ':::MLLOG {"time_ms": 1, "key": "d", "value": "bogus", "value": "closed", "metadata": {}}'
    nan = ':::MLLOG {"time_ms": 1, "key": "n", "value": NaN, "metadata": {}}'
    text = f"{dup}\n{nan}\n".encode() + b"\xff\xfe stray\n"
    log = parse(text)
    assert codes(log) == [("LOG007", 1), ("LOG008", 2), ("LOG003", 3)]
    assert log.records[0].payload == "closed"  # last value wins, as json (and the reference) does
    assert all(f.severity.value == "warning" for f in log.findings)


def test_binary_content_and_no_records() -> None:
    log = parse(b"\x00\x01\x02binary\nmore\x00\n")
    assert codes(log) == [("LOG002", 1), ("LOG009", None)]
    assert log.findings[0].message == "2 lines hold NUL bytes (binary content): lines 1, 2"


def test_a_binary_file_is_one_finding() -> None:
    # was 4 x LOG002, a fifth "(348 more line(s) like it)", and the same again as LOG003, for one binary file
    log = parse(b"\x00\xff\xfe\n" * 353)
    assert codes(log) == [("LOG002", 1), ("LOG009", None)]
    assert log.findings[0].message == "353 lines hold NUL bytes (binary content): lines 1, 2, 3, 4, 5 and 348 more"


def test_repeated_byte_findings_are_one_with_a_count() -> None:
    log = parse(b"\xff\n" * 20)
    found = [f for f in log.findings if f.code == "LOG003"]
    assert len(found) == 1 and found[0].line == 1
    assert found[0].message.endswith(f"lines 1, 2, 3, 4, 5 and {20 - logs._REPORT_EACH} more")


def test_overlong_line_is_skipped_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logs, "MAX_LINE", 1000)
    monkeypatch.setattr(logs, "CHUNK", 256)
    text = f"{rec(0)}\n".encode() + b"x" * 5000 + f"{rec(9)}\n{rec(1)}\n".encode()
    log = parse(text)
    assert [(r.key, r.line) for r in log.records] == [("k0", 1), ("k1", 3)]
    assert codes(log) == [("LOG010", 2)]


@pytest.mark.parametrize("extra", [1, 100, 255])
def test_a_line_just_over_the_limit_is_skipped_when_it_ends_in_the_next_chunk(monkeypatch: pytest.MonkeyPatch,
                                                                               extra: int) -> None:  # fmt: skip
    """A line carried over a chunk and ended in the next one is judged whole: it was read whole up to
    MAX_LINE + CHUNK, while package's reading (numbered_records) skipped it; both skip it now."""
    from mlsubmit.checker.logs import input as raw

    for module in (logs, raw):
        monkeypatch.setattr(module, "MAX_LINE", 1000)
        monkeypatch.setattr(module, "CHUNK", 256)
    long_record = rec(9)[: 1000 + extra].ljust(1000 + extra, "x")
    text = f"{rec(0)}\n{long_record}\n{rec(1)}\n".encode()
    log = parse(text)
    assert [(r.key, r.line) for r in log.records] == [("k0", 1), ("k1", 3)]
    assert codes(log) == [("LOG010", 2)]
    assert [line for line, _ in raw.numbered_records(io.BytesIO(text))] == [1, 3]
    exact = f"{rec(0)}\n".encode() + b"y" * 1000 + f"\n{rec(1)}\n".encode()  # at the limit: read
    assert codes(parse(exact)) == [] and [r.line for r in parse(exact).records] == [1, 3]


def test_chunk_boundaries_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("\n".join(f"noise {i}\n[0] {rec(i)}" for i in range(200)) + "\n").encode()
    whole = [(r.key, r.line) for r in parse(text).records]
    monkeypatch.setattr(logs, "CHUNK", 7)
    assert [(r.key, r.line) for r in parse(text).records] == whole
    assert whole[-1] == ("k199", 400)


def test_unreadable_file_is_a_finding(tmp_path: Path) -> None:
    log = read_log(tmp_path / "missing.txt")
    assert not log.readable
    assert codes(log) == [("LOG001", None)]
    folder = read_log(tmp_path)
    assert codes(folder) == [("LOG001", None)]


def test_sha256_and_size(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_bytes(f"{rec(0)}\n".encode())
    log = read_log(path)
    import hashlib

    assert log.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert log.size == path.stat().st_size


def test_records_match_mlperf_loggings_parser_on_synthetic_raw_output(make_run) -> None:  # type: ignore[no-untyped-def]
    from fixtures.synth import RunSpec
    from mlperf_logging.compliance_checker import mlp_parser

    path = make_run("raw.txt", RunSpec(raw_output=True, crlf=True))
    ours = read_log(path)
    ref, errors = mlp_parser.parse_file(str(path), ruleset="1.0.0")
    assert not errors
    assert [(r.key, r.value, r.timestamp, r.lineno) for r in ours.records] == [
        (r.key, r.value, r.timestamp, r.lineno) for r in ref
    ]
    lines = path.read_bytes().split(b"\n")
    for r in ours.records:
        assert json.loads(lines[r.line - 1].decode().split(":::MLLOG ")[-1])["key"] == r.key


def test_the_hash_can_be_left_out_and_nothing_else_changes() -> None:
    import hashlib
    import io

    from mlsubmit.checker.logs.reader import read_stream

    text = b':::MLLOG {"time_ms": 5, "key": "k", "value": 1, "metadata": {}}\nnoise\n' * 3
    hashed = read_stream(io.BytesIO(text), "x")
    bare = read_stream(io.BytesIO(text), "x", digest=False)
    assert hashed.sha256 == hashlib.sha256(text).hexdigest() and bare.sha256 == ""
    assert (bare.records, bare.findings, bare.size, bare.lines) == (hashed.records, hashed.findings, hashed.size,
                                                                   hashed.lines)
