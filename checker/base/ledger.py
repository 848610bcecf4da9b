"""`--ledger FILE`: every run log a team's checks have read, kept in an SQLite database (the standard library's).

The ledger is append-only: one row per (content sha256, path), so a file replaced under the same path is a new row
and the old one stays; nothing is ever updated or deleted. Concurrent `check --ledger` processes each add their rows
in one IMMEDIATE transaction, with WAL journaling and a busy timeout, so none is lost. A new ledger is built in a
temporary file beside FILE and linked into place (os.link fails if FILE appeared meanwhile: that one is used).

A ledger is ours only when its header says so: SQLite's magic, our application_id and a user_version we know, read
as bytes before SQLite opens the file, then the exact schema. Anything else (damaged, foreign, newer) is exit 2 and
the file is never written to. Values read back are checked row by row (types, ranges, hex digests): a wrong-shape
row is exit 2, never an answer. Nothing read from a ledger is executed.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sqlite3
import struct
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

from mlsubmit.core.errors import FatalError

APPLICATION_ID = 0x4D4C5244  # "MLRD": mlsubmit run ledger
VERSION = 1
BUSY_MS = 60_000  # how long a writer waits for another's transaction
_MAGIC = b"SQLite format 3\x00"
_SCHEMA = (
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, path TEXT NOT NULL, shown TEXT NOT NULL, "
    "system TEXT NOT NULL, benchmark TEXT NOT NULL, division TEXT NOT NULL, ruleset TEXT NOT NULL, "
    "run_start_ms REAL, seed INTEGER, verdict TEXT NOT NULL, minutes REAL, converged INTEGER NOT NULL, "
    "to_converge REAL, unit TEXT NOT NULL, rcp_mean REAL, rcp_fastest REAL, first_seen TEXT NOT NULL, "
    "UNIQUE (sha256, path))"
)
VERDICTS = ("pass", "fail")
_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
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


_COLUMNS = [f.name for f in fields(Entry)]


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _header_problem(path: Path) -> str | None:
    """Why the file is not one of our ledgers, from its first 100 bytes (SQLite's header), or None."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(100)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if len(head) < 100 or not head.startswith(_MAGIC):
        return "not an SQLite database (damaged, or another kind of file)"
    version, app = struct.unpack(">I", head[60:64])[0], struct.unpack(">I", head[68:72])[0]
    if app != APPLICATION_ID:
        return f"an SQLite database of another application (application_id {app:#x}), not an mlsubmit ledger"
    if version != VERSION:
        return f"an mlsubmit ledger of format {version}; this mlsubmit reads format {VERSION}"
    return None


def _refuse(path: Path, why: str) -> FatalError:
    return FatalError(f"--ledger {path}: {why}; it is left as it is (give another FILE)")


def _connect(path: Path, *, write: bool) -> sqlite3.Connection:
    mode = "rw" if write else "ro"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True, timeout=BUSY_MS / 1000,
                               isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    except sqlite3.Error as exc:
        raise _refuse(path, f"cannot be read as a ledger: damaged, or not readable here ({exc})") from None
    if rows != [("table", "runs", _SCHEMA), ("index", "sqlite_autoindex_runs_1", None)]:
        conn.close()
        raise _refuse(path, "its tables are not a ledger's (a foreign or altered database)")
    return conn


def _create(path: Path) -> None:
    """A new, empty ledger at `path`, made whole beside it and linked into place; another process's ledger made
    meanwhile is kept."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {VERSION}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(_SCHEMA)
        finally:
            conn.close()
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)


def open_ledger(path: Path, *, write: bool) -> sqlite3.Connection:
    """A connection to our ledger at `path` (made when missing and `write`); exit 2 for anything else."""
    if not path.exists():
        if not write:
            raise FatalError(f"--ledger {path}: no such file")
        try:
            _create(path)
        except (OSError, sqlite3.Error) as exc:
            raise FatalError(f"--ledger {path}: cannot create it: {exc}") from None
    if not path.is_file():
        raise _refuse(path, "not a regular file")
    why = _header_problem(path)
    if why is not None:
        raise _refuse(path, why)
    return _connect(path, write=write)


def record(path: Path, entries: Iterable[Entry]) -> int:
    """Add the entries not yet in the ledger, in one transaction; how many were new."""
    rows = [astuple(e) for e in entries]
    conn = open_ledger(path, write=True)
    try:
        conn.execute("BEGIN IMMEDIATE")
        before = conn.total_changes
        conn.executemany(f"INSERT OR IGNORE INTO runs ({', '.join(_COLUMNS)}) VALUES "
                         f"({', '.join('?' for _ in _COLUMNS)})", rows)
        conn.execute("COMMIT")
        return conn.total_changes - before
    except sqlite3.Error as exc:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise FatalError(f"--ledger {path}: cannot add the runs: {exc}") from None
    finally:
        conn.close()


def read(path: Path) -> list[Entry]:
    """Every entry, oldest first, each checked; exit 2 for a row of the wrong shape."""
    conn = open_ledger(path, write=False)
    try:
        rows = conn.execute(f"SELECT id, {', '.join(_COLUMNS)} FROM runs ORDER BY id").fetchall()
    except sqlite3.Error as exc:
        raise _refuse(path, f"damaged ({exc})") from None
    finally:
        conn.close()
    return [_entry(path, row) for row in rows]


def _entry(path: Path, row: tuple[object, ...]) -> Entry:
    problem = next(_problems(row[1:]), None)
    if problem is not None:
        raise _refuse(path, f"row {row[0]!r} is not a ledger entry ({problem})")
    values = list(row[1:])
    values[_COLUMNS.index("converged")] = bool(values[_COLUMNS.index("converged")])
    return Entry(*values)  # type: ignore[arg-type]


_TEXT = ("path", "shown", "system", "benchmark", "division", "ruleset", "unit")
_NUMBERS = ("run_start_ms", "minutes", "to_converge", "rcp_mean", "rcp_fastest")


def _problems(values: tuple[object, ...]) -> Iterator[str]:
    got = dict(zip(_COLUMNS, values, strict=True))
    if not isinstance(got["sha256"], str) or not _HEX.match(got["sha256"]):
        yield "sha256 is not a hex digest"
    for name in _TEXT:
        if not isinstance(got[name], str) or len(got[name]) > 4096:  # type: ignore[arg-type]
            yield f"{name} is not text"
    for name in _NUMBERS:
        value = got[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            yield f"{name} is not a finite number"
    if got["seed"] is not None and (isinstance(got["seed"], bool) or not isinstance(got["seed"], int)):
        yield "seed is not an integer"
    if got["verdict"] not in VERDICTS:
        yield "verdict is not pass or fail"
    if got["converged"] not in (0, 1):
        yield "converged is not 0 or 1"
    try:
        datetime.strptime(str(got["first_seen"]), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        yield "first_seen is not a UTC time"
