"""The commands on a PostgreSQL run ledger, against a real server of the tests' own (tests/fixtures/pgserver.py):
`check --ledger URL`, `runs show`, `package` from a ledger URL (RUN008 for a changed run, as from a file), `runs
export`/`runs import` between SQLite, PostgreSQL and JSON lines (idempotent, verified by digests), and
`runs show` on 100,000 rows in bounded memory. A password in the URL is never written anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.demo import BERT_SYSTEM, ledger_config_text, write_example, write_runs
from mlsubmit.checker.base import ledger, ledger_rows

from mlsubmit.core.support.ledger_url import location

RULESET = "1.1.0"
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def url(pg_server: Any, run_cli: Cli) -> str:
    """A new database with an empty ledger, reached over TCP with a password (so every output can be searched
    for it)."""
    db = pg_server.database()
    assert run_cli("runs", "init", "--ledger", pg_server.url(db))[0] == 0
    made: str = pg_server.tcp_url(db)
    return made


def _config(root: Path, where: str) -> Path:
    config = root / "ledger.toml"
    config.write_text(ledger_config_text(where, RULESET), encoding="utf-8")
    return config


def test_check_records_into_the_server_and_package_takes_the_set_from_it(
        pg_server: Any, url: str, tmp_path: Path, run_cli: Cli) -> None:
    ex = write_example(tmp_path)
    runs = tmp_path / "runs" / "pod16-bert"
    code, _, err = run_cli("check", "--ruleset", RULESET, "--system", BERT_SYSTEM, "--ledger", url, runs)
    assert code == 0 and "10 new of 10 run log(s) read" in err
    assert run_cli("runs", "show", "--ledger", url)[1].startswith("10 ledger entries, 1 run set(s)")
    assert run_cli("package", _config(tmp_path, url))[0] == 0
    manifest_text = (tmp_path / "submission" / "manifest.json").read_text(encoding="utf-8")
    (sel,) = json.loads(manifest_text)["selections"]
    assert sel["candidates"] == 10 and {r["source"] for r in sel["run_set"]} == {
        f"runs/pod16-bert/{p.name}" for p in ex.bert_runs}
    assert sel["ledger"] == str(location(url)) and ":***@" in sel["ledger"]  # named, without its password
    ex.bert_runs[5].write_bytes(ex.bert_runs[5].read_bytes() + b"job restarted\n")  # a rerun wrote over it
    code, out, err = run_cli("package", _config(tmp_path, url), "--color", "never")
    assert code == 1 and "RUN008" in out and "changed since postgresql://mlsubmit_test:***@" in out
    assert pg_server.password not in manifest_text + out + err


def test_the_same_check_into_a_file_and_the_server_shows_the_same(url: str, tmp_path: Path, run_cli: Cli,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsubmit.checker.tree import runset

    # both checks first see the runs at once
    monkeypatch.setattr(runset, "utc_now_text", lambda: "2026-11-28T12:00:00Z")
    write_runs(tmp_path / "runs", "bert", BERT_SYSTEM, 12, minutes=[20 + k for k in range(12)])
    for where in (url, str(tmp_path / "ledger.db")):
        assert run_cli("check", "--ruleset", RULESET, "--jobs", "1", "--ledger", where, "-o", tmp_path / "r.txt",
                       tmp_path / "runs")[0] == 0
    for fmt in ("text", "json", "csv", "html"):
        shown = [run_cli("runs", "show", "--ledger", where, "--format", fmt)
                 for where in (url, str(tmp_path / "ledger.db"))]
        assert shown[0] == shown[1] and shown[0][0] == 0, fmt


def test_runs_init_is_for_a_url_only(tmp_path: Path, run_cli: Cli) -> None:
    code, _, err = run_cli("runs", "init", "--ledger", tmp_path / "ledger.db")
    assert code == 2 and "is made by its first check --ledger" in err and not (tmp_path / "ledger.db").exists()


def _entry(k: int) -> ledger.Entry:
    import hashlib

    return ledger.Entry(
        sha256=hashlib.sha256(str(k).encode()).hexdigest(), path=f"/runs/job-{k:06d}.out",
        shown=f"runs/job-{k:06d}.out", system=f"pod{k % 3}", benchmark=("bert", "resnet")[k % 2], division="closed",
        ruleset=RULESET, run_start_ms=1.6e12 + k * 1000.0, seed=k, verdict="pass", minutes=20.0 + k % 7,
        converged=True, to_converge=2.6e6, unit="samples", rcp_mean=2.7e6, rcp_fastest=2.5e6,
        first_seen="2026-11-27T08:00:00Z")


def test_export_and_import_round_trip_idempotent_and_verified(pg_server: Any, url: str, tmp_path: Path,
                                                              run_cli: Cli) -> None:
    first, back = tmp_path / "first.db", tmp_path / "back.db"
    ledger_rows.record(first, [_entry(k) for k in range(300)])
    for _ in range(2):  # a second copy adds nothing and is verified the same
        code, _, err = run_cli("runs", "export", "--ledger", first, "--to", url)
        assert code == 0 and "verified: every one is in it with the same values" in err
    assert "300 entries of" in err and "0 added" in err and "300 already there" in err
    archive = tmp_path / "round.jsonl"
    assert run_cli("runs", "export", "--ledger", url, "-o", archive)[0] == 0
    for _ in range(2):
        code, _, err = run_cli("runs", "import", "--ledger", back, archive)
        assert code == 0 and "verified" in err
    assert ledger_rows.read(back) == ledger_rows.read(first) == ledger_rows.read(location(url))
    assert pg_server.password not in err + archive.read_text(encoding="utf-8")
    # an archive cut short or changed is refused whole: nothing imported
    lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
    cut, changed = tmp_path / "cut.jsonl", tmp_path / "changed.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")
    changed.write_text("".join(lines).replace('"seed": 7,', '"seed": 8,'), encoding="utf-8")
    for bad in (cut, changed):
        code, _, err = run_cli("runs", "import", "--ledger", tmp_path / "none.db", bad)
        assert code == 2 and "nothing imported" in err and not (tmp_path / "none.db").exists()
    # a destination that holds a key with other values keeps them, and says so
    other = tmp_path / "other.db"
    from dataclasses import replace

    ledger_rows.record(other, [replace(_entry(0), first_seen="2025-01-01T00:00:00Z")])
    code, _, err = run_cli("runs", "import", "--ledger", other, archive)
    assert code == 1 and f"holds {_entry(0).sha256[:12]} /runs/job-000000.out with other values" in err


# the command, then its own peak memory: /proc's VmHWM counts from the exec (getrusage's maxrss would count the
# pytest process it was forked from)
_MEASURED = ("import sys\nfrom mlsubmit.cli import main\ncode = main(sys.argv[1:])\n"
             "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0], file=sys.stderr)\n"
             "sys.exit(code)")


@pytest.mark.slow
def test_runs_show_on_100000_rows_from_the_server_in_bounded_memory(url: str, tmp_path: Path) -> None:
    """The figures beside SQLite's: the same bytes, in seconds, each in well under 200 MB (the output is 11 MB)."""
    entries = [_entry(k) for k in range(100_000)]
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, entries)
    ledger_rows.record(location(url), entries)
    del entries
    figures = {}
    for name, where in (("sqlite", str(db)), ("postgresql", url)):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", _MEASURED, "runs", "show", "--ledger", where, "-o",
                               str(tmp_path / f"{name}.txt")], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        figures[name] = (time.monotonic() - started, int(done.stderr.split("VmHWM:")[1].split()[0]))
    assert (tmp_path / "sqlite.txt").read_bytes() == (tmp_path / "postgresql.txt").read_bytes()
    for seconds, peak_kb in figures.values():
        assert seconds < 180 and peak_kb < 200_000, figures
