"""Waivers (checker/policy/): reading and validating [[waiver]] tables, matching, expiry, unused waivers, and the
starting file --write-waivers writes."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlsubmit.checker.policy import waivers as waivers_module
from mlsubmit.checker.policy.waiver_pass import applied_waivers, apply_waivers
from mlsubmit.checker.policy.waiverfile import exact_pattern, path_glob, refuse_existing, starting_file, toml_string
from mlsubmit.checker.policy.waivers import Waiver, header_lines, read_waivers

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Report, Severity, has_errors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TODAY = dt.date(2026, 11, 25)
GRANT = 'reason = "granted"\nreference = "https://github.com/mlcommons/training_policies/pull/586"\nwho = "review"\n'
LOG = "org/results/pod16/bert/result_0.txt"


def table(code: str, *, path: str | None = None, message: str | None = None, expires: str = "2027-01-31") -> str:
    out = f'[[waiver]]\ncode = "{code}"\n'
    if path is not None:
        out += f"path = {toml_string(path)}\n"
    if message is not None:
        out += f"message = {toml_string(message)}\n"
    return out + GRANT + f"expires = {expires}\n"


def waivers(tmp_path: Path, *tables: str, preamble: str = "") -> list[Waiver]:
    file = tmp_path / "waivers.toml"
    file.write_text(preamble + "\n".join(tables), encoding="utf-8")
    return read_waivers(file, base=tmp_path, shown="waivers.toml")


def report(*findings: object) -> Report:
    out = Report()
    out.add_file(LOG, [f for f in findings if getattr(f, "path", "") == LOG])  # type: ignore[misc]
    out.extend(f for f in findings if getattr(f, "path", "") != LOG)  # type: ignore[misc]
    return out


def test_tables_are_read_with_their_lines_and_dates(tmp_path: Path) -> None:
    found = waivers(tmp_path, table("RULE004", path="org/**"), table("SYS", expires='"2026-12-01"'),
                    preamble="[check]\nruleset = \"1.1.0\"\n\n")
    assert [(w.code, w.index, w.line, w.path) for w in found] == [("RULE004", 0, 4, "org/**"), ("SYS", 1, 12, "**")]
    assert found[1].expires == dt.date(2026, 12, 1)
    assert header_lines("x = 1\n  [[ waiver ]]\n['waiver']\n[[waiver]]\n") == [2, 4]


@pytest.mark.parametrize(("text", "said"), [
    (table("RULE004").replace('reason = "granted"\n', ""), "(waiver 1): /waiver/0: 'reason' is a required"),
    (table("rule4"), "/waiver/0/code"),
    (table("RULE999"), "(waiver 1): code RULE999 is not in the catalogue"),
    (table("ZZZ"), "code ZZZ is not in the catalogue"),
    (table("RULE004", message="(a)\\1"), "not an RE2 regular expression"),
    (table("RULE004", message="\\pL{100}"), "larger than RE2's budget of 256 KiB for one pattern"),
    (table("RULE004", message="\\pL{5}"), "RE2 instructions, more than 5000"),
    (table("RULE004", expires='"2026-02-30"'), "expires '2026-02-30' is not a date"),
    (table("RULE004", expires="2026-02-01T10:00:00"), "/waiver/0/expires"),
    (table("RULE004", path="!org/**"), "/waiver/0/path"),
    (table("RULE004").replace('who = "review"', 'who = " "'), "/waiver/0/who"),
    ('[waiver]\ncode = "RULE004"\n', "/waiver: "),
    (table("RULE004") + 'colour = "red"\n', "Additional properties are not allowed"),
    ("[[waiver]\n", "not TOML"),
])
def test_a_bad_waiver_is_a_usage_error_naming_file_and_index(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        waivers(tmp_path, text)
    message = str(raised.value)
    assert message.startswith("waivers.toml") and said in message
    if text.startswith("[[waiver]]") and "\n" in text[11:]:
        with pytest.raises(UsageError) as raised:  # behind a good table, the bad one is named the second
            waivers(tmp_path, table("HP"), text)
        assert said.replace("waiver 1", "waiver 2").replace("/waiver/0", "/waiver/1") in str(raised.value)


def test_message_patterns_are_kept_within_a_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waivers_module, "REGEX_BUDGET", 4 * (256 << 10))  # room for 4 kept patterns
    same = [table("RULE004", message="x\\pL{4}") for _ in range(20)]  # compiled once: 20 tables, one pattern
    literal = [table("RULE004", message=f"^a literal {n}$") for n in range(20)]  # compared as text, not kept
    found = waivers(tmp_path, *same, *literal)
    assert len(found) == 40 and found[0]._matchers[1] is found[19]._matchers[1]
    distinct = [table("RULE004", message=f"x{n}.*y") for n in range(5)]
    with pytest.raises(UsageError, match=r"waivers.toml:\d+ \(waiver 5\): more than 4 distinct message patterns"):
        waivers(tmp_path, *distinct)


def test_a_file_that_is_not_regular_or_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_bytes(b'[[waiver]]\ncode = "\xff"\n')
    with pytest.raises(UsageError, match="not UTF-8"):
        read_waivers(tmp_path / "bad.toml", base=tmp_path)
    with pytest.raises(UsageError, match="cannot read it"):
        read_waivers(tmp_path, base=tmp_path)


def test_code_family_glob_and_message_select_findings(tmp_path: Path) -> None:
    hit = finding("RULE004", LOG, "no 'eval_accuracy' record satisfies the target", line=9)
    other_message = finding("RULE004", LOG, "something else", line=10)
    other_file = finding("RULE004", "org/results/pod64/bert/result_0.txt", "no 'eval_accuracy' record", line=9)
    family = finding("SYS016", "org/systems/pod16.json", "empty field", pointer="/hw_notes")
    run_level = finding("LOG009", "", "about the whole run", severity=Severity.WARNING)
    found = waivers(tmp_path,
                    table("RULE004", path="org/results/pod16/**", message="eval_accuracy"),
                    table("SYS", path="org/systems/*.json"),
                    table("LOG009"))
    out = apply_waivers(report(hit, other_message, other_file, family, run_level), found, today=TODAY,
                        anchor=tmp_path)
    marks = {(f.code, f.line, f.path): f.waived for f in out.all_findings()}
    assert marks[("RULE004", 9, LOG)] is not None and marks[("RULE004", 9, LOG)].index == 0
    assert marks[("RULE004", 10, LOG)] is None and marks[("RULE004", 9, "org/results/pod64/bert/result_0.txt")] is None
    assert marks[("SYS016", None, "org/systems/pod16.json")].index == 1  # type: ignore[union-attr]
    assert marks[("LOG009", None, "")].index == 2  # type: ignore[union-attr]
    assert not [f for f in out.all_findings() if f.family == "WVR"]
    assert out.verdict(LOG) == "fail"  # the other two RULE004 are not waived
    waived = out.files[LOG][0].waived
    assert waived is not None and waived.to_dict() == {
        "reason": "granted", "reference": "https://github.com/mlcommons/training_policies/pull/586",
        "who": "review", "expires": "2027-01-31", "waiver": {"path": "waivers.toml", "index": 0, "line": 1}}


def test_waived_errors_do_not_fail_and_are_counted_apart(tmp_path: Path) -> None:
    error = finding("RULE004", LOG, "missed the target", line=9)
    out = apply_waivers(report(error), waivers(tmp_path, table("RULE004")), today=TODAY, anchor=tmp_path)
    assert out.exit_code() == 0 and out.verdict(LOG) == "pass"
    assert out.counts() == {"error": 0, "warning": 0, "info": 0, "waived": 1}
    assert not has_errors(out.all_findings(), strict=True)
    assert applied_waivers(out) == [{"source": "waivers.toml", "index": 0, "reason": "granted",
                             "reference": "https://github.com/mlcommons/training_policies/pull/586", "who": "review",
                             "expires": "2027-01-31", "findings": 1, "codes": ["RULE004"]}]


def test_unused_and_expired_waivers_are_findings_at_their_table(tmp_path: Path) -> None:
    error = finding("RULE004", LOG, "missed the target", line=9)
    found = waivers(tmp_path, table("RULE004", expires="2026-11-24"), table("HP001"), table("RULE004",
                    expires="2026-11-25"))
    out = apply_waivers(report(error), found, today=TODAY, anchor=tmp_path)
    own = sorted((f.code, f.line, f.pointer) for f in out.tree)
    assert own == [("WVR001", 8, "/waiver/1"), ("WVR002", 1, "/waiver/0")]
    assert out.files[LOG][0].waived is not None and out.files[LOG][0].waived.index == 2  # valid on its last day
    later = apply_waivers(report(error), found, today=TODAY + dt.timedelta(days=1), anchor=tmp_path)
    assert later.exit_code() == 1 and later.files[LOG][0].waived is None
    assert sorted(f.code for f in later.tree) == ["WVR001", "WVR002", "WVR002"]
    expired = next(f for f in later.tree if f.code == "WVR002")
    assert expired.path == "waivers.toml" and "expired on 2026-11-24" in expired.message
    assert expired.severity is Severity.WARNING


def test_paths_are_relative_to_the_waiver_base_from_the_anchor(tmp_path: Path) -> None:
    """An mlsubmit.toml's globs are relative to its folder, whatever folder the command ran in."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "mlsubmit.toml").write_text(table("RULE004", path="results/**"), encoding="utf-8")
    found = read_waivers(project / "mlsubmit.toml", base=project)
    inside = finding("RULE004", "project/results/pod16/bert/result_0.txt", "missed", line=3)
    absolute = finding("RULE004", str(project / "results/x.txt"), "missed", line=3)
    outside = finding("RULE004", "results/pod16/bert/result_0.txt", "missed", line=3)
    out = apply_waivers(report(inside, absolute, outside), found, today=TODAY, anchor=tmp_path)
    assert [f.waived is not None for f in out.tree] == [True, True, False]


