"""User TOML (mlsubmit.toml, prices.toml, package configs, waiver files) is parsed within bounds: nesting, dotted
key parts, and what tomllib would build."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from mlsubmit.checker.policy.waiverfile import starting_file
from mlsubmit.checker.policy.waivers import MAX_WAIVERS
from mlsubmit.checker.rounds.detect import stated_round

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.tomlfile import (
    MAX_BUILT,
    MAX_CHARS,
    MAX_DEPTH,
    MAX_KEY_PARTS,
    TABLE,
    TOMLDecodeError,
    _Scan,
    _scan,
    loads,
)


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


_MANY = ".".join(["a"] * 20_000)  # 40 KB; tomllib alone took 1.6 GB on it (issue 49)


@pytest.mark.parametrize("text", [
    f"{_MANY} = 1\n",
    f"[{_MANY}]\n",
    f"[[{_MANY}]]\n",
    f"x = {{ {_MANY} = 1 }}\n",
    f'"a" . "b.c" . {_MANY} = 1\n',
    f's = """ [ {{ " \\""" ]\n\t{_MANY} = 1\n',
    f"s = '''x'''''\nx = [\n 1, # ]\n 'y',\n]\n{_MANY} = 1\n",
], ids=["key", "header", "array-header", "inline-table", "quoted-parts", "after-multiline-string", "after-array"])
def test_a_key_of_too_many_parts_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(TOMLDecodeError, match=f"more than {MAX_KEY_PARTS} dotted parts"):
        loads(text)


def test_keys_within_the_bound_and_dotted_values_are_read() -> None:
    key = ".".join(["k"] * MAX_KEY_PARTS)
    assert loads(f"{key} = 1\nv = [{', '.join(['1.5'] * 100)}]\nd = 1979-05-27 07:32:00.5\n")["v"][99] == 1.5
    assert loads('[a . "b.c"]\nd = {e.f = 1, g = [{h.i = 2}]}\n') == {"a": {"b.c": {"d": {"e": {"f": 1},
                                                                                          "g": [{"h": {"i": 2}}]}}}}


def test_a_too_large_text_is_refused() -> None:
    with pytest.raises(TOMLDecodeError, match=f"more than {MAX_CHARS} characters"):
        loads("#" * (MAX_CHARS + 1))


def test_a_many_parted_key_in_mlsubmit_toml_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "mlsubmit.toml").write_text(f"[check]\n{_MANY} = 1\n")
    with pytest.raises(UsageError, match="dotted parts"):
        stated_round(tmp_path)


def _weight(text: str) -> int:
    scan = _Scan(text)
    while scan.at < len(scan.text) and scan.step():
        pass
    return scan.built


# Shapes that each build a lot from little text (issue 54: 4 MiB of 30-part dotted keys took tomllib 851 MB).
_HEAVY = {
    "dotted-keys": lambda n: "".join(f"k{i}." + ".".join(["a"] * 29) + " = 1\n" for i in range(n // 234)),
    "table-headers": lambda n: "".join(f"[t{i}]\n" for i in range(n // 8)),
    "dotted-headers": lambda n: "".join(f"[k{i}." + ".".join(["a"] * 29) + "]\n" for i in range(n // 240)),
    "inline-tables": lambda n: "x = [" + ",".join(["{}"] * (n // 8)) + "]\n",
    "arrays": lambda n: "x = [" + ",".join(["[]"] * (n // 2)) + "]\n",
    "values": lambda n: "x = [" + ",".join(["1"] * n) + "]\n",
    "keys": lambda n: "".join(f"k{i} = 1\n" for i in range(n // 2)),
    "array-of-tables": lambda n: "[[t]]\n" * (n // 2),
}


@pytest.mark.parametrize("shape", sorted(_HEAVY))
def test_what_tomllib_would_build_is_bounded_before_it_builds_it(shape: str) -> None:
    text = _HEAVY[shape](MAX_BUILT + 1000)
    with pytest.raises(TOMLDecodeError, match=f"weigh more than {MAX_BUILT:,}"):
        _scan(text)


@pytest.mark.parametrize("shape", sorted(_HEAVY))
def test_the_weight_counts_what_is_built(shape: str) -> None:
    text = _HEAVY[shape](1000)
    assert 900 <= _weight(text) <= 1100  # each shape's generator spends `n` as the scan weighs it
    assert loads(text) is not None


def test_a_written_waiver_file_of_the_most_waivers_is_within_the_bound() -> None:
    findings = [finding("SYS016", f"org/systems/s{i}.json", f"value {i} of thing is wrong") for i in range(20)]
    text = starting_file(findings, today=dt.date(2026, 1, 1), base=Path("/t"), anchor=Path("/t"))
    per_waiver = _weight(text) / 20
    assert per_waiver * MAX_WAIVERS < MAX_BUILT * 0.7  # room for the other tables of an mlsubmit.toml
    assert _weight(text) > TABLE * 20  # the weight sees the tables
