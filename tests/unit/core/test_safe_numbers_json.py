"""The shared bounds for numbers and JSON from inputs (mlsubmit/core/support/numbers.py, jsontext.py, atomic.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsubmit.core.support import atomic, jsontext, numbers


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "[" * 65 + "]" * 65, '{"a":' * 70 + "1" + "}" * 70,
                                  "[1e999]", "[NaN]", "[-Infinity]", "[" + "9" * 5000 + "]", "[1", b"\xff\xfe\x00"])
def test_beyond_the_bounds_is_one_value_error(text: str | bytes) -> None:
    with pytest.raises(jsontext.JsonLimitError):
        jsontext.loads(text)


def test_within_the_bounds_is_json_loads() -> None:
    deepest = "[" * jsontext.MAX_DEPTH + "]" * jsontext.MAX_DEPTH
    assert jsontext.loads(deepest) == json.loads(deepest)
    text = '{"a": "[[[[", "b": [1, 2.5, "\\"]"], "c": ' + "9" * 4300 + "}"
    assert jsontext.loads(text) == json.loads(text)
    assert jsontext.loads("[NaN]", finite=False)[0] != jsontext.loads("[NaN]", finite=False)[0]  # nan


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(), lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids), max_leaves=30))
def test_every_document_json_dumps_writes_reads_back(value: object) -> None:
    text = json.dumps(value)
    assert jsontext.loads(text) == json.loads(text)
    assert jsontext.loads(text.encode("utf-16")) == json.loads(text)


@given(st.text(alphabet='[]{}"\\,:1 a', max_size=200))
def test_any_text_is_a_value_or_a_value_error(text: str) -> None:
    try:
        jsontext.loads(text)
    except ValueError:
        pass


@pytest.mark.parametrize(("value", "expected"), [
    (10**400, None), (float("inf"), None), (float("nan"), None), (True, None), ("3", None), (3, 3.0), (2.5, 2.5)])
def test_finite(value: object, expected: float | None) -> None:
    assert numbers.finite(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("9" * 5000, None), (10**400, None), (" 016 ", 16), (16.0, 16), (16.5, None), (-1, None), ("¹", None),
    (numbers.MAX_COUNT, numbers.MAX_COUNT), (numbers.MAX_COUNT + 1, None), (float("inf"), None), (True, None)])
def test_whole(value: object, expected: int | None) -> None:
    assert numbers.whole_number(value) == expected


def test_close_compares_integers_beyond_a_float_exactly() -> None:
    assert numbers.nearly_equal(10**400, 10**400) and not numbers.nearly_equal(10**400, 10**400 + 1)
    assert numbers.nearly_equal(1.0, 1.0000001) and not numbers.nearly_equal(1.0, 1.1)


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(OSError), atomic.replacing(target) as stream:
        stream.write("half")
        raise OSError(28, "No space left on device")
    assert target.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["report.txt"]
    atomic.write_text(target, "new \ud800")
    assert target.read_text(encoding="utf-8") == "new \\ud800" and os.listdir(tmp_path) == ["report.txt"]


def test_a_device_is_written_in_place(tmp_path: Path) -> None:
    atomic.write_text("/dev/null", "x")  # a rename would replace /dev/null itself
    assert Path("/dev/null").is_char_device()


def test_a_link_has_its_target_replaced(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("real.txt")
    atomic.write_text(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text(encoding="utf-8") == "new"
