"""Reporters for CI systems: SARIF 2.1.0 (code scanning), JUnit XML (test tabs) and GitHub workflow commands.

They read the same Report as the text and JSON reporters and never look at the checked files. Every string that
reaches them may come from an uploaded log, so each format escapes it by its own rules: XML drops characters XML 1.0
cannot carry, workflow commands percent-encode their delimiters, SARIF URIs are percent-encoded paths.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any, TextIO
from urllib.parse import quote

from mlsubmit import __version__
from mlsubmit.core.codes import CodeInfo, catalogue
from mlsubmit.core.findings import Finding, Report, Severity, Waived, has_errors
from mlsubmit.core.support.display_escape import inert
from mlsubmit.formats.grouped import Group, group, waiver_note

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/mlcommons/training_policies"
RUN_PATH = "(run)"  # stands for findings about the whole run, which have no file

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


# --- SARIF -------------------------------------------------------------------------------------------------------


def _rule(info: CodeInfo) -> dict[str, Any]:
    """A SARIF reportingDescriptor from the code catalogue: the same words `mlsubmit explain CODE` prints."""
    rule: dict[str, Any] = {
        "id": info.code,
        "name": "".join(w[:1].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", info.title)) or info.code,
        "shortDescription": {"text": info.title},
        "fullDescription": {"text": info.explanation},
        "help": {"text": f"{info.explanation}\n\nHow to fix: {info.hint}", "markdown": _help_markdown(info)},
        "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
        "properties": {"family": info.family, "tags": ["mlperf", info.family.lower()]},
    }
    if info.references:
        rule["helpUri"] = info.references[0]
    return rule


def _help_markdown(info: CodeInfo) -> str:
    text = f"**{info.code}: {info.title}**\n\n{info.explanation}\n\n**How to fix:** {info.hint}"
    if info.references:
        text += "\n\n" + "\n".join(f"- {ref}" for ref in info.references)
    return text


def artifact_uri(path: str) -> str:
    """A relative path as a URI reference (RFC 3986): separators kept, everything unsafe percent-encoded."""
    path = posixpath.normpath(path.replace("\\", "/"))  # "./closed/x" and "closed/x" name the same file
    if path.startswith("/"):
        return "file://" + quote(path, safe="/")
    return quote(path, safe="/")


def _location(path: str, line: int | None, pointer: str | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(path)}}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    loc: dict[str, Any] = {"physicalLocation": physical}
    if pointer:
        # A JSON pointer is a place inside the document, which SARIF models as a logical location.
        loc["logicalLocations"] = [{"fullyQualifiedName": pointer, "kind": "element"}]
    return loc


def fingerprint(f: Finding) -> str:
    """Stable across runs and line shifts, so code scanning can tell a new finding from a moved one."""
    key = "\x1f".join((f.code, f.path, f.pointer or "", f.message))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.code,
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": inert(f.message)},
        "partialFingerprints": {"mlsubmitFinding/v1": fingerprint(f)},
        "properties": {"hint": inert(f.hint), "severity": f.severity.value},
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    result["locations"] = [_location(f.path, f.line, f.pointer)]
    if f.waived is not None:
        result["suppressions"] = [_suppression(f.waived)]
    if f.related:
        result["relatedLocations"] = [
            {"id": i, **_location(r.path, r.line, r.pointer)} for i, r in enumerate(f.related) if r.path
        ]
    return result


def _suppression(w: Waived) -> dict[str, Any]:
    """A waiver as SARIF records it: suppressed outside the source (kind external), accepted, with its reason."""
    return {
        "kind": "external",
        "status": "accepted",
        "justification": inert(f"{w.reason} (reference {w.reference}; {w.who}; until {w.expires})"),
        "location": _location(w.source, w.line, f"/waiver/{w.index}"),
        "properties": {"reason": inert(w.reason), "reference": inert(w.reference), "who": inert(w.who),
                       "expires": w.expires, "waiver": {"path": inert(w.source), "index": w.index}},
    }


def _notification(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    """A finding about the whole run has no file; code scanning wants a location on every result, so it goes here."""
    note: dict[str, Any] = {
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": inert(f.message)},
        "properties": {"hint": inert(f.hint), "severity": f.severity.value, "code": f.code},
    }
    if f.waived is not None:  # a notification has no suppressions; it says so in its properties
        note["level"] = "note"
        note["properties"]["waived"] = _suppression(f.waived)["properties"]
    if f.code in index:
        note["associatedRule"] = {"id": f.code, "index": index[f.code]}
    return note


def to_sarif(report: Report) -> dict[str, Any]:
    report = report.sorted()
    codes = catalogue()
    rules = [_rule(info) for info in codes.values()]
    index = {info.code: i for i, info in enumerate(codes.values())}
    findings = [f for f in report.all_findings() if f.path]
    run_level = [_notification(f, index) for f in report.all_findings() if not f.path]
    artifacts = [{"location": {"uri": artifact_uri(p)}} for p in report.files]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "mlsubmit",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "invocations": [
            {
                "executionSuccessful": True,
                "exitCode": report.exit_code(),
                "toolExecutionNotifications": run_level,
                "properties": dict(sorted(report.meta.items())),
            }
        ],
        "artifacts": artifacts,
        "results": [_result(f, index) for f in findings],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def sarif(report: Report, stream: TextIO, *, color: bool = False) -> None:
    # ensure_ascii keeps the file 7-bit: lone surrogates or odd bytes from a log cannot make it unencodable.
    json.dump(to_sarif(report), stream, indent=2, ensure_ascii=True, allow_nan=False)
    stream.write("\n")


# --- JUnit XML ---------------------------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all, not even as character references (§2.2 of the XML spec).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: str) -> str:
    """Make a string safe for an XML document; illegal characters become a visible `\\xNN` escape."""
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def _finding_line(f: Finding) -> str:
    where = f.path or RUN_PATH
    if f.line is not None:
        where += f":{f.line}"
    elif f.pointer:
        where += f"#{f.pointer}"
    text = inert(f"{where}: {f.severity.value} {f.code} {f.message}") + f"\n    hint: {inert(f.hint)}"
    if f.waived is not None:
        text += "\n    " + inert(waiver_note(f))
    return text


def _cases(report: Report) -> list[tuple[str, list[Finding]]]:
    """One case per checked file, plus one per other file a tree-level finding names (system files, folders)."""
    cases: dict[str, list[Finding]] = {p: list(fs) for p, fs in report.files.items()}
    for f in report.tree:
        cases.setdefault(f.path or RUN_PATH, []).append(f)
    return sorted(cases.items())


def _testcase(path: str, findings: list[Finding], strict: bool) -> ET.Element:
    case = ET.Element("testcase", {"classname": "mlsubmit.check", "name": xml_text(path), "file": xml_text(path)})
    failing = [f for f in findings if has_errors([f], strict=strict)]
    if failing:
        codes = sorted({f.code for f in failing})
        failure = ET.SubElement(
            case,
            "failure",
            {
                "type": xml_text(" ".join(codes)),
                "message": xml_text(f"{len(failing)} finding(s): {failing[0].code} {failing[0].message}"),
            },
        )
        failure.text = xml_text("\n".join(_finding_line(f) for f in failing))
    rest = [f for f in findings if f not in failing]
    if rest:
        out = ET.SubElement(case, "system-out")
        out.text = xml_text("\n".join(_finding_line(f) for f in rest))
    return case


def to_junit(report: Report) -> ET.Element:
    report = report.sorted()
    cases = [_testcase(p, fs, report.strict) for p, fs in _cases(report)]
    failures = sum(1 for c in cases if c.find("failure") is not None)
    command = report.meta.get("command", "check")
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0", "skipped": "0"}
    root = ET.Element("testsuites", {"name": "mlsubmit", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": xml_text(f"mlsubmit {command}"), **counts})
    props = ET.SubElement(suite, "properties")
    for key, value in sorted({"version": __version__, **report.meta}.items()):
        ET.SubElement(props, "property", {"name": xml_text(key), "value": xml_text(str(value))})
    suite.extend(cases)
    return root


def junit(report: Report, stream: TextIO, *, color: bool = False) -> None:
    root = to_junit(report)
    ET.indent(root)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    # ascii + character references: a stray byte from a log cannot break the file's declared encoding.
    stream.write(ET.tostring(root, encoding="us-ascii", xml_declaration=False).decode("ascii"))
    stream.write("\n")


# --- GitHub workflow commands ------------------------------------------------------------------------------------


# What inert() escapes, less CR and LF: the toolkit percent-encodes those, and a message may span lines.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def escape_data(value: str) -> str:
    """Workflow-command message escaping, as the runner's toolkit does it: %, CR and LF.

    Other controls (ANSI/OSC escapes) and lone surrogates (JSON `"\\ud800"` in a log, not writable as UTF-8)
    become visible escapes first.
    """
    value = _CONTROL.sub(lambda m: inert(m.group()), value)
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Property values also lose `:` and `,`, which end a property."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _title(f: Finding) -> str:
    return f"{f.code} {catalogue()[f.code].title}" if f.code in catalogue() else f.code


def github_command(f: Finding) -> str:
    return group_command(Group((f,)))


def group_command(g: Group) -> str:
    """One workflow command for a group: at its first finding, the other places named in the message."""
    f = g.first
    props: list[tuple[str, str]] = []
    if f.path:
        props.append(("file", inert(f.path)))
        if f.line is not None and f.line >= 1:
            props.append(("line", str(f.line)))
    props.append(("title", _title(f) if g.count == 1 else f"{_title(f)} ({g.count}\u00d7)"))
    where = f" at {f.pointer}" if f.pointer and f.line is None else ""
    # The finding's own text is made inert (one line each); the line breaks between the parts are ours.
    message = inert(f"{f.message}{where}")
    if g.count > 1:
        message += f"\nat {inert(g.where())}"
    if g.cause:
        message += f"\nfollows from {inert(g.cause)}"
    message += f"\nhint: {inert(f.hint)}"
    command = _GITHUB_COMMAND[f.severity]
    if f.waived is not None:  # a notice: shown on the file, never failing the check
        command = "notice"
        props[-1] = ("title", f"{props[-1][1]} (waived)")
        message += f"\n{inert(waiver_note(f))}"
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{command} {head}::{escape_data(message)}"


def _summary(report: Report) -> str:
    counts = report.counts()
    waived = f", {counts['waived']} waived" if counts.get("waived") else ""
    return (
        f"mlsubmit: {report.checked()}; {counts['error']} error(s), "
        f"{counts['warning']} warning(s), {counts['info']} info{waived}"
    )


def github_lines(findings: Iterable[Finding]) -> list[str]:
    """One command per group of findings with the same code and message (root causes first), and per file: GitHub
    shows an annotation on the file it names only, so a group over two files would leave the second without one."""
    return [group_command(part) for g in group(findings) for part in _per_file(g)]


def _per_file(g: Group) -> list[Group]:
    files: dict[str, list[Finding]] = {}
    for f in g.findings:
        files.setdefault(f.path, []).append(f)
    return [g] if len(files) == 1 else [Group(tuple(fs)) for fs in files.values()]


def github(report: Report, stream: TextIO, *, color: bool = False) -> None:
    report = report.sorted()
    for line in github_lines(report.all_findings()):
        stream.write(line + "\n")
    # A plain line, not a command: a log value can never start a line of its own, so it cannot forge a command.
    stream.write(escape_data(_summary(report)) + "\n")
