"""Reporters turn a Report into text for people or data for machines; checks never print.

Each reporter is a function `(report, stream, *, color) -> None` registered in REPORTERS by its --format name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TextIO

from mlsubmit import __version__
from mlsubmit.findings import Finding, Report, Severity

Reporter = Callable[[Report, TextIO], None]

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _location(f: Finding) -> str:
    where = f.path or "(run)"
    if f.line is not None:
        where += f":{f.line}"
    elif f.pointer:
        where += f"#{f.pointer}"
    return where


def _text_lines(report: Report) -> list[tuple[str, str | None]]:
    """(text, style) pairs; the style is used only when colour is on."""
    out: list[tuple[str, str | None]] = []

    def emit(f: Finding) -> None:
        line = f"  {_location(f)}: {f.severity.value} {f.code} {f.message}"
        out.append((line, _STYLE[f.severity]))
        for rel in f.related:
            tail = f":{rel.line}" if rel.line else (f"#{rel.pointer}" if rel.pointer else "")
            out.append((f"      see also {rel.path}{tail}", None))
        out.append((f"      hint: {f.hint}", "dim"))

    for path, findings in report.files.items():
        verdict = report.verdict(path)
        out.append((f"{path}: {verdict.upper()}", "bold red" if verdict == "fail" else "green"))
        for f in findings:
            emit(f)
    if report.tree:
        out.append(("tree and run findings:", "bold"))
        for f in report.tree:
            emit(f)
    counts = report.counts()
    failed = sum(1 for p in report.files if report.verdict(p) == "fail")
    out.append(
        (
            f"{len(report.files)} file(s) checked, {failed} failed; {counts['error']} error(s), "
            f"{counts['warning']} warning(s), {counts['info']} info",
            "bold",
        )
    )
    return out


def printable(text: str) -> str:
    """Text any stream can encode: lone surrogates (JSON allows "\\ud800" in a log key) become escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def text(report: Report, stream: TextIO, *, color: bool = False) -> None:
    lines = [(printable(t), style) for t, style in _text_lines(report.sorted())]
    if not color:
        stream.write("".join(t + "\n" for t, _ in lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True)
    for t, style in lines:
        console.print(Text(t, style=style or ""))


def to_json(report: Report) -> dict[str, Any]:
    report = report.sorted()
    counts = report.counts()
    return {
        "tool": {"name": "mlsubmit", "version": __version__, **report.meta},
        "files": [
            {"path": p, "verdict": report.verdict(p), "findings": [f.to_dict() for f in fs]}
            for p, fs in report.files.items()
        ],
        "findings": [f.to_dict() for f in report.tree],
        "summary": {
            "files": len(report.files),
            "failed_files": sum(1 for p in report.files if report.verdict(p) == "fail"),
            **counts,
            "exit_code": report.exit_code(),
        },
    }


def json_reporter(report: Report, stream: TextIO, *, color: bool = False) -> None:
    stream.write(indented_json(to_json(report)))
    stream.write("\n")


def indented_json(data: Any) -> str:
    """`json.dumps(data, indent=2)`, character for character, in a quarter of the time: json's indenting encoder
    is pure Python, so its C encoder writes the compact text and msgspec re-indents it without decoding a value.
    Text msgspec refuses (NaN, Infinity, a lone surrogate) is written by json's own indenting encoder."""
    import msgspec

    compact = json.dumps(data)
    try:
        return msgspec.json.format(compact.encode("ascii"), indent=2).decode("ascii")
    except msgspec.DecodeError:
        return json.dumps(data, indent=2)


def _ci(name: str) -> Callable[..., None]:
    """A CI reporter (reporters.ci), imported when used: its XML library is not needed for text or JSON."""

    def report_with(report: Report, stream: TextIO, *, color: bool = False) -> None:
        from mlsubmit.reporters import ci as reporters_ci

        getattr(reporters_ci, name)(report, stream, color=color)

    report_with.__name__ = name
    return report_with


REPORTERS: dict[str, Callable[..., None]] = {
    "text": text,
    "json": json_reporter,
    "sarif": _ci("sarif"),
    "junit": _ci("junit"),
    "github": _ci("github"),
}
