"""What the rule engine keeps of a log while it streams through it: per key, never per record.

mlperf-logging's checker keeps every value of a key (`reported_values`) and every line; its REQ checks only need
how many there were, whether they were all equal and, for a message, the distinct values; its messages need the
first few lines and the last. These summaries keep exactly that, so a log's records can go by once and be let go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mlsubmit.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.rules.files import Ruleset
    from mlsubmit.checker.rules.safe_eval import Snippet

SHOWN_VALUES = 100  # distinct values listed in a "must appear exactly once" message; more are elided
FIRST_LINES = 6  # a finding's line and its related lines (the first five repeats)


@dataclass
class Seen:
    """The values of one key, as the REQ checks read them."""

    count: int = 0
    first: Any = None
    same: bool = True
    shown: set[str] = field(default_factory=set)  # _short(v, 40) of distinct values, at most SHOWN_VALUES (+1 mark)

    def add(self, value: Any, short: Any) -> None:
        if self.count == 0:
            self.first = value
        elif self.same and not value == self.first:  # noqa: SIM201 - as upstream's all_same compares (NaN)
            self.same = False
        self.count += 1
        if len(self.shown) <= SHOWN_VALUES:
            self.shown.add(short(value, 40))


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


@dataclass(frozen=True)
class Plan:
    """What one ruleset's files allow: the keys whose lines a finding may name (`watched`), and whether the chain is
    linear (each file asks for at most one other, from a `submission_*` key, whose first record only runs its
    rules), so that files run side by side over one stream end in the order they would run one after another."""

    watched: frozenset[str]
    linear: bool


def plan_of(ruleset: Ruleset) -> Plan:
    """The ruleset's Plan, worked out once and kept on it (its files are loaded before a pool forks)."""
    plan = getattr(ruleset, "_tally_plan", None)
    if plan is None:
        plan = _plan(ruleset)
        setattr(ruleset, "_tally_plan", plan)  # noqa: B010 - Ruleset is files.py's; the plan is this module's
    return plan


def _plan(ruleset: Ruleset) -> Plan:
    watched: set[str] = set()
    linear = True
    for rules in ruleset.load_all():
        watched |= needs_lines(rules)
        asks = [s for s in (*rules.begin, *rules.end_pre, *rules.end_check) if "enqueue_config" in s.source]
        if asks:
            linear = False
        for key, rule in rules.keys.items():
            here = [s for s in _key_snippets(rule) if "enqueue_config" in s.source]
            linear = linear and not (here and "submission_" not in key)
            asks += here
        linear = linear and len(asks) <= 1
    return Plan(frozenset(watched), linear)


def needs_lines(rules: Any) -> set[str]:
    """Keys whose lines a finding of this file may name: REQ EXACTLY_ONE and ATLEAST_ONE_CHECK."""
    return {k for k, r in rules.keys.items() if r.req == "EXACTLY_ONE" or r.atleast_one is not None}


def _key_snippets(rule: Any) -> list[Any]:
    return [*rule.pre, *rule.check, *rule.post, *rule.first_check, *filter(None, [rule.atleast_one])]


def reads_whole_log(rules: Any) -> bool:
    """Whether a rule file's snippets read `loglines` (a file of another round, asked for by name, included)."""
    snips = [*rules.begin, *rules.end_pre, *rules.end_check]
    for rule in rules.keys.values():
        snips += _key_snippets(rule)
    return any("loglines" in s.source for s in snips)


@dataclass
class Outcome:
    """Failures by key (a later rule file for the same key replaces them) and failures that always stand."""

    by_key: dict[str, list[Finding]] = field(default_factory=dict)
    fixed: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    def keyed(self, key: str, f: Finding) -> None:
        self.by_key.setdefault(key, []).append(f)

    def findings(self) -> list[Finding]:
        return [*self.warnings, *(f for fs in self.by_key.values() for f in fs), *self.fixed]


def short(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except (ValueError, TypeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_src(snip: Snippet, limit: int = 160) -> str:
    text = " ".join(snip.source.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
