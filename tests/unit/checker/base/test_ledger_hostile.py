"""The run ledger under hostile or awkward input (issues 47 and 49): values that break a date, a text, a digest or
a terminal; a ledger in a folder that cannot be written; files left beside it; a long ledger read as a stream; a
`runs show -o` whose write fails."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.demo import write_runs
from mlsubmit.checker.base import ledger, ledger_rows

from mlsubmit.cli import main
from mlsubmit.core.errors import FatalError

RULESET = "1.1.0"
SYSTEM = "ipu-pod16-POPART-closed"


def _entry(k: int = 0, **changes: object) -> ledger.Entry:
    entry = ledger.Entry(
        sha256=hashlib.sha256(str(k).encode()).hexdigest(), path=f"/runs/job-{k:05d}.out",
        shown=f"runs/job-{k:05d}.out", system=SYSTEM, benchmark="bert", division="closed", ruleset=RULESET,
        run_start_ms=1.6e12 + k * 1000.0, seed=k, verdict="pass", minutes=20.0 + k % 7, converged=True,
        to_converge=2.6e6, unit="samples", rcp_mean=2.7e6, rcp_fastest=2.5e6, first_seen="2026-11-27T08:00:00Z")
    return replace(entry, **changes)  # type: ignore[arg-type]


def _show(db: Path, capsys: pytest.CaptureFixture[str], fmt: str = "text") -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["runs", "show", "--ledger", str(db), "--format", fmt])
    out, err = capsys.readouterr()
    return code, out, err


def _beside(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name != db.name and p.name.startswith(f"{db.name}-"))


def test_a_start_time_no_calendar_holds_is_shown_as_unknown(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`run_start` time_ms 1e300 was exit 3 on every later `runs show` (datetime overflow)."""
    db = tmp_path / "ledger.db"
    write_runs(tmp_path / "runs", "bert", SYSTEM, 1, start_ms=1e300)  # type: ignore[arg-type]
    main(["check", "--ruleset", RULESET, "--jobs", "1", "--ledger", str(db), "-o", str(tmp_path / "r.txt"),
          str(tmp_path / "runs")])
    assert [e.run_start_ms for e in ledger_rows.read(db)] == [1e300]
    for fmt in ("text", "json", "csv", "html"):
        code, out, err = _show(db, capsys, fmt)
        assert code == 0 and "Traceback" not in err, fmt
    code, out, _ = _show(db, capsys)
    assert " ? " in out


def test_a_long_value_is_stored_clipped_and_read_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A long value was stored whole, then the row refused on every read (exit 2 forever)."""
    db = tmp_path / "ledger.db"
    assert ledger_rows.record(db, [_entry(system="p" * (1 << 20))]) == 1
    (got,) = ledger_rows.read(db)
    assert len(got.system.encode()) <= ledger_rows.TEXT_BYTES
    assert got.system.endswith("... [clipped: 1048576 characters]")
    raw = sqlite3.connect(db)  # a row written whole before values were clipped
    raw.execute("INSERT INTO runs (sha256, path, shown, system, benchmark, division, ruleset, verdict, converged, "
                "unit, first_seen) VALUES (?, 'p', 's', ?, 'bert', 'closed', '1.1.0', 'pass', 0, 'samples', "
                "'2026-11-27T08:00:00Z')", ("a" * 64, "q" * (1 << 20)))
    raw.commit()
    raw.close()
    code, out, _ = _show(db, capsys)
    assert code == 0 and "2 ledger entries" in out and "clipped" in out and len(out) < 40_000
    done = subprocess.run([sys.executable, "-m", "mlsubmit", "runs", "show", "--ledger", str(db)], capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "ascii"}, check=False)  # a terminal without UTF-8
    assert done.returncode == 0 and b"[clipped: 1048576 characters]" in done.stdout
    lone = _entry(1, shown="job-\udcff.out")  # an undecodable file name: SQLite takes UTF-8 only
    assert ledger_rows.record(db, [lone]) == 1 and ledger_rows.read(db)[-1].shown == "job-\\udcff.out"


def test_stored_text_is_inert_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    hostile = _entry(system="pod\x1b]0;owned\x07", unit="samples\x1b[2J", shown="=HYPERLINK(\"x\")\u202e")
    ledger_rows.record(db, [hostile])
    for fmt in ("text", "json", "csv", "html"):
        code, out, _ = _show(db, capsys, fmt)
        assert code == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out, fmt
        assert "\\x1b" in out, fmt
    _, out, _ = _show(db, capsys, "json")
    shown = json.loads(out)
    assert shown["runs"][0]["unit"] == "samples\\x1b[2J" and shown["sets"][0]["system"] == "pod\\x1b]0;owned\\x07"
    _, out, _ = _show(db, capsys, "csv")
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert row["file"].startswith("'=") and row["unit"] == "samples\\x1b[2J"


def test_a_digest_is_matched_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A digest with a trailing newline was accepted: one content counted as two runs."""
    db = tmp_path / "ledger.db"
    digest = _entry().sha256
    ledger_rows.record(db, [_entry(), _entry(sha256=digest + "\n"), _entry(sha256=digest.upper())])
    code, out, err = _show(db, capsys, "json")
    shown = json.loads(out)
    assert code == 1 and len(shown["runs"]) == 1 and [r["row"] for r in shown["left_out"]] == [2, 3]
    assert "row 2: sha256 is not 64 hex digits" in err


