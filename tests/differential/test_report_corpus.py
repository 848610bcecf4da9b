"""`mlsubmit report` on a published tree: the figures of Graphcore's v1.0 results (tests/cli/test_report.py: made
trees)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def results_by_key(out: str) -> dict[tuple[str, str], dict]:
    return {(r["system"], r["benchmark"]): r for r in json.loads(out)["results"]}


@pytest.mark.corpus
def test_graphcore_v1_0_figures_match_their_published_results(run_cli, corpus: Path) -> None:
    """ipu-facts: BERT just over 9 minutes and ResNet-50 14.5 minutes on IPU-POD64 (MLPerf Training v1.0)."""
    tree = corpus / "training_results_v1.0" / "Graphcore"
    if not tree.is_dir():
        pytest.skip(f"{tree} is not in the corpus")
    res = results_by_key(run_cli("report", "--ruleset", "1.0.0", "--format", "json", tree)[1])
    assert 9.0 < res[("ipu-pod64-POPART-open", "bert")]["time_to_train_minutes"] < 9.5
    assert res[("ipu-pod64-TF1", "resnet")]["time_to_train_minutes"] == pytest.approx(14.5, abs=0.05)
    pod16 = res[("ipu-pod16-POPART-closed", "bert")]
    assert pod16["rcp"]["status"] == "Pass" and pod16["scaling_factor"] > 1.018  # scaled, as the reference does
    assert res[("ipu-pod64-TF1", "resnet")]["system_facts"]["host_servers"] == 4
