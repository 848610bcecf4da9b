"""Waivers: what the review granted, recorded as `[[waiver]]` tables and applied to a finished Report.

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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlsubmit.checker.rounds.detect import nearest_configs

from mlsubmit.core.codes import catalogue, families, finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Report, Waived
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
        text = searchable(message)
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


def searchable(message: str) -> str:
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


# --- applying -----------------------------------------------------------------------------------------------------


def relative_to(path: str, base: Path, anchor: Path) -> str:
    """`path` ('/'-separated) relative to `base`; a relative `path` is taken from `anchor`. "" stays "".
    Both are taken by their real folders, so a waiver written through a symlinked path matches the tree checked by
    its real path, and the other way round; the last part keeps its own name (a result file that is a link to
    another run is still its own run)."""
    if not path:
        return ""
    full = os.path.normpath(os.path.join(anchor, path))
    real = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
    return os.path.relpath(real, os.path.realpath(base)).replace(os.sep, "/")


def literal_path(glob: str) -> str | None:
    """The one path an anchored glob without wildcards names (`/a/b`, `a/b`, escapes undone), else None. Such a
    glob also matches everything below that path, as gitignore patterns do."""
    out = []
    chars = iter(glob)
    for ch in chars:
        if ch == "\\":
            out.append(next(chars, ""))
        elif ch in "*?[":
            return None
        else:
            out.append(ch)
    path = "".join(out)
    if path.endswith("/") or "/" not in path.rstrip("/"):
        return None  # a folder pattern, or a name matched at any depth
    return path.lstrip("/") if path.startswith("/") else path


@dataclass
class _Index:
    """The live waivers a finding may match, found without trying each: by code or family, and for globs naming
    one path (what --write-waivers writes), by that path."""

    live: Sequence[Waiver]
    by_path: dict[tuple[Path, str, str, str | None], list[int]] = field(default_factory=dict)  # message: exact
    by_code: dict[str, list[int]] = field(default_factory=dict)
    bases: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        for i, w in enumerate(self.live):
            literal = literal_path(w.path)
            if literal is None:
                self.by_code.setdefault(w.code, []).append(i)
            else:
                exact = literal_message(w.message) if w.message is not None else None
                self.by_path.setdefault((w.base, w.code, literal, exact), []).append(i)
                self.bases.add(w.base)

    def candidates(self, f: Finding, rel: Any) -> list[tuple[int, bool]]:
        """(position, found by its path) of each waiver that may cover `f`, in file order: the first that covers
        marks the finding."""
        found = dict.fromkeys(self.by_code.get(f.code, []) + self.by_code.get(f.family, []), False)
        text = searchable(f.message)
        for base in self.bases if f.path else ():
            parts = rel(f.path, base).split("/")
            for n in range(1, len(parts) + 1):  # the path and each folder above it
                prefix = "/".join(parts[:n])
                for code in (f.code, f.family):
                    for exact in (None, text):  # any message (a pattern, or none), or exactly this one
                        found.update(dict.fromkeys(self.by_path.get((base, code, prefix, exact), ()), True))
        return sorted(found.items())


def _waive(f: Finding, index: _Index, used: dict[int, int], rel: Any) -> Finding:
    if f.waived is not None or f.family == "WVR":
        return f
    for i, path_known in index.candidates(f, rel):
        w = index.live[i]
        if w.covers(f, rel(f.path, w.base), path_known=path_known):
            used[i] += 1
            return replace(f, waived=w.mark())
    return f


def _own_findings(waivers: Sequence[Waiver], used: dict[int, int], live: Sequence[Waiver],
                  today: dt.date) -> list[Finding]:
    out = []
    for w in waivers:
        what = f"waiver {w.index + 1} ({w.code}, path {w.path}" + (f", message {w.message}" if w.message else "") + ")"
        if w.expired(today):
            out.append(finding("WVR002", w.source, f"{what} expired on {w.expires.isoformat()}; it waives nothing "
                               f"now (granted by {w.who}: {w.reference})", line=w.line,
                               pointer=f"/waiver/{w.index}"))
    out.extend(finding("WVR001", w.source, f"waiver {w.index + 1} ({w.code}, path {w.path}"
                       + (f", message {w.message}" if w.message else "") + ") matches no finding of this run",
                       line=w.line, pointer=f"/waiver/{w.index}")
               for i, w in enumerate(live) if used[i] == 0)
    return out


class WaiverPass:
    """The waivers of one run applied finding by finding, as the policy settles each (checker/policy/severity.py):
    which waiver marks a finding, and at the end a finding for each waiver that is unused or expired. One pass may
    span several reports (the rounds of one `check`): a waiver is unused only when no round used it."""

    def __init__(self, waivers: Sequence[Waiver], today: dt.date, anchor: Path) -> None:
        self.waivers = waivers
        self.today = today
        self.live = [w for w in waivers if not w.expired(today)]
        self.used = dict.fromkeys(range(len(self.live)), 0)
        self.index = _Index(self.live)
        self.rel = functools.lru_cache(maxsize=4096)(lambda path, base: relative_to(path, base, anchor))

    def waive(self, f: Finding) -> Finding:
        """`f` marked waived by the first live waiver that covers it (or as it is)."""
        return _waive(f, self.index, self.used, self.rel)

    def own_findings(self) -> list[Finding]:
        """WVR002 for each expired waiver, WVR001 for each live one that marked nothing."""
        return _own_findings(self.waivers, self.used, self.live, self.today)


def waiver_pass(waivers: Sequence[Waiver], *, today: dt.date | None = None,
                anchor: Path | None = None) -> WaiverPass | None:
    """A pass for `waivers` (None without any). `anchor` is the folder the report's relative paths start from (the
    working folder); `today` is the date expiry is judged on."""
    if not waivers:
        return None
    return WaiverPass(waivers, today or dt.date.today(), anchor or Path.cwd())


def apply_waivers(report: Report, waivers: Sequence[Waiver], *, today: dt.date | None = None,
                  anchor: Path | None = None) -> Report:
    """A copy of `report` whose findings a live waiver covers are marked waived (the first waiver that covers a
    finding marks it), plus a finding for each waiver that is unused or expired: for reports made outside a check
    run (`package`'s at its inputs' paths); `check` applies its waivers inside its policy."""
    waiving = waiver_pass(waivers, today=today, anchor=anchor)
    if waiving is None:
        return report
    out = Report(strict=report.strict, meta=dict(report.meta), tally=report.tally)
    for path, found in report.files.items():
        out.add_file(path, [waiving.waive(f) for f in found])
    out.tree.extend(waiving.waive(f) for f in report.tree)
    out.extend(waiving.own_findings())
    return out


def applied(report: Report) -> list[dict[str, Any]]:
    """Each waiver that marked a finding, with how many: what `package` records in its manifest."""
    counts: dict[tuple[str, int], tuple[Waived, list[str]]] = {}
    for f in report.all_findings():
        if f.waived is not None:
            key = (f.waived.source, f.waived.index)
            counts.setdefault(key, (f.waived, []))[1].append(f.code)
    return [{"source": w.source, "index": w.index, "reason": w.reason, "reference": w.reference, "who": w.who,
             "expires": w.expires, "findings": len(codes), "codes": sorted(set(codes))}
            for (_, _), (w, codes) in sorted(counts.items())]
