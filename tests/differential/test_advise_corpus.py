"""`mlsubmit advise` on published runs of the corpus: the open Graphcore BERT runs, the closed ones (no HP finding), an
open ResNet with the Shampoo optimizer and the RCP advice for a v1.0 POD64 BERT run (tests/cli/test_advise.py holds
the command on made runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mlsubmit.checker.logs.reader import read_log

from mlsubmit.core.support.schema_loader import errors, load_schema


def _json(out: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(out)
    assert errors(report, load_schema("report.schema.json")) == []
    return report


GRAPHCORE_OPEN = [
    ("training_results_v1.0", "1.0.0", "ipu-pod16-POPART-open"),
    ("training_results_v1.0", "1.0.0", "ipu-pod64-POPART-open"),
    ("training_results_v1.1", "1.1.0", "ipu-pod16-POPART-open"),
    ("training_results_v1.1", "1.1.0", "ipu-pod64-POPART-open"),
]


@pytest.mark.corpus
@pytest.mark.parametrize(("round_dir", "ruleset", "system"), GRAPHCORE_OPEN)
def test_graphcore_open_bert_advice(run_cli: Any, corpus: Path, round_dir: str, ruleset: str, system: str) -> None:
    folder = corpus / round_dir / "Graphcore" / "results" / system / "bert"
    code, out, _ = run_cli("advise", "--ruleset", ruleset, "--format", "json", folder)
    report = _json(out)
    assert len(report["files"]) == 10
    found = [x for f in report["files"] for x in f["findings"]]
    codes = {tuple(sorted(x["code"] for x in f["findings"] if x["severity"] != "info")) for f in report["files"]}
    if ruleset == "1.0.0":
        # Every BERT row of the table is free, and the logs meet the closed rule files: nothing in a record keeps
        # these runs out of closed (HP010, each run), their convergence does: the RCP check the advice predicts.
        assert (code, codes) == (0, {()})
        assert sum(x["code"] == "HP010" for x in found) == 10
    else:
        # 1.1.0 closed rule files want weights_initialization records, which no published v1.1 BERT log has.
        assert (code, codes) == (1, {("RULE002", "RULE005")})
    assert not any(x["code"].startswith("HP") and x["severity"] != "info" for x in found)
    (predicted,) = [x for x in found if x["code"] == "HP008"]  # once for the folder's 10 runs, as closed
    assert predicted["message"].startswith("the RCP check fails: ")


@pytest.mark.corpus
def test_no_hp_findings_on_the_published_closed_runs(corpus: Path) -> None:
    from mlsubmit.checker.engine.pipeline import CheckOptions
    from mlsubmit.checker.hyperparameters.apply import check_log

    seen = 0
    for round_dir, ruleset in (("training_results_v1.0", "1.0.0"), ("training_results_v1.1", "1.1.0")):
        for path in sorted((corpus / round_dir).glob("*/results/**/result_*.txt")):
            log = read_log(path)
            division = log.first("submission_division")
            if division is not None and division.payload == "closed":
                seen += 1
                assert check_log(log, CheckOptions(ruleset=ruleset)) == [], path
    assert seen > 300


@pytest.mark.corpus
def test_published_open_shampoo_resnet_breaks_the_optimizer_row(run_cli: Any, corpus: Path) -> None:
    folder = corpus / "training_results_v1.0" / "Google" / "results" / "tpu-v4-256-JAX-Distributed-Shampoo" / "resnet"
    code, out, _ = run_cli("advise", "--ruleset", "1.0.0", "--table-only", "--no-rcp", "--format", "json", folder)
    report = _json(out)
    assert code == 1 and len(report["files"]) == 5
    for f in report["files"]:
        (only,) = f["findings"]
        assert only["code"] == "HP001" and only["message"].startswith("'opt_name' is \"distributed shampoo\"")


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github"])
def test_rcp_advice_for_graphcore_v1_0_pod64_closed_bert_in_every_format(run_cli: Any, corpus: Path,
                                                                          fmt: str) -> None:
    folder = corpus / "training_results_v1.0" / "Graphcore" / "results" / "ipu-pod64-POPART-closed" / "bert"
    code, out, _ = run_cli("advise", "--ruleset", "1.0.0", "--format", fmt, folder)
    assert code == 0  # advice is info: nothing in a record keeps these runs out of closed
    for text in ("RCP found: bert_ref_3072 (batch size 3072, 20 reference runs",
                 "'opt_lamb_beta_1': run 0.8, RCP bert_ref_3072 (batch size 3072) 0.66",
                 "'num_warmup_steps': run 0, RCP bert_ref_3072 (batch size 3072) 100",
                 "'opt_learning_rate_training_steps': run 1127, RCP bert_ref_3072 (batch size 3072) 1141"):
        assert text.replace("'", "&apos;" if fmt == "junit" else "'") in out or text in out, (fmt, text)
    if fmt == "json":
        found = [x for f in _json(out)["files"] for x in f["findings"]]
        assert sorted(x["code"] for x in found) == ["HP006", "HP007", "HP007", "HP007", "HP008"]
        (predicted,) = [x for x in found if x["code"] == "HP008"]  # the reference fails this folder's RCP
        assert predicted["message"].startswith("the RCP check fails: RCP found (global batch size 3072)")
        assert "fastest allowed 2643732.3832 samples" in predicted["message"]
        assert {x["path"] for x in found} == {str(folder / "result_0.txt")}  # once for the folder's 10 runs
