"""The review's HTML page: the borrowing comparison (hyperparameter by hyperparameter) and its findings, on the
HTML report's style sheet (html_assets.STYLE) and escaping (html.esc); no script, so the policy allows none."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mlsubmit import __version__
from mlsubmit.report.html import esc
from mlsubmit.report.html_assets import STYLE

if TYPE_CHECKING:
    from mlsubmit.checker import Borrowing

_CSP = "default-src 'none'; style-src 'unsafe-inline'"
# A row's verdict -> the report's CSS class: what breaks the rule in red, what needs evidence in amber.
_CLASS = {"kept own value": "fail", "changed": "warn", "setting changed": "warn", "from donor": "pass",
          "batch size (may change)": "pass"}


def _cell(value: object) -> str:
    return "—" if value is None else esc(repr(value))


def _rows(result: Borrowing) -> Iterable[str]:
    for row in result.rows:
        css = _CLASS.get(row.verdict)
        attr = f' class="{css}"' if css else ""
        yield (f"<tr><td>{esc(row.key)}</td><td>{_cell(row.original)}</td><td>{_cell(row.donor)}</td>"
               f"<td>{_cell(row.resubmitted)}</td><td{attr}>{esc(row.verdict)}</td></tr>")


def _findings(result: Borrowing) -> str:
    items = "".join(f"<tr><td>{esc(f.code)}</td><td>{esc(f.severity.value)}</td><td>{esc(f.message)}</td></tr>"
                    for f in result.findings)
    head = "<tr><th>code</th><th>severity</th><th>message</th></tr>"
    return f"<table><thead>{head}</thead><tbody>{items}</tbody></table>"


def render_borrowing(result: Borrowing) -> str:
    title = f"Hyperparameter borrowing: {result.resubmitted.benchmark}, round {result.rules.round}"
    scale = f"{result.original.accelerators} → {result.resubmitted.accelerators} accelerators"
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">mlsubmit {esc(__version__)} · original {esc(result.original.shown)} · resubmitted '
        f"{esc(result.resubmitted.shown)} · donor {esc(result.donor.shown)} · scale {esc(scale)}</p>",
        "<h2>Hyperparameters</h2><table><thead><tr><th>key</th><th>original</th><th>donor</th><th>resubmitted</th>"
        "<th>verdict</th></tr></thead><tbody>", *_rows(result), "</tbody></table>",
        "<h2>Findings</h2>", _findings(result),
        "</body></html>\n",
    ])
