"""The closed tables of rounds 2.0 to 6.1: their data against the policy documents, every row kind on mllog logs,
the side tables, the v5.1 cases of issue 15, and one report per value shared with the rule files."""

from __future__ import annotations

import math
import os
import re
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

from mlsubmit.core.findings import Finding

ROUNDS = ("2.0", "2.1", "3.0", "3.1", "4.0", "4.1", "5.0", "5.1", "6.0", "6.1")
DOCS = Path(os.environ.get("MLSUBMIT_DOCS", "../shared/docs")) / "policies"
# A global batch size each benchmark's batch-dependent rows are defined at (a row of its side table).
BATCH = {"gpt3": 2048, "llama31_405b": 1152, "deepseekv3_671b": 16384, "maskrcnn": 32}


def table(ruleset: str) -> hpt.Table:
    t = hpt.table_for(ruleset)
    assert t is not None
    return t


def cases() -> list[tuple[str, str]]:
    return [(f"{r}.0", b) for r in ROUNDS for b in sorted(table(f"{r}.0").benchmarks)]


# --- the data ------------------------------------------------------------------------------------------------


def test_every_shipped_ruleset_has_a_table_and_hp003_is_silent() -> None:
    assert hpt.covered_rulesets() == tuple(f"{r}.0" for r in ("1.0", "1.1", *ROUNDS))
    for ruleset in hpt.covered_rulesets():
        assert hp.coverage_findings(ruleset) == []


@pytest.mark.skipif(not DOCS.is_dir(), reason=f"policy documents not found at {DOCS}")
@pytest.mark.parametrize("round_", ROUNDS[:-1])
def test_every_row_cites_the_line_of_its_round_that_holds_it(round_: str) -> None:
    lines = (DOCS / f"training_rules-v{round_}.adoc").read_text(encoding="utf-8").split("\n")
    t = table(f"{round_}.0")
    cited = set()
    for bench, rules in t.benchmarks.items():
        for rule in rules:
            cells = [c.strip() for c in lines[rule.line - 1].strip().split("|")[1:]]
            assert cells[0] == t.table_name(bench), (rule.id, rule.line, cells[:3])
            assert cells[2].replace("$$*$$", "") == rule.name, (rule.id, rule.line, cells[:3])
            assert cells[2].count("$$*$$") == {None: 0, "*": 1, "**": 2, "ambiguous": 0}[rule.review]
            cited.update((rule.line, *rule.lines))
            clause = t.clause(rule)
            assert clause.startswith(f"TR{round_} §") and f"L{rule.line}" in clause and rule.id in clause
    benches = {t.table_name(b) for b in t.benchmarks}
    rows = {n for n, ln in enumerate(lines, 1)
            if ln.strip().startswith("|") and ln.strip().split("|")[1].strip() in benches and ln.count("|") >= 5}
    assert rows <= cited | {n for n in rows if rows_outside(lines, n)}  # every row of the tables is a rule


def rows_outside(lines: list[str], n: int) -> bool:
    """Rows of other tables that name a benchmark (the benchmark list, the RCP tables): not hyperparameter rows."""
    heading = next(ln for ln in reversed(lines[:n]) if ln.startswith("=="))
    return "yperparameters" not in heading or "constraints" in heading


def test_one_alias_table_per_round_names_benchmarks_and_keys() -> None:
    assert table("5.1.0").benchmark_aliases == {"dlrmv2": "dlrm_dcnv2", "flux.1": "flux1", "ssd": "retinanet",
                                                "gnn": "rgat", "stable diffusion": "stable_diffusion"}
    assert table("4.1.0").benchmark_aliases["gnn"] == "gnn" if "gnn" in table("4.1.0").benchmark_aliases else True
    assert table("5.1.0").key("llama2_70b_lora", "opt_weight_decay") == "opt_adamw_weight_decay"
    assert table("5.1.0").key("llama31_405b", "sequence_length") == "max_sequence_length"
    assert table("2.0.0").key("ssd", "opt_weight_decay") == "opt_weight_decay"
    assert "retinanet" not in table("4.1.0").benchmarks and "ssd" in table("4.1.0").benchmarks


