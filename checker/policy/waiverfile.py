"""`--write-waivers FILE`: a starting waiver file from a run's findings, for a team to review and cut down.

One `[[waiver]]` per error or warning no waiver already covers (code, path and the exact message; the same message
at several lines of a file is one waiver), in path, code and message order, each with reason, reference and who
"to review" and an expiry a quarter ahead. Every string is a TOML basic string in ASCII with each control or
non-ASCII character escaped, and globs and patterns escape their own special characters, so a name or message
from a checked tree is data in the file and nothing else. The file is created, never replaced.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from pathlib import Path

from mlsubmit.checker.policy.waiver_pass import relative_to
from mlsubmit.checker.policy.waivers import MAX_WAIVERS, searchable_message

from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Severity

TO_REVIEW = "to review"
VALID_FOR = dt.timedelta(days=90)
PATTERN_LIMIT = 1000  # schemas/waivers.schema.json: the longest message pattern
_GLOB_SPECIAL = set("\\*?[]")
_PATTERN_SPECIAL = set("\\.^$|?*+()[]{}")  # what RE2 reads as syntax; other printable ASCII stands for itself


def toml_string(value: str) -> str:
    """A TOML basic string holding `value`, in printable ASCII (a lone surrogate, which TOML cannot hold, is
    U+FFFD)."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\uFFFD")
        else:
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
    out.append('"')
    return "".join(out)


def path_glob(relative: str) -> str:
    """A gitignore-style glob matching exactly `relative` (anchored: a leading / when it has no other), but for
    white space at its very end, which a glob cannot hold and `?` stands for."""
    escaped = "".join("\\" + ch if ch in _GLOB_SPECIAL else ch for ch in relative)
    if escaped[:1] in ("!", "#"):
        escaped = "\\" + escaped
    stripped = escaped.rstrip()  # pathspec drops trailing white space, escaped or not: each becomes `?`
    escaped = stripped + "?" * (len(escaped) - len(stripped))
    return escaped if "/" in relative.rstrip("/") else "/" + escaped


def exact_pattern(message: str) -> str:
    """An RE2 pattern matching exactly `message`: RE2's syntax characters and anything not printable ASCII
    escaped. A message whose pattern would pass PATTERN_LIMIT is matched by its start."""
    out: list[str] = []
    size = 2  # the ^ and $ around them
    for ch in searchable_message(message):
        if ch in _PATTERN_SPECIAL:
            piece = "\\" + ch
        elif 0x20 <= ord(ch) < 0x7F:
            piece = ch
        else:
            piece = f"\\x{{{ord(ch):X}}}"
        if size + len(piece) > PATTERN_LIMIT:
            return "^" + "".join(out)
        out.append(piece)
        size += len(piece)
    return "^" + "".join(out) + "$"


def _entries(findings: Iterable[Finding], base: Path, anchor: Path) -> list[tuple[str, str, str]]:
    wanted = (Severity.ERROR, Severity.WARNING)
    keys = {
        (relative_to(f.path, base, anchor), f.code, f.message)
        for f in findings
        if f.severity in wanted and f.waived is None and f.family != "WVR"
    }
    return sorted(keys)


def starting_file(findings: Iterable[Finding], *, today: dt.date, base: Path, anchor: Path,
                  command: str = "check") -> str:
    """The text of a waiver file covering `findings` (their errors and warnings); globs relative to `base`, the
    file's own folder."""
    entries = _entries(findings, base, anchor)
    if len(entries) > MAX_WAIVERS:
        raise UsageError(f"--write-waivers: {len(entries)} findings to waive one by one, more than a waiver file may "
                         f"hold ({MAX_WAIVERS}); check a part of the tree at a time, or write waivers by code or "
                         "family and folder by hand")
    expires = (today + VALID_FOR).isoformat()
    lines = [
        f"# Waivers written by `mlsubmit {command} --write-waivers` on {today.isoformat()}: one per error or warning",
        f"# ({len(entries)} in all). Review each: keep only what the review granted, write its reason, the",
        "# reference of the grant (a URL or an issue), who granted it and when it ends; delete the rest.",
        "# Paths are relative to this file's folder, whatever folder --waivers is given from (docs/waivers.md).",
    ]
    for rel, code, message in entries:
        lines.append("")
        lines.append("[[waiver]]")
        lines.append(f"code = {toml_string(code)}")
        if rel:
            lines.append(f"path = {toml_string(path_glob(rel))}")
        lines.append(f"message = {toml_string(exact_pattern(message))}")
        lines.extend(f"{key} = {toml_string(TO_REVIEW)}" for key in ("reason", "reference", "who"))
        lines.append(f"expires = {expires}")
    return "\n".join(lines) + "\n"


def refuse_existing(path: Path) -> None:
    """--write-waivers never replaces a file: exit 2 before the check runs when FILE exists."""
    if os.path.lexists(path):
        raise UsageError(f"--write-waivers {path}: the file exists; it is never replaced (remove it, or name "
                         "another file)")


def write_new(path: Path, text: str) -> None:
    """Create `path` with `text`; a file made in the meantime, or a folder that cannot be written, is exit 2."""
    try:
        with open(path, "x", encoding="ascii", newline="\n") as stream:
            stream.write(text)
    except FileExistsError:
        refuse_existing(path)
    except OSError as exc:
        raise UsageError(f"--write-waivers {path}: cannot write it: {exc.strerror or exc}") from None
