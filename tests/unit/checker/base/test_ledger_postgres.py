"""The run ledger's PostgreSQL backend against a real server of the tests' own (tests/fixtures/pgserver.py): the
same rows and the same `runs show` bytes as the SQLite file, append-only and exact digests enforced by the server,
the schema checked before use, concurrent writers killed and a server restarted without a run lost or doubled, a
lost connection leaving nothing half-written, and a password never shown."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mlsubmit.checker.base import ledger, ledger_pg, ledger_rows

from mlsubmit.cli import main
from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.ledger_url import LedgerUrl, location, without_password

SYSTEM = "ipu-pod16-POPART-closed"


def _entry(k: int = 0, **changes: object) -> ledger.Entry:
    entry = ledger.Entry(
        sha256=hashlib.sha256(str(k).encode()).hexdigest(), path=f"/runs/job-{k:06d}.out",
        shown=f"runs/job-{k:06d}.out", system=f"pod{k % 3}", benchmark=("bert", "resnet")[k % 2],
        division=("closed", "open")[k % 5 == 0], ruleset="1.1.0", run_start_ms=1.6e12 + k * 1000.0, seed=k,
        verdict=("pass", "fail")[k % 11 == 0], minutes=20.0 + k % 7, converged=k % 13 != 0, to_converge=2.6e6,
        unit="samples", rcp_mean=2.7e6, rcp_fastest=2.5e6, first_seen=f"2026-11-{1 + k % 27:02d}T08:00:00Z")
    return replace(entry, **changes)  # type: ignore[arg-type]


@pytest.fixture
def url(pg_server: Any) -> str:
    """A new database holding an empty ledger (made by `runs init`)."""
    made: str = pg_server.url(pg_server.database())
    assert main(["runs", "init", "--ledger", made]) == 0
    return made


def _show(where: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["runs", "show", "--ledger", where, "--format", fmt])
    out, err = capsys.readouterr()
    return code, out, err


def _awkward() -> list[ledger.Entry]:
    """Entries that test the order and the values: several sets, ties, unknown starts, a content at two paths,
    a NUL, a lone surrogate, a long value, names that sort differently by locale than by bytes."""
    entries = [_entry(k) for k in range(60)]
    entries += [_entry(3, path="/elsewhere/job.out", shown="elsewhere/job.out"),  # one content at two paths
                _entry(100, run_start_ms=None), _entry(101, run_start_ms=None, shown="a.out"),
                _entry(102, system="pod\x00nul", shown="job-\udcff.out"), _entry(103, system="Zeta"),
                _entry(104, system="alpha"), _entry(105, system="Ä"), _entry(106, system="p" * 20_000),
                _entry(107, seed=None, minutes=None, to_converge=None, converged=False),
                _entry(108, run_start_ms=1e300)]
    return entries


def test_runs_show_is_the_same_bytes_from_either_backend(url: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    entries = _awkward()
    assert ledger_rows.record(db, entries) == len(entries)
    assert ledger_rows.record(location(url), entries) == len(entries)
    assert ledger_rows.record(location(url), entries) == 0  # every one already there
    assert ledger_rows.read(location(url)) == ledger_rows.read(db)
    for fmt in ("text", "json", "csv", "html"):
        from_file, from_server = _show(str(db), fmt, capsys), _show(url, fmt, capsys)
        assert from_server == from_file and from_file[0] == 0, fmt
    assert "pod\\x00nul" in _show(url, "text", capsys)[1]


def _as_role(pg_server: Any, url: str, role: str, grants: str) -> str:
    db = url.split("@/", 1)[1].split("?", 1)[0]
    pg_server.sql(f"CREATE ROLE {role} LOGIN", db=db)
    pg_server.sql(grants, db=db)
    return pg_server.url(db, user=role)


def test_the_server_keeps_it_append_only_for_every_role(pg_server: Any, url: str) -> None:
    import psycopg

    ledger_rows.record(location(url), [_entry(k) for k in range(3)])
    db = url.split("@/", 1)[1].split("?", 1)[0]
    for statement in ("UPDATE runs SET verdict = 'pass'", "DELETE FROM runs", "TRUNCATE runs",
                      "UPDATE mlsubmit_ledger SET version = 2"):  # even the owner (a superuser here)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            pg_server.sql(statement, db=db)
    # the docs' roles: CI inserts and reads, a reader only reads
    ci = _as_role(pg_server, url, "ledger_ci", "GRANT SELECT, INSERT ON runs TO ledger_ci; "
                  "GRANT SELECT ON mlsubmit_ledger TO ledger_ci")
    assert ledger_rows.record(location(ci), [_entry(k) for k in range(5)]) == 2
    with psycopg.connect(ci) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("DELETE FROM runs")
    reader = _as_role(pg_server, url, "ledger_reader", "GRANT SELECT ON runs, mlsubmit_ledger TO ledger_reader")
    assert len(ledger_rows.read(location(reader))) == 5
    with pytest.raises(FatalError, match=r"cannot add the runs: permission denied.*none of them was added"):
        ledger_rows.record(location(reader), [_entry(9)])
    with pytest.raises(FatalError, match="this role may read the ledger but not add runs to it"):
        ledger_pg.require_ready(location(reader))
    ledger_pg.require_ready(location(ci))
    assert main(["runs", "init", "--ledger", ci]) == 0  # already a ledger: left as it is
    assert len(ledger_rows.read(location(url))) == 5


def test_a_digest_that_is_not_exactly_64_hex_digits_is_refused_whole(url: str) -> None:
    digest = _entry().sha256
    for bad in (digest + "\n", digest.upper(), digest[:-1]):
        with pytest.raises(FatalError, match=r"sha256_check.*none of them was added"):
            ledger_rows.record(location(url), [_entry(1), _entry(sha256=bad)])
    assert ledger_rows.read(location(url)) == []


def test_a_database_that_is_not_our_ledger_is_exit_2_and_left_as_it_is(pg_server: Any, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    cases = {}
    empty = pg_server.database()
    cases[empty] = "no run ledger in this database"
    foreign = pg_server.database()
    pg_server.sql("CREATE TABLE mlsubmit_ledger (application text, version integer)",
                  "INSERT INTO mlsubmit_ledger VALUES ('something else', 1)", db=foreign)
    cases[foreign] = "not a run ledger's"
    newer, altered = pg_server.database(), pg_server.database()
    for name in (newer, altered):
        assert main(["runs", "init", "--ledger", pg_server.url(name)]) == 0
    pg_server.sql("ALTER TABLE mlsubmit_ledger DISABLE TRIGGER append_only_format",
                  "UPDATE mlsubmit_ledger SET version = 2", db=newer)
    cases[newer] = "a run ledger of format 2; this mlsubmit uses format 1"
    pg_server.sql("ALTER TABLE runs ADD COLUMN extra text", db=altered)
    cases[altered] = "its runs table is not a ledger's"
    from fixtures.demo import write_runs

    write_runs(tmp_path / "runs", "bert", SYSTEM, 1)
    for name, why in cases.items():
        where = pg_server.url(name)
        before = pg_server.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", db=name)
        for args in (["runs", "show", "--ledger", where],
                     ["check", "--ruleset", "1.1.0", "--jobs", "1", "--ledger", where, "-o", str(tmp_path / "r.txt"),
                      str(tmp_path / "runs")]):
            capsys.readouterr()
            assert main(args) == 2, (name, args)
            assert why in capsys.readouterr().err, name
        assert pg_server.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", db=name) == before
    capsys.readouterr()
    assert main(["runs", "init", "--ledger", pg_server.url(newer)]) == 2  # a newer format is never written to
    assert "format 2" in capsys.readouterr().err


def test_without_the_extra_a_url_is_exit_2_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError
    assert main(["runs", "show", "--ledger", "postgresql://ci:hunter2@db.example/ledger"]) == 2
    err = capsys.readouterr().err
    assert "[postgres]' (psycopg 3)" in err and "hunter2" not in err


def test_a_password_is_never_shown(pg_server: Any, url: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = url.split("@/", 1)[1].split("?", 1)[0]
    secret = pg_server.password
    good, bad = pg_server.tcp_url(db), pg_server.tcp_url(db, password="wrong-" + secret)
    assert secret not in str(location(good)) and secret not in repr(location(good))
    assert str(location(good)).startswith("postgresql://mlsubmit_test:***@127.0.0.1:")
    assert secret not in without_password(f"postgresql:///{db}?password={secret}&sslmode=require")
    assert "sslmode=require" in without_password(f"postgresql:///{db}?password={secret}&sslmode=require")
    from fixtures.demo import write_runs

    write_runs(tmp_path / "runs", "bert", SYSTEM, 2)
    capsys.readouterr()
    assert main(["check", "--ruleset", "1.1.0", "--jobs", "1", "--ledger", good, "--format", "json", "-o",
                 str(tmp_path / "r.json"), str(tmp_path / "runs")]) == 0
    assert main(["runs", "show", "--ledger", good, "--format", "json", "-o", str(tmp_path / "s.json")]) == 0
    assert main(["runs", "show", "--ledger", bad]) == 2
    assert main(["runs", "show", "--ledger", good.replace("127.0.0.1", "127.0.0.1:1")]) == 2  # no such port
    err = capsys.readouterr().err
    assert "password authentication failed" in err and "2 new of 2" in err
    written = (tmp_path / "r.json").read_text(encoding="utf-8") + (tmp_path / "s.json").read_text(encoding="utf-8")
    assert secret not in err + written and len(json.loads((tmp_path / "s.json").read_text())["runs"]) == 2


def _stop_mid_write(pg_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server stops (immediate: its clients are cut off) after the insert, before the commit."""
    import psycopg

    original = psycopg.Cursor.executemany

    def cut(self: Any, *args: Any, **kwargs: Any) -> Any:
        original(self, *args, **kwargs)
        pg_server.stop("immediate")

    monkeypatch.setattr(psycopg.Cursor, "executemany", cut)
    monkeypatch.setattr(ledger_pg, "ATTEMPTS", 2)
    monkeypatch.setattr(ledger_pg, "FIRST_WAIT_S", 0.1)