def test_round_6_1_is_6_0_less_the_retired_plus_the_rule_files_benchmarks() -> None:
    old, new = table("6.0.0"), table("6.1.0")
    assert set(new.benchmarks) - set(old.benchmarks) == {"dlrmv4", "qwen35_397b_grpo"}
    assert set(old.benchmarks) - set(new.benchmarks) == {"llama31_405b", "dlrm_dcnv2"} == set(new.retired)
    assert all(new.benchmarks[b] == old.benchmarks[b] for b in new.benchmarks if b in old.benchmarks)
    rule = new.benchmarks["dlrmv4"][2]
    assert new.clause(rule).startswith("mlperf-logging 4.1.68 training_6.1.0/closed_dlrmv4.yaml, dlrm_v4_hstu opt_name")


# --- each row on mllog logs: a compliant log, then one broken row at a time ---------------------------------


_GOOD: dict[str, Any] = {  # kind -> (constraint, batch size) -> a value it allows
    "fixed": lambda c, gbs: c["value"],
    "one_of": lambda c, gbs: c["values"][0],
    "integer": lambda c, gbs: max(c.get("min", 0), gbs if c.get("min", 0) > 1000 else 0),
    "range": lambda c, gbs: c.get("ge", c.get("gt", 0) + 1),
    "multiple_of": lambda c, gbs: c["base"] * 4,
    "power_of_two_multiple": lambda c, gbs: c["base"] * 4,
    "shape": lambda c, gbs: c["dims"],
    "shared_multiplier": lambda c, gbs: [t["base"] for t in c["terms"]],
    "batch_formula": lambda c, gbs: [round(t["base"] * c["reference_batch"] / gbs) for t in c["terms"]],
    "per_chip_multiple": lambda c, gbs: 1000,
    "batch_table": lambda c, gbs: dict(c["rows"])[gbs],
}


def _good(constraint: Mapping[str, Any], values: Mapping[str, Any]) -> Any:
    """A value the constraint allows (formulas and lookups read the other values)."""
    kind = constraint["kind"]
    gbs = values.get("global_batch_size", 32)
    if kind == "any_of":
        return _good(constraint["of"][0], values)
    if kind == "formula":
        total = 0.0
        for term in constraint["terms"]:
            part = term["constant"] if "constant" in term else (
                math.ceil(term["ceil"][0] * term["ceil"][1] / gbs) if "ceil" in term else values[term["name"]])
            total += term.get("factor", 1) * part
        return round(total, 12)
    if kind not in _GOOD:
        raise AssertionError(kind)
    return _GOOD[kind](constraint, gbs)


def _bad(constraint: Mapping[str, Any], good: Any) -> Any:
    """A value the constraint refuses."""
    if isinstance(good, bool):
        return not good if constraint["kind"] == "fixed" else "maybe"
    if isinstance(good, str):
        return good + "_x"
    if isinstance(good, list):
        return [v * 3 + 7 for v in good]
    if constraint["kind"] == "integer":
        return constraint.get("min", 0) - 1
    if constraint["kind"] == "range":
        return constraint.get("ge", constraint.get("gt", 0)) - 1
    if constraint["kind"] == "per_chip_multiple":
        return 3000  # 1000 * 3 where 3 does not divide the global batch size
    return good * 3 + 0.7071


def compliant(ruleset: str, benchmark: str) -> dict[str, Any]:
    """Values for every checked row of the benchmark (rows under a `when` that does not hold are left out)."""
    t = table(ruleset)
    rules = [r for r in t.benchmarks[benchmark] if r.logged]
    values: dict[str, Any] = {"global_batch_size": BATCH.get(benchmark, 32)}
    if any(r.name == "opt_name" and "lars" in str(r.constraint) for r in rules):
        values["opt_name"] = "lars"
    read = {term["name"] for r in rules for term in r.constraint.get("terms", ()) if "name" in term}
    for stage in ("plain", "batch_table", "formula"):  # formulas and lookups after the values they read
        if stage == "formula":
            values.update({name: 16 for name in read if name not in values})  # unconstrained rows formulas read
        for rule in rules:
            kind = rule.constraint["kind"]
            if kind == "any" or (kind if kind in ("formula", "batch_table") else "plain") != stage:
                continue
            if rule.name in values or not all(
                    values.get(c.name) is not None and check_value(c.constraint, values[c.name]).ok
                    for c in rule.when):
                continue
            values[rule.name] = _good(rule.constraint, values)
    return values


