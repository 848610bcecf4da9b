"""The text report: findings grouped in reading order (formats.causes), a verdict per file, one summary line; colour
only on a terminal."""

from __future__ import annotations

import os
from typing import TextIO

from mlsubmit.core.findings import Finding, Report, Severity
from mlsubmit.core.support.display_escape import inert
from mlsubmit.formats.causes import Entry, reading_order
from mlsubmit.formats.grouped import group, location, waiver_note

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


_VERDICTS_AT_MOST = 10  # a verdict line per file up to this many files; beyond, the summary counts them


def _group_lines(entry: Entry) -> list[tuple[str, str | None]]:
    g = entry.group
    f = g.first
    indent = "      " if g.cause else "  "
    style = "dim" if f.waived is not None else _STYLE[f.severity]
    out: list[tuple[str, str | None]] = []
    if entry.heading:
        out.append((f"    {entry.heading}", "dim"))
    if g.count == 1:
        out.append((f"{indent}{location(f)}: {f.severity.value} {f.code} {f.message}", style))
        for rel in f.related:
            tail = f":{rel.line}" if rel.line else (f"#{rel.pointer}" if rel.pointer else "")
            out.append((f"{indent}    see also {rel.path}{tail}", None))
    else:
        head = f"{indent}{g.count}\u00d7 {f.severity.value} {f.code} {f.message}: {g.where()}"
        out.append((head, style))
    if entry.hint is not None:
        out.append((f"{indent}    hint: {entry.hint}", "dim"))
    return out


def _findings_lines(findings: list[Finding]) -> list[tuple[str, str | None]]:
    """Grouped findings in reading order (formats.causes.reading_order), one or more lines each."""
    return [line for entry in reading_order(findings) for line in _group_lines(entry)]


def _common_root(report: Report) -> str:
    """The folder every path of a large report is under, or "" (few files, or nothing shared)."""
    if len(report.files) <= _VERDICTS_AT_MOST:
        return ""
    paths = [*report.files, *(f.path for f in report.tree)]
    if not all(paths):
        return ""
    try:
        root = os.path.commonpath(paths)
    except ValueError:  # absolute and relative paths mixed
        return ""
    return "" if root in ("", ".", "/") or root in paths else root


def _text_lines(report: Report) -> list[tuple[str, str | None]]:
    """(text, style) pairs; the style is used only when colour is on."""
    out: list[tuple[str, str | None]] = []
    if len(report.files) <= _VERDICTS_AT_MOST:
        for path in report.files:
            verdict = report.verdict(path)
            out.append((f"{path}: {verdict.upper()}", "bold red" if verdict == "fail" else "green"))
    every = report.all_findings()
    findings = _findings_lines([f for f in every if f.waived is None])
    findings.extend(_waived_lines([f for f in every if f.waived is not None]))
    root = _common_root(report)
    if root:
        # Many files: one line names the folder they share and the lines below drop it.
        out.append((f"paths below are under {root}/", "dim"))
        findings = [(t.replace(f"{root}/", ""), style) for t, style in findings]
    out.extend(findings)
    out.append((summary_line(report), "bold"))
    return out


def summary_line(report: Report) -> str:
    """The report in one line: what was checked and the findings by severity."""
    counts = report.counts()
    waived = f", {counts['waived']} waived" if counts.get("waived") else ""
    return (f"{report.checked()}; {counts['error']} error(s), {counts['warning']} warning(s), "
            f"{counts['info']} info{waived}")


def _waived_lines(findings: list[Finding]) -> list[tuple[str, str | None]]:
    """The waived findings under their own heading: still shown, with the waiver's reason, never failing the run."""
    if not findings:
        return []
    out: list[tuple[str, str | None]] = [(f"waived ({len(findings)} finding(s); they do not fail the run):", "bold")]
    for g in group(findings):
        out.extend(_group_lines(Entry(g, heading=None, hint=None)))
        indent = "      " if g.cause else "  "
        out.append((f"{indent}    {waiver_note(g.first)}", "dim"))
    return out


def printable(text: str) -> str:
    """Text any stream can encode and no terminal obeys: controls, escapes and lone surrogates shown as escapes."""
    return inert(text)


def text(report: Report, stream: TextIO, *, color: bool = False) -> None:
    lines = [(printable(t), style) for t, style in _text_lines(report.sorted())]
    if not color:
        stream.write("".join(t + "\n" for t, _ in lines))
        return
    # lazy: rich: ~100 ms to import; only a coloured terminal needs it
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True)
    for t, style in lines:
        console.print(Text(t, style=style or ""))
