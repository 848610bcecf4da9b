"""Waivers: what the review granted, recorded as `[[waiver]]` tables, read and checked here and applied to the
findings by waiver_pass.py.

A waiver names a code (or a whole family), a gitignore-style path glob, an optional message pattern, why (reason,
reference, who) and the last day it holds (expires). Applying waivers is a pass over a Report after the check, so
nothing of it reaches the per-log cache: a matched finding is kept and marked (`Finding.waived`) and no longer
fails the run. A waiver that matches nothing (WVR001) or is past its date (WVR002, and it waives nothing) is a
finding of its own, at the line of its table.

Message patterns are RE2 expressions: matched in time linear in the message, with bounded memory, and nothing in
them is executed. The tables come from the nearest mlsubmit.toml above a PATH (globs relative to its folder) or
from `--waivers FILE` (globs relative to that file's folder): never to the working folder, so a check run from
elsewhere is waived alike.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker.rounds.detect import nearest_configs

from mlsubmit.core.codes import catalogue, families
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Waived
from mlsubmit.core.repeats import original_message
from mlsubmit.core.support.safe_io import read_bounded

FILE_LIMIT = 32 << 20  # a written waiver file takes about 180 bytes a table; MAX_WAIVERS of them fit
MAX_WAIVERS = 50_000  # schemas/waivers.schema.json's maxItems
MESSAGE_LIMIT = 1 << 16  # characters of a message a pattern is searched in
_LITERAL_MEMORY = 8 << 20  # RE2's budget for checking a literal `^...$` pattern (compared as text, never kept)
_REGEX_MEMORY = 256 << 10  # RE2's budget for one kept pattern: its program and the DFA cache its searches fill
_PROGRAM_LIMIT = 5_000  # RE2 instructions in one kept pattern (`\pL` alone is 1,200; `\pL{100}` 120,000)
REGEX_BUDGET = 128 << 20  # the kept patterns of one file together: 512 distinct ones (2,000 `\pL{100}`: 1.9 GB, 78 s)
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(?:waiver|\"waiver\"|'waiver')[ \t]*\]\]")
_SURROGATE = re.compile("[\ud800-\udfff]")
EVERYWHERE = "**"
_SYNTAX = r"\\.^$|?*+()\[\]{}"
_EXACT = re.compile(rf"^\^((?:[^{_SYNTAX}]|\\[{_SYNTAX}]|\\x\{{[0-9A-F]{{1,6}}\}})*)\$$", re.DOTALL)
_ESCAPE = re.compile(r"\\x\{([0-9A-F]{1,6})\}|\\(.)", re.DOTALL)


@dataclass(frozen=True)
class Waiver:
    """One `[[waiver]]` table: where it is written and what it grants."""

    source: str  # the file, as reports show it
    index: int  # 0-based among the file's tables (JSON pointer /waiver/<index>)
    line: int | None  # line of its [[waiver]] header
    base: Path  # the folder its path glob is relative to
    code: str
    path: str
    message: str | None
    reason: str
    reference: str
    who: str
    expires: dt.date
    _matchers: tuple[Any, Any] = field(default=(None, None), compare=False, repr=False)

    def mark(self) -> Waived:
        return Waived(reason=self.reason, reference=self.reference, who=self.who,
                      expires=self.expires.isoformat(), source=self.source, index=self.index, line=self.line)

    def expired(self, today: dt.date) -> bool:
        return today > self.expires

    def covers(self, f: Finding, relative: str, *, path_known: bool = False) -> bool:
        """Whether this waiver selects `f`, whose path relative to `base` is `relative` ("" for the run);
        `path_known`: the caller found the waiver by that path already."""
        if f.code != self.code and f.family != self.code:
            return False
        spec, pattern = self._matchers
        if not path_known and self.path != EVERYWHERE and (not relative or not spec.match_file(relative)):
            return False
        if pattern is None:
            return True
        message = original_message(f)  # a fold of many findings (mlsubmit/core/repeats.py): the message they share
        if message is None:
            return False
        text = searchable_message(message)
        exact = literal_message(self.message or "")
        return text == exact if exact is not None else pattern.search(text) is not None


@functools.lru_cache(maxsize=65536)
def literal_message(pattern: str) -> str | None:
    """The one message a `^...$` pattern of literal characters matches (what --write-waivers writes), else None:
    compared as text, it needs no regular expression."""
    m = _EXACT.match(pattern)
    if m is None:
        return None
    try:
        return _ESCAPE.sub(lambda e: chr(int(e.group(1), 16)) if e.group(1) else e.group(2), m.group(1))
    except ValueError:  # past U+10FFFF: RE2 has refused the pattern already
        return None


def searchable_message(message: str) -> str:
    """The text a pattern is searched in: bounded, and encodable (a lone surrogate from a log is U+FFFD)."""
    return _SURROGATE.sub("\ufffd", message[:MESSAGE_LIMIT])


# --- reading ------------------------------------------------------------------------------------------------------


class _Patterns:
    """The message patterns of one waiver file, compiled once each within REGEX_BUDGET. A literal `^...$` pattern
    is checked by RE2 and then compared as text (literal_message), so only the others are kept and counted."""

    def __init__(self) -> None:
        self.kept: dict[str, Any] = {}

    def compiled(self, message: str, where: str) -> Any:
        if message in self.kept:
            return self.kept[message]
        literal = literal_message(message) is not None
        if not literal and (len(self.kept) + 1) * _REGEX_MEMORY > REGEX_BUDGET:
            raise UsageError(f"{where}: more than {REGEX_BUDGET // _REGEX_MEMORY} distinct message patterns that "
                             f"are not literal (RE2's budget of {REGEX_BUDGET >> 20} MiB for them all, "
                             f"{_REGEX_MEMORY >> 10} KiB each); write the messages out as ^...$ literals")
        pattern = _re2(message, _LITERAL_MEMORY if literal else _REGEX_MEMORY, where)
        if literal:
            return _LITERAL
        if pattern.programsize > _PROGRAM_LIMIT:
            raise UsageError(f"{where}: message {_shown(message)} compiles to {pattern.programsize} RE2 instructions, "
                             f"more than {_PROGRAM_LIMIT}; write a simpler pattern")
        self.kept[message] = pattern
        return pattern


_LITERAL = "literal"  # the matcher of a literal pattern: covers() compares the text


def _shown(message: str) -> str:
    return repr(message) if len(message) <= 200 else repr(message[:200]) + f" (of {len(message)} characters)"


def _re2(message: str, memory: int, where: str) -> Any:
    # lazy: re2: ~7 ms to import; only a waiver with a message pattern needs it
    import re2

    options = re2.Options()
    options.max_mem = memory
    options.log_errors = False
    try:
        return re2.compile(message, options)
    except re2.error as exc:
        too_large = "too large" in str(exc)
        said = f"larger than RE2's budget of {memory >> 10} KiB for one pattern" if too_large else str(exc)
        raise UsageError(f"{where}: message {_shown(message)} is not an RE2 regular expression we take: {said}"
                         ) from None


def _compiled(glob: str, message: str | None, where: str, patterns: _Patterns) -> tuple[Any, Any]:
    # lazy: pathspec: ~90 ms to import; only a waiver with a path glob needs it
    import pathspec

    try:
        spec = pathspec.GitIgnoreSpec.from_lines([glob])
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{where}: path {glob!r} is not a glob: {exc}") from None
    return spec, None if message is None else patterns.compiled(message, where)


@functools.cache
def _known_codes() -> frozenset[str]:
    """Every catalogued code and family: what a waiver may name."""
    return frozenset(families()) | frozenset(catalogue())


def _known_code(code: str, where: str) -> None:
    if code not in _known_codes():
        raise UsageError(f"{where}: code {code} is not in the catalogue (see `mlsubmit explain`)")


def header_lines(text: str) -> list[int]:
    """The line of each `[[waiver]]` header, in order."""
    return [n for n, ln in enumerate(text.splitlines(), 1) if _HEADER.match(ln)]


def _as_text(table: Any) -> Any:
    """A table with TOML dates as the ISO text the schema checks (a date-time stays a date-time: refused)."""
    if not isinstance(table, dict):
        return table
    return {k: v.isoformat() if type(v) is dt.date else v for k, v in table.items()}


def _validated(data: dict[str, Any], shown: str) -> list[dict[str, Any]]:
    # jsonschema only when a waiver file is read (start-up)
    from mlsubmit.core.support.schema_loader import errors, load_schema, pointer

    tables = data.get("waiver", [])
    subset = {"waiver": [_as_text(t) for t in tables] if isinstance(tables, list) else tables}
    problems = errors(subset, load_schema("waivers.schema.json"))
    if problems:
        first = problems[0]
        at = pointer(first)
        index = f" (waiver {int(at.split('/')[2]) + 1})" if at.count("/") >= 2 else ""
        # jsonschema's message quotes the value: bounded, since the value may be the whole array of tables
        said = first.message if len(first.message) <= 300 else f"fails {first.validator} {first.validator_value!r}"
        raise UsageError(f"{shown}{index}: {at or '/'}: {said}"
                         + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))
    return list(subset["waiver"])


def _waiver(table: dict[str, Any], index: int, line: int | None, shown: str, base: Path,
            patterns: _Patterns) -> Waiver:
    where = f"{shown}:{line}" if line else shown
    where += f" (waiver {index + 1})"
    try:
        expires = dt.date.fromisoformat(table["expires"])
    except ValueError:
        raise UsageError(f"{where}: expires {table['expires']!r} is not a date") from None
    _known_code(table["code"], where)
    glob, message = table.get("path", EVERYWHERE), table.get("message")
    return Waiver(source=shown, index=index, line=line, base=base, code=table["code"], path=glob, message=message,
                  reason=table["reason"], reference=table["reference"], who=table["who"], expires=expires,
                  _matchers=_compiled(glob, message, where, patterns))


def read_waivers(path: Path, *, base: Path, shown: str | None = None) -> list[Waiver]:
    """The waivers of a TOML file (its `[[waiver]]` tables; other tables are left to their readers).
    A file that cannot be read or a table that does not match schemas/waivers.schema.json is a UsageError."""
    # tomllib only when a waiver file is read (start-up)
    from mlsubmit.core.support import tomlfile

    shown = shown or str(path)
    try:
        text = read_bounded(path, FILE_LIMIT).decode("utf-8")
        data = tomlfile.loads(text)
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomlfile.TOMLDecodeError as exc:
        raise UsageError(f"{shown}: not TOML: {exc}") from None
    tables = _validated(data, shown)
    lines: Sequence[int | None] = header_lines(text)
    if len(lines) != len(tables):  # written as `waiver = [{...}]`: no header lines to point at
        lines = [None] * len(tables)
    patterns = _Patterns()
    return [_waiver(t, i, lines[i], shown, base, patterns) for i, t in enumerate(tables)]


def shown_path(path: Path) -> str:
    """A file as reports show it: relative to the working folder when under it, else absolute."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    return full if rel == ".." or rel.startswith(".." + os.sep) else rel


def project_configs(paths: Iterable[str]) -> list[Path]:
    """The nearest mlsubmit.toml in or above each PATH's folder, once each, in the order first found."""
    return [config for config in nearest_configs(paths) if config is not None]


def project_waivers(paths: Iterable[str]) -> list[Waiver]:
    """The waivers of the project's mlsubmit.toml files (see project_configs), globs relative to each one's folder."""
    return [w for config in project_configs(paths) for w in read_waivers(config, base=config.parent,
                                                                         shown=shown_path(config))]
