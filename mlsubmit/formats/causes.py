"""Root causes: findings that follow from another one name it as their `cause`, so reporters fold them under it.

A log that cannot be read or stops at a broken record makes its required records go missing; a log pattern that
matches nothing leaves a folder short of runs; a missing system file makes the reference skip its checks. The
consequences stay findings (JSON, SARIF and JUnit keep them all); they only name what to fix first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from mlsubmit.core.findings import Finding, Report
from mlsubmit.formats.grouped import Group, cause_label, group

# root code -> (scope, codes or families it explains). "file": consequences on the same path; "run": anywhere.
ROOTS: dict[str, tuple[str, frozenset[str]]] = {
    "LOG001": ("file", frozenset({"RULE", "HP", "LOG009"})),
    "LOG004": ("file", frozenset({"RULE001", "RULE002", "RULE005"})),
    "LOG009": ("file", frozenset({"RULE", "HP"})),
    "LOG010": ("file", frozenset({"RULE001", "RULE002", "RULE005"})),
    "PKG001": ("run", frozenset({"PKG004", "TREE003", "TREE020", "TREE024"})),
    "PKG002": ("run", frozenset({"PKG004", "TREE003", "TREE020", "TREE024"})),
    "PKG020": ("run", frozenset({"TREE025", "TREE027", "TREE028"})),
    "RULE009": ("file", frozenset({"RULE001", "RULE002", "RULE005", "HP"})),
}


def _explains(root: Finding, f: Finding) -> bool:
    scope, codes = ROOTS[root.code]
    if f is root or f.cause or not (f.code in codes or f.family in codes):
        return False
    return scope == "run" or f.path == root.path


def _with_cause(f: Finding, roots: list[Finding]) -> Finding:
    for root in roots:
        if _explains(root, f):
            return replace(f, cause=cause_label(root))
    return f


def attach_causes(report: Report) -> Report:
    """The same report, each consequence naming the first root cause (in file and line order) that explains it."""
    roots = sorted((f for f in report.all_findings() if f.code in ROOTS), key=Finding.sort_key)
    if not roots:
        return report
    files = {p: [_with_cause(f, roots) for f in fs] for p, fs in report.files.items()}
    tree = [_with_cause(f, roots) for f in report.tree]
    return Report(files=files, tree=tree, strict=report.strict, meta=report.meta)


def truncated_at(root: Finding, findings: list[Finding]) -> bool:
    """The log's last record is broken and only missing-record findings follow: the log was most likely cut off
    there. The reader marks that record (case "last-record", checker/logs/reader.py); a record broken mid-file,
    with good ones after it, is not a cut-off log."""
    if root.code != "LOG004" or root.line is None or root.case != "last-record":
        return False
    later = [f.line for f in findings if f.path == root.path and f.line is not None and f is not root]
    return all(line < root.line for line in later)


FOLLOWS_HINT = "fix the cause above first; this follows from it"


@dataclass(frozen=True)
class Entry:
    """One group as people read it (text, HTML): the cause heading that opens it, if any, and the hint to show
    after it (None when the next group of the same code, cause and hint shows it once for both)."""

    group: Group
    heading: str | None
    hint: str | None


def cause_heading(cause: str, findings: list[Finding]) -> str:
    """The line that opens the consequences of a root cause."""
    root = next((f for f in findings if cause_label(f) == cause), None)
    if root is not None and truncated_at(root, findings):
        return f"the log looks truncated at line {root.line} (its last record is cut off); so:"
    return f"following from {cause}:"


def reading_order(findings: Iterable[Finding]) -> list[Entry]:
    """Grouped findings, causes first, each consequence group under a heading naming its cause; a hint shared by
    consecutive groups of one code is given once, after the last. A consequence's own hint would send the reader
    after a symptom, so it says to fix the cause instead."""
    findings = list(findings)
    groups = group(findings)
    out = []
    for i, g in enumerate(groups):
        nxt = groups[i + 1] if i + 1 < len(groups) else None
        # one hint for consecutive groups of a code, and one "fix the cause" for all the consequences of a cause
        shared = nxt is not None and (nxt.cause == g.cause and (g.cause is not None or (
            nxt.first.code, nxt.first.hint) == (g.first.code, g.first.hint)))
        opens = g.cause is not None and (i == 0 or groups[i - 1].cause != g.cause)
        heading = cause_heading(g.cause, findings) if opens and g.cause else None
        out.append(Entry(g, heading, None if shared else (FOLLOWS_HINT if g.cause else g.first.hint)))
    return out
