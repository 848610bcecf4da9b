"""checker/systems/jsonfile.py: every defect of a JSON document is a finding with a line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlsubmit.checker.systems.jsonfile import JsonCodes, escape, parse_json, read_json

from mlsubmit.core.findings import Severity


def codes(doc) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in doc.findings]


def test_valid_object_has_positions_for_every_pointer() -> None:
    text = b'{\n  "a": "x",\n  "b/c": {\n    "d~e": [1,\n      2]\n  }\n}\n'
    doc = parse_json(text, "f.json")
    assert doc.findings == []
    assert doc.is_object
    assert doc.data == {"a": "x", "b/c": {"d~e": [1, 2]}}
    assert doc.line("/a") == 2
    assert doc.line("/b~1c") == 3
    assert doc.line("/b~1c/d~0e") == 4
    assert doc.line("/b~1c/d~0e/1") == 5
    assert doc.line("") == 1
    assert doc.line("/missing") == 1  # falls back to the nearest ancestor
    assert doc.value_pos["/a"] == (2, 8)


def test_duplicate_key_with_different_values_is_an_error_naming_both_lines() -> None:
    doc = parse_json(b'{\n "division": "open",\n "x": 1,\n "division": "closed"\n}', "f.json")
    assert codes(doc) == ["SYS005"]
    dup = doc.findings[0]
    assert dup.severity is Severity.ERROR
    assert dup.line == 4
    assert dup.pointer == "/division"
    assert [(r.path, r.line) for r in dup.related] == [("f.json", 2)]
    assert "lines 2 and 4" in dup.message
    assert doc.data["division"] == "closed"  # the value every JSON reader would use


def test_duplicate_key_with_the_same_value_is_a_warning() -> None:
    doc = parse_json(b'{"t": "NVMe SSD",\n"t": "NVMe SSD"}', "f.json")
    assert [(f.code, f.severity, f.line) for f in doc.findings] == [("SYS005", Severity.WARNING, 2)]


def test_nested_duplicates_are_found_with_their_pointer() -> None:
    doc = parse_json(b'{"o": {"k": 1,\n "k": 2}}', "f.json")
    assert [(f.pointer, f.line) for f in doc.findings] == [("/o/k", 2)]


@pytest.mark.parametrize(
    ("raw", "line", "fragment"),
    [
        (b'{\n  "a": "x",\n  "b": \n', 4, "invalid JSON"),  # truncated: the end of the file is line 4
        (b'{\n  "a": "x"\n  "b": "y"\n}', 3, "Expecting ',' delimiter (line 3, column 3)"),
        (b'{"a": 1,}', 1, "invalid JSON"),
        (b"", 1, "the file is empty"),
        (b'{"a": NaN}', 1, "NaN is not a JSON value"),
    ],
)
def test_invalid_json_gives_line_and_column(raw: bytes, line: int, fragment: str) -> None:
    doc = parse_json(raw, "f.json")
    assert codes(doc) == ["SYS003"]
    assert doc.findings[0].line == line
    assert fragment in doc.findings[0].message
    assert not doc.decoded


@pytest.mark.parametrize(("raw", "kind"), [(b"[1, 2]", "an array"), (b'"x"', "a string"), (b"null", "null"),
                                           (b"3", "a number"), (b"true", "a boolean")])
def test_top_level_must_be_an_object(raw: bytes, kind: str) -> None:
    doc = parse_json(raw, "f.json")
    assert codes(doc) == ["SYS004"]
    assert kind in doc.findings[0].message
    assert parse_json(raw, "f.json", require_object=False).findings == []


def test_non_utf8_byte_gives_line_and_column() -> None:
    doc = parse_json(b'{\n  "a": "caf\xe9"\n}', "f.json")
    assert codes(doc) == ["SYS002"]
    assert doc.findings[0].line == 2
    assert "0xe9 at line 2, column 12" in doc.findings[0].message


def test_byte_order_mark_is_a_warning_and_the_rest_is_read() -> None:
    doc = parse_json(b'\xef\xbb\xbf{"a": "b"}', "f.json")
    assert [(f.code, f.severity) for f in doc.findings] == [("SYS002", Severity.WARNING)]
    assert doc.data == {"a": "b"}


def test_too_large_is_not_read() -> None:
    doc = parse_json(b'{"a": "' + b"x" * 100 + b'"}', "f.json", max_bytes=50)
    assert codes(doc) == ["SYS006"]


def test_deep_nesting_is_a_finding_not_a_traceback() -> None:
    doc = parse_json(b"[" * 5000 + b"]" * 5000, "f.json", require_object=False)
    assert codes(doc) == ["SYS003"]
    doc = parse_json(b'{"a":' * 100 + b"1" + b"}" * 100, "f.json")
    assert codes(doc) == ["SYS003"]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b'{"a":\n ' + b"9" * 4301 + b"}", "4301 digits"),
        (b'{"a":\n -' + b"9" * 5000 + b"}", "5000 digits"),
        (b'{"a":\n 1e999}', "1e999"),
        (b'{"a":\n -1e999}', "-1e999"),
    ],
)
def test_numbers_python_cannot_hold_are_findings(raw: bytes, fragment: str) -> None:
    doc = parse_json(raw, "f.json")
    assert codes(doc) == ["SYS003"]
    assert fragment in doc.findings[0].message and doc.findings[0].line == 2
    assert codes(parse_json(b'{"a": ' + b"9" * 4300 + b"}", "f.json")) == []


def test_unreadable_paths_are_findings(tmp_path: Path) -> None:
    assert codes(read_json(tmp_path / "absent.json")) == ["SYS001"]
    assert codes(read_json(tmp_path)) == ["SYS001"]  # a folder


def test_callers_can_use_their_own_codes(tmp_path: Path) -> None:
    theirs = JsonCodes(unreadable="LOG001", invalid="LOG004")
    assert codes(read_json(tmp_path / "absent.json", codes=theirs)) == ["LOG001"]
    assert codes(parse_json(b"{", "f.json", codes=theirs)) == ["LOG004"]


# ---- properties: agrees with json.loads on valid documents, and never raises on any bytes

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def _pointers(value: object, prefix: str = "") -> list[str]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _pointers(v, f"{prefix}/{escape(k)}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _pointers(v, f"{prefix}/{i}")
    return out


@settings(max_examples=150, deadline=None)
@given(_json_values, st.sampled_from([None, 1, 2]), st.booleans())
def test_same_data_as_json_loads_and_a_position_for_every_pointer(value: object, indent: int | None,
                                                                  ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    doc = parse_json(text.encode("utf-8"), "f.json", require_object=False)
    assert doc.findings == []
    assert doc.data == json.loads(text)
    assert set(_pointers(value)) <= set(doc.value_pos)
    lines = text.split("\n")
    for line, column in doc.value_pos.values():
        assert lines[line - 1][column - 1] in '{["-0123456789tfn'


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_findings_never_an_exception(raw: bytes) -> None:
    doc = parse_json(raw, "f.json")
    assert doc.decoded or doc.findings
    assert all(f.code.startswith("SYS") and f.hint for f in doc.findings)
