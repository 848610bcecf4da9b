"""Grouped text and GitHub output (one entry per code and message, count first, root causes first) and inert text."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Report
from mlsubmit.core.support.display_escape import inert
from mlsubmit.formats import REPORTERS, text
from mlsubmit.formats.causes import attach_causes
from mlsubmit.formats.ci import github
from mlsubmit.formats.grouped import cause_label, group, path_pattern


def render(reporter: Callable[..., None], report: Report) -> str:
    stream = io.StringIO()
    reporter(report, stream, color=False)
    return stream.getvalue()


def placeholder_report(n: int) -> Report:
    report = Report()
    for i in range(n):
        path = f"org/results/sys_n{i % 2}/bert/result_{i}.txt"
        report.add_file(path, [finding("SYS047", path, "submission_org is the placeholder 'X'", line=29)])
    return report


def test_repeated_findings_print_once_count_first_with_their_paths() -> None:
    lines = render(text, placeholder_report(12)).splitlines()
    assert lines == [
        "paths below are under org/results/",
        "  12\u00d7 warning SYS047 submission_org is the placeholder 'X': "
        "{sys_n0,sys_n1}/bert/result_*.txt:29",
        "      hint: " + finding("SYS047", "", "m").hint,
        "12 file(s) checked, 0 failed; 0 error(s), 12 warning(s), 0 info",
    ]


def test_json_sarif_junit_keep_every_finding() -> None:
    report = placeholder_report(12)
    data = json.loads(render(REPORTERS["json"], report))
    assert sum(len(f["findings"]) for f in data["files"]) == 12
    assert len(json.loads(render(REPORTERS["sarif"], report))["runs"][0]["results"]) == 12
    assert render(REPORTERS["junit"], report).count("SYS047 submission_org") == 12


def test_github_writes_one_command_per_group_and_file() -> None:
    """GitHub shows an annotation on the file it names only: a group over 12 files is 12 commands, one each."""
    lines = render(github, placeholder_report(12)).splitlines()
    assert len(lines) == 13  # a command per file, then the summary
    assert lines[0].startswith("::warning file=org/results/sys_n0/bert/result_0.txt,line=29,title=SYS047 ")
    assert sorted(line.split(",")[0] for line in lines[:12]) == sorted(
        f"::warning file=org/results/sys_n{i % 2}/bert/result_{i}.txt" for i in range(12))
    assert not [line for line in lines if "\u00d7)" in line]
    report = Report()  # repeats within one file still fold into one annotation on that file
    report.add_file("a.log", [finding("SYS047", "a.log", "submission_org is the placeholder 'X'", line=n)
                              for n in (3, 9)])  # fmt: skip
    (command, _summary) = render(github, report).splitlines()
    assert command.startswith("::warning file=a.log,line=3,title=SYS047 ") and "(2\u00d7)" in command


def test_small_reports_keep_a_verdict_per_file_and_one_line_per_single_finding() -> None:
    report = Report()
    report.add_file("a.log", [finding("LOG004", "a.log", "record is not valid JSON", line=7)])
    report.add_file("b.log", [])
    lines = render(text, report).splitlines()
    assert lines[:3] == ["a.log: FAIL", "b.log: PASS", "  a.log:7: error LOG004 record is not valid JSON"]


def test_consequences_fold_under_their_root_cause_which_prints_first() -> None:
    root = finding("LOG004", "a.log", "record is not valid JSON", line=163, case="last-record")
    after = [
        finding("RULE002", "a.log", f"'{k}' must appear exactly once; found 0", cause=cause_label(root))
        for k in ("run_stop", "eval_accuracy")
    ]
    other = finding("HP001", "b.log", "'lr' is 3")
    assert [g.first.code for g in group([*after, other, root])] == ["LOG004", "RULE002", "RULE002", "HP001"]
    report = Report()
    report.add_file("a.log", [*after, root])
    lines = render(text, report).splitlines()
    assert lines[1] == "  a.log:163: error LOG004 record is not valid JSON"
    assert lines[3] == "    the log looks truncated at line 163 (its last record is cut off); so:"
    assert lines[4].startswith("      a.log: error RULE002 'eval_accuracy'")


def test_path_patterns() -> None:
    assert path_pattern([f"r/a/result_{i}.txt" for i in range(1, 5)] + ["r/b/result_1.txt"]) == (
        "r/{a,b}/result_*.txt"
    )
    assert path_pattern(["x/a.json", "x/y/b.json"]) == "2 files under x/"


def hostile_report() -> Report:
    bad = "x\nlogs/ok.txt: PASS\n::error file=x::forged\x1b]8;;http://e\x07link\x1b[2J\u202eevil"
    report = Report()
    report.add_file(bad, [finding("LOG004", bad, f"record is not valid JSON: {bad}", line=1)])
    return report


def test_text_output_shows_hostile_names_and_values_but_obeys_none() -> None:
    out = render(text, hostile_report())
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    lines = out.splitlines()
    assert not any(ln.startswith(("logs/ok.txt: PASS", "::")) for ln in lines)
    assert "x\\nlogs/ok.txt: PASS\\n::error file=x::forged\\x1b]8;;http://e\\x07link\\x1b[2J\\u202eevil" in lines[0]


def test_github_output_obeys_no_hostile_name() -> None:
    out = render(github, hostile_report())
    lines = out.splitlines()
    assert len(lines) == 2 and not lines[1].startswith("::")
    assert "\x1b" not in out and "\u202e" not in out
    assert "file=x\\nlogs/ok.txt%3A PASS\\n%3A%3Aerror file=x%3A%3Aforged\\x1b]8;;http%3A//e" in lines[0]


def test_inert_keeps_ordinary_text() -> None:
    assert inert("tab\there é \U0001f600 \\ 100%") == "tab\there é \U0001f600 \\ 100%"
    assert inert("a\r\nb\x00\x7f\x9b\ud800") == "a\\r\\nb\\x00\\x7f\\x9b\\ud800"


def test_a_finding_names_its_cause_in_json() -> None:
    f = finding("RULE002", "a.log", "m", cause="LOG004 a.log:3")
    assert f.to_dict()["cause"] == "LOG004 a.log:3"
    assert "cause" not in Finding.to_dict(finding("RULE002", "a.log", "m"))


def truncated_report() -> Report:
    report = Report()
    report.add_file("a.log", [
        finding("RULE002", "a.log", "'run_stop' must appear exactly once; found 0"),
        finding("LOG004", "a.log", "record is not valid JSON", line=27, case="last-record"),
        finding("HP001", "a.log", "'lr' is 3", line=5),
    ])
    report.add_file("b.log", [finding("RULE002", "b.log", "'run_stop' must appear exactly once; found 0")])
    return report


def test_a_truncated_log_says_so_and_its_consequences_name_it() -> None:
    report = attach_causes(truncated_report())
    causes = {(f.path, f.code): f.cause for f in report.all_findings()}
    assert causes == {("a.log", "RULE002"): "LOG004 a.log:27", ("a.log", "LOG004"): None,
                      ("a.log", "HP001"): None, ("b.log", "RULE002"): None}  # b.log has no broken record
    lines = render(text, report).splitlines()
    at = lines.index("  a.log:27: error LOG004 record is not valid JSON")
    assert lines[at + 2] == "    the log looks truncated at line 27 (its last record is cut off); so:"
    assert lines[at + 4] == "          hint: fix the cause above first; this follows from it"


def test_an_empty_log_pattern_is_the_cause_of_the_runs_it_left_out() -> None:
    report = Report()
    report.extend([finding("TREE024", "org/results/x/bert", "RCP checker: KeyError: None"),
                   finding("PKG001", "package.toml", "logs = 'runs/*.log' matches no file", line=4)])
    out = attach_causes(report)
    assert {f.code: f.cause for f in out.all_findings()} == {"PKG001": None, "TREE024": "PKG001 package.toml:4"}
    assert [g.first.code for g in group(out.all_findings())] == ["PKG001", "TREE024"]
