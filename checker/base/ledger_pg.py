"""`--ledger postgresql://...`: the run ledger a team shares, in a PostgreSQL database (the `mlsubmit[postgres]`
extra: psycopg 3, imported by this module only, exit 2 naming the extra when it is missing).

The same ledger as the SQLite file (ledger.py): the same columns, the same rows, read back through the same
guarded readers (ledger_rows.py), so `runs show` writes the same bytes from either. The server keeps what the file
keeps by its own means: one row per (sha256, path) by a unique key, a digest of exactly 64 hex digits, a verdict
and a convergence flag by CHECK constraints, append-only by a trigger that refuses UPDATE, DELETE and TRUNCATE
(and by the roles: CI's can insert and read, nothing else, docs/runs.md). Texts sort in the "C" collation, which
orders UTF-8 as SQLite's BINARY does.

The tables are made, and would be migrated, only by `mlsubmit runs init` (the owner's role); every other use
checks the format table and the exact columns first and is exit 2 for anything else. A write is one transaction
that first takes the ledger's write lock (one writer at a time, as SQLite's file lock: no deadlock, and ids in
the order the runs were given); a serialisation failure,
a deadlock or a lost connection rolls it back whole and it is tried again, a few times over some seconds (the
insert adds only what is missing, so a retry after a commit whose answer was lost adds nothing twice). A read is
one read-only REPEATABLE READ transaction (runs show's two passes see the same rows) through a server-side cursor,
a page at a time.

A password in the URL is never shown: the ledger is named by `str(LedgerUrl)`, which leaves it out, and an error
from the server is shown with it taken out. libpq reads the rest as usual: PGHOST, PGPASSWORD, PGPASSFILE,
PGSERVICE and service files, `sslmode` and the other TLS settings in the URL or the environment.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.ledger_url import LedgerUrl

if TYPE_CHECKING:
    import psycopg

APPLICATION = "mlsubmit run ledger"
VERSION = 1  # ledger.VERSION: the same format in either backend
ATTEMPTS = 6  # tries of one write before exit 2
FIRST_WAIT_S = 0.25  # doubled after each failed try: about 8 s in all, a server restart's worth
CONNECT_TIMEOUT_S = 10
_TEXT = 'text COLLATE "C" NOT NULL'
# (column, type as information_schema names it) in order: checked before every use
COLUMN_TYPES = (
    ("id", "bigint"), ("sha256", "text"), ("path", "text"), ("shown", "text"), ("system", "text"),
    ("benchmark", "text"), ("division", "text"), ("ruleset", "text"), ("run_start_ms", "double precision"),
    ("seed", "bigint"), ("verdict", "text"), ("minutes", "double precision"), ("converged", "smallint"),
    ("to_converge", "double precision"), ("unit", "text"), ("rcp_mean", "double precision"),
    ("rcp_fastest", "double precision"), ("first_seen", "text"),
)
_CREATE = (
    "CREATE TABLE mlsubmit_ledger (application text NOT NULL, version integer NOT NULL)",
    f"INSERT INTO mlsubmit_ledger VALUES ('{APPLICATION}', {VERSION})",
    "CREATE TABLE runs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    f"sha256 {_TEXT} CHECK (sha256 ~ '^[0-9a-f]{{64}}$'), path {_TEXT}, shown {_TEXT}, system {_TEXT}, "
    f"benchmark {_TEXT}, division {_TEXT}, ruleset {_TEXT}, run_start_ms double precision, seed bigint, "
    f"verdict {_TEXT} CHECK (verdict IN ('pass', 'fail')), minutes double precision, "
    "converged smallint NOT NULL CHECK (converged IN (0, 1)), to_converge double precision, "
    f"unit {_TEXT}, rcp_mean double precision, rcp_fastest double precision, first_seen {_TEXT}, "
    "UNIQUE (sha256, path))",
    "CREATE FUNCTION mlsubmit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'the mlsubmit run ledger is append-only: % refused', TG_OP "
    "USING ERRCODE = 'insufficient_privilege'; END $$",
    "CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON runs FOR EACH ROW "
    "EXECUTE FUNCTION mlsubmit_ledger_append_only()",
    "CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON runs FOR EACH STATEMENT "
    "EXECUTE FUNCTION mlsubmit_ledger_append_only()",
    "CREATE TRIGGER append_only_format BEFORE UPDATE OR DELETE OR TRUNCATE ON mlsubmit_ledger "
    "FOR EACH STATEMENT EXECUTE FUNCTION mlsubmit_ledger_append_only()",
)
# the enabled triggers on the ledger's tables: the append-only ones must be there, `frozen` is there once frozen
_TRIGGERS = ("SELECT c.relname::text, t.tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
             "WHERE c.relnamespace = current_schema()::regnamespace AND c.relname IN ('runs', 'mlsubmit_ledger') "
             "AND NOT t.tgisinternal AND t.tgenabled <> 'D'")
_APPEND_ONLY = {("runs", "append_only"), ("runs", "append_only_truncate"), ("mlsubmit_ledger", "append_only_format")}
_FREEZE = (
    "CREATE FUNCTION mlsubmit_ledger_frozen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'the mlsubmit run ledger is frozen: % refused', TG_OP "
    "USING ERRCODE = 'insufficient_privilege'; END $$",
    "CREATE TRIGGER frozen BEFORE INSERT ON runs FOR EACH STATEMENT EXECUTE FUNCTION mlsubmit_ledger_frozen()",
)
_INIT_LOCK = 0x4D4C5244  # ledger.APPLICATION_ID
_WRITE_LOCK = _INIT_LOCK + 1
# a refused connection that another try would not mend (a server that is down or restarting is tried again)
_FOR_GOOD = ("authentication failed", "does not exist", "pg_hba.conf", "permission denied", "SSL", "invalid")


def _scrub(url: LedgerUrl, text: str) -> str:
    for secret in url.secrets():
        text = text.replace(secret, "***")
    return " ".join(text.split())  # libpq's messages span lines: one line, as every exit 2 is


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise FatalError("--ledger postgresql://...: a PostgreSQL ledger needs the postgres extra: pip install "
                         "'/path/to/mlsubmit-clone[postgres]' (psycopg 3); a ledger FILE needs nothing more") from None
    return psycopg


def _refuse(url: LedgerUrl, why: str) -> FatalError:
    return FatalError(f"--ledger {url}: {why}; it is left as it is")


def _connect(url: LedgerUrl, *, read_only: bool) -> psycopg.Connection[Any]:
    pg = _psycopg()
    try:
        conn: psycopg.Connection[Any] = pg.connect(url.url, connect_timeout=CONNECT_TIMEOUT_S,
                                                   application_name="mlsubmit", client_encoding="utf8")
    except pg.Error as exc:
        why = _scrub(url, str(exc))
        if any(word in why for word in _FOR_GOOD):  # another try fails as this one did
            raise FatalError(f"--ledger {url}: cannot connect: {why}") from None
        raise _Lost(why) from None
    conn.read_only = read_only
    conn.isolation_level = pg.IsolationLevel.REPEATABLE_READ if read_only else pg.IsolationLevel.READ_COMMITTED
    return conn


class _Lost(Exception):
    """No connection, or it was lost: worth another try."""


def _check_format(url: LedgerUrl, conn: psycopg.Connection[Any]) -> bool:
    """Exit 2 unless the database holds our ledger, of this format, with exactly our columns and its append-only
    triggers in force; whether it is frozen."""
    pg = _psycopg()
    encoding = conn.execute("SHOW server_encoding").fetchone()
    if encoding is None or encoding[0] != "UTF8":
        raise _refuse(url, f"the database's encoding is {encoding and encoding[0]}, not UTF8 (the ledger's "
                      "texts are UTF-8 and sort by their bytes)")
    try:
        found = conn.execute("SELECT application, version FROM mlsubmit_ledger").fetchall()
    except pg.errors.UndefinedTable:
        raise _refuse(url, "no run ledger in this database (its owner makes one with `mlsubmit runs init "
                      "--ledger URL`)") from None
    except pg.errors.InsufficientPrivilege:
        raise _refuse(url, "this role may not read the ledger (docs/runs.md: the roles)") from None
    if len(found) != 1 or found[0][0] != APPLICATION:
        raise _refuse(url, "its mlsubmit_ledger table is not a run ledger's (a foreign or altered database)")
    if found[0][1] != VERSION:
        raise _refuse(url, f"a run ledger of format {found[0][1]}; this mlsubmit uses format {VERSION} (`mlsubmit "
                      "runs init` migrates an older one; a newer one needs a newer mlsubmit)")
    columns = conn.execute("SELECT column_name::text, data_type::text FROM information_schema.columns "
                           "WHERE table_schema = current_schema() AND table_name = 'runs' "
                           "ORDER BY ordinal_position").fetchall()
    if tuple(map(tuple, columns)) != COLUMN_TYPES:
        raise _refuse(url, "its runs table is not a ledger's (a foreign or altered database)")
    triggers = {tuple(row) for row in conn.execute(_TRIGGERS).fetchall()}
    if not triggers >= _APPEND_ONLY:
        raise _refuse(url, "its append-only triggers are gone or disabled (an altered ledger: the server would "
                      "let a run be changed or deleted)")
    return ("runs", "frozen") in triggers


class _Rows:
    """A server-side cursor's rows, any error from it an exit 2 (ledger_rows.Reader reads it a page at a time)."""

    def __init__(self, url: LedgerUrl, cursor: Any) -> None:
        self.url, self.cursor = url, cursor

    def _guard(self, fetch: Any, *args: Any) -> Any:
        try:
            return fetch(*args)
        except _psycopg().Error as exc:
            raise FatalError(f"--ledger {self.url}: cannot be read: {_scrub(self.url, str(exc))}") from None

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        return list(self._guard(self.cursor.fetchmany, size))

    def fetchone(self) -> tuple[Any, ...] | None:
        row = self._guard(self.cursor.fetchone)
        return None if row is None else tuple(row)