def write(path: Path, ruleset: str, benchmark: str, values: Mapping[str, Any]) -> Path:
    t = table(ruleset)
    logged = {t.key(benchmark, k): v for k, v in values.items()}
    samples = (logged.pop("train_samples", 1000), logged.pop("eval_samples", 100))
    return write_run(path, RunSpec(benchmark=benchmark, ruleset=ruleset, hyperparameters=logged, samples=samples))


def hp_findings(path: Path, ruleset: str) -> list[Finding]:
    return hp.check_log(read_log(path), CheckOptions(ruleset=ruleset))


@pytest.mark.parametrize(("ruleset", "benchmark"), cases())
def test_each_row_passes_a_compliant_log_and_fails_when_broken(tmp_path: Path, ruleset: str, benchmark: str) -> None:
    t = table(ruleset)
    values = compliant(ruleset, benchmark)
    good = write(tmp_path / "good.txt", ruleset, benchmark, values)
    assert hp_findings(good, ruleset) == []
    checked = 0
    for rule in t.benchmarks[benchmark]:
        if rule.constraint["kind"] == "any" or not rule.logged or rule.name not in values:
            continue
        if any(not check_value(c.constraint, values[c.name]).ok for c in rule.when):
            continue
        broken = {**values, rule.name: _bad(rule.constraint, values[rule.name])}
        log = write(tmp_path / f"{rule.id}.txt", ruleset, benchmark, broken)
        found = [f for f in hp_findings(log, ruleset) if f"[{rule.id}]" in f.message or f"{rule.id}]" in f.message]
        assert found, (rule.id, broken[rule.name])
        assert found[0].code == rule.code
        assert found[0].line == read_log(log).first(t.key(benchmark, rule.name)).line  # type: ignore[union-attr]
        checked += 1
    assert checked or all(r.constraint["kind"] == "any" or not r.logged for r in t.benchmarks[benchmark])


# --- the constraint kinds the later tables added --------------------------------------------------------------


def ok(constraint: dict[str, Any], value: Any, **others: Any) -> bool:
    return check_value(constraint, value, others.get).ok


def test_formula_of_another_key_and_of_the_batch_size_with_ceil() -> None:
    end = {"kind": "formula", "terms": [{"name": "opt_base_learning_rate", "factor": 0.1}]}
    assert ok(end, 4e-5, opt_base_learning_rate=4e-4) and not ok(end, 8e-5, opt_base_learning_rate=4e-4)
    warm = {"kind": "formula", "terms": [{"ceil": [8000, 1152], "batch": "global_batch_size"}]}
    assert ok(warm, 9600, global_batch_size=960) and not ok(warm, 8000, global_batch_size=960)
    assert ok(warm, 4000, global_batch_size=2304) and ok(warm, 1334, global_batch_size=6912)  # 1333.33 -> 1334
    decay = {"kind": "formula", "terms": [{"constant": 1200000}, {"name": "opt_learning_rate_warmup_steps",
                                                                   "factor": -1}]}
    assert ok(decay, 1199984, opt_learning_rate_warmup_steps=16) and not ok(decay, 1200000,
                                                                              opt_learning_rate_warmup_steps=16)
    out = check_value(warm, 8000, {"global_batch_size": 960}.get)
    assert out.allowed == "ceil(8000*1152/global_batch_size)"
    assert "that is 9600 with global_batch_size 960" in out.detail
    assert check_value(warm, 8000, {}.get).skipped  # no batch size logged: nothing to say


