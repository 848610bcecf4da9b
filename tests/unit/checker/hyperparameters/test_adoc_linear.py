"""The hyperparameter tables' reader is linear in its input (issue 54 case 13) and reads headings as before."""

from __future__ import annotations

from mlsubmit.checker.hyperparameters.adoc import heading, read_rows


def _adoc(cells: str) -> str:
    return f"== Hyperparameters\n|===\n|Model |Name |Constraint\n{cells}\n|===\n"


def test_headings_read_as_before() -> None:
    assert heading("== Hyperparameters  ") == (2, "Hyperparameters")
    assert heading("=\tx y") == (1, "x y")
    assert heading("== ") == (2, "")
    assert heading("==x") is None
    assert heading("text") is None


def test_a_heading_of_a_million_spaces_is_read_in_one_pass() -> None:
    assert heading("= x" + " " * (1 << 20) + "y") == (1, "x" + " " * (1 << 20) + "y")


def test_a_row_continued_on_many_lines_is_joined_once() -> None:
    rows = read_rows(_adoc("|bert |lr |> 0" + "\n x" * 100_000))
    assert rows[0].constraint == "> 0" + " x" * 100_000
    assert read_rows(_adoc("|bert |lr |> 0\n continued"))[0].constraint == "> 0 continued"
