"""The secret scan of implementation code: detect-secrets' verdict on every file, at a fraction of its cost.

detect-secrets spends nearly all its time calling each of its ~24 plugins, and its filters, on every line through
its dependency-injection helper (~20-130 ms for a typical source file). Almost no line can match any plugin, and
whether one can is decided by the plugins' own patterns. So each file goes through detect-secrets' own steps
(its file filters, its transformers, its line-level filters and plugins, its stop after the first pass that finds
something), except that a line reaches the plugins only when the pre-filter of checker/hygiene/prefilter.py, built
from those plugins' patterns, says some plugin could report it. The results are the same, secret for secret
(tests/differential/test_codescan.py checks it against plain detect-secrets: corpus code, a generated tree).

This module is the one that calls detect-secrets' private scanning functions (core.scan's `_is_filtered_out` and
`_scan_line`), so pyproject pins it below its next minor version; CPython's private re parser is reached only by
regex_internals.py.
"""

from __future__ import annotations

import configparser
import contextlib
import functools
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.base.cache import MISS, load_entry, store_entry
from mlsubmit.checker.base.options import Tracker, no_progress
from mlsubmit.checker.base.pool import run_shared
from mlsubmit.checker.hygiene import prefilter as secretfilter
from mlsubmit.checker.hygiene.prefilter import candidate_lines, plugin_probes

from mlsubmit import __version__

Hit = tuple[int, str]  # (1-based line, kind of secret)


def settings(plugins: tuple[str, ...]) -> dict[str, Any]:
    return {"plugins_used": [{"name": name} for name in plugins]}


def scan_file(path: str, plugins: tuple[str, ...]) -> list[Hit]:
    """detect-secrets' findings for one file, deduplicated as its SecretsCollection does (same secret and type:
    the first line is kept), sorted. The caller sets detect-secrets' settings (`settings(plugins)`)."""
    seen: dict[Any, int] = {}
    for secret in _secrets(path, plugins):
        seen.setdefault(secret, int(secret.line_number or 0))
    return sorted({(line, str(secret.type)) for secret, line in seen.items()})


def _secrets(filename: str, plugins: tuple[str, ...]) -> Iterator[Any]:
    """detect-secrets' scan.scan_file, with only candidate lines sent to the plugins."""
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.core import scan

    if scan._is_filtered_out(required_filter_parameters=["filename"], filename=filename):
        return  # its own file filters: missing files, non-text extensions
    try:
        for lines in _passes(filename):
            found = False
            for secret in _candidate_secrets(lines, filename, plugins):
                found = True
                yield secret
            if found:  # as detect-secrets: the eager transformers only when the first pass finds nothing
                return
    except OSError:  # detect-secrets too skips a file it cannot open
        return


def _passes(filename: str) -> Iterator[list[str]]:
    """detect-secrets' scan._get_lines_from_file: the file's lines as its transformers give them, then, when
    asked for more, as its eager transformers give them. Same steps, except that a config transformer is tried
    only on text its parser can read (`_ini_readable`): on other text it fails, only later."""
    with open(filename) as f:  # as detect-secrets opens it: the locale's encoding
        try:
            lines = _transformed(f, eager=False) or f.readlines()
        except UnicodeDecodeError:  # detect-secrets passes over files it cannot decode
            return
        yield lines
        f.seek(0)
        eager = _transformed(f, eager=True)
        if eager:
            yield eager


def _transformed(f: Any, *, eager: bool) -> list[str] | None:
    """detect-secrets' transformers.get_transformed_file: the first of its transformers for this file that
    parses it, in its order; None when none does."""
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.transformers import get_transformers
    from detect_secrets.transformers.config import ConfigFileTransformer, EagerConfigFileTransformer
    from detect_secrets.transformers.exceptions import ParsingError

    transformer: Any
    for transformer in get_transformers():
        if not transformer.should_parse_file(f.name) or transformer.is_eager != eager:
            continue
        try:
            config = isinstance(transformer, (ConfigFileTransformer, EagerConfigFileTransformer))
            if config and not _ini_readable(f.read(), header=eager):
                continue
            f.seek(0)
            lines: list[str] = transformer.parse_file(f)
            return lines
        except ParsingError:
            pass
        finally:
            f.seek(0)
    return None


class _FirstErrorParser(configparser.ConfigParser):
    """The parser detect-secrets' config transformers use, stopping at the first line it cannot read: the
    library's own parser reads on to the end of the file and then raises (for nearly every source file)."""

    def _handle_error(self, exc: Any, fpname: Any, lineno: Any, line: Any) -> Any:
        raise configparser.ParsingError(fpname)


