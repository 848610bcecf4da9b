"""RUN009, the run set's risk of an RCP fail (issue 55, and issue 54 cases 11-12), through the commands on sets
written with mllog: the four situations the published sets showed the old model wrong on, the risk as data in
the JSON of check and advise, and hostile numbers that must never make an internal error (exit 3)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth import RunSpec, render
from fixtures.synth_org import system, write_org
from jsonschema import Draft202012Validator
from mlsubmit.checker.rcp import risk

from mlsubmit.core.support.schema_loader import load_schema

_EPOCH = re.compile(r'("epoch_num": )([0-9.e+-]+)')
DAY = 86_400_000


def _run(bench: str, ruleset: str, i: int, epoch: str | None, *, platform: str = "pod16", converge: bool = True,
         minutes: float = 20.0, **kw: Any) -> str:
    """One run written with mllog; its every epoch_num becomes `epoch` (the value the RCP check reads)."""
    text = render(RunSpec(benchmark=bench, ruleset=ruleset, platform=platform, seed=100 + i, converge=converge,
                          start_ms=1_634_000_000_000 + i * DAY, minutes=minutes, **kw))
    return text if epoch is None else _EPOCH.sub(lambda m: m.group(1) + epoch, text)


def _raw(folder: Path, texts: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (folder / f"job-{i:02d}.out").write_text(text, encoding="utf-8")
    return folder


def _findings(out: str) -> list[dict[str, Any]]:
    data = json.loads(out)
    Draft202012Validator(load_schema("report.schema.json")).validate(data)
    return [*data["findings"], *(f for entry in data.get("files", []) for f in entry["findings"])]


def _risk(run_cli: Any, *argv: object) -> dict[str, Any]:
    code, out, err = run_cli(*argv, "--format", "json")
    assert code in (0, 1), err
    (found,) = [f for f in _findings(out) if f["code"] == "RUN009"]
    return found


# --- the four situations of issue 55 ---------------------------------------------------------------------------


def test_a_zero_spread_record_and_an_outlier_the_olympic_mean_drops(run_cli: Any, tmp_path: Path) -> None:
    """v1.1 Dell maskrcnn: the record maskrcnn_ref_48 has every run at 14 epochs (window 14-14), and the third run
    is fast (12), an outlier the olympic mean drops. The old model said 0 % at k = 2 and 100 % at k = 3; the set
    passes. Now neither is certain: the zero spread of the record is not the spread of the runs to come."""
    hp = {"hyperparameters": {"global_batch_size": 48}}
    texts = [_run("maskrcnn", "1.1.0", i, None, evals=e, converge_at=e * 118_287, **hp)
             for i, e in enumerate((15, 14, 12))]
    found = _risk(run_cli, "check", "--ruleset", "1.1.0", _raw(tmp_path / "three", texts))
    data = found["risk"]
    assert data["window"] == {"kind": "found", "fastest": 14.0, "rcp_mean": 14.0, "records": ["maskrcnn_ref_48"]}
    assert (data["runs"], data["required"], data["certain"]) == (3, 5, False)
    assert 0.01 < data["p_fail"] < 0.99 and "100" not in found["message"].split("; ")[0]
    # the set once complete: the olympic mean drops the 12, and the verdict passes
    more = [_run("maskrcnn", "1.1.0", i, None, evals=e, converge_at=e * 118_287, **hp)
            for i, e in ((3, 14), (4, 15))]
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", "--format", "json", _raw(tmp_path / "three", texts + more))
    assert code in (0, 1)
    codes = {f["code"] for f in _findings(out)}
    assert "TREE019" in codes and "TREE018" not in codes and "RUN009" not in codes  # passes; complete: no risk


def test_runs_that_drift_are_flagged(run_cli: Any, tmp_path: Path) -> None:
    """v3.1 NVIDIA dlrm_dcnv2: runs that converge later and later (0.70, 0.75, 0.80, 0.85 epochs, against a
    fastest allowed mean of 0.728). RUN009 says the runs trend; it does not call the set a certain fail."""
    hp = {"hyperparameters": {"global_batch_size": 55296}, "evals": 3}
    texts = [_run("dlrm_dcnv2", "3.1.0", i, e, **hp) for i, e in enumerate(("0.7", "0.72", "0.74", "0.76"))]
    found = _risk(run_cli, "check", "--ruleset", "3.1.0", _raw(tmp_path / "runs", texts))
    assert found["risk"]["drift"] is not None and found["risk"]["drift"] > 0
    assert "trend by +" in found["message"] and found["risk"]["p_fail"] < 0.99 and not found["risk"]["certain"]


def test_one_run_of_three_not_converging_is_not_a_certain_fail_of_forty(run_cli: Any, tmp_path: Path) -> None:
    """unet3d: 40 runs tolerate 4 that do not converge. 1 of 3 not converged was projected at its raw rate (one
    third: 100 %); the Beta prior of the benchmark's published rate keeps it a risk, not a certainty."""
    texts = [_run("unet3d", "1.1.0", i, "1600", converge=i != 1, evals=3) for i in range(3)]
    found = _risk(run_cli, "check", "--ruleset", "1.1.0", _raw(tmp_path / "runs", texts))
    data = found["risk"]
    assert (data["runs"], data["required"]) == (3, 40) and not data["certain"]
    assert 0.05 < data["p_insufficient"] < 0.95 and data["prior"]["alpha"] > 0


