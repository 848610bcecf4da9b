"""Seed rules of the reference's seed checker, on facts: each failing shape and the passing one."""

from __future__ import annotations

from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.tree.seeds import check_seeds


def run(name: str, *seeds: tuple[object, object], parse_errors: int = 0) -> LogFacts:
    """A run logging each (value, metadata) as a seed record, on lines 10, 11, ..."""
    facts = LogFacts(path=name, parse_errors=parse_errors)
    facts.series["seed"] = [Occurrence(v, m, 0.0, 10 + i) for i, (v, m) in enumerate(seeds)]
    return facts


def at(line: int) -> dict[str, object]:
    return {"file": "train.py", "lineno": line}


def codes(runs: list[LogFacts]) -> list[tuple[str, str, int | None]]:
    return [(f.code, f.path, f.line) for f in check_seeds(runs).findings]


def test_distinct_seeds_pass() -> None:
    report = check_seeds([run("a", (1, at(5))), run("b", (2, at(5))), run("c", (1, at(6)))])
    assert report.findings == [] and not report.failed


def test_a_run_without_seed_fails() -> None:
    assert codes([run("a", (1, at(5))), run("b")]) == [("TREE014", "b", None)]


def test_same_seed_same_line_in_two_runs_fails_with_both_places() -> None:
    report = check_seeds([run("a", (7, at(5))), run("b", (7, at(5)))])
    (dup,) = report.findings
    assert (dup.code, dup.path, dup.line) == ("TREE015", "b", 10)
    assert [(r.path, r.line) for r in dup.related] == [("a", 10)]
    assert report.failed


def test_unusable_records_fail() -> None:
    assert codes([run("a", (7, {"file": "x.py"}))])[0][0] == "TREE016"  # no lineno
    assert codes([run("a", ("abc", at(5)))])[0][0] == "TREE016"  # not an integer
    assert codes([run("a", (7, at(5)), parse_errors=1)])[0][0] == "TREE016"  # reference cannot parse the log
    assert codes([run("a", ("42", at(5)))]) == []  # int("42") works, as in the reference


def test_several_seeds_in_one_run_only_warn() -> None:
    report = check_seeds([run("a", (1, at(5)), (2, at(9)))])
    assert [(f.code, f.severity.value) for f in report.findings] == [("TREE017", "warning")]
    assert not report.failed


def test_odd_metadata_values_do_not_crash() -> None:
    report = check_seeds([run("a", (1, {"file": ["x"], "lineno": [5]})), run("b", (1, {"file": ["x"], "lineno": [5]}))])
    assert [f.code for f in report.findings] == ["TREE015"]
