"""The one diagnostic record every check produces, and the aggregate the reporters read."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@dataclass(frozen=True, order=True)
class Location:
    """A second place a finding points at (the other duplicate key, the system file a log disagrees with)."""

    path: str
    line: int | None = None
    pointer: str | None = None


@dataclass(frozen=True)
class Waived:
    """The mark a waiver leaves on a finding it covers: why, on whose word, until when, and which waiver."""

    reason: str
    reference: str
    who: str
    expires: str  # ISO date, the last day the waiver holds
    source: str  # the file holding the waiver
    index: int  # 0-based among that file's [[waiver]] tables
    line: int | None = None  # the line of its [[waiver]] header

    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line else f"{self.source}#/waiver/{self.index}"

    def to_dict(self) -> dict[str, object]:
        return {"reason": self.reason, "reference": self.reference, "who": self.who, "expires": self.expires,
                "waiver": {k: v for k, v in (("path", self.source), ("index", self.index), ("line", self.line))
                           if v is not None}}


@dataclass(frozen=True)
class Finding:
    """A single problem: stable code, severity, where, what and how to fix it.

    `line` is 1-based in the file; JSON documents may give a `pointer` (RFC 6901) as well.
    `path` is "" for findings about the whole run (for example an unknown ruleset).
    `cause` names the root-cause finding this one follows from ("LOG004 path:163"); reporters fold it under that.
    `waived` is set when a waiver covers the finding: it is still reported, and never fails the run.
    `repeats` counts the findings of the same code folded into this one past a log's cap (mlsubmit/core/repeats.py):
    it stands for 1 + repeats findings, and its message says how many and where.
    `case` names which of a code's cases this finding is (SYS012's "zero": a count of 0), for a profile that
    levels a code per field and case (checker/policy); it is not reported.
    """

    code: str
    severity: Severity
    path: str
    message: str
    hint: str
    line: int | None = None
    pointer: str | None = None
    related: tuple[Location, ...] = field(default=())
    cause: str | None = None
    waived: Waived | None = None
    repeats: int = 0
    case: str | None = None
    # figures a finding carries as data besides its words (RUN009's risk: rcp/risk.py Risk.to_dict); not compared
    risk: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    @property
    def family(self) -> str:
        return "".join(ch for ch in self.code if ch.isalpha())

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.path, self.line or 0, self.code, self.message)

    def with_path(self, path: str) -> Finding:
        return replace(self, path=path)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "hint": self.hint,
        }
        if self.pointer is not None:
            out["pointer"] = self.pointer
        if self.cause is not None:
            out["cause"] = self.cause
        if self.repeats:
            out["repeats"] = self.repeats
        if self.related:
            out["related"] = [
                {k: v for k, v in (("path", r.path), ("line", r.line), ("pointer", r.pointer)) if v is not None}
                for r in self.related
            ]
        if self.waived is not None:
            out["waived"] = self.waived.to_dict()
        if self.risk is not None:
            out["risk"] = dict(self.risk)
        return out


def location(f: Finding) -> str:
    """Where a finding is, as people read it: path, then :line or #pointer; "(run)" for the whole run."""
    where = f.path or "(run)"
    if f.line is not None:
        where += f":{f.line}"
    elif f.pointer:
        where += f"#{f.pointer}"
    return where


def cause_label(f: Finding) -> str:
    """How a consequence names this finding as its cause (the `cause` field): code and place."""
    return f"{f.code} {location(f)}"


def has_errors(findings: Iterable[Finding], *, strict: bool = False) -> bool:
    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    return any(f.severity in failing and f.waived is None for f in findings)


PLACE_KINDS = ("folder(s)", "system description(s)", "other file(s)", "run")


