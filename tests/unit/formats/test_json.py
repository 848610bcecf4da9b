"""The JSON report is written as json.dumps(indent=2) writes it, whichever encoder does the work."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsubmit.core.findings import Report
from mlsubmit.formats import indented_json, json_reporter

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.text(alphabet=st.characters(codec="utf-8")),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(_VALUES)
def test_same_text_as_json_indent_2(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2)


def test_what_msgspec_refuses_still_comes_out_as_json_writes_it() -> None:
    for value in ({"x": float("nan")}, [float("inf")], {"lone": "\ud800"}, {"e": [], "o": {}, "n": [[{}]]}):
        assert indented_json(value) == json.dumps(value, indent=2)


def test_allow_nan_false_refuses_what_strict_parsers_reject() -> None:
    for value in ({"x": float("nan")}, [float("inf")], {"m": -float("inf")}):
        with pytest.raises(ValueError):
            indented_json(value, allow_nan=False)
    assert indented_json({"m": 1.5}, allow_nan=False) == json.dumps({"m": 1.5}, indent=2)


def test_the_json_report_is_strict_json() -> None:
    report = Report(meta={"command": "check"})
    report.add_file("a.txt")
    out = io.StringIO()
    json_reporter(report, out)
    json.loads(out.getvalue(), parse_constant=_refuse)  # no NaN or Infinity in a written report
    report.meta["minutes"] = float("inf")  # type: ignore[assignment]  # what a bug upstream of the reporter would do
    with pytest.raises(ValueError):
        json_reporter(report, io.StringIO())


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} in the report")
