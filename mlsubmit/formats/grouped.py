"""Findings folded for people: one entry per code and message, with the paths under it, count first.

The text and GitHub reporters read these groups; JSON, SARIF and JUnit keep every finding. A group whose
findings all follow from a root cause (`Finding.cause`) is listed right under that cause.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mlsubmit.core.findings import Finding, cause_label, location

__all__ = ["Group", "cause_label", "group", "location", "path_pattern", "places_text", "waiver_note"]

_LIST_AT_MOST = 2  # paths listed one by one up to this many; more become a pattern
_LIST_UNLESS_ONE_SEGMENT_VARIES = 4  # up to this many, a pattern varying in two places is listed instead
_ALTERNATIVES_AT_MOST = 3  # a pattern segment spells out up to this many names ({a,b,c}); more become *


@dataclass(frozen=True)
class Group:
    """Findings with the same code, severity, message and hint, in path order."""

    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def count(self) -> int:
        return len(self.findings)

    @property
    def cause(self) -> str | None:
        """The cause all of the group's findings name, if they name the same one."""
        causes = {f.cause for f in self.findings}
        return causes.pop() if len(causes) == 1 else None

    def where(self) -> str:
        """The group's places: each one when few, else a pattern (`dir/*/result_*.txt:31`)."""
        return places_text(self.findings)


def waiver_note(f: Finding) -> str:
    """What a waived finding says of its waiver, in every format that writes lines."""
    w = f.waived
    if w is None:
        return ""
    return f"waived: {w.reason} (reference {w.reference}; {w.who}; until {w.expires}; waiver at {w.where()})"


def _key(f: Finding) -> tuple[str, str, str, str, str, str]:
    waiver = f.waived.where() if f.waived is not None else ""  # waived findings group by the waiver marking them
    return (f.code, f.severity.value, f.message, f.hint, f.cause or "", waiver)


def group(findings: Iterable[Finding]) -> list[Group]:
    """Groups ordered for reading: root causes first, each followed by what it caused; then by severity,
    code, and the larger group first."""
    buckets: dict[tuple[str, str, str, str, str, str], list[Finding]] = {}
    for f in sorted(findings, key=Finding.sort_key):
        buckets.setdefault(_key(f), []).append(f)
    groups = [Group(tuple(fs)) for fs in buckets.values()]
    groups.sort(key=lambda g: (g.first.severity.rank, g.first.code, -g.count, g.first.message))
    return _causes_first(groups)


def _causes_first(groups: list[Group]) -> list[Group]:
    """Groups holding a root cause lead, each followed by the groups of its consequences."""
    labels = {cause_label(f): g for g in groups for f in g.findings}
    follows: dict[int, list[Group]] = {}
    for g in groups:
        root = labels.get(g.cause or "")
        if root is not None and root is not g:
            follows.setdefault(id(root), []).append(g)
    folded = {id(c) for cs in follows.values() for c in cs}
    roots = [g for g in groups if id(g) in follows and id(g) not in folded]
    ordered: list[Group] = []

    def place(g: Group) -> None:
        ordered.append(g)
        for c in follows.pop(id(g), []):  # popped: a cycle of causes cannot loop
            place(c)

    for g in roots + [g for g in groups if id(g) not in follows and id(g) not in folded]:
        place(g)
    seen = {id(g) for g in ordered}
    return ordered + [g for g in groups if id(g) not in seen]  # only a cycle of causes leaves any out


def places_text(findings: Sequence[Finding]) -> str:
    if len(findings) <= _LIST_AT_MOST:
        return ", ".join(location(f) for f in findings)
    pattern = path_pattern([f.path or "(run)" for f in findings])
    if len(findings) <= _LIST_UNLESS_ONE_SEGMENT_VARIES and pattern.count("{") + pattern.count("*") > 1:
        return ", ".join(location(f) for f in findings)  # a pattern would name more files than there are
    lines = {f.line for f in findings}
    tail = f":{lines.pop()}" if len(lines) == 1 and None not in lines else ""
    return pattern + tail


def path_pattern(paths: Sequence[str]) -> str:
    """One pattern covering the paths: the parts they share, `{a,b}` where few names differ, `*` elsewhere."""
    unique = sorted(set(paths))
    split = [p.split("/") for p in unique]
    if len({len(s) for s in split}) != 1:
        base = os.path.commonpath(unique) if all(unique) else ""
        return f"{len(unique)} files under {base or '.'}/"
    return "/".join(_segment([s[i] for s in split]) for i in range(len(split[0])))


def _segment(names: Sequence[str]) -> str:
    distinct = sorted(set(names))
    if len(distinct) == 1:
        return distinct[0]
    if len(distinct) <= _ALTERNATIVES_AT_MOST:
        return "{" + ",".join(distinct) + "}"
    head = _shared_start(distinct)
    tail = _shared_start([n[len(head) :][::-1] for n in distinct])[::-1]
    return f"{head}*{tail}"


def _shared_start(names: Sequence[str]) -> str:
    """The characters every name starts with (a name part, not a path: `result_` of `result_1.txt`)."""
    first, last = min(names), max(names)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
