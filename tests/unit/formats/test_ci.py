"""SARIF, JUnit and GitHub reporters: schema validity, escaping, one case per file, automatic choice in Actions."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from mlsubmit.core.codes import catalogue, finding
from mlsubmit.core.findings import Location, Report, Severity
from mlsubmit.core.support.display_escape import inert
from mlsubmit.formats import REPORTERS
from mlsubmit.formats.ci import (
    artifact_uri,
    escape_data,
    escape_property,
    github,
    github_command,
    junit,
    sarif,
    to_sarif,
    xml_text,
)

ROOT = Path(__file__).resolve().parents[3]
SARIF_SCHEMA = ROOT.parent / "shared" / "external" / "sarif-schema-2.1.0.json"

HOSTILE = 'a <b> & "c" \x00 \x1b[31m % 50%\r\nline2 ::error file=x::forged, a:b \ud800 é'


def sample_report(*, strict: bool = False) -> Report:
    report = Report(strict=strict, meta={"command": "check", "ruleset": "1.1.0"})
    report.add_file("org/results/sys/bert/result_0.txt", [
        finding("LOG004", "org/results/sys/bert/result_0.txt", "record is not valid JSON", line=7),
        finding("LOG008", "org/results/sys/bert/result_0.txt", HOSTILE, line=9),
    ])
    report.add_file("org/results/sys/bert/result_1.txt", [
        finding("LOG003", "org/results/sys/bert/result_1.txt", "bytes that are not valid UTF-8", line=2),
    ])
    report.add_file("org/results/sys with space/bert/result_2.txt", [])
    report.extend([
        finding("RULE008", "org/systems/a,b:c.json", "value from a file", pointer="/division",
                related=[Location("org/results/sys/bert/result_0.txt", 3)]),
        finding("LOG009", "", "about the whole run", severity=Severity.INFO),
    ])
    return report


def render(reporter: Callable[..., None], report: Report) -> str:
    stream = io.StringIO()
    reporter(report, stream, color=False)
    return stream.getvalue()


def test_ci_formats_are_registered() -> None:
    """Registered by name, imported when used; each gives what the reporters_ci function gives."""
    for name, real in {"sarif": sarif, "junit": junit, "github": github}.items():
        assert render(REPORTERS[name], sample_report()) == render(real, sample_report())


# --- SARIF -------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA} (../shared/external beside the repository)")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_sarif_is_valid_against_the_oasis_schema(sarif_validator: jsonschema.protocols.Validator) -> None:
    doc = json.loads(render(sarif, sample_report()))
    errors = sorted(sarif_validator.iter_errors(doc), key=str)
    assert errors == []


def test_sarif_of_an_empty_report_is_valid(sarif_validator: jsonschema.protocols.Validator) -> None:
    doc = json.loads(render(sarif, Report()))
    assert list(sarif_validator.iter_errors(doc)) == []
    assert doc["runs"][0]["results"] == []


def test_sarif_rules_come_from_the_catalogue() -> None:
    doc = to_sarif(sample_report())
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    codes = catalogue()
    assert [r["id"] for r in rules] == list(codes)
    for rule in rules:
        info = codes[rule["id"]]
        assert rule["shortDescription"]["text"] == info.title
        assert rule["fullDescription"]["text"] == info.explanation
        assert info.hint in rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[
            info.severity.value
        ]


def test_sarif_results_point_at_file_line_and_rule() -> None:
    doc = to_sarif(sample_report())
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert set(by_rule) == {"LOG003", "LOG004", "LOG008", "RULE008"}
    assert all(r["locations"] for r in run["results"])  # code scanning needs a location on every result
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    log004 = by_rule["LOG004"]
    assert log004["level"] == "error"
    assert log004["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "org/results/sys/bert/result_0.txt"},
        "region": {"startLine": 7},
    }
    rule008 = by_rule["RULE008"]
    assert rule008["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "org/systems/a%2Cb%3Ac.json"
    assert "region" not in rule008["locations"][0]["physicalLocation"]
    assert rule008["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "/division", "kind": "element"}]
    assert rule008["relatedLocations"][0]["physicalLocation"]["region"] == {"startLine": 3}
    # a finding about the whole run has no file to point at: it is a notification of the invocation
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [(n["associatedRule"]["id"], n["level"], n["message"]["text"]) for n in notes] == [
        ("LOG009", "note", "about the whole run")
    ]
    assert rules[notes[0]["associatedRule"]["index"]]["id"] == "LOG009"
    # one line, every control shown as an escape: a viewer cannot be steered by it (JSON carries it 7-bit)
    assert by_rule["LOG008"]["message"]["text"] == inert(HOSTILE)
    assert "\n" not in inert(HOSTILE) and "\x1b" not in inert(HOSTILE)
    assert run["invocations"][0]["exitCode"] == 1


def test_sarif_output_is_ascii_even_with_lone_surrogates() -> None:
    text = render(sarif, sample_report())
    assert text.isascii()
    assert "\\ud800" in text


def test_sarif_fingerprints_are_stable_and_distinct() -> None:
    a = to_sarif(sample_report())["runs"][0]["results"]
    b = to_sarif(sample_report())["runs"][0]["results"]
    prints = [r["partialFingerprints"]["mlsubmitFinding/v1"] for r in a]
    assert prints == [r["partialFingerprints"]["mlsubmitFinding/v1"] for r in b]
    assert len(set(prints)) == len(prints)


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("org/results/x/result_0.txt", "org/results/x/result_0.txt"),
        ("dir with space/a#b?.txt", "dir%20with%20space/a%23b%3F.txt"),
        ("100%/é.txt", "100%25/%C3%A9.txt"),
        ("/abs/path.txt", "file:///abs/path.txt"),
        ("win\\style.txt", "win/style.txt"),
        ("./closed/Org/x.json", "closed/Org/x.json"),
    ],
)
def test_artifact_uris_are_percent_encoded(path: str, uri: str) -> None:
    assert artifact_uri(path) == uri


# --- JUnit -------------------------------------------------------------------------------------------------------


def test_junit_has_one_case_per_file_and_failures_for_errors() -> None:
    root = ET.fromstring(render(junit, sample_report()))
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(cases) == [
        "(run)",
        "org/results/sys with space/bert/result_2.txt",
        "org/results/sys/bert/result_0.txt",
        "org/results/sys/bert/result_1.txt",
        "org/systems/a,b:c.json",
    ]
    failing = sorted(n for n, c in cases.items() if c.find("failure") is not None)
    assert failing == ["org/results/sys/bert/result_0.txt", "org/systems/a,b:c.json"]
    assert root.get("tests") == suite.get("tests") == "5"
    assert root.get("failures") == suite.get("failures") == "2"
    failure = cases["org/results/sys/bert/result_0.txt"].find("failure")
    assert failure is not None and failure.get("type") == "LOG004"
    assert "org/results/sys/bert/result_0.txt:7: error LOG004" in (failure.text or "")
    out = cases["org/results/sys/bert/result_0.txt"].find("system-out")
    assert out is not None and "LOG008" in (out.text or "")  # warnings are shown but do not fail
    assert cases["org/results/sys/bert/result_1.txt"].find("failure") is None


def test_junit_strict_turns_warnings_into_failures() -> None:
    root = ET.fromstring(render(junit, sample_report(strict=True)))
    failing = sorted(c.get("name") or "" for c in root.iter("testcase") if c.find("failure") is not None)
    assert failing == [
        "org/results/sys/bert/result_0.txt",
        "org/results/sys/bert/result_1.txt",
        "org/systems/a,b:c.json",
    ]


def test_junit_escapes_markup_and_drops_characters_xml_cannot_hold() -> None:
    text = render(junit, sample_report())
    assert text.isascii()
    assert "\x00" not in text and "\x1b" not in text
    root = ET.fromstring(text)  # well-formed despite <, &, quotes, NUL, ESC and a lone surrogate in a message
    out = next(c for c in root.iter("testcase") if c.get("name") == "org/results/sys/bert/result_0.txt")
    body = out.findtext("system-out") or ""
    assert 'a <b> & "c" \\x00 \\x1b[31m' in body
    assert "\\ud800 é" in body
    assert "\\r\\nline2 ::error" in body  # the hostile line break is shown, not obeyed


def test_xml_text_keeps_legal_characters() -> None:
    assert xml_text("tab\tnl\ncr\r ok é \U0001f600") == "tab\tnl\ncr\r ok é \U0001f600"
    assert xml_text("\x00\x08\x0b\x1f\ufffe") == "\\x00\\x08\\x0b\\x1f\\xfffe"


# --- GitHub workflow commands ------------------------------------------------------------------------------------


def test_github_escaping_matches_the_toolkit() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_github_commands_carry_file_line_title_and_hint() -> None:
    f = finding("LOG004", "org/results/sys/bert/result_0.txt", "record is not valid JSON", line=7)
    assert github_command(f) == (
        "::error file=org/results/sys/bert/result_0.txt,line=7,title=LOG004 Record is not valid JSON"
        "::record is not valid JSON%0Ahint: " + f.hint.replace("%", "%25")
    )


def test_github_severities_and_locations() -> None:
    lines = render(github, sample_report()).splitlines()
    assert lines[-1] == ("mlsubmit: 3 file(s) checked, 1 failed; 1 system description(s) failed too; "
                         "2 error(s), 2 warning(s), 1 info")
    commands = lines[:-1]
    assert len(commands) == 5
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in commands)
    run_level = next(line for line in commands if "LOG009" in line)
    assert run_level.startswith("::notice title=LOG009 ")  # no file= for a finding about the whole run
    system = next(line for line in commands if "RULE008" in line)
    assert system.startswith("::error file=org/systems/a%2Cb%3Ac.json,title=RULE008 ")
    assert "::value from a file at /division%0Ahint: " in system


def test_github_output_cannot_be_forged_by_a_hostile_message() -> None:
    text = render(github, sample_report())
    lines = text.split("\n")
    # the hostile message holds CR, LF and "::error": escaped, it stays inside its own command line
    assert not any(line.startswith("::") and "forged" in line and not line.startswith("::warning ") for line in lines)
    hostile = next(line for line in lines if "forged" in line)
    assert "\r" not in hostile
    # its CR and LF are shown as \\r\\n (one annotation line), its % percent-encoded, its ESC visible
    assert "\\x1b[31m %25 50%25\\r\\nline2 ::error file=x::forged, a:b \\ud800 é" in hostile
    text.encode("utf-8")  # lone surrogates were escaped, so the runner's UTF-8 stream can take it


# --- through the command line ------------------------------------------------------------------------------------


def test_github_format_is_chosen_under_github_actions(
    run_cli: Callable[..., tuple[int, str, str]], make_run: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = make_run("result_0.txt", converge=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", log)
    assert code == 1
    assert out.startswith(f"::error file={log},line=")
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", log)
    assert code == 1 and json.loads(out)["summary"]["exit_code"] == 1
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", log)
    assert not out.startswith("::")


def test_sarif_and_junit_files_written_with_output(
    run_cli: Callable[..., tuple[int, str, str]], make_run: Callable[..., Path], tmp_path: Path,
    sarif_validator: jsonschema.protocols.Validator,
) -> None:
    good = make_run("ok/result_0.txt")
    bad = make_run("bad/result_0.txt", converge=False)
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "sarif", "-o", tmp_path / "r.sarif", good, bad)
    # every report went to a file: stdout has the one-line summary and where the report went (issue 47 item 10)
    summary = "2 file(s) checked, 1 failed; 1 error(s), 0 warning(s), 1 info"
    assert (code, out) == (1, f"{summary} (written to {tmp_path / 'r.sarif'})\n")
    doc = json.loads((tmp_path / "r.sarif").read_text(encoding="utf-8"))
    assert list(sarif_validator.iter_errors(doc)) == []
    # POL001: the failing log, checked alone, says what its folder will need
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} == {"RULE004", "POL001"}
    code, _, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "junit", "-o", tmp_path / "r.xml", good, bad)
    assert code == 1
    root = ET.parse(tmp_path / "r.xml").getroot()
    assert [(c.get("name"), c.find("failure") is not None) for c in root.iter("testcase")] == [
        (str(bad), True),
        (str(good), False),
    ]