def test_rcp_bert_train_samples_is_read_as_the_verdict_reads_it(run_cli: Any, tmp_path: Path) -> None:
    """v2.0 Baidu BERT: logs whose evals say epoch_num 1, in a tree whose package_checker_params asks for
    rcp_bert_train_samples: the RCP check reads train samples (2.6M, above the window), and so does RUN009."""
    specs = [RunSpec(seed=100 + i, start_ms=1_634_000_000_000 + i * DAY, evals=1, ruleset="2.0.0",
                     extra=[("train_samples", 2_600_000 + 20_000 * i, {})]) for i in range(3)]
    org = write_org(tmp_path / "org", {"pod16": system()}, {("pod16", "bert"): specs})
    (org / "package_checker_params").write_text("rcp_bert_train_samples\n", encoding="utf-8")
    found = _risk(run_cli, "check", "--ruleset", "2.0.0", org)
    assert "rcp_bert_train_samples" in found["message"] and found["risk"]["p_fail"] < 0.05
    (org / "package_checker_params").write_text("", encoding="utf-8")
    without = _risk(run_cli, "check", "--ruleset", "2.0.0", org)  # read at epoch_num 1: far below the window
    assert without["risk"]["p_fail"] > 0.9


# --- RUN009 as data ---------------------------------------------------------------------------------------------


def test_advise_gives_the_risk_as_data_on_the_set(run_cli: Any, tmp_path: Path) -> None:
    folder = _raw(tmp_path / "runs", [_run("resnet", "1.1.0", i, None, evals=35) for i in range(3)])
    found = _risk(run_cli, "advise", "--ruleset", "1.1.0", *sorted(folder.iterdir()))
    assert found["path"] == str(folder)  # the set, not its first log
    data = found["risk"]
    assert data["model"] == risk.MODEL and data["seed"] == risk.SEED and data["unit"] == "epochs"
    assert data["p_fail"] == pytest.approx(data["p_insufficient"] + data["p_fast"])
    assert data["score"]["p10"] <= data["score"]["median"] <= data["score"]["p90"]
    assert "Nothing to do" in found["hint"] or data["p_fail"] >= 0.01


def test_a_placeholder_platform_does_not_split_the_folder(run_cli: Any, tmp_path: Path) -> None:
    texts = [_run("resnet", "1.1.0", i, None, evals=35, platform=p)
             for i, p in enumerate(("pod16", "1xSUBMISSION_PLATFORM_PLACEHOLDER", "pod16"))]
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", "--format", "json", _raw(tmp_path / "runs", texts))
    assert code in (0, 1)
    found = _findings(out)
    (projection,) = [f for f in found if f["code"] == "RUN006"]
    assert "1 run(s) log platform '1xSUBMISSION_PLATFORM_PLACEHOLDER', a placeholder: counted with pod16" in (
        projection["message"])
    assert [f["risk"]["runs"] for f in found if f["code"] == "RUN009"] == [3]


# --- issue 54, cases 11 and 12: no number in a run set makes an internal error ----------------------------------


@pytest.mark.parametrize("epoch", ["9" * 4001, "5e-324", "0", "1e308"])
def test_no_number_in_a_run_set_is_an_internal_error(run_cli: Any, tmp_path: Path, epoch: str) -> None:
    """Case 11: a 4,001-digit epoch_num (math.isfinite overflowed in the risk's run reader); case 12: 5e-324 in
    fewer than 10 runs (a division by zero in the risk's draws); and a zero, a huge float: check, advise and
    report give findings, never exit 3."""
    texts = [_run("resnet", "1.1.0", i, epoch, evals=35) for i in range(3)]
    folder = _raw(tmp_path / "raw", texts)
    specs = [RunSpec(seed=100 + i, start_ms=1_634_000_000_000 + i * DAY, evals=35, ruleset="1.1.0",
                     hyperparameters={"global_batch_size": 3264}) for i in range(3)]
    org = write_org(tmp_path / "org", {"pod16": system()}, {("pod16", "resnet"): specs})
    for log in (org / "results" / "pod16" / "resnet").iterdir():
        log.write_text(_EPOCH.sub(lambda m: m.group(1) + epoch, log.read_text(encoding="utf-8")), encoding="utf-8")
    for argv in (["check", folder], ["advise", *sorted(folder.iterdir())], ["check", org], ["report", org]):
        code, _, err = run_cli(argv[0], "--ruleset", "1.1.0", *argv[1:])
        assert code in (0, 1, 2), (argv[0], err)


def test_the_risk_takes_any_number_without_raising() -> None:
    from mlsubmit.checker.upstream.rcp_adapted import window

    win = window("1.1.0", "resnet", 3264)
    assert win is not None
    for values in ([0.0, 0.0], [5e-324, 5e-324, 5e-324], [1e308, 1e308], [35.0, 1e-320], [35.0]):
        for minutes in (None, 0.0, 1e308, 5e-324):
            found = risk.assess([risk.Run(v, minutes) for v in values], win, "resnet", draws=500)
            assert found is not None and 0.0 <= found.p_fail <= 1.0
