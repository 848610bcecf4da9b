"""The `init-time` check: a run's initialisation (init_start to init_stop) within the round's limit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rounds.detect import round_name
from mlsubmit.checker.tree.folders import tree_policy
from mlsubmit.checker.tree.shared import tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE023"})


def init_minutes(facts: LogFacts) -> tuple[float, int] | None:
    starts, stops = facts.all("init_start"), facts.all("init_stop")
    if not starts or not stops:
        return None
    return (stops[0].time_ms - starts[0].time_ms) / 60000.0, stops[0].line


def init_limit(ruleset: str, division: str) -> float:
    table = tree_policy()["init_limit_minutes"]
    limits = table.get(round_name(ruleset), table["default"])
    return float(limits["open" if division == "open" else "closed"])


def check_init(runs: list[LogFacts], ruleset: str) -> list[Finding]:
    out = []
    for facts in runs:
        got = init_minutes(facts)
        if got is None:
            continue
        minutes, line = got
        limit = init_limit(ruleset, facts.division or "closed")
        if minutes > limit:
            out.append(
                finding(
                    "TREE023",
                    facts.path,
                    f"initialisation took {minutes:.1f} min; round {round_name(ruleset)} allows {limit:g} min",
                    line=line,
                )
            )
    return out


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    return [f for folder in tree_facts(org, facts, options).known() for f in check_init(folder.runs, options.ruleset)]