def test_a_pattern_is_searched_in_linear_time_and_nothing_in_it_runs(tmp_path: Path) -> None:
    """(a+)+$ takes Python's re exponential time on "aaa...b"; RE2 answers at once (no timing asserted: a
    backtracking engine would not finish this test at all)."""
    slow = finding("RULE004", LOG, "a" * 5000 + "b", line=1)
    found = waivers(tmp_path, table("RULE004", message="(a+)+$"), table("RULE004", message="(?i)A+B"))
    out = apply_waivers(report(slow), found, today=TODAY, anchor=tmp_path)
    assert out.files[LOG][0].waived is not None and out.files[LOG][0].waived.index == 1


def test_the_starting_file_round_trips_and_keeps_hostile_text_inert(tmp_path: Path) -> None:
    hostile_path = "org/results/pod[16]*/bert\n\x1b[31m/result_0.txt"
    hostile = "a \"quoted\" \\ value\x00\x1b]8;;x\x07 \u202e é \ud800 $(rm -rf /) ''' \n[[waiver]]"
    findings = [
        finding("RULE004", hostile_path, hostile, line=4),
        finding("RULE004", hostile_path, hostile, line=9),  # the same message again: one waiver
        finding("RULE004", "org/results/pod16/bert/result_1.txt", "x", line=1),
        finding("SYS016", "result_1.txt", "empty", pointer="/a"),
        finding("LOG009", "", "about the run", severity=Severity.WARNING),
        finding("TREE019", "org", "info only", severity=Severity.INFO),
    ]
    text = starting_file(findings, today=TODAY, base=tmp_path, anchor=tmp_path)
    assert text.isascii() and all(ch == "\n" or " " <= ch <= "~" for ch in text)
    assert text == starting_file(list(reversed(findings)), today=TODAY, base=tmp_path, anchor=tmp_path)
    data = tomllib.loads(text)
    assert [w["code"] for w in data["waiver"]] == ["LOG009", "RULE004", "RULE004", "SYS016"]
    assert all(w["reason"] == w["reference"] == w["who"] == "to review" for w in data["waiver"])
    assert {w["expires"] for w in data["waiver"]} == {dt.date(2027, 2, 23)}
    assert "path" not in data["waiver"][0]  # a finding about the whole run: every path
    assert data["waiver"][3]["path"] == "/result_1.txt"  # anchored: not any result_1.txt below
    file = tmp_path / "w.toml"
    file.write_text(text, encoding="ascii")
    written = read_waivers(file, base=tmp_path)
    out = apply_waivers(report(*findings), written, today=TODAY, anchor=tmp_path)
    assert [f.code for f in out.all_findings() if f.waived is None] == ["TREE019"]
    assert not [f for f in out.all_findings() if f.family == "WVR"]
    near_miss = [finding("RULE004", "org/results/pod1/bert\n\x1b[31m/result_0.txt", hostile, line=4),
                 finding("RULE004", hostile_path, hostile + "!", line=4)]
    out = apply_waivers(report(*near_miss), written, today=TODAY, anchor=tmp_path)
    assert all(f.waived is None for f in out.tree if f.family != "WVR")


