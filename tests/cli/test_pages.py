"""What the pages show (issue 57 item 7): runs.html names a run that did not converge, and GitHub annotations reach
every file."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fixtures.demo import write_runs

Cli = Callable[..., tuple[int, str, str]]


def test_runs_html_says_a_run_did_not_converge(tmp_path: Path, run_cli: Cli) -> None:
    runs = tmp_path / "runs"
    write_runs(runs, "bert", "IPU-POD16", 10, non_converged=[2])
    ledger = tmp_path / "ledger.db"
    assert run_cli("check", "--ruleset", "1.1.0", "--ledger", ledger, runs)[0] == 0
    page = tmp_path / "runs.html"
    code, _, err = run_cli("runs", "show", "--ledger", ledger, "--format", "html", "-o", page)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert ">None<" not in html
    row = re.search(r"<tr[^>]*><td>2</td>(.*?)</tr>", html)
    assert row and "<td>did not converge</td><td>fail</td>" in row.group(1) and "<td>22.00 min</td>" in row.group(1)


def test_github_annotations_reach_every_file(tmp_path: Path, run_cli: Cli) -> None:
    """Two logs with the same RULE004 get an annotation each (GitHub shows one on the file it names only)."""
    from fixtures.synth import RunSpec, write_run

    logs = [write_run(tmp_path / "uploads" / f"result_{i}.txt", RunSpec(seed=i + 1, converge=False)) for i in (0, 1)]
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", *logs, "--format", "github")
    rule004 = [line for line in out.splitlines() if line.startswith("::error") and "RULE004" in line]
    assert code == 1 and len(rule004) == 2, out
    assert [re.search(r"file=([^,]+),", line).group(1) for line in rule004] == [str(p) for p in logs]  # type: ignore[union-attr]
    assert not [line for line in rule004 if "(2×)" in line]
