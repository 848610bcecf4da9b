"""Which lines of a file any detect-secrets plugin could report: a complete pre-filter built from their patterns.

Each plugin pattern becomes a `Probe`: the pattern itself (with MULTILINE added, see below) and literal strings of
which every match contains at least one, read off the pattern's parse tree. For a text, a probe whose literals are
all absent is done after a few substring searches (fast, in C); else the pattern runs over the lines holding a
literal (or the whole text when a literal is everywhere), and only on a hit does it run line by line. A line is a
candidate when some probe's pattern matches it, so a line that is not a candidate is one no plugin reports.

Why searching joined lines never misses a line's match: the lines are joined with "\n"; with MULTILINE, `^` and
`$` hold at every line end as they do at the ends of a lone line; the patterns' lookarounds either ask for a
non-word character or reject a word character, and "\n" is neither a word character nor in any of their
rejected sets. A match within one line is therefore also a match within the joined text.

Case-insensitive literals are searched in a folded copy of the text: ASCII lowercased, plus the four non-ASCII
characters that Python's re matches to an ASCII letter under IGNORECASE (İ ı → i, K → k, ſ → s;
tests/differential/test_codescan.py re-derives this list from re itself).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ahocorasick_rs
from mlsubmit.checker.hygiene.gate import Gate, build
from mlsubmit.checker.hygiene.regex_internals import parse, sre

# non-ASCII characters that re's IGNORECASE matches to an ASCII letter, mapped to that letter
FOLD_EXTRA = {0x130: "i", 0x131: "i", 0x212A: "k", 0x17F: "s"}
_FOLD_TABLE = {**FOLD_EXTRA, **{c: chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}}
_DENSE = 64
_MAX_SPELLINGS = 16  # a literal found more than once per this many characters: search the whole text instead


Need = tuple[tuple[str, ...], bool]  # one of these literals must occur (lowercase, in the folded text, when True)


@dataclass(frozen=True)
class Probe:
    rx: re.Pattern[str]
    literals: tuple[str, ...]  # () when nothing is required; lowercase when `folded`
    folded: bool
    also: tuple[Need, ...] = ()  # further requirements, each necessary too: all must hold


Req = frozenset[tuple[str, bool]]  # literals, each with whether it is matched ignoring case


def ascii_folded(text: str) -> str:
    """The text with every character re's IGNORECASE matches to an ASCII letter replaced by its lowercase; same
    length, so offsets agree with the text's. (str.lower changes no other character's length than İ's and maps no
    other non-ASCII character to ASCII than K: tests/differential/test_codescan.py checks both, all Unicode.)"""
    if text.isascii():
        return text.lower()
    out = text.replace("\u0130", "i").lower().replace("\u0131", "i").replace("\u017f", "s")
    return out if len(out) == len(text) else text.translate(_FOLD_TABLE)


def _literal(code: int, icase: bool) -> str | None:
    """The character a LITERAL item adds to a required run, or None when it breaks the run."""
    if code > 127:
        return None if icase else chr(code)
    return chr(code).lower() if icase else chr(code)


def _best(options: Iterable[Req]) -> Req | None:
    """The most selective requirement: the longest shortest literal, then the fewest alternatives."""
    ranked = sorted(options, key=lambda r: (-min(len(s) for s, _ in r), len(r)))
    return ranked[0] if ranked else None


def _required(items: Any, icase: bool) -> Req | None:
    """Literals of which every match of the parsed sequence `items` contains one, or None."""
    return _best(_options(items, icase))


def _options(items: Any, icase: bool) -> list[Req]:
    """Every requirement the sequence makes (each alone is necessary). A run of literal characters is one; an
    optional character inside it (`db_?key`) makes two spellings of the run."""
    options: list[Req] = []
    run: set[str] = set()

    def close() -> None:
        nonlocal run
        if run and all(run):
            options.append(frozenset((s, icase) for s in run))
        run = set()

    for op, av in items:
        ch = _literal(av, icase) if op is sre.LITERAL else None
        optional = _optional_char(op, av, icase)
        if ch is not None:
            run = {s + ch for s in run or {""}}
        elif optional is not None and run and len(run) < _MAX_SPELLINGS:
            run = run | {s + optional for s in run}
        else:
            close()
            inner = _item_required(op, av, icase)
            if inner is not None:
                options.append(inner)
    close()
    return options


def _optional_char(op: Any, av: Any, icase: bool) -> str | None:
    """The character of `c?` (an optional literal), else None."""
    if op is not sre.MAX_REPEAT and op is not sre.MIN_REPEAT:
        return None
    low, high, sub = av
    if (low, high) != (0, 1) or len(sub) != 1 or sub[0][0] is not sre.LITERAL:
        return None
    return _literal(sub[0][1], icase)


def _item_required(op: Any, av: Any, icase: bool) -> Req | None:
    if op is sre.SUBPATTERN:
        _group, add, delete, sub = av
        return _required(sub, (icase or bool(add & re.IGNORECASE)) and not delete & re.IGNORECASE)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, sub = av
        return _required(sub, icase) if low >= 1 else None
    if op is sre.ATOMIC_GROUP:
        return _required(av, icase)
    if op is sre.BRANCH:
        branches = [_required(b, icase) for b in av[1]]
        if any(b is None for b in branches):
            return None
        return frozenset().union(*branches)  # type: ignore[arg-type]
    return None  # character sets, anchors, lookarounds, references: nothing required


@functools.cache  # the same patterns serve many file types
def probe(pattern: re.Pattern[str]) -> Probe:
    """The pattern as a probe: its most selective requirement first, the others as `also`. A requirement mixing
    literals that ignore case with literals that do not is left out (with none left, the pattern runs over the
    whole text)."""
    flags = pattern.flags | re.MULTILINE
    tree = parse(pattern).data
    ranked = sorted(_options(tree, bool(pattern.flags & re.IGNORECASE)), key=lambda r: (-min(len(s) for s, _ in r),
                                                                                        len(r)))  # fmt: skip
    needs = [(tuple(sorted(s for s, _ in r)), next(iter(r))[1]) for r in ranked if len({c for _, c in r}) == 1]
    rx = re.compile(pattern.pattern, flags)
    if not needs:
        return Probe(rx, (), False)
    return Probe(rx, needs[0][0], needs[0][1], tuple(dict.fromkeys(needs[1:])))


def candidate_lines(lines: list[str], probes: Iterable[Probe], plugins: tuple[str, ...] = ()) -> list[int]:
    """0-based indexes of the lines (already right-stripped) that some probe's pattern matches, sorted.
    `plugins`: those the probes come from (`plugin_probes`), whose gate then passes over most patterns at once."""
    plan = _plan(probes if isinstance(probes, tuple) else tuple(probes), plugins)
    text = _Text(lines, plan.literals)
    found_by = gate(plan.plugins)
    possible = found_by.possible(text.text) if found_by is not None else None
    found: set[int] = set()
    for needs, patterns, ids in plan.groups:
        wanted = [rx for rx, i in zip(patterns, ids, strict=True) if possible is None or i in possible
                  or i not in found_by.gated]  # type: ignore[union-attr]  # fmt: skip
        if not wanted or not all(text.holds(need) for need in needs):
            continue
        spans = text.lines_meeting(needs)
        region = text.text if spans is None else "\n".join(text.text[a:b] for a, b in spans)
        for rx in wanted:
            if rx.search(region):
                found.update(text.matching_lines(rx, spans))
    return sorted(found)


Needs = tuple[tuple[frozenset[str], bool], ...]  # every one must hold: one of its literals occurs


@dataclass(frozen=True, eq=False)
class _Plan:
    """The probes of one call, grouped by what they require, and every literal they look for."""

    groups: tuple[tuple[Needs, tuple[re.Pattern[str], ...], tuple[int, ...]], ...]  # with each pattern's gate id
    literals: _Literals
    plugins: tuple[str, ...]  # whose gate (`gate`) numbers the patterns


_PLANS: dict[tuple[int, tuple[str, ...]], tuple[tuple[Probe, ...], _Plan]] = {}


def _plan(probes: tuple[Probe, ...], plugins: tuple[str, ...] = ()) -> _Plan:
    """Kept by the tuple's identity (plugin_probes returns the same tuple for a file type): hashing fifty
    probes on every file cost more than grouping them. The tuple is kept too, so its id is never reused."""
    kept = _PLANS.get((id(probes), plugins))
    if kept is None or kept[0] is not probes:
        groups = _grouped(probes)
        ids = _gate_ids(plugins)
        plan = _Plan(tuple((tuple((frozenset(lits), folded) for lits, folded in ((literals, folded), *also))
                                if literals else (), tuple(patterns), tuple(ids.get(rx, -1) for rx in patterns))
                           for (literals, folded, also), patterns in groups), _universe(groups), plugins)  # fmt: skip
        kept = _PLANS[id(probes), plugins] = (probes, plan)
    return kept[1]


@functools.cache
def _every_pattern(plugins: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The probe patterns of the plugins for every file type detect-secrets knows, each once."""
    every = _probes_by_type(plugins).values()
    return tuple(dict.fromkeys(p.rx for probes in every if probes is not None for p in probes))


