"""A folder of raw job output is gated as the run sets it holds, as `package` and a tree judge them: a run's own
error is a warning, and the set's olympic tolerance decides the exit (TREE008 accepts one non-compliant run in a
BERT set of 10, TREE007 fails two)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fixtures.demo import write_runs

Cli = Callable[..., tuple[int, str, str]]


def _findings(out: str) -> list[tuple[str, str, str]]:
    report = json.loads(out)
    found = [*report["findings"], *(f for file in report["files"] for f in file["findings"])]
    return sorted((f["code"], f["severity"], Path(f["path"]).name) for f in found)


def test_one_run_that_did_not_converge_is_what_the_set_tolerates(tmp_path: Path, run_cli: Cli) -> None:
    runs = tmp_path / "runs"
    write_runs(runs, "bert", "IPU-POD16", 6, non_converged=[2])
    ledger = tmp_path / "ledger.db"
    for batch in (6, 10):  # the first batch, then the rest: the same verdict on every batch, with the ledger
        write_runs(runs, "bert", "IPU-POD16", batch, non_converged=[2])
        code, out, err = run_cli("check", "--ruleset", "1.1.0", "--ledger", ledger, runs, "--format", "json")
        found = _findings(out)
        assert code == 0, (batch, found, err)
        assert ("RULE004", "warning", "job_02.out") in found and ("TREE008", "warning", "runs") in found
        assert not [f for f in found if f[1] == "error" or f[0] == "POL001"], found  # the set's verdict, not a note


def test_two_runs_that_did_not_converge_fail_the_set(tmp_path: Path, run_cli: Cli) -> None:
    runs = tmp_path / "runs"
    write_runs(runs, "bert", "IPU-POD16", 10, non_converged=[2, 5])
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", runs, "--format", "json")
    found = _findings(out)
    assert code == 1 and ("TREE007", "error", "runs") in found
    assert [f for f in found if f[0] == "RULE004"] == [("RULE004", "warning", "job_02.out"),
                                                       ("RULE004", "warning", "job_05.out")]  # fmt: skip


def test_a_run_given_alone_keeps_its_error(tmp_path: Path, run_cli: Cli) -> None:
    """Out of its folder a run has no set to judge it: its error stands, with what its folder would make of it."""
    job = write_runs(tmp_path / "runs", "bert", "IPU-POD16", 3, non_converged=[2])[2]
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", job, "--format", "json")
    assert code == 1 and ("RULE004", "error", "job_02.out") in _findings(out)
    assert ("POL001", "info", "job_02.out") in _findings(out)