class ReadConnection:
    """One read of a PostgreSQL ledger: queries in one read-only snapshot, each through a server-side cursor."""

    def __init__(self, url: LedgerUrl) -> None:
        self.url = url
        try:
            self.conn = _connect(url, read_only=True)
        except _Lost as exc:
            raise FatalError(f"--ledger {url}: cannot connect: {exc}") from None
        self._cursors = 0
        pg = _psycopg()
        try:
            _check_format(url, self.conn)
        except pg.Error as exc:
            self.conn.close()
            raise FatalError(f"--ledger {url}: cannot be read: {_scrub(url, str(exc))}") from None
        except FatalError:
            self.conn.close()
            raise

    def execute(self, query: str) -> _Rows:
        self._cursors += 1
        cursor = self.conn.cursor(name=f"mlsubmit_ledger_{self._cursors}")
        rows = _Rows(self.url, cursor)
        rows._guard(cursor.execute, query)
        return rows

    def close(self) -> None:
        self.conn.close()


def _owner_connection(url: LedgerUrl) -> psycopg.Connection[Any]:
    """A read-write connection for the commands that change the ledger itself (init, freeze), or exit 2."""
    try:
        return _connect(url, read_only=False)
    except _Lost as exc:
        raise FatalError(f"--ledger {url}: cannot connect: {exc}") from None


