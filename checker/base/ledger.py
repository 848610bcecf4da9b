"""`--ledger FILE`: every run log a team's checks have read, kept in an SQLite database (the standard library's).

The ledger is append-only: one row per (content sha256, path), so a file replaced under the same path is a new row
and the old one stays; nothing is ever updated or deleted. Concurrent `check --ledger` processes each add their rows
in one IMMEDIATE transaction, with a busy timeout, so none is lost. A new ledger is built in a temporary file beside
FILE and linked into place (os.link fails if FILE appeared meanwhile: that one is used).

The ledger keeps SQLite's rollback journal, not WAL: a write leaves only FILE once it is done, and a read takes a
shared lock and creates no file at all (WAL needs `-wal`/`-shm` files beside it, which a read-only connection cannot
remove). A ledger written by an older mlsubmit in WAL mode is read read-write with queries only, so that closing it
removes them, and switched back to the rollback journal by the next write. Where FILE's folder cannot be written no
writer can change FILE either (a write needs its journal there): it is then opened immutable, taking no lock.

A ledger is ours only when its header says so: SQLite's magic, our application_id and a user_version we know, read
as bytes before SQLite opens the file, then the exact schema, then SQLite's quick_check of every page, for a read
or a write. Anything else (damaged, foreign, newer) is exit 2 and the file is never written to. Rows are read back
through ledger_rows.py. Nothing read from a ledger is executed.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import sqlite3
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

from mlsubmit.core.errors import FatalError

APPLICATION_ID = 0x4D4C5244  # "MLRD": mlsubmit run ledger
VERSION = 1
BUSY_MS = 60_000  # how long a writer waits for another's transaction
STALE_S = 60  # a temporary ledger older than this whose maker holds no lock on it was left by a killed process
_MAGIC = b"SQLite format 3\x00"
_WAL = 2  # header bytes 18-19: the file format's read/write versions, 2 in WAL mode
_SCHEMA = (
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, path TEXT NOT NULL, shown TEXT NOT NULL, "
    "system TEXT NOT NULL, benchmark TEXT NOT NULL, division TEXT NOT NULL, ruleset TEXT NOT NULL, "
    "run_start_ms REAL, seed INTEGER, verdict TEXT NOT NULL, minutes REAL, converged INTEGER NOT NULL, "
    "to_converge REAL, unit TEXT NOT NULL, rcp_mean REAL, rcp_fastest REAL, first_seen TEXT NOT NULL, "
    "UNIQUE (sha256, path))"
)
VERDICTS = ("pass", "fail")
# The longest value (or row) SQLite hands over from a ledger: mlsubmit writes texts of at most 4 KiB
# (ledger_rows.TEXT_BYTES) and before issue 49 wrote a log's value whole, which a line's limit kept within 16 MiB;
# a longer one was written by another program, and a read refuses it (exit 2) without loading it.
MAX_VALUE = 64 << 20


@dataclass(frozen=True, slots=True)
class Entry:
    """One log as a check read it. `to_converge`: the RCP checker's epochs or samples (`unit`) of a converged run;
    `rcp_mean`, `rcp_fastest`: its set's RCP mean and fastest allowed mean at the time, in the same unit."""

    sha256: str
    path: str  # resolved
    shown: str  # as given on the command line
    system: str
    benchmark: str
    division: str
    ruleset: str
    run_start_ms: float | None
    seed: int | None
    verdict: str
    minutes: float | None
    converged: bool
    to_converge: float | None
    unit: str
    rcp_mean: float | None
    rcp_fastest: float | None
    first_seen: str  # ISO 8601, UTC

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


COLUMNS = [f.name for f in fields(Entry)]


