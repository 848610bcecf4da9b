"""A draft (draft.py) held against the curated table of the same round: the proof on history that the draft
reproduces what people wrote by hand, and where it does not, which row and how.

A curated rule and a drafted one are the same row when benchmark, name, line and conditions agree; they are equal
when the constraint, the review marks, `logged`, the further lines and the section agree too (ids and notes are
a person's words and are not compared). Rows with a `cite` (taken from another document than the rules) are not
rows of the document and are left out of the count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mlsubmit.checker.hyperparameters.adoc import MAIN_SECTION
from mlsubmit.checker.hyperparameters.draft import Draft
from mlsubmit.checker.hyperparameters.table import Rule, Table

_COMPARED = ("constraint", "review", "logged", "lines", "section")


@dataclass
class Figures:
    """One round's comparison, as the history table shows it."""

    round: str
    rows: int  # rows of the document's hyperparameter tables
    read: int  # of them carried or read into the draft
    unread: int
    curated: int  # curated rules of the document
    equal: int
    different: list[str] = field(default_factory=list)  # "<id> <name> L<line>: curated ... / draft ..."
    missing: list[str] = field(default_factory=list)  # curated rules the draft has no row for

    @property
    def share(self) -> float:
        return self.equal / self.curated if self.curated else 1.0


def _key(benchmark: str, name: str, line: int, when: Any) -> tuple[Any, ...]:
    return benchmark, name, line, repr(when or [])


def _curated(rule: Rule) -> dict[str, Any]:
    out: dict[str, Any] = {"constraint": dict(rule.constraint), "review": rule.review, "logged": rule.logged,
                           "lines": list(rule.lines), "section": rule.section or MAIN_SECTION}
    return out


def _drafted(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {"constraint": raw["constraint"], "review": raw.get("review"), "logged": raw.get("logged", True),
            "lines": list(raw.get("lines", [])), "section": raw.get("section", MAIN_SECTION)}


def _when(rule: Rule) -> list[dict[str, Any]]:
    return [{"name": c.name, "is": dict(c.constraint)} for c in rule.when]


def compare(made: Draft, curated: Table) -> Figures:
    drafted = {_key(b, r["name"], r["line"], r.get("when")): r for b, r in made.rules()}
    rules = [r for rules in curated.benchmarks.values() for r in rules if not r.cite]
    figures = Figures(round=curated.round, rows=len(made.carried) + len(made.read) + len(made.unread),
                      read=len(made.carried) + len(made.read), unread=len(made.unread), curated=len(rules), equal=0)
    for rule in rules:
        raw = drafted.get(_key(rule.benchmark, rule.name, rule.line, _when(rule) or None))
        if raw is None:
            figures.missing.append(f"{rule.id} {rule.name} L{rule.line}")
            continue
        mine, theirs = _drafted(raw), _curated(rule)
        if mine == theirs:
            figures.equal += 1
            continue
        what = [f"{k}: curated {theirs[k]!r}, draft {mine[k]!r}" for k in _COMPARED if mine[k] != theirs[k]]
        figures.different.append(f"{rule.id} {rule.name} L{rule.line}: " + "; ".join(what))
    return figures
