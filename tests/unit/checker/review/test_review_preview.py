"""mlsubmit review preview: last round's Preview results against this round's Available ones (submission_rules.adoc
§Preview Systems L753-755), on trees written with mllog; and the corpus's v1.0 Preview systems against v1.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.reviewfix import preview_tree as _tree
from mlsubmit.checker.review.preview import check_preview

from mlsubmit.cli import main


def _codes(tmp: Path, before: dict[int, float], now: dict[int, float]) -> list[str]:
    _, found = check_preview([_tree(tmp / "a", "preview", before)], [_tree(tmp / "b", "onprem", now)])
    return sorted(f.code for f in found)


def test_same_scale_within_two_percent_holds(tmp_path: Path) -> None:
    assert _codes(tmp_path, {16: 20.0, 64: 8.0}, {16: 20.3, 64: 8.1}) == ["REV020", "REV020"]


def test_same_scale_beyond_two_percent_fails(tmp_path: Path) -> None:
    assert _codes(tmp_path, {16: 20.0}, {16: 20.5}) == ["REV022"]  # 20.5 > 20.4


def test_exactly_two_percent_slower_holds(tmp_path: Path) -> None:
    # "up to a 2% degradation": 10.2 min against 10.0 min is the limit itself, whatever the floats' last bits
    assert _codes(tmp_path / "a", {16: 10.0}, {16: 10.2}) == ["REV020"]
    assert _codes(tmp_path / "b", {64: 4.0}, {16: 16.32}) == ["REV020"]  # 261.12 chip-minutes both
    assert _codes(tmp_path / "c", {16: 10.0}, {16: 10.21}) == ["REV022"]


def test_a_smaller_available_system_may_hold_the_largest_point(tmp_path: Path) -> None:
    # POD64 8.2 min misses POD64 8.0 (+2 % = 8.16), but POD16's 16 x 20.3 chip-minutes beat 64 x 8.0 x 1.02.
    assert _codes(tmp_path, {16: 20.0, 64: 8.0}, {16: 20.3, 64: 8.2}) == ["REV020", "REV020"]


def test_larger_system_must_be_faster(tmp_path: Path) -> None:
    assert _codes(tmp_path / "a", {16: 20.0}, {64: 19.0}) == ["REV020"]
    assert _codes(tmp_path / "b", {16: 20.0}, {64: 21.0}) == ["REV022"]


def test_smaller_system_must_be_more_efficient(tmp_path: Path) -> None:
    assert _codes(tmp_path / "a", {64: 8.0}, {16: 30.0}) == ["REV020"]  # 480 <= 512 x 1.02 chip-minutes
    assert _codes(tmp_path / "b", {64: 8.0}, {16: 40.0}) == ["REV022"]  # 640


def test_no_available_result(tmp_path: Path) -> None:
    _, found = check_preview([_tree(tmp_path / "a", "preview", {16: 20.0})],
                             [_tree(tmp_path / "b", "research", {16: 19.0})])
    assert [f.code for f in found] == ["REV021"]


def test_cli_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "p.html"
    rc = main(["review", "preview", "--previous", _tree(tmp_path / "a", "preview", {16: 20.0, 64: 8.0}),
               "--current", _tree(tmp_path / "b", "onprem", {16: 25.0}), "--format", "sarif", "--html", str(html)])
    assert rc == 1 and "REV022" in capsys.readouterr().out
    page = html.read_text(encoding="utf-8")
    assert "not held" in page and "time x chips" in page


@pytest.mark.parametrize(("before", "now"), [("1.1", "1.0"), ("1.0", "1.0")])
def test_previous_not_of_an_earlier_round_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    before: str, now: str) -> None:
    """Swapped rounds compared the newer round's Preview results (none: a silent pass); one round twice judged
    its Preview results against its own Available ones (REV021/REV022 for every point)."""
    a = _tree(tmp_path / "a" / f"training_results_v{before}" / "Org", "preview", {16: 20.0})
    b = _tree(tmp_path / "b" / f"training_results_v{now}" / "Org", "onprem", {16: 25.0})
    rc = main(["review", "preview", "--previous", a, "--current", b])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert f"--previous is of round {before}, not earlier than --current's {now}" in err
