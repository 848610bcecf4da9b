"""The one home of "which division": the reference's exact answer, the default profile's and the report's."""

from __future__ import annotations

from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.rounds.division import closed, reference_closed, stated


def run(division: str | None) -> LogFacts:
    facts = LogFacts(path="result_0.txt")
    if division is not None:
        facts.first["submission_division"] = Occurrence(division, {}, 0.0, 3)
    return facts


def test_the_reference_takes_exactly_closed() -> None:
    assert reference_closed("closed")
    assert not any(reference_closed(v) for v in ("close", "Closed", " closed", None, 1, "open"))


def test_the_default_profile_takes_any_spelling_or_the_logs() -> None:
    assert closed("close", []) and closed(" Closed ", []) and closed(None, [run("open"), run("closed")])
    assert not closed("open", [run("open")]) and not closed(None, [run(None)])


def test_the_report_scores_in_the_system_files_division_else_the_logs() -> None:
    assert stated("close", [run("closed")]) == "close"
    assert stated(None, [run("open"), run("closed"), run("closed")]) == "closed"
    assert stated("", []) is None
