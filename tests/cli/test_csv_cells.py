"""`report --format csv`: a value from the tree never becomes a spreadsheet formula or a control code (issue 35).
The --summary-csv files are the documented exception: they stay byte-identical to the reference's."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from fixtures.synth_org import runs, system, write_org

from mlsubmit.core.support.display_escape import spreadsheet_cell

RULESET = "1.1.0"
HOSTILE_ID = "=HYPERLINK(1)"
FRAMEWORK = "@SUM(1+1)*cmd|' /C calc'!A0 \u202egnp.exe\r\nx"


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_org(tmp_path_factory.mktemp("csv") / "Graphcore",
                     {HOSTILE_ID: system(framework=FRAMEWORK, system_name="-2+3")},
                     {(HOSTILE_ID, "resnet"): runs([14.0, 14.5, 15.0, 14.25, 14.75], ruleset=RULESET, evals=35,
                                                   hyperparameters={"global_batch_size": 3264})})


def test_no_cell_starts_a_formula_or_holds_a_control(run_cli, org: Path) -> None:
    code, out, err = run_cli("report", "--ruleset", RULESET, "--format", "csv", org)
    assert code in (0, 1), err
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) == 2, out
    for cell in rows[1]:
        assert not cell.startswith(("=", "+", "@", "\t", "\r")) and not (cell.startswith("-") and cell != cell.strip(
            "-0123456789.eE+")), cell
        assert not any(ch in cell for ch in "\r\n\u202e"), cell
    assert "'" + HOSTILE_ID in rows[1]
    assert any(cell.startswith("'@SUM(1+1)") and "\\u202e" in cell and "\\r\\n" in cell for cell in rows[1])


def test_summary_csv_stays_as_the_reference_writes_it(run_cli, org: Path, tmp_path: Path) -> None:
    code, _out, err = run_cli("report", "--ruleset", RULESET, "--summary-csv", tmp_path / "s.csv", org)
    assert code in (0, 1), err
    assert "'=HYPERLINK" not in (tmp_path / "s.csv").read_text(encoding="utf-8")


@pytest.mark.parametrize(("text", "expected"), [
    ("=1+1", "'=1+1"), ("+x", "'+x"), ("-x", "'-x"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\\rx"),
    ("-1.5", "-1.5"), ("+2e3", "+2e3"), ("12", "12"), ("a=b", "a=b"), ("a\u202eb", "a\\u202eb"), ("", "")])
def test_spreadsheet_cell(text: str, expected: str) -> None:
    assert spreadsheet_cell(text) == expected
