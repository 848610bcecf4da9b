"""mlsubmit review's command line: the summary says what was compared (not "0 file(s) checked"), in text, JSON
(valid against schemas/report.schema.json) and the CI formats; `review since --html`; folders that are missing,
not folders or empty are exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.reviewfix import OURS, THEIRS, trees
from fixtures.reviewfix import org_tree as _org
from fixtures.reviewfix import preview_tree as _tree
from fixtures.synth_org import system

from mlsubmit.cli import main
from mlsubmit.core.support.schema_loader import load_schema, validator


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def _borrow_args(paths: dict[str, Path]) -> list[str]:
    return ["review", "borrow", "--ruleset", "1.0.0",
            *(x for k in ("original", "resubmitted", "donor") for x in (f"--{k}", str(paths[k])))]


def test_borrow_counts_hyperparameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(_borrow_args(trees(tmp_path, {**THEIRS, "opt_lamb_beta_1": 0.9})), capsys)
    assert rc == 1
    assert out.splitlines()[-1].startswith("11 hyperparameter(s) compared, 1 failed; 2 error(s)")


def test_borrow_json_summary_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run([*_borrow_args(trees(tmp_path, THEIRS)), "--format", "json"], capsys)
    data = json.loads(out)
    validator(load_schema("report.schema.json")).validate(data)
    assert rc == 0 and data["summary"]["compared"] == {"counts": {"hyperparameter(s)": 11}, "failed": 0}


def test_preview_counts_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(["review", "preview", "--previous", _tree(tmp_path / "a", "preview", {16: 20.0, 64: 8.0}),
                       "--current", _tree(tmp_path / "b", "onprem", {16: 25.0})], capsys)
    assert rc == 1 and out.splitlines()[-1].startswith("2 Preview point(s) compared, 1 failed; 1 error(s)")


def test_preview_github_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(["review", "preview", "--previous", _tree(tmp_path / "a", "preview", {16: 20.0}),
                       "--current", _tree(tmp_path / "b", "onprem", {16: 20.0}), "--format", "github"], capsys)
    assert rc == 0 and "mlsubmit: 1 Preview point(s) compared, 0 failed; 0 error(s)" in out


def _sincetrees(tmp: Path) -> tuple[str, str]:
    _org(tmp / "a", "Graphcore", {"pod16": system(), "pod64": system(number_of_nodes="4")},
         {"pod16": OURS, "pod64": OURS})
    _org(tmp / "b", "Graphcore", {"pod16": system(framework="PopART SDK 2.3")}, {"pod16": THEIRS})
    return str(tmp / "a"), str(tmp / "b")


def test_since_counts_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, now = _sincetrees(tmp_path)
    html = tmp_path / "s.html"
    rc, out, _ = _run(["review", "since", "--ruleset", "1.0.0", "--previous-ruleset", "1.0.0", "--previous", before,
                       "--current", now, "--html", str(html)], capsys)
    assert rc == 0
    assert out.splitlines()[-1].startswith("1 system description(s), 1 entry(ies), 1 benchmark(s) compared")
    page = html.read_text(encoding="utf-8")
    assert "<h2>System descriptions</h2>" in page and "REV031" in page and "framework" in page
    assert "<h2>Hyperparameters moved</h2>" in page and "opt_lamb_beta_1" in page
    assert "Content-Security-Policy" in page and "<script" not in page


def test_since_html_unwritable_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, now = _sincetrees(tmp_path)
    rc, _, err = _run(["review", "since", "--ruleset", "1.0.0", "--previous-ruleset", "1.0.0", "--previous", before,
                       "--current", now, "--html", str(tmp_path / "no" / "s.html")], capsys)
    assert rc == 2 and "cannot write" in err


@pytest.mark.parametrize("step", ["since", "preview"])
def test_missing_folder_is_exit_2(tmp_path: Path, step: str, capsys: pytest.CaptureFixture[str]) -> None:
    before, _ = _sincetrees(tmp_path)
    rc, out, err = _run(["review", step, "--ruleset", "1.0.0", "--previous", before, "--current",
                         str(tmp_path / "gone")] if step == "since" else
                        ["review", step, "--previous", before, "--current", str(tmp_path / "gone")], capsys)
    assert rc == 2 and out == ""
    assert f"--current {tmp_path / 'gone'}: no such folder" in err


def test_a_file_for_a_folder_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = trees(tmp_path, THEIRS)
    log = next(paths["donor"].glob("result_*.txt"))
    rc, _, err = _run([*_borrow_args(paths)[:-1], str(log)], capsys)
    assert rc == 2 and f"--donor {log}: not a folder" in err


def test_every_catalogued_code_fits_the_report_schema() -> None:
    import re

    from mlsubmit.core.codes import catalogue

    pattern = load_schema("report.schema.json")["$defs"]["finding"]["properties"]["code"]["pattern"]
    assert [code for code in catalogue() if not re.match(pattern, code)] == []  # POW and REV were missing


def test_since_with_the_rounds_swapped_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--previous of a later round than --current is the two trees given the wrong way round: the benchmarks of
    the newer round would be called 'retired' (REV034) and the older round's 'new'."""
    before, now = _sincetrees(tmp_path)
    rc, out, err = _run(["review", "since", "--previous-ruleset", "5.1.0", "--ruleset", "5.0.0", "--previous", before,
                         "--current", now], capsys)
    assert rc == 2 and out == ""
    assert "--previous is of round 5.1, later than --current's 5.0" in err


def test_the_command_list_names_every_review_step() -> None:
    from mlsubmit.cli import COMMANDS

    assert all(step in COMMANDS["review"][1] for step in ("borrowing", "Preview", "since"))


def test_since_takes_organisation_trees_not_round_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of organisations compared 0 system descriptions and mixed the entries of every organisation."""
    _sincetrees(tmp_path / "round")
    rc, out, err = _run(["review", "since", "--ruleset", "1.0.0", "--previous-ruleset", "1.0.0", "--previous",
                         str(tmp_path / "round"), "--current", str(tmp_path / "round" / "b")], capsys)
    assert rc == 2 and out == ""
    assert f"--previous {tmp_path / 'round'}: not an organisation tree (no results/ folder in it)" in err