@functools.cache
def _gate_ids(plugins: tuple[str, ...]) -> dict[re.Pattern[str], int]:
    return {rx: i for i, rx in enumerate(_every_pattern(plugins))} if plugins else {}


@functools.cache
def gate(plugins: tuple[str, ...]) -> Gate | None:
    """One hyperscan pass for the patterns of every file type (gate.py): one database to compile."""
    return build(_every_pattern(plugins)) if plugins else None


@functools.cache
def _grouped(probes: tuple[Probe, ...]) -> Groups:
    """Probes that require the same literals, together: the literals are looked for once per text."""
    groups: dict[tuple[tuple[str, ...], bool, tuple[Need, ...]], list[re.Pattern[str]]] = {}
    for p in probes:
        groups.setdefault((p.literals, p.folded, p.also), []).append(p.rx)
    return list(groups.items())


class _Text:
    """A file's lines joined, and where the probes' literals occur in it: one Aho-Corasick pass over the text (and
    one over its folded copy) finds every literal at once."""

    def __init__(self, lines: list[str], literals: _Literals) -> None:
        self.lines = lines
        self.text = "\n".join(lines)
        self.literals = literals
        self._starts: dict[bool, dict[str, list[int]]] = {}
        self._one_line_each = self.text.count("\n") == len(lines) - 1  # no line holds a newline itself

    def view(self, folded: bool) -> str:
        return ascii_folded(self.text) if folded else self.text

    def present(self, folded: bool) -> dict[str, list[int]]:
        """Each literal (of this kind) that occurs, with where it starts ([] for one-character literals)."""
        if folded not in self._starts:
            hay = self.view(folded)
            starts: dict[str, list[int]] = {}
            automaton, names = self.literals.automata[folded]
            if automaton is not None:
                for index, at, _end in automaton.find_matches_as_indexes(hay, overlapping=True):
                    starts.setdefault(names[index], []).append(at)
            for lit in self.literals.short[folded]:
                if lit in hay:
                    starts[lit] = []
            self._starts[folded] = starts
            self._hay = {**getattr(self, "_hay", {}), folded: hay}
        return self._starts[folded]

    def holds(self, need: tuple[frozenset[str], bool]) -> bool:
        return not self.present(need[1]).keys().isdisjoint(need[0])

    def lines_meeting(self, needs: Needs) -> list[tuple[int, int]] | None:
        """(start, end) of each line meeting every need (a match lies within one line, so it holds a literal of
        each), or None to search the whole text: no need, every need everywhere, or a line holding a newline
        itself (a transformer's multi-line value), where lines and spans between newlines would differ."""
        if not needs or not self._one_line_each:
            return None
        out: set[tuple[int, int]] | None = None
        for literals, folded in needs:
            found = self.spans(literals, folded)
            if found is not None:
                out = set(found) if out is None else out & set(found)
        return None if out is None else sorted(out)

    def spans(self, literals: frozenset[str], folded: bool) -> list[tuple[int, int]] | None:
        """(start, end) of each line holding one of the literals, or None when a literal is so frequent (or so
        short) that searching the whole text is cheaper."""
        present = self.present(folded)
        hay = self._hay[folded]
        out: set[tuple[int, int]] = set()
        for lit in literals:
            starts = present.get(lit)
            if starts is None:
                continue
            if len(lit) == 1 or len(starts) * _DENSE > len(hay):
                return None
            for at in starts:
                end = hay.find("\n", at)
                out.add((hay.rfind("\n", 0, at) + 1, len(hay) if end == -1 else end))
        return sorted(out)

    def matching_lines(self, rx: re.Pattern[str], spans: list[tuple[int, int]] | None) -> list[int]:
        """Indexes of the lines the pattern matches on their own (spans: only those lines)."""
        if spans is None:
            return [i for i, line in enumerate(self.lines) if rx.search(line)]
        text = self.text
        return [text.count("\n", 0, a) for a, b in spans if rx.search(text[a:b])]


