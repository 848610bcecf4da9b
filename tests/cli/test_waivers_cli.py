"""Waivers through main(argv): every output format with a waived finding, an expired waiver and an unused one;
--write-waivers then --waivers on the same tree; mlsubmit.toml's waivers; package's manifest; explain; the cache."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.synth import RunSpec, write_run
from fixtures.treefix import build_org, resnet_runs

from mlsubmit.core.support.schema_loader import errors, load_schema

Cli = Callable[..., tuple[int, str, str]]
SARIF_SCHEMA = ROOT.parent / "shared" / "external" / "sarif-schema-2.1.0.json"
PR_586 = "https://github.com/mlcommons/training_policies/pull/586"
LOGS = ("logs/missed.txt", "logs/clean.txt")  # named one by one: a folder of them is also judged as a run set


def grant(code: str, *, path: str = "", message: str = "", expires: str = "2099-12-31", reason: str = "granted") -> str:
    out = f'[[waiver]]\ncode = "{code}"\n'
    out += f'path = "{path}"\n' if path else ""
    out += f"message = '{message}'\n" if message else ""
    return out + f'reason = "{reason}"\nreference = "{PR_586}"\nwho = "results chair"\nexpires = {expires}\n\n'


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """logs/missed.txt (RULE004: an error) and logs/clean.txt, in a working folder; waivers.toml waives the error,
    holds an expired waiver and an unused one."""
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path / "logs" / "missed.txt", RunSpec(converge=False, seed=7))
    write_run(tmp_path / "logs" / "clean.txt", RunSpec(seed=8))
    (tmp_path / "waivers.toml").write_text(
        grant("RULE004", path="logs/missed.txt", message="eval_accuracy", reason="the v6.0 exception")
        + grant("HP", expires="2020-01-31")
        + grant("SYS016", path="systems/*.json"),
        encoding="utf-8")
    return tmp_path


def check(run_cli: Cli, *extra: str) -> tuple[int, str, str]:
    return run_cli("check", "--ruleset", "1.0.0", *LOGS, "--waivers", "waivers.toml", "--color", "never", *extra)


def test_text_lists_waived_findings_under_their_heading(work: Path, run_cli: Cli) -> None:
    code, out, err = check(run_cli)
    assert code == 0, out + err
    assert "logs/missed.txt: PASS" in out
    head = out.index("waived (1 finding(s); they do not fail the run):")
    assert "error RULE004" in out[head:] and "waived: the v6.0 exception (reference " + PR_586 in out
    assert "waiver at waivers.toml:1" in out
    assert "warning WVR002 waiver 2 (HP, path **) expired on 2020-01-31" in out
    assert "waivers.toml:10:" in out  # the line of the expired waiver's table
    assert "warning WVR001 waiver 3 (SYS016, path systems/*.json) matches no finding" in out
    assert out.rstrip().endswith("0 error(s), 2 warning(s), 1 info, 1 waived")  # the info: POL001
    assert check(run_cli, "--strict")[0] == 1  # the waiver findings are warnings
    assert run_cli("check", "--ruleset", "1.0.0", *LOGS)[0] == 1  # without the waivers the error fails


def test_json_marks_the_finding_and_matches_the_schema(work: Path, run_cli: Cli) -> None:
    code, out, _ = check(run_cli, "--format", "json")
    report = json.loads(out)
    assert code == 0 and errors(report, load_schema("report.schema.json")) == []
    missed = next(f for f in report["files"] if f["path"] == "logs/missed.txt")
    assert missed["verdict"] == "pass"
    rule = next(f for f in missed["findings"] if f["code"] == "RULE004")
    assert rule["severity"] == "error" and rule["waived"] == {
        "reason": "the v6.0 exception", "reference": PR_586, "who": "results chair", "expires": "2099-12-31",
        "waiver": {"path": "waivers.toml", "index": 0, "line": 1}}
    assert sorted((f["code"], f["line"], f["pointer"]) for f in report["findings"]) == [
        ("WVR001", 17, "/waiver/2"), ("WVR002", 10, "/waiver/1")]
    assert report["summary"] | {"files": 0} == {"files": 0, "failed_files": 0, "error": 0, "warning": 2, "info": 1,
                                                "waived": 1, "exit_code": 0}


def test_sarif_has_external_suppressions_valid_against_the_schema(work: Path, run_cli: Cli) -> None:
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"the SARIF schema is not at {SARIF_SCHEMA}")
    import jsonschema

    code, out, _ = check(run_cli, "--format", "sarif")
    sarif = json.loads(out)
    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(sarif)
    results = sarif["runs"][0]["results"]
    rule = next(r for r in results if r["ruleId"] == "RULE004")
    assert rule["level"] == "error" and rule["suppressions"][0]["kind"] == "external"
    assert rule["suppressions"][0]["status"] == "accepted"
    assert rule["suppressions"][0]["justification"].startswith("the v6.0 exception (reference " + PR_586)
    assert rule["suppressions"][0]["location"]["physicalLocation"]["artifactLocation"]["uri"] == "waivers.toml"
    own = sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results
                 if r["ruleId"].startswith("WVR"))
    assert own == [("WVR001", 17), ("WVR002", 10)] and all("suppressions" not in r for r in results if r is not rule)
    assert code == 0 and sarif["runs"][0]["invocations"][0]["exitCode"] == 0


def test_junit_keeps_waived_findings_out_of_failures(work: Path, run_cli: Cli) -> None:
    code, out, _ = check(run_cli, "--format", "junit")
    root = ET.fromstring(out)
    assert code == 0 and root.get("failures") == "0"
    case = next(c for c in root.iter("testcase") if c.get("name") == "logs/missed.txt")
    assert case.find("failure") is None
    said = case.findtext("system-out") or ""
    assert "error RULE004" in said and "waived: the v6.0 exception" in said
    own = next(c for c in root.iter("testcase") if c.get("name") == "waivers.toml")
    assert "WVR001" in (own.findtext("system-out") or "") and "WVR002" in (own.findtext("system-out") or "")


def test_github_gives_a_waived_error_as_a_notice(work: Path, run_cli: Cli) -> None:
    code, out, _ = check(run_cli, "--format", "github")
    lines = out.splitlines()
    rule = next(ln for ln in lines if "RULE004" in ln)
    assert code == 0 and rule.startswith("::notice file=logs/missed.txt,line=")
    assert "(waived)::" in rule and "%0Awaived: the v6.0 exception" in rule
    assert not any(ln.startswith("::error") for ln in lines)
    assert any(ln.startswith("::warning file=waivers.toml,line=10,title=WVR002") for ln in lines)
    assert any(ln.startswith("::warning file=waivers.toml,line=17,title=WVR001") for ln in lines)


def test_an_expired_waiver_no_longer_waives(work: Path, run_cli: Cli) -> None:
    (work / "old.toml").write_text(grant("RULE004", expires="2021-06-30"), encoding="utf-8")
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", *LOGS, "--waivers", "old.toml", "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["summary"]["error"] == 1 and "waived" not in report["summary"]
    assert [f["code"] for f in report["findings"]] == ["WVR002"]


def test_a_bad_waiver_file_is_exit_2_naming_file_and_waiver(work: Path, run_cli: Cli) -> None:
    (work / "bad.toml").write_text(grant("RULE004") + grant("SYS016").replace("who", "whom"), encoding="utf-8")
    code, out, err = run_cli("check", "--ruleset", "1.0.0", *LOGS, "--waivers", "bad.toml")
    assert code == 2 and out == "" and "bad.toml (waiver 2): /waiver/1" in err
    code, _, err = run_cli("check", "--ruleset", "1.0.0", *LOGS, "--waivers", "missing.toml")
    assert code == 2 and "missing.toml: cannot read it" in err


def test_write_waivers_then_waivers_exits_0_and_still_lists_them(tmp_path: Path, run_cli: Cli,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    org = build_org(tmp_path / "Graphcore", {("pod16", "resnet"): resnet_runs([35, 36, 37])})  # 3 of 5 runs
    first, out1, _ = run_cli("check", "--ruleset", "1.0.0", "Graphcore", "--format", "json", "--write-waivers",
                             "w.toml")
    found = json.loads(out1)
    assert first == 1 and found["summary"]["error"] >= 1
    written = (tmp_path / "w.toml").read_text(encoding="ascii")
    second, out2, err = run_cli("check", "--ruleset", "1.0.0", "Graphcore", "--format", "json", "--waivers", "w.toml")
    again = json.loads(out2)
    assert second == 0, out2 + err
    shown = {(f["code"], f["path"], f["message"]) for fs in [again["findings"]] + [f["findings"] for f in
             again["files"]] for f in fs if "waived" in f}
    before = {(f["code"], f["path"], f["message"]) for fs in [found["findings"]] + [f["findings"] for f in
              found["files"]] for f in fs if f["severity"] in ("error", "warning")}
    assert shown == before and again["summary"]["waived"] >= len(before)
    assert again["summary"]["error"] == again["summary"]["warning"] == 0
    code, _, err = run_cli("check", "--ruleset", "1.0.0", str(org), "--write-waivers", "w.toml")
    assert code == 2 and "never replaced" in err and (tmp_path / "w.toml").read_text(encoding="ascii") == written


def test_project_waivers_come_from_mlsubmit_toml_relative_to_its_folder(tmp_path: Path, run_cli: Cli,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    # a result file (a folder of raw output would be a run set, which tolerates one run that did not converge)
    write_run(project / "logs" / "result_0.txt", RunSpec(converge=False))
    (project / "mlsubmit.toml").write_text('[check]\nruleset = "1.0.0"\n\n' + grant("RULE", path="logs/*.txt"),
                                           encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli("check", "project/logs", "--format", "json")
    assert code == 0 and json.loads(out)["summary"]["waived"] == 1
    assert run_cli("check", "project/logs", "--no-project-waivers")[0] == 1


def test_waivers_are_applied_after_the_cache(work: Path, run_cli: Cli) -> None:
    """A waived finding is never stored waived: the next run without the waivers fails on the cached entry."""
    assert check(run_cli, "--cache", "cache")[0] == 0
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", *LOGS, "--cache", "cache", "--format", "json")
    assert code == 1 and "waived" not in out


def test_advise_and_report_take_waivers(work: Path, run_cli: Cli) -> None:
    code, out, _ = run_cli("advise", "--ruleset", "1.0.0", *LOGS, "--waivers", "waivers.toml", "--format", "json")
    assert "WVR002" in out  # advise reads the same file; its own findings are what it waives or not
    assert code in (0, 1)
    code, out, err = run_cli("report", "--ruleset", "1.0.0", *LOGS, "--waivers", "waivers.toml", "--format",
                             "json", "--html", "r.html")
    assert code == 0, err
    assert json.loads(out)["findings"]["waived"] == 1
    page = (work / "r.html").read_text(encoding="utf-8")
    assert "error (waived)" in page and "waived: the v6.0 exception" in page


def test_explain_knows_the_waiver_codes(run_cli: Cli) -> None:
    for code in ("WVR001", "WVR002"):
        status, out, _ = run_cli("explain", code)
        assert status == 0 and code in out and "waiver" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_package_builds_past_a_waived_error_and_records_the_waiver(tmp_path: Path, run_cli: Cli) -> None:
    from fixtures.demo import repository_systems, write_example

    # two runs that do not converge: more than olympic scoring drops, so the folder fails
    ex = write_example(tmp_path / "w", repository_systems(), non_converged=(6, 7))
    assert run_cli("package", ex.config)[0] == 1
    (ex.root / "waivers.toml").write_text(grant("TREE007") + grant("PKG007") + grant("TREE020"), encoding="utf-8")
    code, out, err = run_cli("package", ex.config, "--waivers", ex.root / "waivers.toml", "--color", "never")
    assert code == 0, out + err
    manifest = json.loads((ex.root / "build" / "submission" / "manifest.json").read_text(encoding="utf-8"))
    assert errors(manifest, load_schema("manifest.schema.json")) == []
    assert [(w["source"], w["index"], w["codes"], w["findings"]) for w in manifest["waivers"]] == [
        ("waivers.toml", 0, ["TREE007"], 1), ("waivers.toml", 1, ["PKG007"], 1), ("waivers.toml", 2, ["TREE020"], 1)]
    assert manifest["waivers"][0]["reference"] == PR_586


def test_hostile_waiver_text_is_inert_in_every_format(work: Path, run_cli: Cli) -> None:
    """A reason with a newline, an ANSI escape and a forged workflow command shows itself and steers nothing."""
    forged = "ok\\n::error file=x::forged \\u001b[2J \\u202e"
    (work / "w.toml").write_text(grant("RULE004", reason=forged), encoding="utf-8")
    for fmt in ("text", "github", "junit", "sarif", "json"):
        code, out, _ = run_cli("check", "--ruleset", "1.0.0", *LOGS, "--waivers", "w.toml", "--format", fmt)
        assert code == 0 and "\x1b" not in out and "\u202e" not in out, fmt
        assert not any(line.startswith("::error") for line in out.splitlines()), fmt
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", *LOGS, "--waivers", "w.toml")
    assert "waived: ok\\n::error file=x::forged \\x1b[2J \\u202e (reference" in out
