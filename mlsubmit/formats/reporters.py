"""The reporters by their --format name: text and JSON here, the CI formats imported only when one is asked for."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from mlsubmit.core.findings import Report
from mlsubmit.formats.json_report import json_reporter
from mlsubmit.formats.text import text


def _ci(name: str) -> Callable[..., None]:
    """A CI reporter (formats.ci), imported when used: its XML library is not needed for text or JSON."""

    def report_with(report: Report, stream: TextIO, *, color: bool = False) -> None:
        # XML only for a CI format (start-up)
        from mlsubmit.formats import ci as ci_formats

        getattr(ci_formats, name)(report, stream, color=color)

    report_with.__name__ = name
    return report_with


REPORTERS: dict[str, Callable[..., None]] = {
    "text": text,
    "json": json_reporter,
    "sarif": _ci("sarif"),
    "junit": _ci("junit"),
    "github": _ci("github"),
}