@dataclass(frozen=True)
class _Literals:
    """Every probe literal, per kind (exact, folded): an automaton for those of two characters or more."""

    automata: dict[bool, tuple[Any, list[str]]]
    short: dict[bool, tuple[str, ...]]


Groups = list[tuple[tuple[tuple[str, ...], bool, tuple[Need, ...]], list[re.Pattern[str]]]]


@functools.cache
def _literals_of(groups: tuple[Need, ...]) -> _Literals:
    automata: dict[bool, tuple[Any, list[str]]] = {}
    short: dict[bool, tuple[str, ...]] = {}
    for folded in (False, True):
        every = sorted({lit for lits, f in groups if f == folded for lit in lits})
        long = [lit for lit in every if len(lit) > 1]
        automaton = ahocorasick_rs.AhoCorasick(long) if long else None
        automata[folded] = (automaton, long)
        short[folded] = tuple(lit for lit in every if len(lit) == 1)
    return _Literals(automata, short)


def _universe(groups: Groups) -> _Literals:
    return _literals_of(tuple(dict.fromkeys(need for (lits, folded, also), _ in groups
                                            for need in ((lits, folded), *also))))  # fmt: skip


def plugin_probes(names: tuple[str, ...], filename: str) -> tuple[Probe, ...] | None:
    """Probes for every pattern the named plugins apply to a file of this name, or None when a plugin's patterns
    cannot be known (then every line is a candidate)."""
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.util.filetype import determine_file_type

    return _probes_by_type(names)[determine_file_type(filename)]


