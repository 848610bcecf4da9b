"""`mlsubmit rounds draft`: the rules' hyperparameter tables read as text, constraint cells read into our kinds or
left unread (never guessed), rows carried from the previous round when their text is unchanged, the diff, and the
draft file valid against our table schema. The proof on the rounds' real documents is test_draft_history.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from mlsubmit.checker.hyperparameters import adoc, constraint_text
from mlsubmit.checker.hyperparameters.draft import Document, Previous, draft
from mlsubmit.checker.hyperparameters.table import table_for

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(("text", "constraint"), [
    ("unconstrained", {"kind": "any"}),
    ("arbitrary constant", {"kind": "any"}),
    ("0 (disabled)", {"kind": "fixed", "value": 0}),
    ("1_200_000", {"kind": "fixed", "value": 1200000}),
    ("1e-8", {"kind": "fixed", "value": 1e-8}),
    ("10^-4", {"kind": "fixed", "value": 0.0001}),
    ("fixed to referance (0.3)", {"kind": "fixed", "value": 0.3}),
    ('"lamb"', {"kind": "fixed", "value": "lamb"}),
    ("True", {"kind": "fixed", "value": True}),
    ("integer >= 0", {"kind": "integer", "min": 0}),
    (">=15360", {"kind": "range", "ge": 15360}),
    ("0 or 0.1", {"kind": "one_of", "values": [0, 0.1]}),
    ('"lars" or "sgd"', {"kind": "one_of", "values": ["lars", "sgd"]}),
    ("1 or inf", {"kind": "one_of", "values": [1, float("inf")]}),
    ("boolean", {"kind": "one_of", "values": [True, False]}),
    ("opt_base_learning_rate * 0.1", {"kind": "formula", "terms": [{"name": "opt_base_learning_rate", "factor": 0.1}]}),
    ("10% of opt_base_learning_rate", {"kind": "formula", "terms": [{"name": "opt_base_learning_rate",
                                                                     "factor": 0.1}]}),
    ("12000 - opt_learning_rate_warmup_steps", {"kind": "formula", "terms": [
        {"constant": 12000}, {"name": "opt_learning_rate_warmup_steps", "factor": -1}]}),
    ("ceil(1_200_000 * 1152 / global_batch_size) - ceil(8000 * 1152 / global_batch_size)", {
        "kind": "formula", "terms": [{"ceil": [1200000, 1152], "batch": "global_batch_size"},
        {"ceil": [8000, 1152], "batch": "global_batch_size", "factor": -1}]}),
])  # fmt: skip
def test_plain_constraint_text_is_read_into_our_kinds(text: str, constraint: dict[str, Any]) -> None:
    assert constraint_text.read(text) == constraint


@pytest.mark.parametrize("text", [
    "fixed to reference",  # the value is in the reference code, not in the rules
    "constrained based on global_batch_size",  # a side table
    "0.000024 * sqrt(global_batch_size / 16384)",
    "0.9 for batch<32k, otherwise arbitrary constant",
    "(60000, 80000) * (1 + K / 10) * 16 / global_batch_size where K is integer",
    "1000 or 1000 * batches per chip",
    "5 - 3",  # constants only: no hyperparameter in it
    "",
])  # fmt: skip
def test_any_other_text_is_left_unread(text: str) -> None:
    assert constraint_text.read(text) is None


RULES = """\
= Rules

=== Hyperparameters
Text.

|===
 |Model |Optimizer |Name |Constraint |Definition |Reference Code

 |llama2_70b_lora |adamw |opt_gradient_clip_norm |fixed to referance (0.3) |clip |link:x[reference code]
 |llama2_70b_lora |adamw |lora_alpha$$*$$ |fixed to referance (64) |alpha |link:x[reference code]
 |llama2_70b_lora |adamw |lora_rank$$*$$$$*$$ |16 |rank
continued on the next line |link:x[reference code]
 |newbench |adamw |opt_base_learning_rate |constrained based on global_batch_size |lr |link:x[reference code]
 |newbench |adamw |global_batch_size |>= 512 |gbs |link:x[reference code]
|===

=== Hyperparameter Borrowing
|===
 |Model |Optimizer |Name |Constraint
 |llama2_70b_lora |adamw |not_read |1 |
