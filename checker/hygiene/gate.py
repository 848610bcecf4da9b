"""A one-pass gate before the secret pre-filter: which plugin patterns could match anywhere in an ASCII text.

Hyperscan scans a text for many patterns at once at several GB/s, where Python's re runs each pattern on its own
(the pre-filter's regex searches, ~18 ns a byte on a round's code). It has no lookarounds and no back-references,
so each pattern is handed to it relaxed: a pattern accepting every string the original accepts, and maybe more.

- Zero-width items (lookarounds, `^`, `$`, `\\b`, `\\A`, `\\Z`) are dropped: dropping a condition only adds matches.
- Atomic groups and possessive repeats become plain ones; lazy repeats greedy: a match exists in the same cases.
- Each one-character item (a literal, a class, `.`, with the pattern's flags, IGNORECASE included) becomes the
  class of the ASCII characters Python's re itself says it matches: the gate is used on ASCII texts only, so on
  them it is exact.
- A back-reference becomes its group's relaxed pattern (it matches a string the group matched). Anything
  else (conditionals, a reference to a group not seen yet) leaves the pattern ungated: it always runs.

A relaxed pattern that could match the empty string is ungated too (it would match everywhere). A line that a
pattern matches is a stretch of the joined text that its relaxed form matches, so when the gate reports nothing
for a pattern, no line is its candidate. tests/differential/test_codescan.py checks this on generated matches.

Hyperscan (the `hyperscan` package) is optional: without it the pre-filter runs every pattern itself.

The compiled database is kept in the data cache (`build`): an entry of support/cache_entries.py, read only under its
own key and body digest, and handed to Hyperscan's deserialiser, which checks its version, platform and checksum.
It is data for Hyperscan's matcher, never Python run by us; any copy that fails is compiled again.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.hygiene.regex_internals import compile_item, parse, sre

from mlsubmit.core.support.datafiles import derived_data

_ASCII = [chr(c) for c in range(128)]
_ZERO_WIDTH = {sre.AT, sre.ASSERT, sre.ASSERT_NOT}
_ONE_CHAR = {sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN}


class _Unsupported(Exception):
    """A construct hyperscan cannot take, even relaxed."""


def relaxed_for_hyperscan(pattern: re.Pattern[str]) -> str | None:
    """The pattern relaxed for hyperscan (see the module docstring), or None when it cannot be."""
    try:
        tree = parse(pattern)
        return _Relaxer(tree.state).sequence(tree.data, pattern.flags)
    except (_Unsupported, RecursionError):
        return None


class _Relaxer:
    """Relaxes one parsed pattern; remembers each group's relaxed text, since a back-reference matches a string
    its group matched, so relaxing it to the group's pattern is again a superset."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.groups: dict[int, str] = {}

    def sequence(self, items: Any, flags: int) -> str:
        return "".join(self.item(op, av, flags) for op, av in items)

    def item(self, op: Any, av: Any, flags: int) -> str:
        if op in _ZERO_WIDTH:
            return ""
        if op in _ONE_CHAR:
            return _char_class(op, av, flags, self.state)
        if op is sre.SUBPATTERN:
            group, add, delete, sub = av
            text = "(?:" + self.sequence(sub, (flags | add) & ~delete) + ")"
            if group is not None:
                self.groups[group] = text
            return text
        if op is sre.GROUPREF and av in self.groups:
            return self.groups[av]
        if op is sre.ATOMIC_GROUP:
            return "(?:" + self.sequence(av, flags) + ")"
        if op is sre.BRANCH:
            return "(?:" + "|".join(self.sequence(alt, flags) for alt in av[1]) + ")"
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, sub = av
            upper = "" if high is sre.MAXREPEAT else str(high)
            return "(?:" + self.sequence(sub, flags) + "){" + f"{low}," + upper + "}"
        raise _Unsupported(str(op))


def _char_class(op: Any, av: Any, flags: int, state: Any) -> str:
    """The ASCII characters the one-character item matches, asked of re itself, as a hyperscan class."""
    single = compile_item(op, av, flags & ~re.VERBOSE, state)
    codes = [ord(c) for c in _ASCII if single.fullmatch(c)]
    if not codes:
        return "\\xff"  # matches nothing in an ASCII text
    return "[" + "".join(_range(a, b) for a, b in _runs(codes)) + "]"