def test_a_wrong_shape_row_is_left_out_and_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, [_entry(k) for k in range(3)])
    raw = sqlite3.connect(db)
    raw.execute("UPDATE runs SET first_seen = 'yesterday' WHERE id = 2")
    raw.execute("UPDATE runs SET path = x'ff00' WHERE id = 3")  # a BLOB where text belongs
    raw.commit()
    raw.close()
    code, out, err = _show(db, capsys)
    assert code == 1 and out.startswith("1 ledger entries") and "row 2: first_seen" in err and "row 3: path" in err


def _wal_ledger(db: Path) -> None:
    """A ledger as an older mlsubmit wrote it: in WAL mode."""
    ledger_rows.record(db, [_entry()])
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    raw.close()
    assert db.read_bytes()[18] == 2 and _beside(db) == []


def test_a_read_leaves_no_file_and_a_write_leaves_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A read left -wal/-shm beside the ledger (issue 49), and so did package's read after a check (issue 47)."""
    db = tmp_path / "ledger.db"
    write_runs(tmp_path / "runs", "bert", SYSTEM, 2)
    main(["check", "--ruleset", RULESET, "--jobs", "1", "--ledger", str(db), "-o", str(tmp_path / "r.txt"),
          str(tmp_path / "runs")])
    assert _show(db, capsys)[0] == 0 and _beside(db) == []
    old = tmp_path / "old.db"
    _wal_ledger(old)
    assert _show(old, capsys)[0] == 0 and _beside(old) == []
    ledger_rows.record(old, [_entry(1)])  # the next write switches it to the rollback journal
    assert old.read_bytes()[18] == 1 and _beside(old) == [] and len(ledger_rows.read(old)) == 2


def test_a_ledger_in_a_folder_that_cannot_be_written_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An intact ledger in a read-only folder was refused as damaged (SQLite wanted its -shm file there)."""
    db = tmp_path / "ro" / "ledger.db"
    db.parent.mkdir()
    _wal_ledger(db)
    db.parent.chmod(0o555)
    try:
        if os.access(db.parent, os.W_OK):  # root writes anyway: say the folder cannot be written
            monkeypatch.setattr(ledger.os, "access", lambda path, mode: False)
        code, out, err = _show(db, capsys)
        assert code == 0 and out.startswith("1 ledger entries") and err == ""
    finally:
        db.parent.chmod(0o755)
    assert _beside(db) == []


def test_temporary_ledgers_a_killed_process_left_are_removed(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, [_entry()])
    stale, fresh = tmp_path / ".ledger.db.k1ll3d.new", tmp_path / ".ledger.db.st4rt.new"
    stale.write_bytes(b"half a database")
    fresh.write_bytes(b"being made")
    os.utime(stale, (time.time() - 3600,) * 2)
    ledger_rows.read(db)
    assert not stale.exists() and fresh.exists()  # a process that started a moment ago may still be making it


def test_runs_show_reads_the_ledger_a_page_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`runs show` was quadratic in rows (a list scan per row) and held every row: 100,000 rows took minutes."""
    db = tmp_path / "ledger.db"
    n = 3000
    ledger_rows.record(db, [_entry(k) for k in range(n)] + [_entry(5, path="/elsewhere/job.out")])  # one content twice
    pages: list[int] = []

    class Counted:  # the reader's connection, counting the rows of each page fetched
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def execute(self, *args: object) -> Counted | sqlite3.Cursor:
            self.cursor = self.conn.execute(*args)  # type: ignore[arg-type]
            return self

        def fetchone(self) -> object:
            return self.cursor.fetchone()

        def fetchmany(self, size: int) -> list[object]:
            rows = self.cursor.fetchmany(size)
            pages.append(len(rows))
            return rows

        def close(self) -> None:
            self.conn.close()

    original = ledger_rows.Reader.__init__

    def counted(self: ledger_rows.Reader, path: Path) -> None:
        original(self, path)
        self.conn = Counted(self.conn)  # type: ignore[assignment]

    monkeypatch.setattr(ledger_rows, "PAGE", 500)
    monkeypatch.setattr(ledger_rows.Reader, "__init__", counted)
    code, out, _ = _show(db, capsys)
    assert code == 0 and f"{n + 1} ledger entries, 1 run set(s)" in out and f"{n} runs, N = 10" in out
    assert pages and max(pages) <= 500 and sum(pages) == 2 * (n + 1)  # two passes, each a page at a time
    lines = [line for line in out.splitlines() if "runs/job-" in line]
    assert len(lines) == n and lines[0].split()[0] == "0" and lines[-1].split()[0] == str(n - 1)


