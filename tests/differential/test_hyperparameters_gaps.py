"""Every 1.0/1.1 hyperparameter gap of rules-spec §5.1: mlsubmit flags the log, mlperf-logging passes the same file.

The logs are written with mllog (testing.synth) and otherwise closed-compliant; the reference compliance checker
runs over all of them in one process (tools/reference_batch.py), so the whole module costs one interpreter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures.differential import reference_verdicts
from fixtures.synth import HYPERPARAMETERS, RunSpec, write_run
from mlsubmit.checker.engine.pipeline import CheckOptions
from mlsubmit.checker.hyperparameters import apply as hp
from mlsubmit.checker.logs.reader import read_log

SGD = {
    "opt_name": "sgd", "global_batch_size": 1920, "sgd_opt_base_learning_rate": 3.824,
    "sgd_opt_end_learning_rate": 0.0001, "sgd_opt_learning_rate_decay_poly_power": 2,
    "sgd_opt_learning_rate_decay_steps": 26024, "sgd_opt_weight_decay": 2.5e-05, "sgd_opt_momentum": 0.9,
    "model_bn_span": 40, "opt_learning_rate_warmup_epochs": 5,
}  # fmt: skip
LARS_ONLY = tuple(k for k in HYPERPARAMETERS["resnet"] if k.startswith("lars"))

# (gap id in rules-spec §5.1, benchmark, changed values, expected code, key the finding points at)
GAPS: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("RN-L6", "resnet", {"global_batch_size": 3264, "lars_opt_momentum": 0.5}, "HP001", "lars_opt_momentum"),
    ("RN-S4", "resnet_sgd", {"sgd_opt_learning_rate_decay_poly_power": 1}, "HP001",
     "sgd_opt_learning_rate_decay_poly_power"),
    ("RN-S5", "resnet_sgd", {"sgd_opt_learning_rate_decay_steps": -3}, "HP001", "sgd_opt_learning_rate_decay_steps"),
    ("RN-S7", "resnet_sgd", {"sgd_opt_momentum": 0.5}, "HP001", "sgd_opt_momentum"),
    ("RN-S9", "resnet_sgd", {"opt_learning_rate_warmup_epochs": -1}, "HP001", "opt_learning_rate_warmup_epochs"),
    ("MR-3", "maskrcnn", {"opt_learning_rate_decay_steps": [1, 2]}, "HP002", "opt_learning_rate_decay_steps"),
    ("MR-5", "maskrcnn", {"max_image_size": 600}, "HP002", "max_image_size"),
    ("MR-6", "maskrcnn", {"min_image_size": 1000}, "HP002", "min_image_size"),
    ("MR-7", "maskrcnn", {"num_image_candidates": 7000}, "HP002", "num_image_candidates"),
    ("MG-1", "minigo", {"train_batch_size": 0}, "HP001", "train_batch_size"),
    ("SD-2", "ssd", {"model_bn_span": 2.5}, "HP001", "model_bn_span"),
    ("SD-3", "ssd", {"opt_learning_rate_warmup_factor": 0.5}, "HP001", "opt_learning_rate_warmup_factor"),
    ("SD-4", "ssd", {"opt_learning_rate_warmup_steps": 1.5}, "HP001", "opt_learning_rate_warmup_steps"),
    ("SD-8", "ssd", {"opt_learning_rate_decay_boundary_epochs": [41, 55]}, "HP001",
     "opt_learning_rate_decay_boundary_epochs"),
    ("SD-8b", "ssd", {"opt_learning_rate_decay_boundary_epochs": [40, 55]}, "HP001",
     "opt_learning_rate_decay_boundary_epochs"),
    ("UN-9", "unet3d", {"oversampling": 0.9}, "HP001", "oversampling"),
    ("UN-10", "unet3d", {"training_input_shape": [64, 64, 64]}, "HP001", "training_input_shape"),
    ("UN-11", "unet3d", {"validation_overlap": 0.0}, "HP001", "validation_overlap"),
    ("UN-12", "unet3d", {"validation_input_shape": [64, 64, 64]}, "HP001", "validation_input_shape"),
]
RULESETS = ("1.0.0", "1.1.0")


def _spec(benchmark: str, ruleset: str, change: dict[str, Any]) -> RunSpec:
    if benchmark == "resnet_sgd":
        return RunSpec(benchmark="resnet", ruleset=ruleset, hyperparameters={**SGD, **change}, omit=LARS_ONLY)
    return RunSpec(benchmark=benchmark, ruleset=ruleset, hyperparameters=change)


@pytest.fixture(scope="module")
def gap_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Path, dict[str, Any]]]:
    """Every gap log for both rounds, and the reference verdict on each (one reference process)."""
    root = tmp_path_factory.mktemp("gaps")
    logs = {
        (gap, ruleset): write_run(root / ruleset / gap / "result_0.txt", _spec(bench, ruleset, change))
        for gap, bench, change, _, _ in GAPS
        for ruleset in RULESETS
    }
    verdicts = reference_verdicts([(ruleset, path) for (_, ruleset), path in logs.items()])
    return {k: (path, verdicts[str(path)]) for k, path in logs.items()}


def test_the_gaps_are_the_table_rows_rules_spec_lists() -> None:
    assert len(GAPS) == 19  # 18 rows of §5.1 marked NO/PARTIAL for values, SD-8 with two ways to break it


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize(("gap", "benchmark", "change", "code", "key"), GAPS, ids=[g[0] for g in GAPS])
def test_reference_passes_and_mlsubmit_flags(gap_logs: dict[tuple[str, str], tuple[Path, dict[str, Any]]],
                                             ruleset: str, gap: str, benchmark: str, change: dict[str, Any],
                                             code: str, key: str) -> None:
    path, verdict = gap_logs[(gap, ruleset)]
    assert verdict["ok"] is True and verdict["crash"] is None, verdict  # mlperf-logging 4.1.68 lets it through
    log = read_log(path)
    found = hp.check_log(log, CheckOptions(ruleset=ruleset))
    assert [f.code for f in found] == [code]
    rec = log.first(key)
    assert rec is not None and found[0].line == rec.line
