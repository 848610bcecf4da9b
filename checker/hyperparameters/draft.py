"""A draft of a round's closed hyperparameter table from its training_rules.adoc (`mlsubmit rounds draft`), for a
person to review: never loaded by the checker (it reads checker/tables/ only).

Each row of the round's tables (adoc.py) becomes a rule of our schema in one of two ways, and no other:
- carried: the previous round's document has the same row with the same text (model, optimizer, name, asterisks,
  constraint), so the previous round's curated rules for that row are kept as they are (their ids, conditions,
  readings of side tables), at the new line;
- read: the constraint cell is one of the plain shapes constraint_text.py reads; the asterisks give `review`
  ("*", or "**" and not logged), and a benchmark with rows for several optimizers gets `opt_name` conditions.
A row neither carried nor read is listed as unread and left out of the draft: a constraint is never guessed.
Benchmark and key aliases are carried from the previous round.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlsubmit.checker.hyperparameters import constraint_text
from mlsubmit.checker.hyperparameters.adoc import MAIN_SECTION, Row
from mlsubmit.checker.hyperparameters.table import SCHEMA, Rule, Table, table_for
from mlsubmit.checker.rounds import benchmarks as benchmark_table
from mlsubmit.checker.rounds import history

__all__ = ["SCHEMA", "Document", "Draft", "Previous", "draft", "round_table"]


def round_table(round_: str) -> Table | None:
    """Our curated table of a round ("6.1"), None for a round it does not cover."""
    return table_for(f"{round_}.0") if re.fullmatch(r"\d+\.\d+", round_) else None


@dataclass
class Draft:
    """The drafted table (plain data in our schema) and what a person must look at."""

    table: dict[str, Any]
    carried: list[int] = field(default_factory=list)  # lines of rows carried from the previous round
    read: list[int] = field(default_factory=list)  # lines of rows read from their constraint text
    unread: list[Row] = field(default_factory=list)
    changed: list[tuple[Row, str]] = field(default_factory=list)  # a row whose text differs: what it was
    added: list[str] = field(default_factory=list)  # benchmarks
    removed: list[str] = field(default_factory=list)

    def rules(self) -> list[tuple[str, dict[str, Any]]]:
        return [(b, r) for b, part in self.table["benchmarks"].items() for r in part["rules"]]


@dataclass(frozen=True)
class Previous:
    """The round drafted from: its curated table and, when a copy is at hand, its document's rows."""

    table: Table
    rows: Sequence[Row] = ()
    text: Sequence[str] = ()  # the document's lines (the side tables' lines a carried rule also names)


def benchmark_of(model: str, previous: Table, ruleset: str) -> str:
    """The submission_benchmark a table's model name stands for in `ruleset`: the previous round's alias, else
    the name made a key (flux.1 -> flux1), followed through the renames of round-history.yaml (ssd -> retinanet
    in 5.0); a name the ruleset's benchmark list lacks is the one listed benchmark it abbreviates, if exactly one
    does (dlrmv2 -> dlrm_dcnv2)."""
    name = previous.benchmark_aliases.get(model) or re.sub(r"[^a-z0-9_]", "", model.lower().replace(" ", "_"))
    name = history.benchmark_fate(name, previous.rulesets[-1], ruleset).name
    listed = benchmark_table.allowed(ruleset)
    if not listed or name in listed or name in benchmark_table.table()["benchmarks"]:
        return name  # a benchmark by its own name (rnnt in 5.0's deprecated table: not retinanet)
    short = name.replace("_", "")
    matches = [b for b in listed if _abbreviates(short, b.replace("_", ""))]
    return matches[0] if len(matches) == 1 else name


def _abbreviates(short: str, name: str) -> bool:
    """`short` is `name` with some letters left out, first and last kept (dlrmv2 of dlrmdcnv2)."""
    if not short or short[0] != name[0] or short[-1] != name[-1]:
        return False
    rest = iter(name)
    return all(ch in rest for ch in short)


def _carry_index(previous: Previous) -> tuple[dict[tuple[str, ...], list[Rule]], set[tuple[str, ...]]]:
    """Previous rules by the text of their row; the texts of rows a rule also stands for (its `lines`)."""
    by_line = {r.line: r for r in previous.rows}
    carried: dict[tuple[str, ...], list[Rule]] = {}
    covered: set[tuple[str, ...]] = set()
    for rules in previous.table.benchmarks.values():
        for rule in rules:
            row = None if rule.cite else by_line.get(rule.line)
            if row is None:
                continue
            carried.setdefault(row.key, []).append(rule)
            covered.update(by_line[n].key for n in rule.lines if n in by_line)
    return carried, covered - set(carried)


@dataclass(frozen=True)
class Document:
    """The round's document: its name as the draft cites it, its lines, its hyperparameter rows."""

    name: str
    text: Sequence[str]
    rows: Sequence[Row]


def draft(document: Document, previous: Previous, round_: str) -> Draft:
    """The draft of round `round_` from its document."""
    rows = document.rows
    carried, covered = _carry_index(previous)
    benchmarks: dict[str, list[dict[str, Any]]] = {}
    out = Draft(table={})
    several = _several_optimizers(rows)
    for row in rows:
        bench = benchmark_of(row.model, previous.table, f"{round_}.0")
        if row.key in carried:
            for rule in carried[row.key]:
                benchmarks.setdefault(bench, []).append(_carried(rule, row, previous, document))
            out.carried.append(row.line)
            continue
        if row.key in covered:
            out.carried.append(row.line)
            continue
        constraint = constraint_text.read(row.constraint)
        if constraint is None:
            out.unread.append(row)
            continue
        made = benchmarks.setdefault(bench, [])
        made.append(_read(row, constraint, bench, previous.table, made, several))
        out.read.append(row.line)
    out.table = _table(round_, document.name, benchmarks, previous.table, rows)
    _diff(out, rows, previous)
    return out


