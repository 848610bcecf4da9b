"""User TOML (mlsubmit.toml, prices.toml, package configs) is parsed within a nesting bound."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlsubmit.checker.rounds.detect import stated_round

from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.tomlfile import MAX_DEPTH, TOMLDecodeError, loads


def test_ordinary_nesting_is_read() -> None:
    assert loads("[a.b.c]\nd = [[1, 2], [3]]\n") == {"a": {"b": {"c": {"d": [[1, 2], [3]]}}}}
    deepest = "x = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert loads(deepest)


@pytest.mark.parametrize("depth", [MAX_DEPTH, 3000, 100_000])
def test_deep_nesting_is_a_decode_error(depth: int) -> None:
    with pytest.raises(TOMLDecodeError, match="nested too deeply"):
        loads("x = " + "[" * depth + "]" * depth)


def test_a_deeply_nested_mlsubmit_toml_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "mlsubmit.toml").write_text("[check]\nx = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n")
    with pytest.raises(UsageError, match="nested too deeply"):
        stated_round(tmp_path)


def test_an_integer_python_cannot_hold_is_a_decode_error() -> None:
    with pytest.raises(TOMLDecodeError, match="cannot hold"):
        loads("x = " + "9" * 4301)
