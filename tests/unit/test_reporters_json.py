"""The JSON report is written as json.dumps(indent=2) writes it, whichever encoder does the work."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mlsubmit.reporters import indented_json

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
