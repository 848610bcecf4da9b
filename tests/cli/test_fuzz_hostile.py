"""Property tests for the surfaces of issue 26 (hostile input): TOML configs and prices, numbers in system JSON,
cache entries, run times, and file names. Each property is what the issue's fix promises, so the next such input
is caught by the suite: a finding or a usage error, never an exception, a hang or a non-finite number.
MLSUBMIT_FUZZ_SCALE=10 runs ten times as many examples.
"""

from __future__ import annotations

import io
import json
import math
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlsubmit.checker.base.cache import LogCache, store_entry
from mlsubmit.checker.logs.facts import extract
from mlsubmit.checker.logs.reader import read_stream
from mlsubmit.checker.systems.jsonfile import parse_json

from mlsubmit.cli import main
from mlsubmit.core.codes import catalogue
from mlsubmit.core.support.tomlfile import TOMLDecodeError, loads
from mlsubmit.report.inputs import Price, PricesError, parse_prices, performance_per_price
from mlsubmit.report.scoring import run_result

FUZZ = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
TOKEN = ":::MLLOG "


def examples(n: int) -> int:
    return max(1, int(n * float(os.environ.get("MLSUBMIT_FUZZ_SCALE", "1"))))


# --- TOML: mlsubmit.toml, prices.toml, package configs ------------------------------------------------------------

long_ints = st.integers(min_value=4000, max_value=6000).map(lambda n: "x = " + "9" * n)
nesting = st.integers(min_value=1, max_value=3000).map(lambda n: "x = " + "[" * n + "]" * n)
inline = st.integers(min_value=1, max_value=3000).map(lambda n: "x = " + "{a=" * n + "1" + "}" * n)
toml_text = st.one_of(st.text(max_size=300), nesting, inline, long_ints,
                      st.lists(st.sampled_from(["[a]", "[[b]]", "c = 1", "d = [1, [2]]", "e = {f = 1}", "[a.b.c]",
                                                "price = nan", "g = 1e999", "h = '''", "\x00"]),
                               max_size=20).map("\n".join))  # fmt: skip


@settings(FUZZ, max_examples=examples(300))
@given(text=toml_text)
def test_toml_loads_gives_a_table_or_a_decode_error(text: str) -> None:
    try:
        data = loads(text)
    except TOMLDecodeError:
        return
    assert isinstance(data, dict)


prices = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-(10**400),
                   max_value=10**400), st.sampled_from([1e-320, 5e-324, 1.7976931348623157e308]))  # fmt: skip


def _toml_number(value: float | int) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


@settings(FUZZ, max_examples=examples(200))
@given(price=prices, minutes=st.floats(allow_nan=True, allow_infinity=True))
def test_prices_are_refused_or_give_a_finite_figure(tmp_path_factory: pytest.TempPathFactory, price: Any,
                                                    minutes: float) -> None:
    path = tmp_path_factory.mktemp("prices") / "prices.toml"
    path.write_text(f'[systems."X"]\nprice = {_toml_number(price)}\nsource = "s"\ndate = "2021-06"\n')
    try:
        book = parse_prices(path)
    except PricesError:
        return
    rule = book.entries["x"]
    figure = performance_per_price(minutes, Price(amount=rule.amount, currency="USD", basis="list", source="s"))
    assert figure is None or math.isfinite(figure)


# --- numbers in system JSON ---------------------------------------------------------------------------------------

json_numbers = st.one_of(st.integers(min_value=1, max_value=6000).map(lambda n: "9" * n),
                         st.integers(min_value=-400, max_value=400).map(lambda e: f"1.5e{e}"),
                         st.sampled_from(["NaN", "Infinity", "-Infinity", "-0", "1e999", "-1e999"]))  # fmt: skip


@settings(FUZZ, max_examples=examples(300))
@given(number=json_numbers)
def test_any_number_in_a_system_file_is_data_or_a_finding(number: str) -> None:
    doc = parse_json(f'{{"number_of_nodes":\n {number}}}'.encode(), "s.json")
    assert all(f.code in catalogue() for f in doc.findings)
    if doc.decoded:
        value = doc.data["number_of_nodes"]
        assert not isinstance(value, float) or math.isfinite(value)


# --- cache entries ------------------------------------------------------------------------------------------------

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=4),
                           max_leaves=20)  # fmt: skip
finding_like = st.fixed_dictionaries({"code": st.sampled_from(["LOG001", "RULE002", "ZZZ999", 3]),
                                      "severity": st.sampled_from(["error", "warning", "fatal"]),
                                      "path": json_values, "message": json_values, "hint": json_values,
                                      "line": json_values, "pointer": json_values, "related": json_values})
bodies = st.one_of(json_values, st.fixed_dictionaries({"display": json_values, "findings": st.lists(finding_like,
                   max_size=3), "facts": json_values}))  # fmt: skip


@settings(FUZZ, max_examples=examples(300))
@given(body=bodies)
def test_a_cache_entry_of_any_shape_is_a_miss_or_well_typed(tmp_path_factory: pytest.TempPathFactory,
                                                            body: Any) -> None:
    root = tmp_path_factory.mktemp("cache")
    cache = LogCache(root, "ctx")
    sha = "ab" * 32
    store_entry(root, cache._entry(sha), cache._key(sha), body)  # right key and digest: only the shape can be wrong
    got = cache.get(sha, "x/result_0.txt")
    if got is None:
        return
    findings, facts = got
    for f in findings:
        assert f.code in catalogue() and (f.line is None or isinstance(f.line, int))
    assert isinstance(facts.record_count, int)


# --- run times ----------------------------------------------------------------------------------------------------

stamps = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["1e999", "-1e999", '"nan"',
                   '"inf"', "1e308", "-1e308"]))  # fmt: skip


@settings(FUZZ, max_examples=examples(300))
@given(start=stamps, stop=stamps)
def test_a_run_time_is_finite_non_negative_or_a_finding(start: Any, stop: Any) -> None:
    def record(key: str, stamp: Any) -> str:
        return TOKEN + f'{{"time_ms": {stamp}, "key": "{key}", "value": null, "metadata": {{"status": "success"}}}}'

    data = "\n".join([record("run_start", start), record("run_stop", stop)]).encode() + b"\n"
    log = read_stream(io.BytesIO(data), "result_0.txt")
    minutes = run_result("result_0.txt", extract(log), log.findings, "bert", "1.0.0").minutes
    assert minutes is None or (math.isfinite(minutes) and minutes >= 0)


# --- file names ---------------------------------------------------------------------------------------------------

names = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1,
                max_size=40).filter(lambda n: n not in (".", ".."))


@settings(FUZZ, max_examples=examples(60))
@given(name=names)
def test_a_log_of_any_name_is_checked_never_crashed_on(tmp_path_factory: pytest.TempPathFactory,
                                                       capsys: pytest.CaptureFixture[str], name: str) -> None:
    folder = tmp_path_factory.mktemp("names")
    try:
        path = folder / name
        path.write_bytes((TOKEN + '{"time_ms": 1, "key": "k", "value": 1, "metadata": {}}\n').encode())
    except (OSError, ValueError):  # a name this filesystem refuses
        return
    code = main(["check", "--ruleset", "1.0.0", "--format", "json", str(path)])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), err
    if code != 2:
        json.loads(out)
    assert "internal error" not in err
