"""One run over several rounds gives exactly what one run per round gives, on the real submissions."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlsubmit.checker.engine.pipeline import CheckOptions, run_check, run_rounds
from mlsubmit.checker.rounds.detect import group_by_round
from mlsubmit.checker.rules.files import available_rulesets


@pytest.mark.corpus
def test_rounds_share_one_pool_with_the_same_findings(corpus: Path) -> None:
    groups = group_by_round([str(corpus)], available_rulesets())
    assert set(groups) == {p.name.split("_v", 1)[1] + ".0" for p in corpus.glob("training_results_v*")}
    together = run_rounds(groups, CheckOptions(ruleset="1.0.0", jobs=2))
    for run, (ruleset, paths) in zip(together, groups.items(), strict=True):
        alone = run_check(paths, CheckOptions(ruleset=ruleset, jobs=1))
        assert run.report.sorted().files == alone.report.sorted().files
        assert run.report.sorted().tree == alone.report.sorted().tree
        assert run.report.files  # every round compared something (the corpus holds 13 logs of 4.0, 300 of 1.0)
    assert sum(len(run.report.files) for run in together) > 100  # not a vacuous comparison
