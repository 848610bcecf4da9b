"""Readings of closed-table rows other than their letter (tables/hyperparameter-readings.yaml, issue 25).

Each reading of each round keeps a passing case (a value that breaks the letter but follows the reading: HP009,
a warning naming the letter and the sources) and a failing one (a value outside the letter and every reading:
HP001, which names the readings too).
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.engine.pipeline import CheckOptions
from mlsubmit.checker.hyperparameters import apply as hp
from mlsubmit.checker.hyperparameters import table as hpt
from mlsubmit.checker.hyperparameters.as_closed import advise_parsed
from mlsubmit.checker.hyperparameters.constraints import check_value
from mlsubmit.checker.logs.reader import read_log

from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support.datafiles import load_yaml

# A batch size at which each reading differs from the letter (2688: 265*1536/2688 and 108600*1536/2688 are not
# integers; 896 is below the llama31_405b side table's first row), and values for the keys the formulas read.
RUNS: dict[str, dict[str, Any]] = {
    "gpt3": {"global_batch_size": 2688, "opt_base_learning_rate": 2e-05},
    "llama31_405b": {"global_batch_size": 896},
}


def _readings_rows() -> list[dict[str, Any]]:
    text = importlib.resources.files("mlsubmit.checker").joinpath("tables", hpt.READINGS).read_text(encoding="utf-8")
    return list(load_yaml(text)["rows"])


def cases() -> list[tuple[str, str, str, int]]:
    return [(f"{r}.0", row["benchmark"], row["rule"], i)
            for row in _readings_rows() for r in row["rounds"] for i in range(len(row["readings"]))]


def _term(term: Mapping[str, Any], values: Mapping[str, Any]) -> float:
    if "constant" in term:
        return float(term["constant"])
    if "name" in term:
        return float(values[term["name"]])
    how = next(h for h in ("ceil", "floor", "ratio") if h in term)
    exact = term[how][0] * term[how][1] / values[term["batch"]]
    return {"ceil": math.ceil, "floor": math.floor, "ratio": float}[how](exact)


def _value(constraint: Mapping[str, Any], values: Mapping[str, Any]) -> Any:
    """A value the reading allows at these values."""
    if constraint["kind"] == "fixed":
        return constraint["value"]
    if constraint["kind"] == "formula":
        return sum(t.get("factor", 1) * _term(t, values) for t in constraint["terms"])
    (band,) = constraint["bands"]
    return band["base"] * values[constraint["batch"]] / band["reference_batch"]


def _row_findings(tmp_path: Path, ruleset: str, benchmark: str, rule: hpt.Rule, value: Any) -> list[Finding]:
    t = hpt.table_for(ruleset)
    assert t is not None
    logged = {t.key(benchmark, k): v for k, v in {**RUNS[benchmark], rule.name: value}.items()}
    path = write_run(tmp_path / f"{rule.id}-{value}.txt", RunSpec(benchmark=benchmark, ruleset=ruleset,
                                                                 hyperparameters=logged))
    found = hp.check_log(read_log(path), CheckOptions(ruleset=ruleset))
    return [f for f in found if f"[{rule.id}]" in f.message]


@pytest.mark.parametrize(("ruleset", "benchmark", "rule_id", "index"), cases())
def test_a_reading_is_a_warning_and_a_value_outside_every_reading_an_error(
        tmp_path: Path, ruleset: str, benchmark: str, rule_id: str, index: int) -> None:
    t = hpt.table_for(ruleset)
    assert t is not None
    (rule,) = [r for r in t.benchmarks[benchmark] if r.id == rule_id]
    reading = rule.readings[index]
    value = _value(reading.constraint, RUNS[benchmark])
    assert not check_value(rule.constraint, value, RUNS[benchmark].get).ok  # the case tells reading from letter
    (warned,) = _row_findings(tmp_path, ruleset, benchmark, rule, value)
    assert (warned.code, warned.severity) == ("HP009", Severity.WARNING), warned.message
    assert "the table's letter is" in warned.message and "accepted as" in warned.message
    assert reading.why in warned.message and all(s in warned.hint for s in reading.sources)
    (refused,) = _row_findings(tmp_path, ruleset, benchmark, rule, value * 3 + 0.7071)
    assert (refused.code, refused.severity) == ("HP001", Severity.ERROR), refused.message
    assert "nor the accepted reading" in refused.message


def test_every_reading_names_a_row_of_its_rounds_and_an_extended_round_does_not_inherit_them() -> None:
    listed = {(f"{r}.0", row["benchmark"], row["rule"]) for row in _readings_rows() for r in row["rounds"]}
    for ruleset in hpt.covered_rulesets():
        t = hpt.table_for(ruleset)
        assert t is not None
        with_readings = {(ruleset, b, r.id) for b, rules in t.benchmarks.items() for r in rules if r.readings}
        assert with_readings == {k for k in listed if k[0] == ruleset}, ruleset
    # llama31_405b's fixed decay steps were accepted in 5.0 only: 5.1.0's rule file checks the formula
    (decay,) = [r for r in hpt.table_for("5.1.0").benchmarks["llama31_405b"] if r.id == "LL-11"]  # type: ignore[union-attr]
    assert decay.readings == ()


def test_a_reading_the_rule_file_refuses_is_left_to_the_rule_file(tmp_path: Path) -> None:
    # 5.1.0's closed_llama31_405b.yaml asks v*1152 == gbs*8e-5 exactly; the reading accepts it within 1e-6.
    lr = 8e-05 * 896 / 1152 * (1 + 3e-7)
    path = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama31_405b", ruleset="5.1.0", hyperparameters={
        "global_batch_size": 896, "opt_base_learning_rate": lr}))
    log = read_log(path, "result_0.txt")
    (alone,) = [f for f in hp.check_log(log, CheckOptions(ruleset="5.1.0")) if "[LL-13]" in f.message]
    assert alone.code == "HP009"
    line = log.first("opt_base_learning_rate").line  # type: ignore[union-attr]
    at_line = [f for f in advise_parsed(log, "5.1.0") if f.line == line]
    assert [f.code for f in at_line] == ["RULE001"] and "closed table" not in at_line[0].message


def test_round_6_1_retires_llama31_405b_and_dlrm_dcnv2(tmp_path: Path) -> None:
    t = hpt.table_for("6.1.0")
    assert t is not None and {"llama31_405b", "dlrm_dcnv2"} <= set(t.retired)
    assert not {"llama31_405b", "dlrm_dcnv2"} & set(t.benchmarks)
    assert {"dlrmv4", "qwen35_397b_grpo", "flux1", "llama31_8b", "llama2_70b_lora", "gpt_oss_20b",
            "deepseekv3_671b"} <= set(t.benchmarks)
    log = read_log(write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama31_405b", ruleset="6.0.0")))
    (said,) = hp.closed_advice(log, "6.1.0")
    assert said.code == "HP005" and "round 6.1 retired llama31_405b" in said.message
