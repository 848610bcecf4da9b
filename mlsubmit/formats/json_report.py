"""The JSON report (its shape: schemas/report.schema.json), and the indented JSON text every JSON output of ours
uses."""

from __future__ import annotations

import json
from typing import Any, TextIO

import msgspec

from mlsubmit import __version__
from mlsubmit.core.findings import Report


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
            **_failed_elsewhere(report),
            **counts,
            "exit_code": report.exit_code(),
            **({"compared": report.tally.to_dict()} if report.tally is not None else {}),
        },
    }


def _failed_elsewhere(report: Report) -> dict[str, dict[str, int]]:
    """The places other than the checked files that failed, by kind; left out when there are none."""
    kinds = {kind.removesuffix("(s)").replace(" ", "_"): n for kind, n in report.failed_elsewhere().items()}
    return {"failed_elsewhere": kinds} if kinds else {}


def json_reporter(report: Report, stream: TextIO, *, color: bool = False) -> None:
    stream.write(indented_json(to_json(report), allow_nan=False))  # a number in a report is finite, or it is a bug
    stream.write("\n")


def indented_json(data: Any, *, allow_nan: bool = True) -> str:
    """`json.dumps(data, indent=2)`, character for character, in a quarter of the time: json's indenting encoder
    is pure Python, so its C encoder writes the compact text and msgspec re-indents it without decoding a value.
    Text msgspec refuses (NaN, Infinity, a lone surrogate) is written by json's own indenting encoder.
    allow_nan=False: a NaN or an infinity raises ValueError, as json.dumps(allow_nan=False) does (strict parsers
    reject them)."""
    compact = json.dumps(data, allow_nan=allow_nan)
    try:
        return msgspec.json.format(compact.encode("ascii"), indent=2).decode("ascii")
    except msgspec.DecodeError:
        return json.dumps(data, indent=2, allow_nan=allow_nan)