def _runs(codes: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for c in codes:
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return out


def _range(a: int, b: int) -> str:
    return f"\\x{a:02x}" if a == b else f"\\x{a:02x}-\\x{b:02x}"


@dataclass(frozen=True, eq=False)
class Gate:
    """A hyperscan database of the relaxed patterns; `gated` are the indexes (in the list given to `build`) it
    answers for."""

    database: Any
    gated: frozenset[int]

    def possible(self, text: str) -> set[int] | None:
        """The gated indexes whose relaxed pattern matches somewhere in the text; None for a non-ASCII text
        (then every pattern must run)."""
        if not text.isascii():
            return None
        found: set[int] = set()

        def on_match(index: int, start: int, end: int, flags: int, context: Any) -> int:
            found.add(index)
            return 0

        self.database.scan(text.encode("ascii"), match_event_handler=on_match)
        return found


def build(patterns: Sequence[re.Pattern[str]]) -> Gate | None:
    """A gate for the patterns that relax and compile, or None without hyperscan or without any. Compiling
    takes ~0.3 s, so the compiled database is kept as data (`datafiles.derived_data`): a copy that is missing,
    damaged or does not load is compiled again."""
    try:
        # lazy: hyperscan: ~15 ms to import, and absent on some platforms
        import hyperscan
    except ImportError:
        return None
    def compile_all() -> list[Any]:
        return _compiled({i: e for i, rx in enumerate(patterns)
                          if (e := relaxed_for_hyperscan(rx)) is not None and re.fullmatch(e, "") is None})  # fmt: skip

    # named by what the database depends on: the patterns, this code, hyperscan (relaxing costs ~0.3 s too)
    source = [[rx.pattern, rx.flags] for rx in patterns]
    inputs = json.dumps([getattr(hyperscan, "__version__", ""), source]).encode() + Path(__file__).read_bytes()
    database = _load(derived_data("secretgate", inputs, compile_all))
    if database is None:  # a copy that does not load: compiled here
        database = _load(compile_all())
    if database is None:
        return None
    return Gate(database[0], frozenset(database[1]))


def _compiled(kept: dict[int, str]) -> list[Any]:
    """[the serialised database (base64), the indexes in it]: all at once, else each alone to leave out those
    hyperscan does not take (too big)."""
    # lazy: hyperscan: ~15 ms to import, and absent on some platforms
    import hyperscan

    database = _database(kept)
    if database is None:
        kept = {i: e for i, e in kept.items() if _database({i: e}) is not None}
        database = _database(kept) if kept else None
    if database is None:
        return [None, []]
    return [base64.b64encode(hyperscan.dumpb(database)).decode(), sorted(kept)]


def _database(items: dict[int, str]) -> Any:
    """The expressions compiled into one database, each reporting its index once; None when hyperscan refuses."""
    # lazy: hyperscan: ~15 ms to import, and absent on some platforms
    import hyperscan

    database = hyperscan.Database()
    try:
        database.compile(expressions=[e.encode() for e in items.values()], ids=list(items), elements=len(items),
                         flags=hyperscan.HS_FLAG_SINGLEMATCH)  # fmt: skip
    except hyperscan.error:
        return None
    return database


def _load(copy: Any) -> tuple[Any, list[int]] | None:
    """The database and its indexes from `_compiled`'s form, or None when it has none or does not load."""
    # lazy: hyperscan: ~15 ms to import, and absent on some platforms
    import hyperscan

    if not (isinstance(copy, list) and len(copy) == 2 and isinstance(copy[0], str) and isinstance(copy[1], list)
            and all(isinstance(i, int) for i in copy[1])):  # fmt: skip
        return None
    try:
        database = hyperscan.loadb(base64.b64decode(copy[0], validate=True), hyperscan.HS_MODE_BLOCK)
        database.scratch = hyperscan.Scratch(database)  # a loaded database comes without one
    except (hyperscan.error, ValueError, TypeError):
        return None
    return database, copy[1]