@functools.cache
def _probes_by_type(names: tuple[str, ...]) -> dict[Any, tuple[Probe, ...] | None]:
    """The probes of every file type detect-secrets knows, with the plugins set up once (~1 ms each time)."""
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.settings import get_plugins, transient_settings
    from detect_secrets.util.filetype import FileType

    with transient_settings({"plugins_used": [{"name": n} for n in names]}):
        plugins = get_plugins()
        return {kind: _type_probes(plugins, kind) for kind in FileType}


def _type_probes(plugins: list[Any], filetype: Any) -> tuple[Probe, ...] | None:
    patterns: list[re.Pattern[str]] = []
    for plugin in plugins:
        found = _plugin_patterns(plugin, filetype)
        if found is None:
            return None
        patterns.extend(found)
    return tuple(probe(p) for p in dict.fromkeys(patterns))


def _plugin_patterns(plugin: Any, filetype: Any) -> list[re.Pattern[str]] | None:
    # lazy: detect-secrets: ~110 ms to import; only a secret scan needs it
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    if type(plugin) is keyword.KeywordDetector:  # as its analyze_line: the table of the file's type
        return list(keyword.REGEX_BY_FILETYPE.get(filetype, keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP))
    from detect_secrets.plugins.jwt import JwtTokenDetector

    kind = type(plugin)
    if (isinstance(plugin, RegexBasedDetector) and kind.analyze_line is RegexBasedDetector.analyze_line
            and kind.analyze_string in (RegexBasedDetector.analyze_string, JwtTokenDetector.analyze_string)):
        return list(plugin.denylist)  # reports matches of its denylist only (JWT: those that decode)
    return None
