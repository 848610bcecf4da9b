"""What the rule engine keeps of a log while it streams through it: per key, never per record.

mlperf-logging's checker keeps every value of a key (`reported_values`) and every line; its REQ checks only need
how many there were, whether they were all equal and, for a message, the distinct values; its messages need the
first few lines and the last. These summaries keep exactly that, so a log's records can go by once and be let go.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from mlsubmit.core.findings import Finding
from mlsubmit.core.repeats import Capped

if TYPE_CHECKING:
    from mlsubmit.checker.logs.reader import Record
    from mlsubmit.checker.rules.safe_eval import Snippet

_KEY = attrgetter("key")
SHOWN_VALUES = 100  # distinct values listed in a "must appear exactly once" message; more are elided
FIRST_LINES = 6  # a finding's line and its related lines (the first five repeats)


@dataclass
class Lines:
    """The lines of one key's records: the first FIRST_LINES and the last."""

    first: list[int] = field(default_factory=list)
    last: int = 0
    count: int = 0

    def add(self, line: int) -> None:
        if len(self.first) < FIRST_LINES:
            self.first.append(line)
        self.last = line
        self.count += 1

    def as_list(self) -> list[int]:
        """What callers index: [0], [1:6] and [-1] read the same as on the full list."""
        return self.first if self.count <= FIRST_LINES else [*self.first, self.last]


@dataclass
class KeyTally:
    """The values of one key, as the REQ checks read them."""

    count: int = 0
    first: Any = None
    same: bool = True
    shown: set[str] = field(default_factory=set)  # _short(v, 40) of distinct values, at most SHOWN_VALUES (+1 mark)
    lines: Lines = field(default_factory=Lines)

    def add(self, value: Any, line: int) -> None:
        """One more value. Most keys have one value, or the same one again: its text is worked out only when a
        message may need it, i.e. once a value prints differently from the first (`values`)."""
        self.lines.add(line)
        if self.count == 0:
            self.first = value
            self.count = 1
            return
        if self.same and not value == self.first:  # noqa: SIM201 - as upstream's all_same compares (NaN)
            self.same = False
        self.count += 1
        if _prints_as_first(value, self.first):
            return
        if not self.shown:
            self.shown.add(short_repr(self.first, 40))
        if len(self.shown) <= SHOWN_VALUES:
            self.shown.add(short_repr(value, 40))

    def values(self) -> set[str]:
        """The distinct texts of the values (at most SHOWN_VALUES + 1), for a message."""
        if self.count and not self.shown:
            return {short_repr(self.first, 40)}
        return self.shown


_PLAIN = (str, int, bool, type(None))  # equal values of these types print alike (not so 0.0 and -0.0, or 1 and 1.0)


def _prints_as_first(value: Any, first: Any) -> bool:
    return type(value) is type(first) and type(value) in _PLAIN and value == first


class Values:
    """The values and lines of one file's REQ EXACTLY_ONE keys (the one requirement that reads the values): the
    first of each as it is (most keys have one), a KeyTally for a key that comes again."""

    def __init__(self) -> None:
        self.firsts: dict[str, tuple[Any, int]] = {}
        self.again: dict[str, KeyTally] = {}

    def add(self, key: str, value: Any, line: int) -> None:
        if key not in self.firsts:
            self.firsts[key] = (value, line)
            return
        seen = self.again.get(key)
        if seen is None:
            seen = self.again[key] = self.seen(key)
        seen.add(value, line)

    def seen(self, key: str) -> KeyTally:
        """The values of a key, for its message."""
        found = self.again.get(key)
        if found is None:
            found = KeyTally()
            if key in self.firsts:
                value, line = self.firsts[key]
                found.add(value, line)
        return found


def count_keys(counts: Counter[str], records: list[Record], only: frozenset[str] | None = None) -> None:
    """Add the records of each key (of each key in `only`, when given) to `counts`, counted in C: this runs on
    every record of a log."""
    keys = map(_KEY, records)
    counts.update(keys if only is None else filter(only.__contains__, keys))


def lines_of_records(records: list[Record]) -> dict[str, Lines]:
    """The lines of every key of a log's own records."""
    lines: dict[str, Lines] = {}
    for rec in records:
        lines.setdefault(rec.key, Lines()).add(rec.line)
    return lines


@dataclass
class Outcome:
    """Failures by key (a later rule file for the same key replaces them) and failures that always stand; each
    kept within the cap of mlsubmit/core/repeats.py, so a log whose every record fails keeps counts, not findings."""

    by_key: dict[str, Capped] = field(default_factory=dict)
    fixed: Capped = field(default_factory=Capped)
    warnings: Capped = field(default_factory=Capped)

    def keyed(self, key: str, f: Finding) -> None:
        found = self.by_key.get(key)
        if found is None:
            found = self.by_key[key] = Capped()
        found.append(f)

    def findings(self) -> list[Finding]:
        return [*self.warnings, *(f for fs in self.by_key.values() for f in fs), *self.fixed]


def short_repr(value: Any, limit: int = 120) -> str:
    if type(value) is str and len(value) < limit - 1 and value.isascii() and value.isprintable() and not (
            '"' in value or "\\" in value):
        return f'"{value}"'  # as json.dumps writes it: a failing record's value, maybe once per record
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except (ValueError, TypeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_src(snip: Snippet, limit: int = 160) -> str:
    text = " ".join(snip.source.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