def init(url: LedgerUrl) -> str:
    """Make the ledger's tables in an empty database (the one command that changes a ledger's schema); what it
    did, in words. A ledger already of this format is left as it is."""
    pg = _psycopg()
    conn = _owner_connection(url)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK,))  # two inits at once: one makes it
            try:
                with conn.transaction():
                    _check_format(url, conn)
                return "already a run ledger of this format: left as it is"
            except FatalError as exc:
                if "no run ledger in this database" not in str(exc):
                    raise
            for statement in _CREATE:
                conn.execute(statement)
        return f"made a run ledger of format {VERSION}"
    except pg.Error as exc:
        raise FatalError(f"--ledger {url}: cannot make the ledger: {_scrub(url, str(exc))}") from None
    finally:
        conn.close()


def freeze(url: LedgerUrl) -> str:
    """Freeze the ledger (its owner's role): from now on no role adds a run; what it did, in words."""
    pg = _psycopg()
    conn = _owner_connection(url)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))  # after every write under way
            if _check_format(url, conn):
                return "already frozen: left as it is"
            for statement in _FREEZE:
                conn.execute(statement)
        return "frozen: every role may read it, none may add a run (its owner may DROP TRIGGER frozen ON runs)"
    except pg.Error as exc:
        raise FatalError(f"--ledger {url}: cannot freeze it: {_scrub(url, str(exc))}") from None
    finally:
        conn.close()


