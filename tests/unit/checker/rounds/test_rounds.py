"""`check --ruleset auto`: a PATH's round comes from its training_results_vX.Y folder. And the rounds' dates of
checker/tables/round-history.yaml, as the Preview clause's 140 days read them (rounds/history.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mlsubmit.checker.rounds import history
from mlsubmit.checker.rounds.detect import group_by_round, round_name, ruleset_of_path

from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.schema_loader import SchemaError, load_schema, validate_or_raise

KNOWN = ("1.0.0", "1.1.0", "2.0.0")


def _tree(root: Path, *rel: str) -> None:
    for r in rel:
        (root / r).parent.mkdir(parents=True, exist_ok=True)
        (root / r).write_text("")


def test_ruleset_of_path_reads_the_innermost_round_folder(tmp_path: Path) -> None:
    _tree(tmp_path, "training_results_v1.1/Org/results/sys/bert/result_0.txt")
    assert ruleset_of_path(tmp_path / "training_results_v1.1/Org/results/sys/bert/result_0.txt") == "1.1.0"
    assert ruleset_of_path(tmp_path / "training_results_v1.1") == "1.1.0"
    assert ruleset_of_path(tmp_path / "training_results_v1.1/..") is None  # the folder above a round is not in it
    assert ruleset_of_path(Path("training_results_v2.10/x")) == "2.10.0"


def test_relative_paths_use_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, "training_results_v1.0/Org/results/sys/bert/result_0.txt")
    monkeypatch.chdir(tmp_path / "training_results_v1.0" / "Org")
    assert group_by_round(["results", "."], KNOWN) == {"1.0.0": ["results", "."]}


def test_links_are_followed(tmp_path: Path) -> None:
    _tree(tmp_path, "training_results_v1.0/Org/results/sys/bert/result_0.txt")
    (tmp_path / "latest").symlink_to(tmp_path / "training_results_v1.0")
    assert ruleset_of_path(tmp_path / "latest" / "Org") == "1.0.0"


def test_a_folder_of_rounds_stands_for_each_round(tmp_path: Path) -> None:
    _tree(tmp_path, "training_results_v1.1/A/results/x", "training_results_v1.0/B/results/x", "notes/readme")
    given = str(tmp_path)
    assert group_by_round([given], KNOWN) == {
        "1.0.0": [os.path.join(given, "training_results_v1.0")],
        "1.1.0": [os.path.join(given, "training_results_v1.1")],
    }


def test_paths_are_grouped_oldest_round_first(tmp_path: Path) -> None:
    _tree(tmp_path, "training_results_v2.0/A/x", "training_results_v1.0/B/x", "training_results_v1.1/C/x")
    paths = [str(tmp_path / d) for d in ("training_results_v2.0/A", "training_results_v1.0/B",
                                           "training_results_v1.1/C", "training_results_v1.0")]
    groups = group_by_round(paths, KNOWN)
    assert list(groups) == ["1.0.0", "1.1.0", "2.0.0"]
    assert groups["1.0.0"] == [paths[1], paths[3]]


def test_a_path_without_a_round_is_a_usage_error(tmp_path: Path) -> None:
    _tree(tmp_path, "results/sys/bert/result_0.txt")
    with pytest.raises(UsageError, match=r"cannot tell its round.*--ruleset"):
        group_by_round([str(tmp_path / "results")], KNOWN)


def test_a_round_without_a_shipped_ruleset_is_a_usage_error(tmp_path: Path) -> None:
    _tree(tmp_path, "training_results_v0.7/Org/x")
    with pytest.raises(UsageError, match=r"round 0\.7 has no training ruleset.*1\.0\.0, 1\.1\.0, 2\.0\.0"):
        group_by_round([str(tmp_path / "training_results_v0.7" / "Org")], KNOWN)


def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        group_by_round([str(tmp_path / "training_results_v1.0" / "nope")], KNOWN)


def test_parts_after_the_last_dotdot_decide_without_touching_the_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_resolve(self: Path, strict: bool = False) -> Path:
        raise AssertionError("resolved a path whose round is in its own name")

    monkeypatch.setattr(Path, "resolve", no_resolve)
    assert ruleset_of_path(Path("../../corpus/training_results_v1.1/Org/results/s/bert/result_0.txt")) == "1.1.0"
    assert ruleset_of_path(Path("training_results_v1.1/Org/result_0.txt")) == "1.1.0"


@pytest.mark.parametrize("given", [
    "training_results_v1.0/Graphcore/results/x/bert/result_0.txt",
    "./training_results_v1.1//Graphcore/./results/result_1.txt",
    "/abs/training_results_v2.0/org/results/s/b/result_0.txt",
    "training_results_v1.0/../x/result_0.txt",
    "../training_results_v1.0/x/result_0.txt",
    "training_results_v1.0/training_results_v1.1/x.txt",
    "plain/result_0.txt",
])
def test_a_name_split_as_text_gives_the_round_its_path_parts_give(given: str) -> None:
    from mlsubmit.checker.rounds.detect import _named_round

    assert _named_round(tuple(given.split("/"))) == _named_round(Path(given).parts)


def test_round_name_is_a_rulesets_round_and_a_path_gives_a_ruleset() -> None:
    assert round_name("1.1.0") == "1.1" and round_name("2.10.0") == "2.10"
    assert ruleset_of_path(Path("training_results_v2.10/x")) == "2.10.0"


def test_the_140_days_compare_the_deadlines_where_both_rounds_have_one() -> None:
    due = history.due_round("4.0.0")  # mlcommons/training README: May 10, 2024 -> Oct 11, 2024
    assert due is not None and (due.round, due.days, due.kind, due.postponed) == ("4.1", 154, "submitted", False)
    assert "154 days after round 4.0 by their submission deadlines, at least 140" in due.explain()


def test_publication_dates_stand_in_for_both_where_a_round_has_no_deadline() -> None:
    due = history.due_round("3.0.0")  # no public deadline for 3.0 or 3.1
    assert due is not None and (due.round, due.days, due.kind, due.postponed) == ("4.0", 134, "published", True)
    assert "by their publication dates (as the deadlines)" in due.explain()
    due = history.due_round("3.1.0")  # 4.0 has a deadline, 3.1 none: never one kind of date against the other
    assert due is not None and (due.days, due.kind) == (217, "published")


def test_a_round_known_by_its_deadline_only_is_a_successor() -> None:
    due = history.due_round("6.0.0")  # 6.1: submitted Oct 16, 2026, no publication date in the data
    assert due is not None and (due.round, due.days, due.kind) == ("6.1", 154, "submitted")
    assert history.due_round("6.1.0") is None


@pytest.mark.parametrize(("row", "valid"), [({"published": "2026-11-11", "source": "s"}, True),
                                            ({"submitted": "2026-10-16", "source": "s"}, True),
                                            ({"source": "s"}, False)])
def test_a_round_row_needs_one_of_its_dates(row: dict[str, str], valid: bool) -> None:
    data = {"version": 1, "renames": [], "rounds": {"6.1": row}}
    schema = load_schema("round-history.schema.json")
    if valid:
        validate_or_raise(data, schema, what="round-history")
    else:
        with pytest.raises(SchemaError):
            validate_or_raise(data, schema, what="round-history")
