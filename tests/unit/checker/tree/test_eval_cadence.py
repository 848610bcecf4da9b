"""TREE051: a closed ResNet-50 run is evaluated at least every 4 epochs (training rules, "Quality measure"), on
logs written with mllog; the shapes accepted trees show (an evaluation at epoch 0, more frequent ones) pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.synth import RunSpec, write_run
from fixtures.treefix import build_org, resnet_runs
from mlsubmit.checker.logs.facts import LogFacts, extract
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.tree.eval_cadence import check_eval_cadence


def evals_at(tmp_path: Path, *epochs: float, benchmark: str = "resnet") -> LogFacts:
    """A run of 2 one-epoch evaluations (epochs 1 and 2), then one evaluation at each of `epochs`."""
    extra = [("eval_accuracy", 0.7, {"epoch_num": e}) for e in epochs]
    path = write_run(tmp_path / "result_0.txt", RunSpec(benchmark=benchmark, evals=2, extra=extra))
    return extract(read_log(path))


def line_of(path: str, epoch: int) -> int:
    lines = Path(path).read_text("utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if '"eval_accuracy"' in text and f'"epoch_num": {epoch}}}' in text)


def test_a_gap_over_4_epochs_is_an_error_at_that_evaluation(tmp_path: Path) -> None:
    run = evals_at(tmp_path, 6, 11, 20)  # 2 -> 6 is 4 (allowed), 6 -> 11 is 5: reported once, there
    (f,) = check_eval_cadence("resnet", [run])
    assert (f.code, f.severity.value, f.path, f.line) == ("TREE051", "error", run.path, line_of(run.path, 11))
    assert f.message == ("evaluated at epoch 11, 5 epochs after the evaluation at epoch 6: a closed resnet run is "
                         "evaluated at least every 4 epochs")


@pytest.mark.parametrize("epochs", [
    (6, 10, 14),  # every 4 epochs
    (3, 4, 5, 9),  # more often is allowed
    (0, 6, 5, 6.0, 10),  # an eval at epoch 0, repeats and an out-of-order record make no gap
])  # fmt: skip
def test_every_4_epochs_or_more_often_passes(tmp_path: Path, epochs: tuple[float, ...]) -> None:
    assert check_eval_cadence("resnet", [evals_at(tmp_path, *epochs)]) == []


def test_other_benchmarks_and_unusable_epochs_are_not_judged(tmp_path: Path) -> None:
    assert check_eval_cadence("bert", [evals_at(tmp_path, 40)]) == []
    odd = [("eval_accuracy", 0.7, {"epoch_num": v}) for v in ("12", None, True, float("nan"))]
    path = write_run(tmp_path / "odd" / "result_0.txt", RunSpec(benchmark="resnet", evals=2, extra=odd))
    assert check_eval_cadence("resnet", [extract(read_log(path))]) == []


def test_the_tree_check_reports_it_for_closed_folders_only(
    tmp_path: Path, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    runs = resnet_runs([3, 3, 3, 3, 3])
    runs[2].extra = [("eval_accuracy", 0.7, {"epoch_num": 8})]  # 3 -> 8
    org = build_org(tmp_path / "Org", {("pod16", "resnet"): runs})

    def tree051(*flags: str) -> list[tuple[str, str, int]]:
        _, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", *flags, org)
        doc = json.loads(out)
        found = [*doc["findings"], *(f for entry in doc["files"] for f in entry["findings"])]
        return [(f["severity"], Path(f["path"]).name, f["line"]) for f in found if f["code"] == "TREE051"]

    assert tree051() == [("error", "result_2.txt", line_of(str(org / "results/pod16/resnet/result_2.txt"), 8))]
    assert tree051("--profile", "reference") == []  # the package checker has no such check