def _insert_sql(columns: Sequence[str]) -> str:
    return (f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('%s' for _ in columns)}) "
            "ON CONFLICT (sha256, path) DO NOTHING")


def _frozen(url: LedgerUrl) -> FatalError:
    return FatalError(f"--ledger {url}: frozen (`mlsubmit runs freeze`: its round is submitted); nothing added "
                      "(record new runs in the next round's ledger)")


def require_ready(url: LedgerUrl) -> None:
    """Exit 2 now, before a check's minutes of work, for a ledger the check could not add its runs to: no extra,
    no server, not a ledger of this format, frozen, or a role that may not insert."""
    pg = _psycopg()
    conn = _owner_connection(url)
    try:
        if _check_format(url, conn):
            raise _frozen(url)
        allowed = conn.execute("SELECT has_table_privilege('runs', 'INSERT')").fetchone()
        if not (allowed and allowed[0]):
            raise FatalError(f"--ledger {url}: this role may read the ledger but not add runs to it (docs/runs.md: "
                             "the roles); nothing checked")
    except pg.Error as exc:
        raise FatalError(f"--ledger {url}: cannot be read: {_scrub(url, str(exc))}") from None
    finally:
        conn.close()


def _once(url: LedgerUrl, columns: Sequence[str], rows: list[tuple[object, ...]]) -> int:
    pg = _psycopg()
    conn = _connect(url, read_only=False)
    try:
        if _check_format(url, conn):
            raise _frozen(url)
        conn.commit()
        with conn.transaction(), conn.cursor() as cursor:
            # one writer at a time, as SQLite's BEGIN IMMEDIATE: no deadlock between writers of the same keys,
            # and ids in the order the rows were given and committed
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            cursor.executemany(_insert_sql(columns), rows)
            added = max(cursor.rowcount, 0)
        return added
    except (pg.errors.SerializationFailure, pg.errors.DeadlockDetected) as exc:
        raise _Lost(_scrub(url, str(exc))) from None
    except pg.OperationalError as exc:
        if conn.closed or conn.broken:
            raise _Lost(_scrub(url, str(exc))) from None
        raise FatalError(f"--ledger {url}: cannot add the runs: {_scrub(url, str(exc))}; none of them was "
                         "added") from None
    except pg.Error as exc:
        raise FatalError(f"--ledger {url}: cannot add the runs: {_scrub(url, str(exc))}; none of them was "
                         "added") from None
    finally:
        conn.close()


def record(url: LedgerUrl, columns: Sequence[str], rows: list[tuple[object, ...]]) -> int:
    """Add the rows (stored values, in `columns` order) not yet in the ledger, in one transaction; how many were
    new. Tried again after a lost connection or a serialisation failure; exit 2 once the tries are spent."""
    wait = FIRST_WAIT_S
    for attempt in range(ATTEMPTS):
        try:
            return _once(url, columns, rows)
        except _Lost as exc:  # noqa: PERF203 (a retry loop: the exception is the reason to go round)
            if attempt == ATTEMPTS - 1:
                raise FatalError(f"--ledger {url}: cannot add the runs: {exc} (tried {ATTEMPTS} times); each try "
                                 "was one transaction, so the ledger holds all of these runs or none (run the "
                                 "check again: it adds only what is missing)") from None
            time.sleep(wait)
            wait *= 2
    raise AssertionError("unreachable")