def _ini_readable(content: str, *, header: bool) -> bool:
    """False when detect-secrets' IniFileParser would fail on this text (with its `[global]` header when
    `header`); True when it may not. Without the parser's error hook (Python >= 3.13) every text may."""
    if not hasattr(configparser.RawConfigParser, "_handle_error"):
        return True
    parser = _FirstErrorParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string("[global]\n" + content if header else content)
    except configparser.Error:
        return False
    return True


def _candidate_secrets(lines: list[str], filename: str, plugins: tuple[str, ...]) -> Iterator[Any]:
    """What detect-secrets' line loop yields for `lines`; lines no plugin can report are not visited."""
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.core import scan
    from detect_secrets.settings import get_plugins
    from detect_secrets.util.code_snippet import get_code_snippet

    stripped = [line.rstrip() for line in lines]
    probes = plugin_probes(plugins, filename)
    wanted = range(len(lines)) if probes is None else candidate_lines(stripped, probes, plugins)
    for index in wanted:
        number, line = index + 1, stripped[index]
        snippet = get_code_snippet(lines=lines, line_number=number)
        if scan._is_filtered_out(required_filter_parameters=["line"], filename=filename, line=line,
                                 context=snippet):  # fmt: skip
            continue
        for plugin in get_plugins():
            for secret in scan._scan_line(plugin=plugin, filename=filename, line=line, line_number=number,
                                          context=snippet):  # fmt: skip
                if not scan._is_filtered_out(required_filter_parameters=["context"], filename=secret.filename,
                                             secret=secret.secret_value, plugin=plugin, line=line,
                                             context=snippet):  # fmt: skip
                    yield secret


# --- many files: cached by content, spread over processes ----------------------------------------------------

Found = tuple[str, int, str]  # (file as given, 1-based line, kind of secret)
FORMAT = 1  # of the cached results: raise it when this module's answers could change
_POOL_THRESHOLD = 32  # fewer files than this to scan: forking costs more than it saves


@dataclass(frozen=True)
class Job:
    path: str  # as detect-secrets is given it (its filename filters and file type read this)
    sha256: str  # of the bytes scanned: the cache key


def scan_files(jobs: list[Job], plugins: tuple[str, ...], *, cache_dir: Path | None = None, workers: int = 0,
               pack: str = "", complete: bool = True, label: str = "scanning code for secrets",
               progress: Tracker = no_progress, done: Mapping[str, list[Hit]] | None = None) -> list[Found]:
    """Secrets in every job's file, as detect-secrets reports them; cached results are reused, so are those in
    `done` (path -> hits of the job's content, scanned by the caller), the rest are scanned over `workers`
    processes (0: one per core) with a progress bar on a terminal.

    The cache keeps one entry per `pack` (the scanned tree): each file's results under its content hash and path.
    One entry, not one per file: creating a file costs about a millisecond here, 13 s for a round's code.
    `complete`: the jobs are the whole tree (the entry then drops files that are gone), else they are added."""
    kept = load_pack(cache_dir, pack, plugins)
    found: list[Found] = []
    todo: list[Job] = []
    fresh: dict[str, list[list[Any]]] = {}
    for job in jobs:
        hit = kept.get(file_key(job.path, job.sha256))
        if hit is None and done is not None and job.path in done:
            hit = [list(h) for h in done[job.path]]
        if hit is None:
            todo.append(job)
            continue
        fresh[file_key(job.path, job.sha256)] = hit
        found += [(job.path, line, kind) for line, kind in hit]
    if todo:  # else nothing to scan: no bar, and detect-secrets is not even imported
        scanned = _scan_all(todo, plugins, workers or os.cpu_count() or 1, progress, label)
        for job, hits in zip(todo, scanned, strict=True):
            fresh[file_key(job.path, job.sha256)] = [list(h) for h in hits]
            found += [(job.path, line, kind) for line, kind in hits]
    body = fresh if complete else {**kept, **fresh}
    if body != kept:  # new or changed files, or (complete) files gone
        _store_pack(cache_dir, pack, plugins, body)
    return sorted(found)


@contextmanager
def scanning(plugins: tuple[str, ...]) -> Iterator[None]:
    """detect-secrets' settings for `plugins`, and their pre-filter compiled, while open: `scan_file` may be
    called here and in processes forked meanwhile."""
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.settings import transient_settings

    with transient_settings(settings(plugins)):
        plugin_probes(plugins, "x.py")
        secretfilter.gate(plugins)  # loaded (or compiled) once here, before any fork
        yield