def _several_optimizers(rows: Sequence[Row]) -> set[str]:
    """Models whose rows name more than one optimizer (resnet: lars and sgd)."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        if row.optimizer and "/" not in row.optimizer:
            seen.setdefault(row.model, set()).add(row.optimizer)
    return {m for m, opts in seen.items() if len(opts) > 1}


def _carried(rule: Rule, row: Row, previous: Previous, document: Document) -> dict[str, Any]:
    out: dict[str, Any] = {"id": rule.id, "name": rule.name, "line": row.line}
    moved = [n for n in (_moved(n, rule.line, row.line, previous, document) for n in rule.lines) if n is not None]
    if moved:
        out["lines"] = moved
    out.update(_marks(rule.review, rule.logged))
    if rule.when:
        out["when"] = [{"name": c.name, "is": dict(c.constraint)} for c in rule.when]
    out["constraint"] = dict(rule.constraint)
    if row.section != MAIN_SECTION:
        out["section"] = row.section
    if rule.note:
        out["note"] = rule.note
    return out


def _moved(line: int, old: int, new: int, previous: Previous, document: Document) -> int | None:
    """Where a further line of a carried rule is in the new document: the row with the same text, else the line
    with the same text, nearest to where the rule's move puts it; None when the new document has no such line."""
    want = line + (new - old)
    before = {r.line: r for r in previous.rows}
    if line in before:
        found = [r.line for r in document.rows if r.key == before[line].key]
    else:
        text = _old_line(previous, line)
        found = [i + 1 for i, t in enumerate(document.text) if text and t.strip() == text]
        if not found and text.startswith("="):  # a side table's heading that gained words (Llama 3.1 -> 405b)
            level, words = text.split(" ", 1)[0], set(text.split()[1:])
            found = [i + 1 for i, t in enumerate(document.text) if t.startswith(level + " ")
                     and words <= set(t.split()[1:])]
    return min(found, key=lambda n: abs(n - want)) if found else None


def _old_line(previous: Previous, line: int) -> str:
    return previous.text[line - 1].strip() if 0 < line <= len(previous.text) else ""


def _marks(review: str | None, logged: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if review is not None:
        out["review"] = review
    if not logged:
        out["logged"] = False
    return out


def _read(row: Row, constraint: dict[str, Any], bench: str, previous: Table, made: list[dict[str, Any]],
          several: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": _new_id(bench, row.name, previous, made), "name": row.name, "line": row.line}
    out.update(_marks(row.marks or None, row.marks != "**"))
    if row.model in several and row.optimizer and "/" not in row.optimizer:
        out["when"] = [{"name": "opt_name", "is": {"kind": "fixed", "value": row.optimizer}}]
    out["constraint"] = constraint
    if row.section != MAIN_SECTION:
        out["section"] = row.section
    return out


def _new_id(bench: str, name: str, previous: Table, made: list[dict[str, Any]]) -> str:
    """The previous round's id of the same name, else the benchmark's prefix and the next free number."""
    old = [r for r in previous.benchmarks.get(bench, ()) if r.name == name and not r.when]
    taken = {r["id"] for r in made}
    if len(old) == 1 and old[0].id not in taken:
        return old[0].id
    ids = [r.id for r in previous.benchmarks.get(bench, ())] + sorted(taken)
    prefix = ids[0].split("-")[0] if ids else _prefix(bench, previous)
    numbers = [int(m.group(1)) for i in ids if (m := re.match(rf"^{prefix}-(\d+)", i))]
    return f"{prefix}-{max(numbers, default=0) + 1}"


def _prefix(bench: str, previous: Table) -> str:
    used = {r.id.split("-")[0] for rules in previous.benchmarks.values() for r in rules}
    letters = re.sub(r"[^A-Z]", "", bench.upper()) or "XX"
    for a in letters:
        for b in letters[1:] + "QXZ":
            if a + b not in used:
                return a + b
    return "ZZ"


def _table(round_: str, document: str, benchmarks: Mapping[str, list[dict[str, Any]]], previous: Table,
           rows: Sequence[Row]) -> dict[str, Any]:
    names = {row.model: benchmark_of(row.model, previous, f"{round_}.0") for row in rows}
    return {
        "round": round_,
        "rulesets": [f"{round_}.0"],
        "source": {"tag": f"TR{round_}", "document": "training_rules.adoc",
                   "repository": previous.source.get("repository", "mlcommons/training_policies"),
                   "copy": document, "section": MAIN_SECTION},
        "tolerance": {"relative": previous.tolerance.relative, "absolute": previous.tolerance.absolute},
        "benchmark_aliases": {m: b for m, b in sorted(names.items()) if m != b},
        "aliases": {b: dict(a) for b, a in previous.aliases.items() if b in benchmarks},
        "benchmarks": {b: {"rules": rules} for b, rules in benchmarks.items() if rules},
    }


def _diff(out: Draft, rows: Sequence[Row], previous: Previous) -> None:
    """Benchmarks added and removed; rows whose constraint text changed since the previous round's document."""
    now = set(out.table["benchmarks"])
    before = set(previous.table.benchmarks)
    out.added, out.removed = sorted(now - before), sorted(before - now)
    old = {(r.model, r.optimizer, r.name): r for r in previous.rows}
    for row in rows:
        was = old.get((row.model, row.optimizer, row.name))
        if was is not None and was.key != row.key:
            out.changed.append((row, f"{was.marks}{' '.join(was.constraint.split())} (L{was.line})"))
