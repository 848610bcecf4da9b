"""One resolved policy settles each finding once (checker/policy/severity.py's `Policy.settle`): a run's own errors
that its folder judges, the note of a log checked alone (POL001), levels and selections, then the waivers; and
`policy_for` resolves all of it, waivers and fail-on included, before anything is checked."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from mlsubmit.checker.policy.check_config import Flags, policy_for, waivers_only
from mlsubmit.checker.policy.severity import Layer, Policy, RunFiles
from mlsubmit.checker.policy.waiver_pass import waiver_pass
from mlsubmit.checker.policy.waivers import Waiver, read_waivers

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Report, Severity

TODAY = dt.date(2026, 11, 25)
LOG = "org/results/pod16/bert/result_0.txt"
ALONE = "result_0.txt"
GRANT = 'reason = "granted"\nreference = "https://example.org/586"\nwho = "review"\nexpires = 2027-01-31\n'


def waivers(tmp_path: Path, *codes: str) -> tuple[Waiver, ...]:
    file = tmp_path / "waivers.toml"
    file.write_text("".join(f'[[waiver]]\ncode = "{code}"\n{GRANT}\n' for code in codes), encoding="utf-8")
    return tuple(read_waivers(file, base=tmp_path, shown="waivers.toml"))


def levels(report: Report, path: str) -> list[tuple[str, str]]:
    return [(f.code, f.severity.value) for f in report.files[path]]


def test_a_judged_runs_own_errors_are_warnings_but_its_kept_errors_and_later_findings_are_not() -> None:
    report = Report()
    report.add_file(LOG, [finding("HP001", LOG, "own", line=3), finding("RULE010", LOG, "own, kept", line=4)])
    report.add(finding("TREE007", LOG, "a tree check's own, added after the log's"))
    Policy("full").settle(report, "1.0", RunFiles(own={LOG: 2}, judged=frozenset({LOG})))
    assert levels(report, LOG) == [("HP001", "warning"), ("RULE010", "error"), ("TREE007", "error")]


def test_a_log_checked_alone_gets_pol001_after_its_own_findings_naming_its_errors() -> None:
    report = Report()
    report.add_file(ALONE, [finding("HP001", ALONE, "own", line=3), finding("RULE001", ALONE, "own", line=5)])
    report.add(finding("TREE007", ALONE, "added after"))
    Policy("full").settle(report, "1.0", RunFiles(own={ALONE: 2}, alone=frozenset({ALONE})))
    assert [f.code for f in report.files[ALONE]] == ["HP001", "RULE001", "POL001", "TREE007"]
    assert "(HP001, RULE001)" in report.files[ALONE][2].message
    clean = Report()
    clean.add_file(ALONE, [])
    Policy("full").settle(clean, "1.0", RunFiles(own={ALONE: 0}, alone=frozenset({ALONE})))
    assert clean.files[ALONE] == []


def test_waivers_see_the_level_the_policy_set_and_never_a_dropped_finding(tmp_path: Path) -> None:
    policy = Policy("full", (Layer("flags", ignore=("RULE",), levels=(("HP001", Severity.WARNING),)),),
                    waivers=waivers(tmp_path, "HP001", "RULE001"), today=TODAY)
    report = Report()
    report.add_file(LOG, [finding("HP001", LOG, "own", line=3), finding("RULE001", LOG, "own", line=5)])
    waiving = policy.waiving()
    policy.settle(report, "1.0", RunFiles(own={LOG: 2}), waiving)
    (hp,) = report.files[LOG]
    assert hp.severity is Severity.WARNING and hp.waived is not None and hp.waived.index == 0
    assert waiving is not None
    assert [(f.code, f.pointer) for f in waiving.own_findings()] == [("WVR001", "/waiver/1")]  # RULE001 was dropped


def test_one_waiver_pass_spans_several_reports(tmp_path: Path) -> None:
    """The rounds of one check share the pass: a waiver used in one round is not unused in the other."""
    waiving = waiver_pass(waivers(tmp_path, "HP001"), today=TODAY, anchor=tmp_path)
    assert waiving is not None
    first, second = Report(), Report()
    first.add_file(LOG, [finding("HP001", LOG, "own", line=3)])
    second.add_file(ALONE, [finding("RULE001", ALONE, "own", line=5)])
    for report in (first, second):
        Policy("full").settle(report, "1.0", None, waiving)
    assert first.files[LOG][0].waived is not None and second.files[ALONE][0].waived is None
    assert waiving.own_findings() == []


def test_policy_waive_marks_findings_without_touching_their_levels(tmp_path: Path) -> None:
    report = Report()
    report.add_file(LOG, [finding("SYS016", LOG, "made as an error", line=1), finding("HP001", LOG, "x", line=3)])
    Policy("full", waivers=waivers(tmp_path, "HP001"), today=TODAY).waive(report)
    assert [(f.code, f.severity.value, f.waived is not None) for f in report.files[LOG]] == [
        ("SYS016", "error", False), ("HP001", "error", True)]


def test_policy_for_resolves_waivers_and_fail_on_before_anything_is_checked(tmp_path: Path) -> None:
    (tmp_path / "mlsubmit.toml").write_text(f'[check]\nfail-on = {{ rcp-risk = 0.2 }}\n\n[[waiver]]\ncode = "HP001"\n'
                                            f"{GRANT}", encoding="utf-8")
    extra = tmp_path / "more.toml"
    extra.write_text(f'[[waiver]]\ncode = "RULE001"\n{GRANT}', encoding="utf-8")
    flags = Flags(waivers=(extra,), project_waivers=True)
    policy, config = policy_for([str(tmp_path)], flags)
    assert config == tmp_path / "mlsubmit.toml" and policy.rcp_risk_limit == 0.2
    assert [w.code for w in policy.waivers] == ["HP001", "RULE001"]
    assert policy_for([str(tmp_path)], Flags(fail_on=("rcp-risk=0.05",)))[0].rcp_risk_limit == 0.05
    assert policy_for([str(tmp_path)], Flags())[0].waivers == ()  # commands that do not waive read none
    only = waivers_only([str(tmp_path)], Flags(project_waivers=True))
    assert only.profile == "full" and only.layers == () and [w.code for w in only.waivers] == ["HP001"]
    (tmp_path / "bad.toml").write_text("[[waiver]]\ncode = 'HP001'\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad\.toml"):
        policy_for([str(tmp_path)], Flags(waivers=(tmp_path / "bad.toml",)))