def test_glob_and_pattern_escaping() -> None:
    assert path_glob("a/b[1]*?.txt") == "a/b\\[1\\]\\*\\?.txt"
    assert path_glob("!x") == "/\\!x" and path_glob("#x") == "/\\#x"
    assert exact_pattern("a.b (c) é\x00") == "^a\\.b \\(c\\) \\x{E9}\\x{0}$"
    assert len(exact_pattern("(" * 5000)) <= 1000 and not exact_pattern("(" * 5000).endswith("$")
    assert toml_string('"\\\n\U0001f600') == '"\\"\\\\\\u000A\\U0001F600"'


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "w.toml").write_text("mine\n")
    with pytest.raises(UsageError, match="never replaced"):
        refuse_existing(tmp_path / "w.toml")
    (tmp_path / "link").symlink_to(tmp_path / "missing")
    with pytest.raises(UsageError):
        refuse_existing(tmp_path / "link")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(min_size=1, max_size=40).filter(lambda s: "/" not in s and s not in (".", "..")),
       message=st.text(min_size=1, max_size=200))
def test_any_name_and_message_round_trip_to_a_waiver_of_that_finding_alone(tmp_path: Path, name: str,
                                                                           message: str) -> None:
    """Whatever a file name or message holds, the written file is TOML whose one waiver covers that finding and
    not one with a longer message or in another folder."""
    path = f"org/{name.replace(chr(0), '0')}"  # a path never holds NUL
    found = finding("RULE004", path, message, line=1)
    text = starting_file([found], today=TODAY, base=tmp_path, anchor=tmp_path)
    assert text.isascii()
    file = tmp_path / "w.toml"
    file.write_text(text, encoding="ascii")
    written = read_waivers(file, base=tmp_path)
    assert len(written) == 1
    others = [finding("RULE004", path, message + "x", line=2), finding("RULE004", f"other/{path[4:]}", message)]
    out = apply_waivers(report(found, *others), written, today=TODAY, anchor=tmp_path)
    assert [f.waived is not None for f in out.tree] == [True, False, False]


def test_the_first_waiver_in_file_order_marks_a_finding_however_it_is_found(tmp_path: Path) -> None:
    """Globs naming one path are looked up by that path (and cover what is below it, as gitignore's do); others
    are tried by code. Either way the first waiver of the file that covers the finding marks it."""
    found = finding("RULE004", LOG, "missed the target", line=9)
    folder = table("RULE", path="org/results")
    exact = table("RULE004", path="/" + LOG, message="^missed the target$")
    anywhere = table("RULE004", message="missed")
    for tables, first in (((folder, anywhere), 0), ((anywhere, folder), 0), ((anywhere, exact), 0),
                          ((exact, folder), 0), ((table("HP"), exact, anywhere), 1)):
        out = apply_waivers(report(found), waivers(tmp_path, *tables), today=TODAY, anchor=tmp_path)
        mark = out.files[LOG][0].waived
        assert mark is not None and mark.index == first, tables
    near = finding("RULE004", "org/resultsX/a.txt", "missed the target", line=1)
    out = apply_waivers(report(near), waivers(tmp_path, folder), today=TODAY, anchor=tmp_path)
    assert out.tree[0].waived is None
