"""`report` takes the RCP verdict the check gave in the same process instead of judging the folder again
(issue 28), and only for exactly the same inputs: other runs, another order or a bypass are judged afresh."""

from __future__ import annotations

import pytest
from fixtures.rcpfix import run_lines
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rcp import verdict as rcp


def rcp_runs(epochs: list[int], tag: str) -> list[LogFacts]:
    """Closed ResNet-50 runs at batch 3264 converging at these epochs, as the RCP reader's kept lines."""
    return [LogFacts(path=f"{tag}/result_{i}.txt", rcp_lines=tuple(run_lines(e))) for i, e in enumerate(epochs)]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = rcp.evaluate

    def evaluate(benchmark: str, ruleset: str, runs: list[LogFacts], **kw: object) -> rcp.RcpResult:
        calls.append(runs[0].path)
        return real(benchmark, ruleset, runs, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(rcp, "evaluate", evaluate)
    return calls


def test_the_checks_verdict_is_reused(counted: list[str]) -> None:
    runs = rcp_runs([38, 37, 39, 38, 40], "reused")
    checked = rcp.evaluate_cached("resnet", "1.0.0", runs, bypass=False, closed=True, cache_dir=None)
    assert rcp.rcp_verdict("resnet", "1.0.0", list(runs)) is checked
    assert len(counted) == 1
    assert checked.status == "pass"


def test_other_inputs_are_judged_afresh(counted: list[str]) -> None:
    runs = rcp_runs([20, 21, 19, 20, 22], "afresh")
    checked = rcp.evaluate_cached("resnet", "1.0.0", runs, bypass=False, closed=True, cache_dir=None)
    assert checked.status == "fail"
    assert rcp.rcp_verdict("resnet", "1.0.0", runs, bypass=True).status == "bypassed"
    reordered = rcp.rcp_verdict("resnet", "1.0.0", runs[::-1])  # another order: judged again (the runs come in it)
    assert reordered.status == checked.status and reordered.runs == checked.runs[::-1]
    assert rcp.rcp_verdict("resnet", "1.0.0", runs[:4]).runs != checked.runs
    assert len(counted) == 4
