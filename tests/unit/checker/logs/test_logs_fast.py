"""The reader's msgspec fast path gives exactly what its json path gives, or steps aside.

msgspec decodes ASCII records; whatever it cannot decode the way json would (NaN, floats that overflow, lone
surrogates, deep nesting, repeated keys) must fall back to the json path, which also writes the findings. Each case
reads the same bytes twice, once with msgspec switched off, and compares records and findings.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlsubmit.checker.logs import reader as logs
from mlsubmit.checker.logs.reader import read_stream


def _refuse(raw: bytes) -> Any:
    raise ValueError("fast path off")


def both(text: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = read_stream(io.BytesIO(text), "x.txt")
    with monkeypatch.context() as m:
        m.setattr(logs, "FAST", _refuse)
        slow = read_stream(io.BytesIO(text), "x.txt")

    def shape(log: logs.ParsedLog) -> Any:
        # repr, so that NaN equals NaN and 1 differs from 1.0 and True
        return (
            [repr((r.key, r.value, r.timestamp, r.line, r.lineno)) for r in log.records],
            [(f.code, f.line, f.message) for f in log.findings],
            log.parse_errors,
        )

    return shape(fast), shape(slow)


NUMBERS = (
    "1", "-0", "0.1", "1e308", "1e309", "-1e400", "1e-400", "123456789012345678901234567890", "18446744073709551616",
    "-9223372036854775809", "9223372036854775807", "NaN", "Infinity", "-Infinity", "1.0000000000000002",
    "2.2250738585072011e-308", "4.9e-324", "01", "1.", ".5", "1E+2",
)
STRINGS = ('"a"', r'"\ud800"', r'"\ud83d\ude00"', r'"\u0000"', r'"tab\there"', '"x\x01"', r'"\/\\\""', '"\x7f"')


def _scalar() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(NUMBERS + STRINGS + ("true", "false", "null")),
        st.integers().map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.text(max_size=8).map(lambda s: json.dumps(s, ensure_ascii=True)),
    )


def _value() -> st.SearchStrategy[str]:
    return st.recursive(
        _scalar(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
            st.lists(st.tuples(st.sampled_from(["a", "b", "epoch_num", "value"]), inner), max_size=3).map(
                lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}"
            ),
        ),
        max_leaves=6,
    )


@settings(max_examples=400, deadline=None, database=None)
@given(value=_value(), meta=_value(), time_ms=_scalar(), pad=st.sampled_from(["", " ", "\t", "\x0c", " x"]))
def test_fast_path_equals_the_json_path(value: str, meta: str, time_ms: str, pad: str) -> None:
    line = (
        f'[1,0]<stdout>: :::MLLOG {{"namespace": "", "time_ms": {time_ms}, "event_type": "POINT_IN_TIME", '
        f'"key": "k", "value": {value}, "metadata": {meta}}}{pad}\n'
    ).encode("ascii", "backslashreplace")
    with pytest.MonkeyPatch.context() as m:
        fast, slow = both(line * 2, m)
    assert fast == slow


@pytest.mark.parametrize("number", NUMBERS)
def test_each_tricky_number(number: str, monkeypatch: pytest.MonkeyPatch) -> None:
    line = f':::MLLOG {{"time_ms": 5, "key": "k", "value": {number}, "metadata": {{}}}}\n'.encode()
    fast, slow = both(line, monkeypatch)
    assert fast == slow


def test_big_integers_stay_exact() -> None:
    big = "123456789012345678901234567890"
    text = f":::MLLOG {{\"time_ms\": 5, \"key\": \"k\", \"value\": {big}, \"metadata\": {{}}}}\n"
    log = read_stream(io.BytesIO(text.encode()), "x")
    assert log.records[0].payload == int(big)


def test_repeated_key_still_reaches_the_duplicate_check(monkeypatch: pytest.MonkeyPatch) -> None:
    line = b':::MLLOG {"time_ms": 5, "key": "k", "value": 1, "value": 2, "metadata": {}}\n'
    fast, slow = both(line, monkeypatch)
    assert fast == slow
    assert [c for c, _, _ in fast[1]] == ["LOG007"]


def test_non_ascii_chunks_use_the_latin1_json_path() -> None:
    # mlperf-logging reads files as latin-1: UTF-8 "é" is two characters there, and so it must be here
    line = ':::MLLOG {"time_ms": 5, "key": "k", "value": "é", "metadata": {}}\n'.encode()
    log = read_stream(io.BytesIO(line), "x")
    assert log.records[0].payload == "é".encode().decode("latin-1")


def test_ordinary_records_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []

    def counting(raw: bytes) -> Any:
        calls.append(raw)
        return json.loads(raw)

    monkeypatch.setattr(logs, "FAST", counting)
    text = b"".join(b':::MLLOG {"time_ms": 5, "key": "k%d", "value": 1, "metadata": {}}\r\n' % i for i in range(3))
    log = read_stream(io.BytesIO(text), "x")
    assert len(calls) == 3 and [r.key for r in log.records] == ["k0", "k1", "k2"]


def _three_ways(text: bytes) -> tuple[Any, Any, Any]:
    """The same bytes read whole-chunk (the default), line by line with msgspec, and line by line with json."""
    def shape(log: logs.ParsedLog) -> Any:
        return ([repr((r.key, r.value, r.timestamp, r.line, r.lineno)) for r in log.records],
                [(f.code, f.line, f.message) for f in log.findings], log.parse_errors, log.lines)

    chunk = shape(read_stream(io.BytesIO(text), "x.txt"))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(logs._Reader, "_feed_plain", lambda self, data, first: None)
        by_line = shape(read_stream(io.BytesIO(text), "x.txt"))
        m.setattr(logs, "FAST", _refuse)
        by_json = shape(read_stream(io.BytesIO(text), "x.txt"))
    return chunk, by_line, by_json


_ORDINARY = ':::MLLOG {"namespace": "", "time_ms": %d, "event_type": "POINT_IN_TIME", "key": "k%d", "value": %d, ' \
            '"metadata": {"file": "x.py", "lineno": 3}}'
_UNUSUAL = (
    ':::MLLOG {"time_ms": 5, "key": "k", "value": 1, "value": 2, "metadata": {}}',  # repeated key
    ':::MLLOG {"time_ms": 5, "key": 7, "value": 1, "metadata": {}}',  # key not a string
    ':::MLLOG {"time_ms": "soon", "key": "k", "value": 1, "metadata": {}}',  # time not a number
    ':::MLLOG {"time_ms": 5, "key": "k", "metadata": {}}',  # no value
    ':::MLLOG [1, 2]',  # not an object
    ':::MLLOG {"time_ms": 5, "key": "k", "value": NaN, "metadata": {}}',
    ':::MLLOG {"time_ms": 5, "key": "k", "value": 1, "metadata": {}',  # truncated
    ':::MLLOG {"time_ms": 5, "key": "k", "value": 1, "metadata": {}}\x0c',  # trailing form feed
    ':::MLLOG ',
    'noise :::MLLOG {"time_ms": 1} :::MLLOG {"time_ms": 5, "key": "last", "value": 1, "metadata": {}}',
    'no record here',
    '',
)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.one_of(st.integers(0, 50).map(lambda i: _ORDINARY % (1000 + i, i, i)),
                          st.sampled_from(_UNUSUAL)), max_size=12),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_whole_chunk_reading_equals_line_by_line(lines: list[str], end: str, final_newline: bool) -> None:
    text = end.join(lines) + (end if final_newline else "")
    chunk, by_line, by_json = _three_ways(text.encode("ascii"))
    assert chunk == by_line == by_json


def test_ordinary_chunks_are_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[bool] = []
    real = logs._Reader._feed_plain

    def spy(self: logs._Reader, data: bytes, first: int) -> int | None:
        lines = real(self, data, first)
        taken.append(lines is not None)
        return lines

    monkeypatch.setattr(logs._Reader, "_feed_plain", spy)
    text = "\n".join(_ORDINARY % (1000 + i, i, i) for i in range(5)).encode() + b"\n"
    log = read_stream(io.BytesIO(text), "x")
    assert taken == [True] and [r.line for r in log.records] == [1, 2, 3, 4, 5]
    taken.clear()
    read_stream(io.BytesIO(text + _UNUSUAL[0].encode() + b"\n"), "x")
    assert taken == [False]


@pytest.mark.parametrize("text", [
    b':::MLLOG {"time_ms": 5, "key" : "k", "value" : 1, "value" : 2, "metadata" : {}}\n',  # space before colons
    b':::MLLOG {"time_ms": 5, "key": "k", "value": 1, "metadata": {"a" :1, "a" :2}}\n',
    b':::MLLOG {"time_ms": 5, "key": "k", "value": {"x": {"b": 1, "b": 2}}, "metadata": {}}\n',  # deeper
])
def test_a_repeated_key_is_found_however_the_record_is_spaced(text: bytes) -> None:
    for reading in _three_ways(text * 3):
        assert [(code, line) for code, line, _ in reading[1]] == [("LOG007", 1), ("LOG007", 2), ("LOG007", 3)]


def test_colons_inside_strings_cost_a_closer_look_but_no_finding() -> None:
    text = b':::MLLOG {"time_ms": 5, "key": "k", "value": "12:30:00", "metadata": {"file": "C:/x.py"}}\n'
    chunk, by_line, by_json = _three_ways(text * 4)
    assert chunk == by_line == by_json
    assert chunk[1] == [] and len(chunk[0]) == 4