def place_kind(path: str) -> str:
    """What a tree-level finding's path names, by its shape: "" is the run, `systems/*.json` a system
    description, a name with a suffix another file, anything else a folder (results, benchmark, code, the tree)."""
    if not path:
        return "run"
    parent, _, name = path.rstrip("/").rpartition("/")
    if name.endswith(".json") and parent.rpartition("/")[2] == "systems":
        return "system description(s)"
    stem, dot, suffix = name.lstrip(".").rpartition(".")
    return "other file(s)" if dot and stem and suffix.isalnum() and not suffix.isdigit() else "folder(s)"


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(frozen=True)
class Tally:
    """What a command compared when it is not files (the review's hyperparameters, Preview points, systems and
    entries): the summary says these counts instead of "0 file(s) checked"."""

    parts: tuple[tuple[int, str], ...]  # (count, noun), e.g. (15, "Preview point(s)")
    failed: int = 0  # how many of the first part broke a rule
    # the steps compared, in order, as their own records (verify --official: each step with its last lines)
    steps: tuple[dict[str, object], ...] = ()

    def __str__(self) -> str:
        return ", ".join(f"{n} {noun}" for n, noun in self.parts) + f" compared, {self.failed} failed"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"counts": {noun: n for n, noun in self.parts}, "failed": self.failed}
        if self.steps:
            out["steps"] = [dict(s) for s in self.steps]
        return out


@dataclass
class Report:
    """Everything one command found: per checked file, plus findings about trees and the run itself."""

    files: dict[str, list[Finding]] = field(default_factory=dict)
    tree: list[Finding] = field(default_factory=list)
    strict: bool = False
    meta: dict[str, str] = field(default_factory=dict)  # command, ruleset, tool version: shown by reporters
    tally: Tally | None = None  # what was compared, for commands that check no files

    def add_file(self, path: str, findings: Iterable[Finding] = ()) -> None:
        self.files.setdefault(path, []).extend(findings)

    def add(self, finding: Finding) -> None:
        """File a finding under its file when that file is listed, else with the tree-level ones."""
        if finding.path in self.files:
            self.files[finding.path].append(finding)
        else:
            self.tree.append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.add(f)

    def all_findings(self) -> list[Finding]:
        out = [f for fs in self.files.values() for f in fs]
        out.extend(self.tree)
        return out

    def verdict(self, path: str) -> str:
        return "fail" if has_errors(self.files.get(path, ()), strict=self.strict) else "pass"

    def counts(self) -> dict[str, int]:
        """Findings per severity, waived ones apart (a "waived" count, present when there are any)."""
        counts = {s.value: 0 for s in Severity}
        waived = 0
        for f in self.all_findings():
            if f.waived is None:
                counts[f.severity.value] += 1 + f.repeats
            else:
                waived += 1 + f.repeats
        if waived:
            counts["waived"] = waived
        return counts

    def failed_elsewhere(self) -> dict[str, int]:
        """Places other than the checked files that failed (errors, warnings too when strict), by kind: results
        and code folders, system descriptions, other files, and the run itself; kinds that did not fail are left
        out. A finding's kind is read from its path's shape (the report does not look at the disk)."""
        failing = {f.path for f in self.tree if has_errors((f,), strict=self.strict)} - set(self.files)
        counts: dict[str, int] = {}
        for path in failing:
            kind = place_kind(path)
            counts[kind] = counts.get(kind, 0) + 1
        return {k: counts[k] for k in PLACE_KINDS if k in counts}

    def checked(self) -> str:
        """The summary's head: what was checked or compared, and how many failed, at every level: a report whose
        files all pass but whose folders or systems fail says so, so it never reads like a pass on exit 1."""
        if self.tally is not None:
            return str(self.tally)
        failed = sum(1 for p in self.files if self.verdict(p) == "fail")
        head = f"{len(self.files)} file(s) checked, {failed} failed"
        elsewhere = self.failed_elsewhere()
        if not elsewhere:
            return head
        places = _and(["the run" if kind == "run" else f"{n} {kind}" for kind, n in elsewhere.items()])
        return f"{head}; {places} failed too" if failed else f"{head}, but {places} failed"

    def exit_code(self) -> int:
        return 1 if has_errors(self.all_findings(), strict=self.strict) else 0

    def sorted(self) -> Report:
        files = {p: sorted(fs, key=Finding.sort_key) for p, fs in sorted(self.files.items())}
        return Report(files=files, tree=sorted(self.tree, key=Finding.sort_key), strict=self.strict, meta=self.meta,
                      tally=self.tally)
