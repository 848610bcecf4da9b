"""The one home of "which division": the reference's exact answer, the default profile's and the report's."""

from __future__ import annotations

from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.rounds.division import is_closed, reference_closed, scored_division, table


def run(division: str | None) -> LogFacts:
    facts = LogFacts(path="result_0.txt")
    if division is not None:
        facts.first["submission_division"] = Occurrence(division, {}, 0.0, 3)
    return facts


def test_the_reference_takes_exactly_closed() -> None:
    assert reference_closed("closed")
    assert not any(reference_closed(v) for v in ("close", "Closed", " closed", None, 1, "open"))


def test_a_folder_is_closed_as_its_system_file_says_else_as_its_logs_say() -> None:
    # the package checker and the summarizer take the system file's division: open logs and closed runs alike
    assert is_closed("closed", [run("open")]) and not is_closed("open", [run("closed")])
    assert not is_closed("close", [run("closed")]) and not is_closed(" Closed ", [])  # PCL v1.0: judged as "close"
    # no system file: the logs
    assert is_closed(None, [run("open"), run("closed")]) and not is_closed(None, [run(None)])


def test_the_table_a_division_lands_in() -> None:
    assert table("open") == "the open results table" and "no results table" in table("close")


def test_the_report_scores_in_the_system_files_division_else_the_logs() -> None:
    assert scored_division("close", [run("closed")]) == "close"
    assert scored_division(None, [run("open"), run("closed"), run("closed")]) == "closed"
    assert scored_division("", []) is None