def test_fraction_and_any_of() -> None:
    lr = {"kind": "any_of", "of": [{"kind": "multiple_of", "base": 0.02}, {"kind": "fraction_of", "base": 0.02}]}
    assert ok(lr, 0.04) and ok(lr, 0.005) and not ok(lr, 0.03)


# --- side tables ----------------------------------------------------------------------------------------------


def _lr_rule(ruleset: str, benchmark: str) -> hpt.Rule:
    (rule,) = [r for r in table(ruleset).benchmarks[benchmark]
               if r.name == "opt_base_learning_rate" and r.constraint["kind"] == "batch_table"]
    return rule


@pytest.mark.parametrize("ruleset", ["3.0.0", "3.1.0", "4.0.0", "4.1.0", "5.0.0", "5.1.0", "6.0.0"])
def test_gpt3_side_table_with_its_bands(ruleset: str) -> None:
    c = _lr_rule(ruleset, "gpt3").constraint
    assert ok(c, 2e-5, global_batch_size=2048) and not ok(c, 3e-5, global_batch_size=2048)
    assert ok(c, 2e-5, global_batch_size=3584) and ok(c, 3e-5, global_batch_size=3584)  # (3072, 4096): either
    assert ok(c, 3e-5, global_batch_size=6144) and not ok(c, 2e-5, global_batch_size=6144)
    out = check_value(c, 2e-5, {"global_batch_size": 1024}.get)
    assert not out.ok and "outside" in out.detail and "new RCP" in out.detail


@pytest.mark.parametrize("ruleset", ["5.0.0", "5.1.0", "6.0.0"])
def test_llama31_405b_side_table_and_its_in_between_rule(ruleset: str) -> None:
    c = _lr_rule(ruleset, "llama31_405b").constraint
    assert ok(c, 16e-5, global_batch_size=2304) and not ok(c, 8e-5, global_batch_size=2304)
    assert ok(c, 0.00048, global_batch_size=6912)  # 8e-5 * 6912/1152, between rows
    assert ok(c, 0.00010667, global_batch_size=1536)  # 1.0666...e-4 rounded to the 8th decimal
    assert not ok(c, 0.0001067, global_batch_size=1536)
    assert not ok(c, 8e-5, global_batch_size=960) and not ok(c, 64e-5, global_batch_size=18432)


def test_deepseek_side_table_rows_and_sqrt_rule() -> None:
    c = _lr_rule("6.0.0", "deepseekv3_671b").constraint
    assert ok(c, 0.000023238, global_batch_size=15360) and ok(c, 0.000025456, global_batch_size=18432)
    assert ok(c, round(0.000024 * math.sqrt(2), 9), global_batch_size=32768)
    assert not ok(c, 0.000024, global_batch_size=32768) and not ok(c, 0.000024, global_batch_size=8192)


# --- the v5.1 cases of issue 15 on logs like Nebius' and Lenovo's published v5.1 runs ---------------------------

LORA = {"global_batch_size": 8, "opt_base_learning_rate": 0.0006, "opt_adamw_weight_decay": 0.0001,
        "opt_gradient_clip_norm": 0.3, "lora_rank": 16, "lora_alpha": 32, "gradient_accumulation_steps": 1}
L8B = {"global_batch_size": 16, "opt_base_learning_rate": 0.0004, "opt_end_learning_rate": 4e-05,
       "opt_learning_rate_warmup_steps": 16, "opt_learning_rate_decay_steps": 1199984, "max_steps": 1200000,
       "opt_adamw_beta_1": 0.9, "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-05, "opt_adamw_weight_decay": 0.1,
       "opt_gradient_clip_norm": 1.0, "max_sequence_length": 8192}
L405 = {"global_batch_size": 1152, "opt_base_learning_rate": 8e-05, "opt_end_learning_rate": 8e-07,
        "opt_learning_rate_warmup_steps": 8000, "opt_learning_rate_decay_steps": 1192000, "init_checkpoint_step": 0,
        "opt_adamw_beta_1": 0.9, "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-05, "opt_adamw_weight_decay": 0.1,
        "opt_gradient_clip_norm": 1.0, "max_sequence_length": 8192}