|===
"""


def test_the_tables_rows_are_read_with_their_lines_and_asterisks() -> None:
    rows = adoc.read_rows(RULES)
    assert [(r.line, r.name, r.marks, r.constraint) for r in rows] == [
        (9, "opt_gradient_clip_norm", "", "fixed to referance (0.3)"),
        (10, "lora_alpha", "*", "fixed to referance (64)"),
        (11, "lora_rank", "**", "16"),  # its Definition goes on on the next line
        (13, "opt_base_learning_rate", "", "constrained based on global_batch_size"),
        (14, "global_batch_size", "", ">= 512")]  # fmt: skip


def _made() -> tuple[Any, Previous]:
    table = table_for("6.1.0")
    assert table is not None
    # 6.0's row of LO-2 at its line (353), the rows of 6.1 carry 6.0's lines
    old = ("=== Hyperparameters\n|===\n |Model |Optimizer |Name |Constraint |Definition\n" + "\n" * 349
           + " |llama2_70b_lora |adamw |opt_gradient_clip_norm |fixed to referance (0.3) |clip\n\n\n"
           + " |llama2_70b_lora |adamw |lora_alpha |fixed to referance (32) |alpha\n|===\n")
    previous = Previous(table, adoc.read_rows(old))
    assert [r.line for r in previous.rows] == [353, 356]
    return draft(Document("docs/policies/training_rules-v7.0.adoc", RULES.splitlines(), adoc.read_rows(RULES)),
                 previous, "7.0"), previous


def test_a_draft_carries_unchanged_rows_reads_plain_ones_and_never_guesses() -> None:
    made, _previous = _made()
    rules = {r["name"]: r for _b, r in made.rules()}
    assert made.carried == [9] and rules["opt_gradient_clip_norm"]["id"] == "LO-2"  # the 6.1 row, kept
    assert rules["lora_alpha"] == {"id": "LO-5", "name": "lora_alpha", "line": 10, "review": "*",
                                   "constraint": {"kind": "fixed", "value": 64}}  # changed text: read anew
    assert rules["lora_rank"]["review"] == "**" and rules["lora_rank"]["logged"] is False
    assert rules["global_batch_size"]["constraint"] == {"kind": "range", "ge": 512}
    assert [r.line for r in made.unread] == [13] and "opt_base_learning_rate" not in rules
    assert made.added == ["newbench"] and "flux1" in made.removed
    assert [(row.line, was) for row, was in made.changed] == [(10, "fixed to referance (32) (L356)")]


def test_the_cli_writes_a_draft_the_schema_accepts_and_lists_what_is_left(tmp_path: Path, run_cli: Cli) -> None:
    rules = tmp_path / "training_rules-v7.0.adoc"
    rules.write_text(RULES.replace("newbench", "llama31_8b"), encoding="utf-8")
    out = tmp_path / "draft.yaml"
    code, said, _err = run_cli("rounds", "draft", rules, "--from", "6.1", "-o", out)
    assert code == 1  # one row is left for a person
    # nothing carried: every row read from its text; the message names the file it looked for beside the input
    looked = f"{tmp_path / 'training_rules-v6.0.adoc'} and {tmp_path / 'training_rules-v6.1.adoc'}"
    assert (f"no copy of round 6.1's rules was found (looked for {looked}): no row could be carried; give "
            "--from-text FILE") in said
    assert "unread L13 llama31_8b opt_base_learning_rate: constrained based on global_batch_size" in said
    assert "schema:" not in said and "removed: bert, deepseekv3_671b, dlrmv4, flux1," in said
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert data["round"] == "7.0" and data["rulesets"] == ["7.0.0"]
    assert "UNREAD L13 llama31_8b opt_base_learning_rate" in out.read_text(encoding="utf-8")
    assert sorted(data["benchmarks"]) == ["llama2_70b_lora", "llama31_8b"]
    assert table_for("7.0.0") is None  # the checker never loads a draft


def test_the_cli_refuses_what_it_cannot_use(tmp_path: Path, run_cli: Cli) -> None:
    rules = tmp_path / "rules.adoc"
    rules.write_text(RULES, encoding="utf-8")
    assert run_cli("rounds", "draft", rules, "--from", "6.1")[0] == 2  # no vX.Y in the name, no --round
    assert run_cli("rounds", "draft", rules, "--from", "0.5", "--round", "7.0")[0] == 2  # no table of 0.5
    empty = tmp_path / "training_rules-v7.0.adoc"
    empty.write_text("= Rules\n", encoding="utf-8")
    code, _out, err = run_cli("rounds", "draft", empty, "--from", "6.1")
    assert code == 2 and "no hyperparameter table" in err


def test_a_benchmark_our_schema_does_not_know_is_said(tmp_path: Path, run_cli: Cli) -> None:
    rules = tmp_path / "training_rules-v7.0.adoc"
    rules.write_text(RULES, encoding="utf-8")
    code, said, _err = run_cli("rounds", "draft", rules, "--from", "6.1", "-o", tmp_path / "d.yaml")
    assert code == 1 and "schema: /benchmarks: 'newbench' is not one of" in said
