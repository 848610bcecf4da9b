"""The policy: checks as registered objects, profiles as data (extends), severities as the review applies them,
the project's and the command line's selections and levels, and what `explain` says of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth import RunSpec, write_run
from fixtures.synth_org import runs, system, write_org
from mlsubmit.checker.base.options import CheckOptions
from mlsubmit.checker.engine import checks
from mlsubmit.checker.engine.pipeline import run_check
from mlsubmit.checker.policy import profiles
from mlsubmit.checker.policy.check_config import Flags, policy_for
from mlsubmit.checker.policy.severity import Layer, Policy

from mlsubmit.cli import main
from mlsubmit.core.codes import catalogue, finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Report, Severity

# --- checks as registered objects -----------------------------------------------------------------------------


def test_every_catalogued_code_is_registered_and_every_registered_code_catalogued() -> None:
    assert sorted(set(catalogue()) - checks.registered_codes()) == sorted(checks.RETIRED)
    assert sorted(checks.registered_codes() - set(catalogue())) == []


def test_checks_of_a_stage_are_looked_up_by_name() -> None:
    assert checks.check("rules", "log").codes >= {"RULE001", "RULE004"}
    with pytest.raises(KeyError):
        checks.check("rules", "org")


# --- profiles as data -------------------------------------------------------------------------------------------


def _fake_files(monkeypatch: pytest.MonkeyPatch, files: dict[str, dict[str, Any]]) -> None:
    monkeypatch.setattr(profiles, "_file", lambda name: files[name])
    monkeypatch.setattr(profiles, "SHIPPED", tuple(files))
    profiles.load.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_profiles() -> Any:
    profiles.load.cache_clear()
    yield
    profiles.load.cache_clear()


def test_extends_keeps_the_base_and_changes_what_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"profile": "base", "description": "b", "checks": {"log": ["read", "rules"], "org": ["systems"]},
            "run_errors": "folder", "severity": {"SYS016": {"level": "warning", "source": "s"}}}
    child = {"profile": "child", "description": "c", "extends": "base", "checks": {"log": ["read"]},
             "severity": {"SYS017": {"rounds": {"4.0": "info"}, "source": "t"}}}
    _fake_files(monkeypatch, {"base": base, "child": child})
    spec = profiles.load("child")
    assert spec.chain == ("child", "base") and spec.names("log") == ("read",) and spec.names("org") == ("systems",)
    assert spec.run_errors == "folder"
    levels = spec.levels()
    assert levels["SYS016"].level("5.0") is Severity.WARNING and levels["SYS016"].origin.endswith("base.yaml")
    assert levels["SYS017"].level("4.0") is Severity.INFO and levels["SYS017"].level("4.1") is None


def test_a_profile_that_extends_itself_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_files(monkeypatch, {"a": {"profile": "a", "description": "x", "extends": "b"},
                              "b": {"profile": "b", "description": "y", "extends": "a"}})
    with pytest.raises(ValueError, match="loops"):
        profiles.load("a")


def test_a_profile_naming_an_unregistered_check_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_files(monkeypatch, {"a": {"profile": "a", "description": "x", "checks": {"log": ["nosuch"]}}})
    assert profiles.load("a").names("log") == ("nosuch",)  # the profile names it; the engine looks it up
    with pytest.raises(KeyError):
        checks.plan("a")


def test_the_shipped_profiles_are_valid_and_name_catalogued_codes() -> None:
    for name in profiles.SHIPPED:
        spec = profiles.load(name)
        assert set(spec.levels()) <= set(catalogue())
        assert all(level.source for level in spec.levels().values())


# --- severities ---------------------------------------------------------------------------------------------------


def _report(*codes: str, path: str = "org/systems/a.json") -> Report:
    report = Report()
    report.add_file(path, [finding(code, path, f"{code} here") for code in codes])
    return report


def test_the_profile_makes_a_code_a_warning_and_names_the_practice() -> None:
    report = _report("SYS016", "SYS013")
    Policy("full").apply(report, "5.1")
    sys016 = next(f for f in report.all_findings() if f.code == "SYS016")
    assert sys016.severity is Severity.WARNING and "accepted in practice: 112 of 161" in sys016.message
    report = _report("SYS016")
    Policy("reference").apply(report, "5.1")
    assert report.all_findings()[0].severity is Severity.ERROR  # the reference profile sets no level


def test_a_level_can_hold_for_some_rounds_only() -> None:
    for round_name, expected in (("4.0", Severity.WARNING), ("4.1", Severity.WARNING), ("5.0", Severity.ERROR)):
        report = _report("POW013", path="power/node_0.txt")
        Policy("full").apply(report, round_name)
        assert report.all_findings()[0].severity is expected


def test_layers_select_ignore_and_set_levels_in_order() -> None:
    layers = (Layer("cfg", ignore=("SYS017",), levels=(("SYS", Severity.INFO),)),
              Layer("flags", levels=(("SYS016", Severity.ERROR),)))
    report = _report("SYS016", "SYS017", "SYS005")
    Policy("full", layers).apply(report, "5.1")
    got = {f.code: f.severity for f in report.all_findings()}
    assert got == {"SYS016": Severity.ERROR, "SYS005": Severity.INFO}
    report = _report("SYS016", "SYS017", "TREE013")
    Policy("full", (Layer("flags", select=("TREE",)),)).apply(report, "5.1")
    assert [f.code for f in report.all_findings()] == ["TREE013"]


def test_a_path_override_applies_under_its_paths_only(tmp_path: Path) -> None:
    under = str(tmp_path / "results" / "a" / "bert" / "result_0.txt")
    other = str(tmp_path / "results" / "a" / "resnet" / "result_0.txt")
    layer = Layer("override", levels=(("RULE004", Severity.INFO),), paths=(str(tmp_path / "results/*/bert/*"),))
    report = Report()
    for path in (under, other):
        report.add_file(path, [finding("RULE004", path, "missed")])
    Policy("full", (layer,)).apply(report, "5.1")
    assert {p: fs[0].severity for p, fs in report.files.items()} == {under: Severity.INFO, other: Severity.ERROR}


def test_a_code_the_policy_makes_milder_does_not_fail_a_run() -> None:
    policy = Policy("full", (Layer("flags", levels=(("RULE002", Severity.WARNING),)),))
    assert policy.still_errors(("RULE002", "RULE004"), "5.1", "r.txt") == ("RULE004",)
    assert Policy("full").still_errors(("RULE002",), "5.1", "r.txt") == ("RULE002",)


# --- the configuration and the command line -------------------------------------------------------------------------


def test_the_project_config_names_a_profile_and_its_settings(tmp_path: Path) -> None:
    (tmp_path / "mlsubmit.toml").write_text(
        '[check]\nextends = "full"\nignore = ["sys044"]\nseverity = { SYS016 = "error" }\n'
        '[[check.overrides]]\npaths = ["results/*"]\nseverity = { RULE = "info" }\n', encoding="utf-8")
    policy, config = policy_for([str(tmp_path)], Flags(severity=("SYS017=info",)))
    assert config == tmp_path / "mlsubmit.toml" and policy.profile == "full"
    assert policy.decide("SYS016", "5.1").level is Severity.ERROR
    assert policy.decide("SYS044", "5.1").dropped
    assert policy.decide("SYS017", "5.1").origin == "the command line"
    assert policy.decide("RULE004", "5.1", str(tmp_path / "results" / "x.txt")).level is Severity.INFO
    assert policy.decide("RULE004", "5.1", str(tmp_path / "other.txt")).level is None
    policy, _ = policy_for([str(tmp_path)], Flags(profile="reference"))
    assert policy.profile == "reference"  # the command line's --profile wins


@pytest.mark.parametrize(("text", "words"), [
    ('[check]\nignore = ["SYS0016"]\n', "did you mean SYS016"),
    ('[check]\nseverity = { SYS016 = "eror" }\n', "did you mean error"),
    ('[check]\nprofile = "strict"\n', "no profile 'strict'"),
    ('[check]\nselect = "SYS"\n', "does not match"),
    ('[check]\nprofile = "full"\nextends = "reference"\n', "different profiles"),
])
def test_a_bad_setting_in_the_config_is_a_usage_error(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "mlsubmit.toml").write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=words):
        policy_for([str(tmp_path)], Flags())


@pytest.mark.parametrize(("argv", "words"), [
    (["--severity", "SYS016=eror"], "did you mean error"),
    (["--severity", "SYS016"], "CODE=LEVEL"),
    (["--ignore", "SYS0016"], "did you mean SYS016"),
    (["--select", "TRE"], "did you mean TREE"),
])
def test_a_bad_flag_is_exit_2(tmp_path: Path, argv: list[str], words: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec())
    assert main(["check", "--ruleset", "1.0.0", *argv, str(log)]) == 2
    assert words in capsys.readouterr().err


def test_explain_says_the_severity_in_force_and_where_from(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "SYS016"]) == 0
    out = capsys.readouterr().out
    assert "profile full (tables/profile-full.yaml): warning in every round" in out and "112 of 161" in out
    assert main(["explain", "SYS016", "--severity", "SYS=info"]) == 0
    assert "the command line: info (as SYS)" in capsys.readouterr().out
    (tmp_path / "mlsubmit.toml").write_text('[check]\nseverity = { SYS016 = "error" }\n', encoding="utf-8")
    assert main(["explain", "SYS016"]) == 0
    unwrapped = " ".join(capsys.readouterr().out.split())  # explain wraps at 100 columns, never inside a path
    assert f"{tmp_path / 'mlsubmit.toml'} [check]: error" in unwrapped


# --- a run's errors are judged at its folder ------------------------------------------------------------------------


def _tree(tmp_path: Path, missed: int) -> Path:
    specs = runs([20.0 + i for i in range(10)])
    for spec in specs[:missed]:
        spec.converge = False
    return write_org(tmp_path / "Graphcore", {"sys": system()}, {("sys", "bert"): specs})


def _codes(report: Report, severity: Severity) -> set[str]:
    return {f.code for f in report.all_findings() if f.severity is severity}


def test_one_run_that_missed_its_target_is_a_warning_its_folder_accepts(tmp_path: Path) -> None:
    report = run_check([str(_tree(tmp_path, 1))], CheckOptions(ruleset="1.0.0", jobs=1)).report
    assert "RULE004" in _codes(report, Severity.WARNING) and "RULE004" not in _codes(report, Severity.ERROR)
    assert "TREE008" in {f.code for f in report.all_findings()} and "TREE007" not in _codes(report, Severity.ERROR)


def test_two_runs_that_missed_their_target_fail_the_folder(tmp_path: Path) -> None:
    report = run_check([str(_tree(tmp_path, 2))], CheckOptions(ruleset="1.0.0", jobs=1)).report
    assert "TREE007" in _codes(report, Severity.ERROR) and "RULE004" not in _codes(report, Severity.ERROR)


def test_a_log_checked_alone_keeps_its_error_and_says_what_its_folder_needs(tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(converge=False))
    report = run_check([str(log)], CheckOptions(ruleset="1.0.0", jobs=1)).report
    assert "RULE004" in _codes(report, Severity.ERROR)
    note = [f for f in report.all_findings() if f.code == "POL001"]
    assert len(note) == 1 and note[0].severity is Severity.INFO and "RULE004" in note[0].message
    good = write_run(tmp_path / "good" / "result_0.txt", RunSpec())
    assert "POL001" not in {f.code for f in run_check([str(good)], CheckOptions(ruleset="1.0.0")).report.all_findings()}
    ref = run_check([str(log)], CheckOptions(ruleset="1.0.0", jobs=1, profile="reference"))  # type: ignore[arg-type]
    assert "POL001" not in {f.code for f in ref.report.all_findings()}


def test_the_cli_applies_the_flags_to_a_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_org(tmp_path / "Graphcore", {"sys": system(host_networking="")}, {("sys", "bert"): runs([20.0] * 10)})
    assert main(["check", "--ruleset", "1.0.0", "--format", "json", "--select", "SYS016", str(root)]) == 0
    found = [f for entry in json.loads(capsys.readouterr().out)["files"] for f in entry["findings"]]
    assert {(f["code"], f["severity"]) for f in found} == {("SYS016", "warning")}
    assert main(["check", "--ruleset", "1.0.0", "--format", "json", "--select", "SYS016",
                 "--severity", "SYS016=error", str(root)]) == 1
    capsys.readouterr()


# --- calibrated checks: a zero count, code under another name ------------------------------------------------------


def test_a_zero_count_is_a_warning_and_a_count_int_cannot_read_an_error(tmp_path: Path) -> None:
    from mlsubmit.checker.systems.descriptions import check_system_file

    def sys012(value: str) -> list[Severity]:
        path = tmp_path / f"s{value}.json"
        path.write_text(json.dumps(system(accelerators_per_node=value)), encoding="utf-8")
        report = Report()
        report.add_file(str(path), check_system_file(path, str(path), "1.0.0")[1])
        Policy("full").apply(report, "1.0")  # the default profile levels SYS012 per field and case
        return [f.severity for f in report.all_findings() if f.code == "SYS012"]

    assert sys012("0") == [Severity.WARNING] and sys012("8.0") == [Severity.ERROR] and sys012("8") == []


def test_missing_code_is_a_warning_only_when_other_code_folders_may_hold_it(tmp_path: Path) -> None:
    from mlsubmit.checker.engine.discover import discover
    from mlsubmit.checker.tree.implementations import check_implementations

    root = write_org(tmp_path / "HPE", {"sys": system()}, {("sys", "bert"): runs([20.0])})
    org = discover([str(root)]).orgs[0]
    assert [(f.code, f.severity) for f in check_implementations(org, {"bert"})] == [("TREE013", Severity.ERROR)]
    (root / "benchmarks" / "bert_v2").mkdir(parents=True)
    found = check_implementations(org, {"bert"})
    assert [(f.code, f.severity) for f in found] == [("TREE013", Severity.WARNING)] and "bert_v2" in found[0].message


def test_a_cached_result_takes_the_policy_of_the_run_that_reads_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache keeps the checks' own severities: a later run's --severity applies to a cached log too, and
    the policy is not part of the key (the second run is answered from the cache)."""
    from mlsubmit.checker.engine import pipeline

    log = write_run(tmp_path / "logs" / "result_0.txt", RunSpec(converge=False))
    cache = tmp_path / "cache"
    first = run_check([str(log)], CheckOptions(ruleset="1.0.0", jobs=1, cache_dir=cache)).report
    assert "RULE004" in _codes(first, Severity.ERROR)
    calls: list[object] = []
    original = pipeline._check_and_store
    monkeypatch.setattr(pipeline, "_check_and_store", lambda *a: calls.append(a) or original(*a))
    milder = Policy("full", (Layer("flags", levels=(("RULE004", Severity.INFO),)),))
    second = run_check([str(log)], CheckOptions(ruleset="1.0.0", jobs=1, cache_dir=cache, policy=milder)).report
    assert calls == [] and "RULE004" in _codes(second, Severity.INFO)
    assert "RULE004" not in _codes(second, Severity.ERROR)

