"""The review's HTML pages: the borrowing comparison (hyperparameter by hyperparameter), Preview against Available,
and what changed since the previous round, with their findings; on the HTML report's style sheet
(html_assets.STYLE) and escaping (html.esc), with no script, so the policy allows none."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mlsubmit import __version__
from mlsubmit.core.support.display_escape import html_text as esc
from mlsubmit.report.html_assets import STYLE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mlsubmit.checker.review.borrow import Borrowing
    from mlsubmit.checker.review.preview import Comparison as PreviewComparison
    from mlsubmit.core.findings import Finding

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


def _findings(findings: Sequence[Finding]) -> str:
    items = "".join(f"<tr><td>{esc(f.code)}</td><td>{esc(f.severity.value)}</td><td>{esc(f.message)}</td></tr>"
                    for f in findings)
    head = "<tr><th>code</th><th>severity</th><th>message</th></tr>"
    return f"<table><thead>{head}</thead><tbody>{items}</tbody></table>"


def _page(title: str, meta: str, body: Iterable[str]) -> str:
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{esc(title)}</h1>", f'<p class="meta">mlsubmit {esc(__version__)} · {esc(meta)}</p>', *body,
        "</body></html>\n",
    ])


def _preview_row(c: PreviewComparison) -> str:
    css = "pass" if c.held else "fail"
    cells = [c.preview.entry.benchmark, c.preview.entry.system, c.preview.chips, f"{c.preview.minutes:.3f}",
             c.available.entry.system, c.available.chips, f"{c.available.minutes:.3f}", f"{c.measure} ({c.unit})",
             f"{c.got:.3f}", f"{c.allowed:.3f}", c.match.say() if c.match is not None else ""]
    tds = "".join(f"<td>{esc(v)}</td>" for v in cells)
    return f'<tr>{tds}<td class="{css}">{"held" if c.held else "not held"}</td></tr>'


def render_preview(comparisons: Sequence[PreviewComparison], findings: Sequence[Finding]) -> str:
    head = ("benchmark", "Preview system", "chips", "minutes", "Available system", "chips", "minutes", "measure",
            "Available value", "at most (+2 %)", "the same system by", "verdict")
    table = ["<h2>Preview against Available</h2><table><thead><tr>", *(f"<th>{esc(h)}</th>" for h in head),
             "</tr></thead><tbody>", *(_preview_row(c) for c in comparisons), "</tbody></table>"]
    return _page("Preview results against Available results", f"{len(comparisons)} comparison(s)",
                 [*table, "<h2>Findings</h2>", _findings(findings)])


def render_borrowing(result: Borrowing) -> str:
    title = f"Hyperparameter borrowing: {result.resubmitted.benchmark}, round {result.rules.round}"
    scale = f"{result.original.accelerators} → {result.resubmitted.accelerators} accelerators"
    meta = (f"original {result.original.shown} · resubmitted {result.resubmitted.shown} · donor "
            f"{result.donor.shown} · scale {scale}")
    return _page(title, meta, [
        "<h2>Hyperparameters</h2><table><thead><tr><th>key</th><th>original</th><th>donor</th><th>resubmitted</th>"
        "<th>verdict</th></tr></thead><tbody>", *_rows(result), "</tbody></table>",
        "<h2>Findings</h2>", _findings(result.findings),
    ])


# `review since`'s findings, by what they compare: a section each, in this order.
_SINCE_SECTIONS = (
    ("System descriptions", {"REV030": "carried", "REV031": "changed"}),
    ("Benchmarks", {"REV032": "gone", "REV033": "new", "REV034": "retired"}),
    ("Hyperparameters moved", {"REV035": "moved"}),
    ("Closed-table rules changed", {"REV036": "changed"}),
)


def _since_section(title: str, kinds: dict[str, str], findings: Sequence[Finding]) -> str:
    rows = [f for f in findings if f.code in kinds]
    body = "".join(f"<tr><td>{esc(kinds[f.code])}</td><td>{esc(f.code)}</td><td>{esc(f.message)}</td></tr>"
                   for f in rows) or '<tr><td colspan="3">nothing</td></tr>'
    return (f"<h2>{esc(title)}</h2><table><thead><tr><th>what</th><th>code</th><th>message</th></tr></thead>"
            f"<tbody>{body}</tbody></table>")


def render_since(previous: str, current: str, rulesets: tuple[str, str], findings: Sequence[Finding]) -> str:
    meta = f"{previous} ({rulesets[0]}) → {current} ({rulesets[1]})"
    return _page("Our tree since the previous round", meta,
                 [_since_section(title, kinds, findings) for title, kinds in _SINCE_SECTIONS])
