"""The predicted RCP verdict and factor equal the reference RCP checker's on every log of the corpus (the shared
run of tests/fixtures/rcp_reference.py; tests/unit/checker/rcp/test_prediction.py: the prediction on made inputs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp import prediction as ra


@pytest.mark.corpus
def test_the_predicted_verdict_and_factor_are_the_reference_checkers(corpus: Path,
                                                                     rcp_reference: dict[str, Any]) -> None:
    """Every closed results folder of the corpus: HP008 says what mlperf-logging's check_directory says (run once
    per session: tests/fixtures/rcp_reference.py)."""
    import json

    from fixtures.rcp_reference import ruleset_of

    compared = 0
    for folder in sorted(corpus.glob("training_results_v*/*/results/*/*")):
        system = folder.parent.parent.parent / "systems" / f"{folder.parent.name}.json"
        try:
            closed = json.loads(system.read_text(encoding="utf-8")).get("division") == "closed"
        except (OSError, ValueError):
            continue
        ruleset = ruleset_of(folder)
        logs = [read_log(p) for p in sorted(folder.glob("result_*.txt"))]
        if not closed or not logs or folder.name == "minigo":
            continue
        kind, answer = rcp_reference["folders"][str(folder)]
        if kind != "ok":
            continue  # the reference raises (dlrm): HP008 names the raise, compared in test_rcp
        passed, msg, factor = answer
        hp8 = [f for f in ra.advise_runs(logs, ruleset) if f.code == "HP008"]
        assert len(hp8) == 1, folder
        assert (" passes" in hp8[0].message) == passed and msg in hp8[0].message, (folder, hp8[0].message)
        if factor > 1.0 and passed:
            assert f"normalisation factor {factor:.6f}" in hp8[0].message, folder
        if not passed:  # a factor beside a fail read as a contradiction
            assert "normalisation factor" not in hp8[0].message, folder
        compared += 1
    assert compared > 0
