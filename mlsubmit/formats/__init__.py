"""Reporters turn a Report into text for people or data for machines; checks never print.

Each reporter is a function `(report, stream, *, color) -> None` registered in REPORTERS (`reporters`) by its
--format name: the text report (`text`), JSON (`json_report`), and the CI formats (`ci`: SARIF, JUnit, GitHub
annotations), the last imported only when one is asked for (its XML library is not needed for text or JSON). This
file only names what the layers above use.
"""

from __future__ import annotations

from mlsubmit.formats.json_report import indented_json, json_reporter, to_json
from mlsubmit.formats.reporters import REPORTERS
from mlsubmit.formats.text import printable, summary_line, text

__all__ = ["REPORTERS", "indented_json", "json_reporter", "printable", "summary_line", "text", "to_json"]
