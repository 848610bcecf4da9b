"""The run ledger: append-only, concurrent writers lose nothing, a damaged or foreign file is exit 2 and untouched.

Every test that does not open the file itself runs against both backends (`where`): an SQLite file and a
PostgreSQL database of a real server of the tests' own (tests/fixtures/pgserver.py; skipped, saying why, without
PostgreSQL's binaries or psycopg)."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest
from fixtures.demo import write_runs
from mlsubmit.checker.base import ledger_rows

from mlsubmit.cli import main
from mlsubmit.core.support.ledger_url import location

RULESET = "1.1.0"
SYSTEM = "ipu-pod16-POPART-closed"


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new ledger's --ledger: an SQLite file to be made, or a PostgreSQL database with the ledger's tables."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    server = request.getfixturevalue("pg_server")
    url: str = server.url(server.database())
    assert main(["runs", "init", "--ledger", url]) == 0
    return url


def _check(db: Path | str, folder: Path) -> int:
    return main(["check", "--ruleset", RULESET, "--jobs", "1", "--ledger", str(db), "--format", "json",
                 "-o", str(folder.parent / f"{folder.name}.json"), str(folder)])


def _rows(db: Path | str) -> list[tuple[object, ...]]:
    query = "SELECT path, sha256, system, benchmark, division, verdict FROM runs ORDER BY id"
    if str(db).startswith("postgresql://"):
        import psycopg

        with psycopg.connect(str(db)) as pg:
            return [tuple(row) for row in pg.execute(query).fetchall()]
    conn = sqlite3.connect(db)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def test_every_log_read_is_recorded_once(tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> None:
    db = location(where)
    write_runs(tmp_path / "runs", "bert", SYSTEM, 3, gzip_index=1)
    assert _check(where, tmp_path / "runs") == 0
    assert _check(where, tmp_path / "runs") == 0  # the same contents again: no new entries
    entries = ledger_rows.read(db)
    assert len(entries) == 3
    first = entries[0]
    assert (first.system, first.benchmark, first.division, first.verdict) == (SYSTEM, "bert", "closed", "pass")
    assert first.seed == 1000 and first.converged and first.minutes == 20.0 and first.unit == "samples"
    assert first.to_converge == 2_640_000 and first.rcp_mean is not None and first.rcp_fastest is not None
    assert "0 new of 3" in capsys.readouterr().err


def test_a_file_replaced_under_the_same_path_keeps_both_entries(tmp_path: Path, where: str) -> None:
    db = location(where)
    paths = write_runs(tmp_path / "runs", "bert", SYSTEM, 2)
    _check(where, tmp_path / "runs")
    old = ledger_rows.read(db)
    write_runs(tmp_path / "runs", "bert", SYSTEM, 1, start_ms=1_700_000_000_000)  # job_00.out written over
    _check(where, tmp_path / "runs")
    entries = ledger_rows.read(db)
    assert len(entries) == 3 and entries[:2] == old  # the old entries are unchanged
    at_path = [e for e in entries if e.path == str(paths[0].resolve())]
    assert len(at_path) == 2 and at_path[0].sha256 != at_path[1].sha256


def _one(args: tuple[str, str]) -> int:
    return _check(args[0], Path(args[1]))


def test_four_concurrent_checks_lose_nothing(tmp_path: Path, where: str) -> None:
    db = where
    folders = []
    for k in range(4):
        write_runs(tmp_path / f"runs{k}", "bert", SYSTEM, 3, start_ms=1_630_000_000_000 + k * 86_400_000)
        folders.append(str(tmp_path / f"runs{k}"))
    with multiprocessing.get_context("fork").Pool(4) as pool:  # all four create and write the same new ledger
        codes = pool.map(_one, [(where, f) for f in folders])
    assert codes == [0, 0, 0, 0]
    rows = _rows(db)
    assert len(rows) == 12 and len({r[0] for r in rows}) == 12
    write_runs(tmp_path / "runs4", "bert", SYSTEM, 3, start_ms=1_640_000_000_000)
    with multiprocessing.get_context("fork").Pool(4) as pool:  # the same runs at once, and one new folder
        codes = pool.map(_one, [(where, folders[0])] * 3 + [(where, str(tmp_path / "runs4"))])
    assert codes == [0, 0, 0, 0]
    assert len(_rows(db)) == 15 and _rows(db)[:12] == rows


def _damaged_cases(tmp_path: Path) -> dict[str, Path]:
    cases = {}
    text = tmp_path / "text.db"
    text.write_bytes(b"not a database at all\n" * 10)
    cases["text"] = text
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE runs (x)")
    conn.commit()
    conn.close()
    cases["foreign"] = foreign
    db = tmp_path / "ours.db"
    write_runs(tmp_path / "runs", "bert", SYSTEM, 1)
    _check(db, tmp_path / "runs")
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(db.read_bytes()[:50])
    cases["truncated"] = truncated
    altered = tmp_path / "altered.db"
    altered.write_bytes(db.read_bytes())
    conn = sqlite3.connect(altered)
    conn.execute("CREATE TABLE extra (x)")
    conn.commit()
    conn.close()
    cases["altered"] = altered
    return cases


def test_a_damaged_or_foreign_ledger_is_exit_2_and_left_as_it_is(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for name, path in _damaged_cases(tmp_path).items():
        before = path.read_bytes()
        assert _check(path, tmp_path / "runs") == 2, name
        assert main(["runs", "show", "--ledger", str(path)]) == 2, name
        assert path.read_bytes() == before, name
        assert "it is left as it is" in capsys.readouterr().err


def test_a_wrong_shape_row_is_left_out_never_an_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    write_runs(tmp_path / "runs", "bert", SYSTEM, 1)
    _check(db, tmp_path / "runs")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET verdict = 'maybe', minutes = 'NaN'")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert main(["runs", "show", "--ledger", str(db), "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["runs"] == [] and "row 1: " in err and ("verdict" in err or "minutes" in err)


def test_runs_show_json_lists_every_entry_and_the_sets(tmp_path: Path, where: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = location(where)
    write_runs(tmp_path / "runs", "bert", SYSTEM, 12, minutes=[20 + k for k in range(12)])
    _check(where, tmp_path / "runs")
    capsys.readouterr()
    assert main(["runs", "show", "--ledger", where, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["runs"]) == 12 and {r["sha256"] for r in shown["runs"]} == {e.sha256 for e in ledger_rows.read(db)}
    (one,) = shown["sets"]
    assert one["median_window"] == {"first": 1, "last": 10, "olympic_minutes": 25.5, "valid": True}
    assert len(one["windows"]) == 3
    assert main(["runs", "show", "--ledger", where, "--format", "html", "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<svg" in page and "default-src 'none'" in page and "<script" not in page


def test_runs_show_on_a_missing_ledger_is_exit_2(tmp_path: Path) -> None:
    assert main(["runs", "show", "--ledger", str(tmp_path / "none.db")]) == 2
    assert not (tmp_path / "none.db").exists()


def test_hostile_names_are_inert_in_every_format(tmp_path: Path, where: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = write_runs(tmp_path / "runs", "bert", SYSTEM, 1)
    hostile = path.with_name("job-<script>alert(1)<\\script>\x1b[31m.out")
    path.rename(hostile)
    _check(where, tmp_path / "runs")
    assert main(["runs", "show", "--ledger", where, "--format", "html", "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "\x1b" not in page
    capsys.readouterr()
    assert main(["runs", "show", "--ledger", where]) == 0
    assert "\x1b" not in capsys.readouterr().out


def test_a_fifo_or_folder_as_ledger_is_exit_2_without_a_hang(tmp_path: Path) -> None:
    import os

    write_runs(tmp_path / "runs", "bert", SYSTEM, 1)
    os.mkfifo(tmp_path / "fifo.db")
    (tmp_path / "folder.db").mkdir()
    for name in ("fifo.db", "folder.db"):
        assert _check(tmp_path / name, tmp_path / "runs") == 2
        assert main(["runs", "show", "--ledger", str(tmp_path / name)]) == 2
    assert (tmp_path / "folder.db").is_dir() and not any((tmp_path / "folder.db").iterdir())
