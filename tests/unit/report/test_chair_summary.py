"""The chair's summary (`report --summary-csv`, `--summary-xlsx`, `--against`): formats, rows and findings.

The reference summarizer is the judge on one small synthetic tree (tests/differential/test_chair_summary_synthetic.py)
and on the corpus (tests/differential/test_chair_summary.py).
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth_org import runs, system, two_pod_org, write_org

from mlsubmit.core.errors import UsageError
from mlsubmit.report.summary import Table, spec_cells, url_prefix
from mlsubmit.report.summary_files import json_float, summary_paths, table_csv, table_json


def test_json_floats_are_pandas_to_json_floats() -> None:
    from pandas.io.json import ujson_dumps  # the encoder the summarizer's to_json uses

    rng = random.Random(24)
    values = [rng.uniform(0, 100) for _ in range(2000)] + [rng.uniform(0, 1e7) for _ in range(500)]
    values += [0.0, 1.0, 3072.0, 0.5, 1e-16, 2.5e17, 34.48876666666666, 0.99999999999, 12.00000000005]
    for value in values:
        assert json_float(value) == float(ujson_dumps(value)), value


def test_csv_and_json_cells_as_pandas_writes_them() -> None:
    table = Table(("system", "count", "bert", "bert:RCP"), [("POD16, v2", 16, 34.48876666666666, ""),
                                                           ("POD64", 64, None, "Pass")], frozenset())  # fmt: skip
    assert table_csv(table) == ('system,count,bert,bert:RCP\n"POD16, v2",16,34.48876666666666,\n'
                                'POD64,64,,Pass\n')  # fmt: skip
    assert '"bert": 34.4887666667' in table_json(table) and '"bert": null' in table_json(table)


def test_system_columns_and_the_rows_the_summarizer_skips() -> None:
    desc = system(system_name="tpu-v3", accelerator_model_name="tpu-v3", accelerators_per_node="8",
                  number_of_nodes="2", framework="TensorFlow 2.4 commit hash = abc", hw_notes="", sw_notes="x")
    cells = spec_cells(desc, "")
    assert cells is not None
    assert (cells["system"], cells["accelerator_model_name"], cells["accelerators_count"]) == ("TPUv3.16", "TPUv3", 16)
    assert (cells["framework"], cells["notes"]) == ("TensorFlow 2.4", "x")
    assert spec_cells({k: v for k, v in desc.items() if k != "hw_notes"}, "") is None  # a field missing: no row
    assert spec_cells({**desc, "number_of_nodes": "two"}, "") is None
    assert url_prefix("1.0.0") == "https://github.com/mlcommons/training_results_v1.0"
    assert url_prefix("5.1.0") == "https://github.com/mlcommons/training_results_v5.1"


def test_summary_name_must_end_in_csv(run_cli: Any, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"must end in \.csv"):
        summary_paths(tmp_path / "out.txt")
    assert summary_paths(tmp_path / "a.csv")["detailed_json"] == tmp_path / "a_detailed.json"
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tmp_path, "--summary-csv", tmp_path / "out.txt")
    assert code == 2 and "must end in .csv" in err


@pytest.fixture
def summarized(run_cli: Any, tmp_path: Path) -> tuple[Path, Path, int]:
    tree = two_pod_org(tmp_path)
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-csv", tmp_path / "chair.csv")
    assert code in (0, 1), err
    return tree, tmp_path / "chair.csv", code


def _against(run_cli: Any, tree: Path, chair: Path) -> tuple[int, str]:
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--against", chair, "--format", "json")
    return code, err


def test_against_an_equal_summary_has_no_finding(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    tree, chair, plain = summarized
    for name in ("chair.csv", "chair_detailed.csv"):
        code, out = _against(run_cli, tree, chair.with_name(name))
        assert code == plain and "REP00" not in out


def test_against_a_summary_without_the_system_row(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    tree, chair, _ = summarized
    lines = chair.read_text(encoding="utf-8").splitlines(keepends=True)
    chair.write_text("".join(line for line in lines if "/pod16.json" not in line), encoding="utf-8")
    code, out = _against(run_cli, tree, chair)
    assert code == 1 and "REP002" in out and "pod16 resnet" in out


def test_against_a_summary_with_another_time(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    tree, chair, _ = summarized
    text = chair.read_text(encoding="utf-8")
    rounded = text.replace("14.5,", "14.6,") if "14.5," in text else text.replace(",14.5", ",14.6")
    chair.write_text(rounded, encoding="utf-8")
    code, out = _against(run_cli, tree, chair)
    assert code == 1 and "REP003" in out and "resnet" in out


def test_against_a_rounded_summary_matches(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    tree, chair, plain = summarized
    detailed = chair.with_name("chair_detailed.csv")
    detailed.write_text(detailed.read_text(encoding="utf-8").replace("14.5,", "14.50,"), encoding="utf-8")
    code, out = _against(run_cli, tree, detailed)
    assert code == plain and "REP00" not in out


def test_against_a_summary_with_a_result_we_lack(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    tree, chair, _ = summarized
    shutil.rmtree(tree / "results" / "pod64" / "resnet")
    _, out = _against(run_cli, tree, chair)
    assert "REP004" in out and "pod64 resnet" in out


def test_against_a_file_that_is_no_summary_is_exit_2(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    tree, chair, _ = summarized
    chair.write_text("a,b\n1,2\n", encoding="utf-8")
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--against", chair)
    assert code == 2 and "not a result summarizer CSV" in err


def test_summary_xlsx_without_openpyxl_is_exit_2(run_cli: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as when it is not installed
    tree = two_pod_org(tmp_path)
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-xlsx", tmp_path / "out.xlsx")
    assert code == 2 and "openpyxl" in err and not (tmp_path / "out.xlsx").exists()


def test_summary_xlsx_holds_the_wide_table_per_division(run_cli: Any, tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl", reason="--summary-xlsx needs openpyxl (pip install openpyxl)")
    tree = two_pod_org(tmp_path)  # status "onprem": the section "Available on-premise"
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-xlsx", tmp_path / "out.xlsx",
                           "--summary-csv", tmp_path / "out.csv")  # fmt: skip
    assert code in (0, 1), err
    book = openpyxl.load_workbook(tmp_path / "out.xlsx")
    assert book.sheetnames == ["closed", "open"]
    closed = [[c.value for c in row] for row in book["closed"].iter_rows()]
    assert closed[0][:3] == ["ID", "division", "availability"]
    assert closed[1][0] == "Available on-premise" and closed[2][0] == "1.1-0000" and closed[2][4] == "IPU-POD16"
    assert [row[0] for row in book["open"].iter_rows(values_only=True)][2] == "1.1-0001"


def test_batch_size_cells_are_finite_numbers_or_minus_one() -> None:
    from mlsubmit.report.summary import _number

    assert _number(3072, -1.0) == 3072.0
    assert _number(float("inf"), -1.0) == -1.0 and _number(True, -1.0) == -1.0 and _number("8", -1.0) == -1.0


def test_against_a_repeated_row_with_another_time(run_cli: Any, summarized: tuple[Path, Path, int]) -> None:
    """A chair's file holding the system's row twice, the second with another time: that row is compared too."""
    tree, chair, _ = summarized
    lines = chair.read_text(encoding="utf-8").splitlines(keepends=True)
    cells = next(line for line in lines if "/pod16.json" in line).split(",")
    cells[lines[0].split(",").index("resnet")] = "19.5"
    chair.write_text("".join(lines) + ",".join(cells), encoding="utf-8")
    code, out = _against(run_cli, tree, chair)
    assert code == 1 and "REP003" in out and "chair '19.5'" in out
    assert f"chair.csv:{len(lines) + 1}: error REP003" in out


def test_against_a_system_only_the_chair_has_names_its_submitter(run_cli: Any,
                                                                  summarized: tuple[Path, Path, int]) -> None:
    tree, chair, _ = summarized
    lines = chair.read_text(encoding="utf-8").splitlines(keepends=True)
    row = next(line for line in lines if "/pod16.json" in line)
    chair.write_text("".join(lines) + row.replace("/pod16.json", "/pod999.json"), encoding="utf-8")
    code, out = _against(run_cli, tree, chair)
    said = [line for line in out.splitlines() if "REP004" in line]
    assert code == 1 and said and all("REP004 Graphcore pod999 resnet" in line for line in said), said


def test_an_unreadable_chair_file_is_exit_2_before_any_summary_is_written(run_cli: Any, tmp_path: Path) -> None:
    tree = two_pod_org(tmp_path)
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-csv", tmp_path / "ours.csv",
                           "--against", tmp_path / "no-such-chair.csv")  # fmt: skip
    assert code == 2 and "--against" in err and "cannot read it" in err
    assert not list(tmp_path.glob("ours*")), "a summary was written by a command that ended in exit 2"


def test_summary_xlsx_holds_a_tree_text_as_inert_text(run_cli: Any, tmp_path: Path) -> None:
    """Text from system descriptions reaches the chair's workbook as text: a control character (which openpyxl
    refuses: it was exit 3) is shown as an escape, and a leading '=' stays a string, never a formula."""
    openpyxl = pytest.importorskip("openpyxl", reason="--summary-xlsx needs openpyxl (pip install openpyxl)")
    tree = write_org(tmp_path / "Org", {"pod16": system(framework="Pop\x1bART", system_name="=HYPERLINK(\"x\")")},
                     {("pod16", "resnet"): runs([14.0, 14.5, 15.0, 14.25, 14.75], ruleset="1.1.0", evals=35,
                                                hyperparameters={"global_batch_size": 3264})})  # fmt: skip
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-xlsx", tmp_path / "out.xlsx")
    assert code in (0, 1), err
    sheet = openpyxl.load_workbook(tmp_path / "out.xlsx")["closed"]
    head = [c.value for c in sheet[1]]
    row = sheet[3]
    assert row[head.index("framework")].value == "Pop\\x1bART"
    name = row[head.index("system")]
    assert name.value == "=HYPERLINK(\"x\")" and name.data_type == "s"


def test_summary_xlsx_without_openpyxl_writes_no_csv_either(run_cli: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 2 is said before the check: no summary CSV files are left behind by a command that failed."""
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    tree = two_pod_org(tmp_path)
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-xlsx", tmp_path / "out.xlsx",
                           "--summary-csv", tmp_path / "out.csv")  # fmt: skip
    assert code == 2 and "openpyxl" in err
    assert not list(tmp_path.glob("out*")), list(tmp_path.glob("out*"))


def test_summary_xlsx_name_must_end_in_xlsx(run_cli: Any, tmp_path: Path) -> None:
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tmp_path, "--summary-xlsx", tmp_path / "out.csv")
    assert code == 2 and "must end in .xlsx" in err
