"""Waivers: what the review granted, recorded as `[[waiver]]` tables and applied to a finished Report.

A waiver names a code (or a whole family), a gitignore-style path glob, an optional message pattern, why (reason,
reference, who) and the last day it holds (expires). Applying waivers is a pass over a Report after the check, so
nothing of it reaches the per-log cache: a matched finding is kept and marked (`Finding.waived`) and no longer
fails the run. A waiver that matches nothing (WVR001) or is past its date (WVR002, and it waives nothing) is a
finding of its own, at the line of its table.

Message patterns are RE2 expressions: matched in time linear in the message, with bounded memory, and nothing in
them is executed. The tables come from the nearest mlsubmit.toml above a PATH (globs relative to its folder) or
from `--waivers FILE` (globs relative to the working folder, as the report shows paths).
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

from mlsubmit.codes import families, finding
from mlsubmit.errors import UsageError
from mlsubmit.findings import Finding, Report, Waived

CONFIG_FILE = "mlsubmit.toml"
FILE_LIMIT = 4 << 20  # a waiver file of a big tree holds a few thousand tables
MESSAGE_LIMIT = 1 << 16  # characters of a message a pattern is searched in
_REGEX_MEMORY = 8 << 20  # RE2's budget for one compiled pattern
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(?:waiver|\"waiver\"|'waiver')[ \t]*\]\]")
_SURROGATE = re.compile("[\ud800-\udfff]")
EVERYWHERE = "**"


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

    def covers(self, f: Finding, relative: str) -> bool:
        """Whether this waiver selects `f`, whose path relative to `base` is `relative` ("" for the run)."""
        if f.code != self.code and f.family != self.code:
            return False
        spec, pattern = self._matchers
        if self.path != EVERYWHERE and (not relative or not spec.match_file(relative)):
            return False
        return pattern is None or pattern.search(searchable(f.message)) is not None


def searchable(message: str) -> str:
    """The text a pattern is searched in: bounded, and encodable (a lone surrogate from a log is U+FFFD)."""
    return _SURROGATE.sub("\ufffd", message[:MESSAGE_LIMIT])


# --- reading ------------------------------------------------------------------------------------------------------


def _compiled(glob: str, message: str | None, where: str) -> tuple[Any, Any]:
    import pathspec
    import re2

    try:
        spec = pathspec.GitIgnoreSpec.from_lines([glob])
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{where}: path {glob!r} is not a glob: {exc}") from None
    if message is None:
        return spec, None
    options = re2.Options()
    options.max_mem = _REGEX_MEMORY
    options.log_errors = False
    try:
        return spec, re2.compile(message, options)
    except re2.error as exc:
        raise UsageError(f"{where}: message {message!r} is not an RE2 regular expression: {exc}") from None


def _known_code(code: str, where: str) -> None:
    from mlsubmit.codes import family_codes

    family = code.rstrip("0123456789")
    if family not in families() or (family != code and code not in family_codes(family)):
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
    from mlsubmit.support.schema_loader import errors, load_schema, pointer

    tables = data.get("waiver", [])
    subset = {"waiver": [_as_text(t) for t in tables] if isinstance(tables, list) else tables}
    problems = errors(subset, load_schema("waivers.schema.json"))
    if problems:
        first = problems[0]
        at = pointer(first)
        index = f" (waiver {int(at.split('/')[2]) + 1})" if at.count("/") >= 2 else ""
        raise UsageError(f"{shown}{index}: {at or '/'}: {first.message}"
                         + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))
    return list(subset["waiver"])


def _waiver(table: dict[str, Any], index: int, line: int | None, shown: str, base: Path) -> Waiver:
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
                  _matchers=_compiled(glob, message, where))


def read_waivers(path: Path, *, base: Path, shown: str | None = None) -> list[Waiver]:
    """The waivers of a TOML file (its `[[waiver]]` tables; other tables are left to their readers).
    A file that cannot be read or a table that does not match schemas/waivers.schema.json is a UsageError."""
    from mlsubmit.support import tomlfile
    from mlsubmit.support.safe_io import read_bounded

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
    return [_waiver(t, i, lines[i], shown, base) for i, t in enumerate(tables)]


def shown_path(path: Path) -> str:
    """A file as reports show it: relative to the working folder when under it, else absolute."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    return full if rel == ".." or rel.startswith(".." + os.sep) else rel


def project_configs(paths: Iterable[str]) -> list[Path]:
    """The nearest mlsubmit.toml in or above each PATH's folder, once each, in the order first found."""
    found: dict[Path, None] = {}
    for given in paths:
        start = Path(given).resolve()
        for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
            config = folder / CONFIG_FILE
            if config.is_file():
                found.setdefault(config)
                break
    return list(found)


def project_waivers(paths: Iterable[str]) -> list[Waiver]:
    """The waivers of the project's mlsubmit.toml files (see project_configs), globs relative to each one's folder."""
    return [w for config in project_configs(paths) for w in read_waivers(config, base=config.parent,
                                                                         shown=shown_path(config))]


# --- applying -----------------------------------------------------------------------------------------------------


def relative_to(path: str, base: Path, anchor: Path) -> str:
    """`path` ('/'-separated) relative to `base`; a relative `path` is taken from `anchor`. "" stays ""."""
    if not path:
        return ""
    full = os.path.normpath(os.path.join(anchor, path))
    return os.path.relpath(full, base).replace(os.sep, "/")


def _waive(f: Finding, live: Sequence[Waiver], used: dict[int, int], rel: Any) -> Finding:
    if f.waived is not None or f.family == "WVR":
        return f
    for i, w in enumerate(live):
        if w.covers(f, rel(f.path, w.base)):
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


def apply_waivers(report: Report, waivers: Sequence[Waiver], *, today: dt.date | None = None,
                  anchor: Path | None = None) -> Report:
    """A copy of `report` whose findings a live waiver covers are marked waived (the first waiver that covers a
    finding marks it), plus a finding for each waiver that is unused or expired. `anchor` is the folder the
    report's relative paths start from (the working folder); `today` is the date expiry is judged on."""
    if not waivers:
        return report
    today = today or dt.date.today()
    anchor = anchor or Path.cwd()
    live = [w for w in waivers if not w.expired(today)]
    used = dict.fromkeys(range(len(live)), 0)
    rel = functools.lru_cache(maxsize=4096)(lambda path, base: relative_to(path, base, anchor))
    out = Report(strict=report.strict, meta=dict(report.meta), tally=report.tally)
    for path, found in report.files.items():
        out.add_file(path, [_waive(f, live, used, rel) for f in found])
    out.tree.extend(_waive(f, live, used, rel) for f in report.tree)
    out.extend(_own_findings(waivers, used, live, today))
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