def test_a_connection_lost_mid_write_leaves_nothing_and_is_exit_2(pg_server: Any, url: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from fixtures.demo import write_runs

    write_runs(tmp_path / "runs", "bert", SYSTEM, 3)
    _stop_mid_write(pg_server, monkeypatch)
    try:
        capsys.readouterr()
        assert main(["check", "--ruleset", "1.1.0", "--jobs", "1", "--ledger", url, "-o", str(tmp_path / "r.txt"),
                     str(tmp_path / "runs")]) == 2
        err = capsys.readouterr().err
        assert "cannot add the runs" in err and "all of these runs or none" in err and "Traceback" not in err
    finally:
        monkeypatch.undo()
        pg_server.start()
    assert ledger_rows.read(location(url)) == []


def test_a_server_restarted_between_tries_is_waited_for(pg_server: Any, url: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A try cut off by the server going down is tried again once it is back: the rows are in, once."""
    import threading

    import psycopg

    original, calls = psycopg.Cursor.executemany, []

    def cut_once(self: Any, *args: Any, **kwargs: Any) -> Any:
        original(self, *args, **kwargs)
        if not calls:
            calls.append(1)
            pg_server.stop("immediate")
            threading.Timer(1.0, pg_server.start).start()  # back while the writer waits to try again

    monkeypatch.setattr(psycopg.Cursor, "executemany", cut_once)
    assert ledger_rows.record(location(url), [_entry(k) for k in range(10)]) == 10
    monkeypatch.undo()
    assert [e.sha256 for e in ledger_rows.read(location(url))] == [_entry(k).sha256 for k in range(10)]


# --- many writers at once -------------------------------------------------------------------------------------

WRITERS, RUNS, BATCH = 8, 500, 25
KILLED = {2: 7, 5: 12}  # writer -> the batch it is killed in, after its insert and before its commit


def _batch(writer: int, b: int) -> list[ledger.Entry]:
    first = writer * RUNS + b * BATCH
    return [_entry(k) for k in range(first, first + BATCH)]


def _write(url: str, writer: int, log: str) -> None:
    """One writer process: its runs a batch at a time; each batch stored is written to `log` once it is."""
    import psycopg

    batch = [0]
    if writer in KILLED:
        original = psycopg.Cursor.executemany

        def killed(self: Any, *args: Any, **kwargs: Any) -> Any:
            original(self, *args, **kwargs)
            if batch[0] == KILLED[writer]:  # by batch, not by call: a batch tried again after the restart
                os.kill(os.getpid(), signal.SIGKILL)

        psycopg.Cursor.executemany = killed  # type: ignore[method-assign]
    for b in range(RUNS // BATCH):
        batch[0] = b
        try:
            ledger_rows.record(LedgerUrl(url), _batch(writer, b))
        except FatalError as exc:
            Path(log).with_suffix(".failed").write_text(f"{b} {exc}\n", encoding="utf-8")
            continue
        with open(log, "a", encoding="utf-8") as stream:
            stream.write(f"{b}\n")
            stream.flush()
            os.fsync(stream.fileno())


@pytest.mark.slow
def test_eight_writers_two_killed_and_a_restart_lose_and_double_nothing(
        pg_server: Any, url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = [tmp_path / f"writer{k}.log" for k in range(WRITERS)]
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_write, args=(url, k, str(logs[k]))) for k in range(WRITERS)]
    for proc in procs:
        proc.start()

    def stored() -> dict[int, list[int]]:
        return {k: [int(b) for b in log.read_text().split()] if log.exists() else [] for k, log in enumerate(logs)}

    deadline = time.monotonic() + 300
    while sum(map(len, stored().values())) < 40 and time.monotonic() < deadline:
        time.sleep(0.05)
    at_restart = sum(map(len, stored().values()))
    pg_server.restart()  # every writer's connection cut mid-test
    for proc in procs:
        proc.join(timeout=max(1.0, deadline - time.monotonic()))
    assert [proc.exitcode for proc in procs] == [-signal.SIGKILL if k in KILLED else 0 for k in range(WRITERS)]
    assert not any(log.with_suffix(".failed").exists() for log in logs)
    reported = stored()
    for k, batches in reported.items():
        assert batches == list(range(KILLED.get(k, RUNS // BATCH))), k  # in order, each once; a killed one stops
    expected = [e for k, batches in reported.items() for b in batches for e in _batch(k, b)]
    got = ledger_rows.read(location(url))
    assert len(got) == len(expected) == (WRITERS * RUNS - sum(RUNS - BATCH * b for b in KILLED.values()))
    assert at_restart * BATCH < len(expected)  # the restart came while they were writing
    assert sorted(e.sha256 for e in got) == sorted(e.sha256 for e in expected)  # each once, nothing else
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, got)  # the SQLite ledger of the same runs, in the server's order
    for fmt in ("text", "json"):
        assert _show(url, fmt, capsys) == _show(str(db), fmt, capsys), fmt


def test_a_long_value_another_program_wrote_is_read_as_its_head(pg_server: Any, url: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A role that may insert may write a text of any length (up to 1 GB): it is read as its first characters."""
    db = url.split("@/", 1)[1].split("?", 1)[0]
    pg_server.sql("INSERT INTO runs (sha256, path, shown, system, benchmark, division, ruleset, verdict, converged, "
                  f"unit, first_seen) VALUES ('{'a' * 64}', 'p', 's', repeat('q', 1 << 22), 'bert', 'closed', "
                  "'1.1.0', 'pass', 0, 'samples', '2026-11-27T08:00:00Z')", db=db)
    code, out, err = _show(url, "text", capsys)
    assert code == 0 and "[clipped: 4194304 characters]" in out and len(out) < 20_000 and err == ""


def test_a_frozen_ledger_is_read_and_never_added_to(pg_server: Any, url: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    ledger_rows.record(location(url), [_entry(k) for k in range(3)])
    for said in ("frozen: every role may read it", "already frozen"):
        capsys.readouterr()
        assert main(["runs", "freeze", "--ledger", url]) == 0
        assert said in capsys.readouterr().err
    with pytest.raises(FatalError, match=r"frozen \(`mlsubmit runs freeze`"):
        ledger_rows.record(location(url), [_entry(1), _entry(7)])
    db = url.split("@/", 1)[1].split("?", 1)[0]
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="frozen"):  # the server refuses it too
        pg_server.sql("INSERT INTO runs (sha256, path, shown, system, benchmark, division, ruleset, verdict, "
                      "converged, unit, first_seen) SELECT sha256, 'q', shown, system, benchmark, division, "
                      "ruleset, verdict, converged, unit, first_seen FROM runs LIMIT 1", db=db)
    assert _show(url, "text", capsys)[1].startswith("3 ledger entries")
    assert main(["runs", "freeze", "--ledger", str(tmp_path / "ledger.db")]) == 2
    from fixtures.demo import write_runs

    write_runs(tmp_path / "runs", "bert", SYSTEM, 1)
    capsys.readouterr()
    assert main(["check", "--ruleset", "1.1.0", "--jobs", "1", "--ledger", url, "--format", "json", "-o",
                 str(tmp_path / "r.json"), str(tmp_path / "runs")]) == 2
    assert "frozen (`mlsubmit runs freeze`" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()  # said before the check, not after it


def test_a_ledger_whose_append_only_triggers_are_gone_is_refused(pg_server: Any, url: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = url.split("@/", 1)[1].split("?", 1)[0]
    pg_server.sql("ALTER TABLE runs DISABLE TRIGGER append_only", db=db)
    code, _, err = _show(url, "text", capsys)
    assert code == 2 and "append-only triggers are gone or disabled" in err
    pg_server.sql("ALTER TABLE runs ENABLE TRIGGER append_only", "DROP TRIGGER append_only_truncate ON runs", db=db)
    with pytest.raises(FatalError, match="append-only triggers are gone"):
        ledger_rows.record(location(url), [_entry()])