class _Session:
    """`scanning(plugins)` entered by each process the first time it scans a file, and left when the session
    ends in the process that opened it: the pool's workers pay for importing detect-secrets (~0.1 s) in
    parallel, and only those that meet a code file."""

    def __init__(self, plugins: tuple[str, ...]) -> None:
        self.plugins = plugins
        self.opened: dict[int, contextlib.ExitStack] = {}

    def ready(self) -> None:
        if os.getpid() not in self.opened:
            stack = contextlib.ExitStack()
            stack.enter_context(scanning(self.plugins))
            self.opened[os.getpid()] = stack

    def close(self) -> None:
        stack = self.opened.pop(os.getpid(), None)
        if stack is not None:
            stack.close()


_SESSIONS: list[_Session] = []


@contextmanager
def session(plugins: tuple[str, ...]) -> Iterator[None]:
    """While open, `scan_in_session` may be called here and in processes forked meanwhile; each sets detect-
    secrets up when it first does."""
    opened = _Session(plugins)
    _SESSIONS.append(opened)
    try:
        yield
    finally:
        _SESSIONS.remove(opened)
        opened.close()


def scan_in_session(path: str) -> list[Hit]:
    """`scan_file` inside the innermost open `session`."""
    current = _SESSIONS[-1]
    current.ready()
    return scan_file(path, current.plugins)


@functools.cache  # importlib.metadata scans the installed distributions on each call
def _scanner_key(plugins: tuple[str, ...]) -> str:
    # lazy: importlib.metadata: ~25 ms to import; once per process (cached)
    import importlib.metadata

    parts = [str(FORMAT), __version__, importlib.metadata.version("detect-secrets"), *plugins]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def file_key(path: str, sha256: str) -> str:
    """A file's key in a cache entry: its content hash and its path as scanned (its name decides detect-secrets'
    file type and filters)."""
    return f"{sha256}:{path}"


def _pack_entry(cache_dir: Path, pack: str, plugins: tuple[str, ...]) -> tuple[Path, str]:
    name = hashlib.sha256(pack.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir / "secrets" / _scanner_key(plugins) / f"{name}.json", f"secrets/{_scanner_key(plugins)}/{pack}"


def _is_pack(body: Any) -> bool:
    return isinstance(body, dict) and all(
        isinstance(k, str) and isinstance(v, list)
        and all(isinstance(h, list) and len(h) == 2 and isinstance(h[0], int) and isinstance(h[1], str) for h in v)
        for k, v in body.items()
    )  # fmt: skip


def load_pack(cache_dir: Path | None, pack: str, plugins: tuple[str, ...]) -> dict[str, list[list[Any]]]:
    """The cache entry of `pack` (`file_key` -> hits); empty without a cache or a valid entry."""
    if cache_dir is None:
        return {}

    entry, key = _pack_entry(cache_dir, pack, plugins)
    body = load_entry(cache_dir, entry, key, _is_pack)
    return {} if body is MISS else body


def _store_pack(cache_dir: Path | None, pack: str, plugins: tuple[str, ...], body: dict[str, list[list[Any]]]
                ) -> None:
    if cache_dir is None:
        return

    entry, key = _pack_entry(cache_dir, pack, plugins)
    store_entry(cache_dir, entry, key, body)


def _scan_all(todo: list[Job], plugins: tuple[str, ...], workers: int, progress: Tracker, label: str
              ) -> list[list[Hit]]:
    """Each job's hits, in order: here alone for a few files, else over the check's worker pool (base/pool.py),
    largest files first so the shares end together."""
    with scanning(plugins):  # the pre-filter compiled once here, before any fork
        if workers <= 1 or len(todo) < _POOL_THRESHOLD or not hasattr(os, "fork"):
            with progress(len(todo), label) as advance:
                return [_scanned(job.path, plugins, advance) for job in todo]

        order = sorted(range(len(todo)), key=lambda i: -_size(todo[i].path))
        hits = run_shared(len(order), lambda k: scan_file(todo[order[k]].path, plugins), workers, _nothing,
                          progress, label)  # fmt: skip
    out: list[list[Hit]] = [[] for _ in todo]
    for k, i in enumerate(order):
        out[i] = hits[k]
    return out


def _scanned(path: str, plugins: tuple[str, ...], advance: Callable[[], None]) -> list[Hit]:
    hits = scan_file(path, plugins)
    advance()
    return hits


def _nothing() -> None:
    return None


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