def _ids(tmp_path: Path, benchmark: str, values: Mapping[str, Any]) -> dict[str, Finding]:
    log = write_run(tmp_path / f"{benchmark}.txt", RunSpec(benchmark=benchmark, ruleset="5.1.0",
                                                           hyperparameters=dict(values)))
    return {re.findall(r"\[(?:\*+ )?([A-Z]{2}-\w+)\]", f.message)[-1]: f for f in hp_findings(log, "5.1.0")}


def test_issue_15_cases_pass_as_published(tmp_path: Path) -> None:
    for bench, values in (("llama2_70b_lora", LORA), ("llama31_8b", L8B), ("llama31_405b", L405)):
        assert _ids(tmp_path, bench, values) == {}


def test_issue_15_llama2_70b_lora_alpha_clip_and_decay(tmp_path: Path) -> None:
    found = _ids(tmp_path, "llama2_70b_lora", {**LORA, "lora_alpha": 16, "opt_gradient_clip_norm": 0.5,
                                               "opt_adamw_weight_decay": 0.001})
    assert sorted(found) == ["LO-2", "LO-5", "LO-6"]
    assert all(f.code == "HP001" for f in found.values())
    assert "'opt_adamw_weight_decay' (the table's opt_weight_decay) is 0.001" in found["LO-6"].message
    assert "TR5.1 §Hyperparameters, llama2_70b_lora lora_alpha, L343" in found["LO-5"].message


def test_issue_15_llama31_8b_end_learning_rate(tmp_path: Path) -> None:
    found = _ids(tmp_path, "llama31_8b", {**L8B, "opt_end_learning_rate": 8e-05})
    assert list(found) == ["LS-10"] and "opt_base_learning_rate * 0.1" in found["LS-10"].message


def test_issue_15_llama31_405b_at_batch_960(tmp_path: Path) -> None:
    found = _ids(tmp_path, "llama31_405b", {**L405, "global_batch_size": 960, "opt_learning_rate_warmup_steps": 8000,
                                            "opt_end_learning_rate": 1e-06,
                                            "opt_learning_rate_decay_steps": 1440000 - 9600})
    assert {"LL-10", "LL-14"} <= set(found)
    assert "that is 9600 with global_batch_size 960" in found["LL-10"].message
    assert "closed allows 8e-07" in found["LL-14"].message
    assert "outside it" in found["LL-13"].message  # 960 < 1152: the side table has no learning rate for it


# --- one report per value: a rule file and a row failing the same record ----------------------------------------


def test_a_value_the_rule_file_and_the_table_both_catch_is_reported_once(tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama31_405b", ruleset="5.1.0",
                                                       hyperparameters={**L405, "opt_adamw_weight_decay": 0.2}))
    findings = advise_parsed(read_log(log, "result_0.txt"), "5.1.0")
    line = read_log(log).first("opt_adamw_weight_decay").line  # type: ignore[union-attr]
    at_line = [f for f in findings if f.line == line]
    assert [f.code for f in at_line] == ["RULE001"]
    assert "the closed table says the same" in at_line[0].message and "[LL-8]" in at_line[0].message
    assert hp.merge_rule_duplicates([]) == []


def test_cache_key_changes_with_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsubmit.checker.base import cache
    from mlsubmit.checker.engine import pipeline

    def key(checks: str) -> str:
        return cache.context_key("5.1.0", checks, pipeline.tables_key(checks))

    pipeline.tables_key.cache_clear()
    before, unread = key("read,rules,hyperparameters"), key("read,rules")
    monkeypatch.setattr(hpt, "tables_digest", lambda: "other tables")
    pipeline.tables_key.cache_clear()
    assert key("read,rules,hyperparameters") != before
    assert key("read,rules") == unread  # a profile without the table does not read it
    pipeline.tables_key.cache_clear()
