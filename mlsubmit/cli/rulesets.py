"""The --ruleset option every command shares: the spellings people type, `auto`, and the round a PATH states."""

from __future__ import annotations

from collections.abc import Iterable

from mlsubmit.checker import (
    RulesetError,
    available_rulesets,
    mlperf_logging_version,
    newer_than_installed,
    round_name,
    unknown_ruleset,
)
from mlsubmit.checker.hyperparameters.apply import coverage_findings
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.detect import AUTO, group_by_round, spelled_ruleset
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Report
from mlsubmit.core.support.display_escape import notice


def _known() -> list[str]:
    try:
        return list(available_rulesets())
    except RulesetError as exc:
        raise UsageError(str(exc)) from exc


def validate_ruleset(version: str) -> str:
    """The ruleset "X.Y.Z" named by `version`, spelt as people do (1.1, v1.1, 1.1.0, v1.1.0); else a usage error."""
    known = _known()
    ruleset = spelled_ruleset(version)
    if ruleset is not None and ruleset not in known and newer_than_installed(ruleset):
        raise UsageError(unknown_ruleset(ruleset))
    if ruleset is None or ruleset not in known:
        raise UsageError(f"unknown ruleset {version!r}; choose one of: {', '.join(known)}")
    return ruleset


def rulesets_for(given: str, paths: list[str]) -> dict[str, list[str]]:
    """PATHs by ruleset: the one given, or with `auto` each PATH's own (rounds.group_by_round). The choice is said
    on stderr unless the ruleset was given exactly as X.Y.Z."""
    if given != AUTO:
        ruleset = validate_ruleset(given)
        if ruleset != given:
            notice(f"mlsubmit: ruleset {ruleset} (--ruleset {given})")
        return {ruleset: list(paths)}
    why: dict[str, set[str]] = {}
    groups = group_by_round(paths, _known(), why)
    for ruleset in groups:
        notice(f"mlsubmit: ruleset {ruleset} (from {', '.join(sorted(why.get(ruleset, ())))})")
    return groups


def round_data_note(ruleset: str) -> str | None:
    """What a ruleset mlsubmit's own tables lack takes from the installed mlperf-logging, and which of our checks
    it skips for want of data; None for a round the tables know. Said once on stderr and in the report's meta."""
    if not benchmarks.from_installed(ruleset):
        return None
    skipped = ["the closed hyperparameter table (HP003)"] if coverage_findings(ruleset) else []
    skipped.append("the review's round history and borrowing rules (mlsubmit review)")
    return (f"ruleset {ruleset}: mlsubmit's tables have no round {round_name(ruleset)}; its benchmarks "
            f"({', '.join(benchmarks.allowed(ruleset))}) and run counts come from the installed mlperf-logging "
            f"{mlperf_logging_version()}, as do its rule files and RCP data; skipped for want of our own data: "
            + "; ".join(skipped))


def say_round_data(report: Report, rulesets: Iterable[str]) -> None:
    """round_data_note of each ruleset, once on stderr and in the report's meta (`tool.round_data` in JSON)."""
    notes = [n for n in dict.fromkeys(map(round_data_note, rulesets)) if n]
    if notes:
        report.meta["round_data"] = " | ".join(notes)
        for note in notes:
            notice(f"mlsubmit: {note}")
