"""The RCP advice on every closed results folder of the real corpus: one RCP finding per folder and batch size,
naming the same RCPs as the reference RCP checker's lookup at that batch size."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp import prediction as ra

pytestmark = pytest.mark.corpus


def test_every_closed_folder_gets_the_reference_checkers_rcps(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlperf_logging.rcp_checker import rcp_checker as rc

    monkeypatch.setitem(rc.submission_runs["training"], "dlrm", rc.submission_runs["training"].get("dlrm", 5))
    folders = 0
    checkers: dict[tuple[str, str], Any] = {}  # the reference's RCP_Checker, built once per round and benchmark
    for folder in sorted(p for p in corpus.glob("training_results_v*/*/results/*/*") if p.is_dir()):
        logs = [read_log(p) for p in sorted(folder.glob("result_*.txt"))]
        division = logs[0].first("submission_division") if logs else None
        if division is None or division.payload != "closed":
            continue
        m = re.search(r"training_results_v(\d+\.\d+)", str(folder))
        assert m is not None
        ruleset = f"{m.group(1)}.0"
        found = ra.advise_runs(logs, ruleset)
        heads = [f for f in found if f.code == "HP006"]
        assert len(heads) == 1, (folder, [f.message for f in heads])
        assert all(f.severity.value == "info" and f.path == logs[0].path for f in found)
        folders += 1
        bench = logs[0].first("submission_benchmark").payload  # type: ignore[union-attr]
        gbs = [r for r in logs[0].records if r.key == "global_batch_size"][-1].payload
        if (ruleset, bench) not in checkers:
            checkers[ruleset, bench] = rc.RCP_Checker("training", ruleset, bench, False)
        _same_rcps(checkers[ruleset, bench], gbs, heads[0].message)
    assert folders >= 70


def _same_rcps(ref: Any, gbs: Any, message: str) -> None:
    found = ref._find_rcp(gbs, "pruned_rcps")
    low, high = ref._find_top_min_rcp(gbs, "pruned_rcps"), ref._find_bottom_max_rcp(gbs, "pruned_rcps")
    names = {rec["BS"]: name for name, rec in ref.pruned_rcp_data.items()}
    if found is not None:
        assert f"RCP found: {names[found['BS']]} " in message
    elif low is not None and high is not None:
        assert f"interpolates between {names[low['BS']]} " in message and f"and {names[high['BS']]} " in message
    elif high is not None:
        assert f"compares with {names[ref._find_min_rcp('pruned_rcps')['BS']]} " in message
    else:
        assert "larger than every RCP" in message