def utc_now_text() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _header(path: Path) -> tuple[str | None, bool]:
    """Why the file is not one of our ledgers, from its first 100 bytes (SQLite's header), or None; and whether
    it is in WAL mode."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(100)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}", False
    if len(head) < 100 or not head.startswith(_MAGIC):
        return "not an SQLite database (damaged, or another kind of file)", False
    version, app = struct.unpack(">I", head[60:64])[0], struct.unpack(">I", head[68:72])[0]
    if app != APPLICATION_ID:
        return f"an SQLite database of another application (application_id {app:#x}), not an mlsubmit ledger", False
    if version != VERSION:
        return f"an mlsubmit ledger of format {version}; this mlsubmit reads format {VERSION}", False
    return None, head[18] == _WAL


def ledger_refused(path: Path, why: str) -> FatalError:
    return FatalError(f"--ledger {path}: {why}; it is left as it is (give another FILE)")


def _uri(path: Path, *, write: bool, wal: bool) -> str:
    where = path.resolve()
    if not write and not os.access(where.parent, os.W_OK):
        return f"{where.as_uri()}?mode=ro&immutable=1"
    # a read of a WAL ledger, or of one whose last write was cut short (its hot journal is rolled back on the
    # first read), is read-write with queries only: closing it then leaves no file beside it
    if write or wal or Path(f"{where}-journal").exists():
        return f"{where.as_uri()}?mode=rw"
    return f"{where.as_uri()}?mode=ro"


def _connect(path: Path, *, write: bool, wal: bool) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(_uri(path, write=write, wal=wal), uri=True, timeout=BUSY_MS / 1000,
                               isolation_level=None)
    except sqlite3.Error as exc:
        raise ledger_refused(path, f"cannot be read as a ledger: damaged, or not readable here ({exc})") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        if not write:
            conn.execute("PRAGMA query_only = ON")
        # bytes that are not UTF-8 (a file written by another tool) are shown, not an exception
        conn.text_factory = lambda data: data.decode("utf-8", "backslashreplace")
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    except sqlite3.Error as exc:
        conn.close()
        raise ledger_refused(path, f"cannot be read as a ledger: damaged, or not readable here ({exc})") from None
    if rows != [("table", "runs", _SCHEMA), ("index", "sqlite_autoindex_runs_1", None)]:
        conn.close()
        raise ledger_refused(path, "its tables are not a ledger's (a foreign or altered database)")
    why = _damage(conn)
    if why is not None:
        conn.close()
        raise ledger_refused(path, why)
    if write and wal:
        with contextlib.suppress(sqlite3.Error):  # another process still has it open: the next write switches it
            conn.execute("PRAGMA journal_mode = DELETE")
    return conn


def _damage(conn: sqlite3.Connection) -> str | None:
    """Why the open ledger cannot be trusted, or None: SQLite's quick_check over every page (a table's root page
    overwritten read as an empty table: 2,010 entries shown as 0 run sets; issue 54), and no value longer than
    MAX_VALUE is ever loaded (SQLite refuses it, rather than take 400 MB, and hand it whole to Python)."""
    if sys.version_info >= (3, 11):  # Python 3.10 cannot set it: SQLite loads such a value, Python gets its head
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE)
    try:
        found = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.Error as exc:
        return f"damaged ({exc})"
    if found != [("ok",)]:
        said = " ".join(str(found[0][0]).split()) if found and found[0] else "nothing"
        return f"damaged: SQLite's quick_check says {said[:200]!r}"
    return None


def _clean(path: Path) -> None:
    """Remove the temporary ledgers a killed process left beside `path` (.NAME.*.new): those old enough whose
    maker no longer holds its lock on them."""
    with contextlib.suppress(OSError):
        for left in path.parent.glob(f".{glob.escape(path.name)}.*.new"):
            with contextlib.suppress(OSError), open(left, "rb") as stream:
                if time.time() - os.fstat(stream.fileno()).st_mtime < STALE_S:
                    continue
                fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: its maker is still at work
                left.unlink()


def _create(path: Path) -> None:
    """A new, empty ledger at `path`, made whole beside it and linked into place; another process's ledger made
    meanwhile is kept. The temporary file is locked while it is made (_clean leaves it alone)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # as open() makes a file: the team shares the ledger (mkstemp gives 0600)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {VERSION}")
            conn.execute(_SCHEMA)
        finally:
            conn.close()
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
        os.close(fd)


def open_ledger(path: Path, *, write: bool) -> sqlite3.Connection:
    """A connection to our ledger at `path` (made when missing and `write`); exit 2 for anything else."""
    if path.parent.is_dir() and os.access(path.parent, os.W_OK):
        _clean(path)
    if not path.exists():
        if not write:
            raise FatalError(f"--ledger {path}: no such file")
        try:
            _create(path)
        except (OSError, sqlite3.Error) as exc:
            raise FatalError(f"--ledger {path}: cannot create it: {exc}") from None
    if not path.is_file():
        raise ledger_refused(path, "not a regular file")
    why, wal = _header(path)
    if why is not None:
        raise ledger_refused(path, why)
    return _connect(path, write=write, wal=wal)
