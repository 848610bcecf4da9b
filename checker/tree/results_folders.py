"""The `results-folders` check: each results/<system>/<benchmark>/ folder's name, run count, run names and entries,
its olympic tolerance (TREE007/TREE008: the runs its logs' checks and the power checker fail), the division it is
judged in (TREE025) and the bypass flags it asks for (TREE022)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds import division as division_of
from mlsubmit.checker.rounds.detect import version
from mlsubmit.checker.tree.folders import NUMBERED, check_counts, check_olympic, tree_policy
from mlsubmit.checker.tree.shared import FolderFacts, tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.names import did_you_mean

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE002", "TREE003", "TREE004", "TREE005", "TREE006", "TREE007", "TREE008", "TREE009",
                   "TREE022", "TREE025"})


def check_names(folder: BenchFolder) -> list[Finding]:
    out = []
    numbers = []
    for shown in folder.logs:
        m = NUMBERED.match(os.path.basename(shown))
        if m:
            numbers.append(int(m.group(1)))
        else:
            out.append(finding("TREE006", shown, f"{os.path.basename(shown)!r} is not numbered result_<i>.txt"))
    if numbers and not out:
        first = min(numbers)
        if first not in (0, 1) or sorted(numbers) != list(range(first, first + len(numbers))):
            out.append(finding("TREE006", folder.shown, f"runs are numbered {sorted(numbers)}, not 0..N-1 or 1..N"))
    return out


SCALING_ALLOWED_FROM = (6, 1, 0)  # mlcommons/training#879: the chair regenerates it, so submitting it is no error


def check_entries(folder: BenchFolder, ruleset: str) -> list[Finding]:
    out = []
    scaling_allowed = version(ruleset) >= SCALING_ALLOWED_FROM
    for name in folder.others:
        shown = os.path.join(folder.shown, name)
        if name == "scaling.json":
            if not scaling_allowed:
                out.append(finding("TREE005", shown, "scaling.json written by an earlier run of the reference checker"))
        elif name not in tree_policy()["results_folder_allowed"]:
            out.append(finding("TREE004", shown, f"{name!r} is not a result_<i>.txt log"))
    for name, count in folder.nested_logs.items():
        out.append(
            finding("TREE009", os.path.join(folder.shown, name), f"{count} result log(s) one level too deep: unchecked")
        )
    return out


def division_note(folder: BenchFolder, division: str | None, runs: list[LogFacts]) -> list[Finding]:
    """TREE025 where the logs say closed and the system file does not: the division the folder is judged in."""
    if division == "closed" or not any(f.division == "closed" for f in runs):
        return []
    if division is None:
        why = (f"systems/{folder.system}.json gives no division (missing, unreadable or without the field); the logs "
               "say closed, so the folder is judged as closed")
    else:
        why = (f"the logs say closed, but the system file says division {division!r}, which the package checker and "
               f"the result summarizer take: the folder is judged as {division!r} (no seed or RCP check) and listed "
               f"in {division_of.table(division)}")
    return [finding("TREE025", folder.shown, why)]


def bypass_requests(folder: BenchFolder, honoured: frozenset[str], written: frozenset[str]) -> list[Finding]:
    """TREE022 per bypass flag a closed folder's or its system's package_checker_params asks for."""
    out = []
    for flag in sorted(written - honoured):
        why = f"{flag} requested, but the reference ignores it (trailing newline)"
        out.append(finding("TREE022", folder.shown, why))
    asked = [f"{flag} requested in package_checker_params" for flag in sorted(honoured)]
    return out + [finding("TREE022", folder.shown, why) for why in asked]


def check_folder(facts: FolderFacts, ruleset: str) -> list[Finding]:
    folder = facts.folder
    if not facts.known:
        return [
            finding("TREE002", folder.shown, f"{folder.name!r} is not a benchmark of ruleset {ruleset}"
                    + did_you_mean(folder.name, benchmarks.allowed(ruleset))),
            *check_entries(folder, ruleset),
        ]
    out = [*check_counts(folder), *check_names(folder), *check_entries(folder, ruleset)]
    out += check_olympic(folder, facts.runs, facts.power[1])  # the runs the power checker fails count too
    out += division_note(folder, facts.division, facts.runs)
    return out + (bypass_requests(folder, *facts.bypass) if facts.closed else [])


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    return [f for folder in tree_facts(org, facts, options).touched for f in check_folder(folder, options.ruleset)]