def test_runs_show_output_is_whole_or_the_old_file(tmp_path: Path) -> None:
    """A write that failed part way replaced the old file with a partial one."""
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, [_entry(k) for k in range(2000)])
    target = tmp_path / "shown.txt"
    target.write_text("old\n" * 100_000, encoding="utf-8")

    def limit() -> None:  # a full disk, in effect: writes past 64 KiB fail (EFBIG; Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, resource.RLIM_INFINITY))

    done = subprocess.run([sys.executable, "-m", "mlsubmit", "runs", "show", "--ledger", str(db), "-o", str(target)],
                          capture_output=True, text=True, preexec_fn=limit, check=False)
    assert done.returncode == 2 and "cannot write it" in done.stderr and "Traceback" not in done.stderr
    assert target.read_text(encoding="utf-8") == "old\n" * 100_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.db", "shown.txt"]


def test_a_check_with_every_report_in_a_file_says_its_summary(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 47 item 10: stdout said nothing when every format went to a file; the upload folder held -wal/-shm."""
    upload = tmp_path / "upload"
    upload.mkdir()
    write_runs(tmp_path / "runs", "bert", SYSTEM, 2)
    capsys.readouterr()
    assert main(["check", "--ruleset", RULESET, "--jobs", "1", "--ledger", str(upload / "ledger.db"),
                 "--format", f"json:{upload / 'r.json'}", "--format", f"sarif:{upload / 'r.sarif'}",
                 str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "0 error(s)," in out and str(upload / "r.sarif") in out
    assert main(["runs", "show", "--ledger", str(upload / "ledger.db"), "-o", str(upload / "runs.txt")]) == 0
    assert sorted(p.name for p in upload.iterdir()) == ["ledger.db", "r.json", "r.sarif", "runs.txt"]


def _overwrite_root(db: Path) -> None:
    """The runs table's root page header overwritten (8 bytes) by another program: SQLite read it as an empty
    table, and `runs show` said "2010 ledger entries, 0 run set(s)", exit 0 (issue 54)."""
    raw = sqlite3.connect(db)
    (root,) = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()
    (size,) = raw.execute("PRAGMA page_size").fetchone()
    raw.close()
    with open(db, "r+b") as stream:
        stream.seek((root - 1) * size)
        stream.write(b"\x0d" + bytes(7))


def test_a_damaged_page_is_exit_2_on_read_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, [_entry(k) for k in range(2010)])
    assert _show(db, capsys)[0] == 0
    _overwrite_root(db)
    before = db.read_bytes()
    code, out, err = _show(db, capsys)
    assert code == 2 and out == "" and "damaged: SQLite's quick_check says" in err and "Traceback" not in err
    with pytest.raises(FatalError, match="quick_check"):
        ledger_rows.record(db, [_entry(5000)])
    assert db.read_bytes() == before and _beside(db) == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10's sqlite3 cannot set SQLite's length limit")
def test_a_value_no_mlsubmit_writes_is_never_loaded(tmp_path: Path) -> None:
    """A `shown` of 400 MB written by another program: `runs show` took 3.1 GB and 66 s, exit 0. SQLite now refuses
    any value past ledger.MAX_VALUE without loading it, and the row is named; a long value within it (an older
    mlsubmit wrote a log's value whole) reaches Python as its head and its length."""
    db = tmp_path / "ledger.db"
    ledger_rows.record(db, [_entry(k) for k in range(20)])
    raw = sqlite3.connect(db)
    raw.execute("UPDATE runs SET shown = ? WHERE id = 7", ("s" * (ledger.MAX_VALUE + 1),))
    raw.execute("UPDATE runs SET system = ? WHERE id = 3", ("q" * (8 << 20),))
    raw.commit()
    raw.close()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _PEAK, "runs", "show", "--ledger", str(db)], capture_output=True,
                          text=True, check=False, timeout=120)
    peak = int(done.stdout.splitlines()[-1])
    assert done.returncode == 2 and "row 7 holds a value longer than 64 MiB" in done.stderr, done.stderr[-2000:]
    assert peak < 300 << 10 and time.monotonic() - started < 60  # KiB: VmHWM
    raw = sqlite3.connect(db)
    raw.execute("UPDATE runs SET shown = 'short' WHERE id = 7")
    raw.commit()
    raw.close()
    with ledger_rows.Reader(db) as reader:
        shown = {e.shown: e.system for e in reader.entries()}
    assert shown["short"] == SYSTEM and any(s.endswith("[clipped: 8388608 characters]") for s in shown.values())
    assert max(len(s) for s in shown.values()) <= ledger_rows.TEXT_BYTES


# runs mlsubmit in this process and prints its peak memory (KiB) last, whatever it exits with
# the command's own peak in KiB: /proc's VmHWM counts from the exec (getrusage's maxrss would count the pytest worker
# the child was forked from, hundreds of MB under xdist)
_PEAK = ("import sys\nfrom mlsubmit.cli import main\ntry:\n    code = main(sys.argv[1:])\nfinally:\n"
         "    print([ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1], flush=True)\n"
         "sys.exit(code)")
