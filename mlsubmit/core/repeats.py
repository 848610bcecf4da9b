"""Findings of one log kept within a bound, however many records fail: the rest are counted, not kept.

A log of ten million failing records would otherwise keep ten million findings (about 600 bytes each). A `Capped`
collection keeps the first SAME_KEPT findings of each code and message and, of each code, at most CODE_KEPT in
all; every later one is folded into one finding per code and message (or, past CODE_KEPT, per code) that says
"and N more at lines …" with a bounded list of lines and carries the exact number in `Finding.repeats`, so that
counts, exit codes and the JSON stay exact. Folding is a dictionary look-up per failing record; a compliant
record never reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from mlsubmit.core.findings import Finding

SAME_KEPT = 20  # findings kept whole per code and message in one log
CODE_KEPT = 1000  # findings kept whole per code in one log (messages that quote a value all differ)
LINES_SHOWN = 10  # lines named in an "and N more" message: the first ones and the last


@dataclass
class _Fold:
    """What stands for the findings past the cap: the first of them, how many, and some of their lines."""

    first: Finding
    other_messages: bool
    count: int = 0
    lines: list[int] = field(default_factory=list)
    last: int | None = None

    def add(self, f: Finding) -> None:
        self.count += f.repeats
        self.add_line(f.line)

    def add_line(self, line: int | None) -> None:
        self.count += 1
        if line is not None:
            if len(self.lines) < LINES_SHOWN:
                self.lines.append(line)
            self.last = line

    def finding(self) -> Finding:
        more = self.count - 1
        if more == 0:
            return self.first
        shown = ", ".join(map(str, self.lines[1:]))
        if self.last is not None and self.last not in self.lines:
            shown += f", …, {self.last}" if shown else str(self.last)
        what = f" {self.first.code} findings with other messages" if self.other_messages else ""
        where = f" at lines {shown}" if shown else ""
        return replace(self.first, message=f"{self.first.message} (and {more:,} more{what}{where})",
                       repeats=self.count - 1)


class Capped:
    """An ordered collection of findings that keeps at most SAME_KEPT per code and message and CODE_KEPT per code;
    iterating gives the kept findings, then one folded finding per group past the cap. A finding that is itself a
    fold (`repeats`, from another collection) is kept as it is."""

    def __init__(self, findings: Iterable[Finding] = ()) -> None:
        self.kept: list[Finding] = []
        self._same: dict[tuple[str, str], int] = {}
        self._code: dict[str, int] = {}
        self._folds: dict[tuple[str, str], _Fold] = {}
        self.extend(findings)

    def append(self, f: Finding) -> None:
        key = (f.code, f.message)
        fold = self._folds.get(key)
        if fold is not None:
            fold.add(f)
            return
        same, code = self._same.get(key, 0), self._code.get(f.code, 0)
        if f.repeats or (same < SAME_KEPT and code < CODE_KEPT):
            self.kept.append(f)
            self._same[key] = same + 1
            self._code[f.code] = code + 1
            return
        if same:  # a message kept before: its own fold (at most one per kept finding)
            fold = self._folds[key] = _Fold(f, other_messages=False)
        else:  # a new message past the code's cap: one fold for all of them
            fold = self._folds.setdefault((f.code, ""), _Fold(f, other_messages=True))
        fold.add(f)

    def counted(self, code: str, message: str, line: int | None) -> bool:
        """Count one more finding of `code` and `message` at `line` into the fold that already stands for it, if
        there is one: True when counted, so a caller on a hot path need not build the Finding at all."""
        fold = self._folds.get((code, message))
        if fold is None and self._code.get(code, 0) >= CODE_KEPT and (code, message) not in self._same:
            fold = self._folds.get((code, ""))
        if fold is None:
            return False
        fold.add_line(line)
        return True

    def extend(self, findings: Iterable[Finding]) -> None:
        """Add findings; another Capped's folds are merged with this one's (their counts added), not folded again."""
        if not isinstance(findings, Capped):
            for f in findings:
                self.append(f)
            return
        for f in findings.kept:
            self.append(f)
        for key, fold in findings._folds.items():
            mine = self._folds.get(key)
            if mine is None:
                self._folds[key] = _Fold(fold.first, fold.other_messages, fold.count, list(fold.lines), fold.last)
                continue
            mine.count += fold.count
            mine.lines = (mine.lines + fold.lines)[:LINES_SHOWN]
            mine.last = fold.last if fold.last is not None else mine.last

    def __iter__(self) -> Iterator[Finding]:
        yield from self.kept
        for fold in self._folds.values():
            yield fold.finding()

    def __len__(self) -> int:
        return len(self.kept) + len(self._folds)

    def __bool__(self) -> bool:
        return bool(self.kept or self._folds)


def capped(findings: Iterable[Finding]) -> list[Finding]:
    """The findings within the bound, as a list (a log's final list: every source of findings folded together)."""
    return list(Capped(findings))


# What _Fold.finding() adds to the message it folds: "(and N more[ CODE findings with other messages][ at lines …])"
_SUFFIX = re.compile(r" \(and [\d,]+ more( [A-Z]+\d+ findings with other messages)?( at lines [\d, …]+)?\)\Z")


def original_message(f: Finding) -> str | None:
    """The message every finding `f` stands for has (a fold's message without its count), or None when `f` folds
    findings of several messages: a message pattern (a waiver's) cannot speak for all of them."""
    found = _SUFFIX.search(f.message) if f.repeats else None
    if found is None:
        return f.message
    return None if found.group(1) else f.message[: found.start()]

