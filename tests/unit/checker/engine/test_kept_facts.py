"""The facts of all a check's logs together are bounded (issue 54): past the budget a log keeps the first record of
each key only, and a LOG012 on it says so."""

from __future__ import annotations

from pathlib import Path

from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.engine.kept_facts import FactsBudget, facts_cost
from mlsubmit.checker.engine.pipeline import LogResult
from mlsubmit.checker.logs.facts import TREE_KEYS, FactsBuilder
from mlsubmit.checker.logs.reader import read_log


def _result(path: Path) -> LogResult:
    builder = FactsBuilder(TREE_KEYS)
    return LogResult([], builder.facts(read_log(path, path.name, sink=builder.feed, rcp_lines=True)))


def test_logs_past_the_budget_keep_their_first_records_only(tmp_path: Path) -> None:
    results = [_result(write_run(tmp_path / f"result_{i}.txt", RunSpec(evals=20, seed=i))) for i in range(4)]
    each = facts_cost(results[0].facts)
    assert each > 20 * 600 and len(results[0].facts.all("eval_accuracy")) == 20
    budget = FactsBudget(total=2 * each + each // 2)
    kept = [budget.admit(r) for r in results]
    assert kept[:2] == results[:2]  # within the budget: as they came
    for got, given in zip(kept[2:], results[2:], strict=True):
        (cut,) = got.findings
        assert cut.code == "LOG012" and "passed 0 MiB in all" in cut.message and "LOG012" in got.facts.error_codes
        assert len(got.facts.all("eval_accuracy")) == 1 and got.facts.rcp_lines == ()
        assert got.facts.first == given.facts.first and got.facts.converged  # run_stop is a series' first
    assert budget.used < 3 * each
