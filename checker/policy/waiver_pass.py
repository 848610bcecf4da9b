"""Applying waivers (waivers.py reads them) to a check's findings: each finding is marked `Finding.waived` by the
first live waiver that covers it (`WaiverPass`, one finding at a time as the check settles it, or `apply_waivers`
over a finished Report), and a waiver that matched nothing (WVR001) or is past its date (WVR002) becomes a finding
of its own, at the line of its table. A path is matched by its real folder, relative to the waiver's base.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlsubmit.checker.policy.waivers import Waiver, literal_message, searchable_message

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Report, Waived


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
        text = searchable_message(f.message)
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


def applied_waivers(report: Report) -> list[dict[str, Any]]:
    """Each waiver that marked a finding, with how many: what `package` records in its manifest."""
    counts: dict[tuple[str, int], tuple[Waived, list[str]]] = {}
    for f in report.all_findings():
        if f.waived is not None:
            key = (f.waived.source, f.waived.index)
            counts.setdefault(key, (f.waived, []))[1].append(f.code)
    return [{"source": w.source, "index": w.index, "reason": w.reason, "reference": w.reference, "who": w.who,
             "expires": w.expires, "findings": len(codes), "codes": sorted(set(codes))}
            for (_, _), (w, codes) in sorted(counts.items())]
