"""The summary line counts what failed at every level, so a report with exit 1 never reads like a pass."""

from __future__ import annotations

import io
import json

import pytest

from mlsubmit.core.findings import Finding, Report, Severity, place_kind
from mlsubmit.core.support.schema_loader import errors, load_schema
from mlsubmit.formats import REPORTERS


def _f(path: str, severity: Severity = Severity.ERROR, code: str = "TREE013") -> Finding:
    return Finding(code, severity, path, "m", "h")


def _summary(report: Report) -> str:
    out = io.StringIO()
    REPORTERS["text"](report, out)
    return out.getvalue().splitlines()[-1]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("", "run"),
        ("Graphcore/systems/ipu-pod16.json", "system description(s)"),
        ("Graphcore/benchmarks/bert", "folder(s)"),
        ("Graphcore/results/ipu-pod64-POPART-closed/bert", "folder(s)"),
        ("Graphcore", "folder(s)"),
        ("Graphcore/results/sys/bert/result_0.txt", "other file(s)"),
        ("Graphcore/systems/.x.json.swp", "other file(s)"),
        ("Graphcore/results/dgx_ngc21.05", "folder(s)"),  # a version number is not a suffix
    ],
)
def test_place_kind_reads_the_path_shape(path: str, kind: str) -> None:
    assert place_kind(path) == kind


def test_tree_level_errors_make_the_summary_say_failed() -> None:
    # v1.0 Graphcore: 56 logs pass, two code folders and a results folder fail (was "56 ... 0 failed; 3 error(s)")
    tree = [_f("G/benchmarks/bert"), _f("G/benchmarks/resnet"), _f("G/results/s/bert", code="TREE018")]
    report = Report(files={f"r/result_{i}.txt": [] for i in range(56)}, tree=tree)
    assert _summary(report) == "56 file(s) checked, 0 failed, but 3 folder(s) failed; 3 error(s), 0 warning(s), 0 info"
    assert report.exit_code() == 1


def test_every_level_is_named_and_files_failing_too() -> None:
    report = Report(files={"a/result_0.txt": [_f("a/result_0.txt", code="RULE004")], "a/result_1.txt": []},
                    tree=[_f("G/systems/s.json", code="SYS019"), _f("G/results/s/bert"), _f(""),
                          _f("G/results/s/ssd", Severity.WARNING)])  # fmt: skip
    assert _summary(report) == (
        "2 file(s) checked, 1 failed; 1 folder(s), 1 system description(s) and the run failed too; "
        "4 error(s), 1 warning(s), 0 info"
    )
    report.strict = True
    assert "2 folder(s)" in _summary(report)


def test_warnings_elsewhere_do_not_fail_and_json_counts_the_levels() -> None:
    report = Report(files={"x/result_0.txt": []}, tree=[_f("G/results/s/bert", Severity.WARNING)])
    assert _summary(report).startswith("1 file(s) checked, 0 failed; 0 error(s)")
    report.tree.append(_f("G/systems/s.json"))
    out = io.StringIO()
    REPORTERS["json"](report, out)
    data = json.loads(out.getvalue())
    assert data["summary"]["failed_elsewhere"] == {"system_description": 1}
    assert errors(data, load_schema("report.schema.json")) == []
