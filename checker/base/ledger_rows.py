"""The run ledger's values, stored and read back (ledger.py opens the file): `record` adds entries, `read` reads them.

Stored: every text within a byte budget (a longer value, such as a 15 MiB `submission_platform`, is clipped with a
note saying how long it was: never refused, and never a row that cannot be read back), lone surrogates and NULs
written as escapes (SQLite stores UTF-8 only, PostgreSQL no NUL); every number finite, a seed within 64 bits.
A ledger is a file (ledger.py) or a PostgreSQL URL (ledger_pg.py): the same values either way.

Read: row by row from a cursor, a page at a time, so a ledger of any length is read in bounded memory; each value
through the same guarded readers as the logs (core/support/numbers.py). A row that is no ledger entry (a wrong
type, a digest that is not exactly 64 hex digits, an unknown verdict or time) is left out and named in
`Reader.left_out`, never an answer and never an exception.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import astuple
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import Any

from mlsubmit.checker.base import ledger_pg
from mlsubmit.checker.base.ledger import COLUMNS, MAX_VALUE, VERDICTS, Entry, ledger_refused, open_ledger

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.ledger_url import LedgerUrl
from mlsubmit.core.support.numbers import finite

TEXT_BYTES = 4096  # per stored text; paths and names are far shorter
PAGE = 1000  # rows fetched at a time
_HEX = re.compile(r"[0-9a-f]{64}")
_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_TEXT = ("path", "shown", "system", "benchmark", "division", "ruleset", "unit")
_NUMBERS = ("run_start_ms", "minutes", "to_converge", "rcp_mean", "rcp_fastest")
_SEED = 1 << 63
# a run set's runs in start order (unknown start last, ties by name): runs show's order, sorted by SQLite (on disk
# when large) rather than in memory
BY_SET = "system, benchmark, division, run_start_ms IS NULL, run_start_ms, shown, id"


def clipped_utf8(text: str, budget: int = TEXT_BYTES, total: int | None = None) -> str:
    """`text` as UTF-8 of at most `budget` bytes: lone surrogates as escapes, a longer text cut with a note (of
    `total` characters: the text is a head of it). Only its head is encoded: a 400 MB value costs no second copy.
    A NUL is written as an escape (PostgreSQL's text holds none: either backend stores the same value)."""
    total = len(text) if total is None else total
    head = text[: budget + 1].replace("\x00", "\\x00").encode("utf-8", "backslashreplace")
    if len(head) <= budget and total <= budget:
        return head.decode("utf-8")
    note = f" ... [clipped: {total} characters]"
    return head[: budget - len(note.encode())].decode("utf-8", "ignore") + note


def _seed(value: object) -> int | None:
    return value if type(value) is int and -_SEED <= value < _SEED else None


def row_to_store(entry: Entry) -> tuple[object, ...]:
    """The row to store for `entry`: texts clipped, numbers finite or None."""
    values = dict(zip(COLUMNS, astuple(entry), strict=True))
    for name in (*_TEXT, "sha256", "verdict", "first_seen"):
        values[name] = clipped_utf8(str(values[name]))
    for name in _NUMBERS:
        values[name] = finite(values[name])
    values["seed"] = _seed(values["seed"])
    values["converged"] = int(bool(values["converged"]))
    return tuple(values.values())


@lru_cache(maxsize=4096)  # a check writes one time on all its rows: a long ledger holds few distinct ones
def _utc(text: str) -> bool:
    try:
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


# Each column as SQLite hands it over: a text or blob as its first HEAD characters (bytes) and its length, so a
# long value written by another program (or by mlsubmit before issue 49) never reaches Python whole.
HEAD = TEXT_BYTES + 1
_SELECT = ", ".join(f"CASE WHEN typeof({c}) IN ('text', 'blob') THEN substr({c}, 1, {HEAD}) ELSE {c} END, "
                    f"CASE WHEN typeof({c}) IN ('text', 'blob') THEN length({c}) ELSE 0 END" for c in COLUMNS)
# The same from PostgreSQL, whose columns have one type each (ledger_pg.COLUMN_TYPES): a role that may insert
# could still write a 1 GB text there
_PG_SELECT = ", ".join(f"substr({c}, 1, {HEAD}), length({c})" if c in (*_TEXT, "sha256", "verdict", "first_seen")
                       else f"{c}, 0" for c in COLUMNS)


def _problem(got: dict[str, object], lengths: dict[str, int]) -> str | None:
    """Why a row read back is not a ledger entry, or None; its values made an entry's in place (numbers through
    numbers.finite, texts within the budget: a longer one was written before values were clipped, and is read as
    its head, `lengths` saying how long it is)."""
    if lengths["sha256"] != 64 or not isinstance(got["sha256"], str) or not _HEX.fullmatch(got["sha256"]):
        return "sha256 is not 64 hex digits"
    for name in _TEXT:
        text = got[name]
        if not isinstance(text, str):
            return f"{name} is not text"
        if lengths[name] > TEXT_BYTES // 4:
            got[name] = clipped_utf8(text, total=lengths[name])
    for name in _NUMBERS:
        if got[name] is not None:
            got[name] = finite(got[name])
            if got[name] is None:
                return f"{name} is not a finite number"
    if got["seed"] is not None and _seed(got["seed"]) is None:
        return "seed is not an integer"
    if got["verdict"] not in VERDICTS:
        return "verdict is not pass or fail"
    if type(got["converged"]) is not int or got["converged"] not in (0, 1):
        return "converged is not 0 or 1"
    got["converged"] = bool(got["converged"])
    first = got["first_seen"]
    if not isinstance(first, str) or not _UTC.fullmatch(first) or not _utc(first):
        return "first_seen is not a UTC time"
    return None


def entry_of(values: dict[str, object]) -> Entry | str:
    """An entry from its values as another program gave them (runs import's JSON lines), read as a ledger's row is:
    the entry, or why it is none."""
    if sorted(values) != sorted(COLUMNS):
        return "not an entry's fields"
    got = dict(values)
    if type(got["converged"]) is bool:  # JSON's true and false: the entry's own type, stored as 1 and 0
        got["converged"] = int(got["converged"])
    lengths = {name: len(v) if isinstance(v, str) else 0 for name, v in got.items()}
    why = _problem(got, lengths)
    return Entry(**got) if why is None else why  # type: ignore[arg-type]


class Reader:
    """One read of a ledger: its entries in id or run-set order, as often as asked, on one read-only connection."""

    def __init__(self, path: Path | LedgerUrl) -> None:
        self.path = path
        # either backend's connection: execute(query) gives a cursor read with fetchmany and fetchone
        self.conn: Any = ledger_pg.ReadConnection(path) if isinstance(path, LedgerUrl) else \
            open_ledger(path, write=False)
        self.left_out: dict[int, str] = {}  # row id -> why it is no entry

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.conn.close()

    def entries(self, order: str = "id") -> Iterator[Entry]:
        """Every row that is an entry, in `order` (an ORDER BY clause: "id", oldest first, or BY_SET)."""
        try:
            select = _PG_SELECT if isinstance(self.path, LedgerUrl) else _SELECT
            cursor = self.conn.execute(f"SELECT id, {select} FROM runs ORDER BY {order}")
            while rows := cursor.fetchmany(PAGE):
                for row in rows:
                    got = dict(zip(COLUMNS, row[1::2], strict=True))
                    why = _problem(got, dict(zip(COLUMNS, row[2::2], strict=True)))
                    if why is None:
                        yield Entry(**got)
                    else:
                        self.left_out[int(row[0])] = why
        except sqlite3.DataError as exc:  # a value past ledger.MAX_VALUE: SQLite refused to load it
            assert isinstance(self.path, Path)  # the PostgreSQL cursor's errors are exit 2 already
            raise ledger_refused(self.path, self._too_long() or f"damaged ({exc})") from None
        except sqlite3.Error as exc:
            assert isinstance(self.path, Path)
            raise ledger_refused(self.path, f"damaged ({exc})") from None

    def count(self) -> int:
        """How many rows the ledger holds (entries or not)."""
        (total,) = self.conn.execute("SELECT count(*) FROM runs").fetchone()
        return int(total)

    def _too_long(self) -> str | None:
        """Which row holds a value longer than any mlsubmit writes, found row by row (only after SQLite refused
        one: a few seconds for 100,000 rows)."""
        ids = [i for (i,) in self.conn.execute("SELECT id FROM runs ORDER BY id")]
        row_id = next((i for i in ids if not self._loads(i)), None)
        if row_id is None:
            return None
        return (f"row {row_id} holds a value longer than {MAX_VALUE >> 20} MiB, far longer than any mlsubmit "
                "writes (written by another program)")

    def _loads(self, row_id: int) -> bool:
        """Whether SQLite hands over row `row_id` as entries() reads it (no value past ledger.MAX_VALUE)."""
        try:
            self.conn.execute(f"SELECT {_SELECT} FROM runs WHERE id = ?", (row_id,)).fetchall()
        except sqlite3.DataError:
            return False
        return True

    def notes(self, limit: int = 10) -> list[str]:
        """The rows left out, in words (the first `limit` named)."""
        named = [f"row {i}: {why}" for i, why in sorted(self.left_out.items())[:limit]]
        more = len(self.left_out) - len(named)
        return named + ([f"and {more} more row(s)"] if more > 0 else [])


def record(path: Path | LedgerUrl, entries: Iterable[Entry]) -> int:
    """Add the entries not yet in the ledger, in one transaction; how many were new. Each value is stored as
    row_to_store() makes it (text within a byte budget, numbers finite)."""
    rows = [row_to_store(e) for e in entries]
    if isinstance(path, LedgerUrl):
        return ledger_pg.record(path, COLUMNS, rows)
    conn = open_ledger(path, write=True)
    try:
        conn.execute("BEGIN IMMEDIATE")
        before = conn.total_changes
        conn.executemany(f"INSERT OR IGNORE INTO runs ({', '.join(COLUMNS)}) VALUES "
                         f"({', '.join('?' for _ in COLUMNS)})", rows)
        conn.execute("COMMIT")
        return conn.total_changes - before
    except sqlite3.Error as exc:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise FatalError(f"--ledger {path}: cannot add the runs: {exc}") from None
    finally:
        conn.close()


def read(path: Path | LedgerUrl) -> list[Entry]:
    """Every entry that is one, oldest first (Reader says which rows were left out)."""
    with Reader(path) as reader:
        return list(reader.entries())
