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
