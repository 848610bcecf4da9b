"""The HTML report: one self-contained page a reviewer can open offline.

Nothing is loaded from the network: charts are inline SVG drawn with matplotlib (html_charts.py), the style
sheet and the small filter script are inline, and a Content-Security-Policy forbids every other source. Everything
that comes from the checked tree (system ids, file names, messages, JSON values) is untrusted: it is escaped,
and its control, bidi-override and surrogate characters are shown as escapes (support/display_escape.py), in text and
charts.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterable, Sequence

from mlsubmit import __version__
from mlsubmit.core.support.display_escape import html_text as esc
from mlsubmit.report.compare import Comparison
from mlsubmit.report.data import ReportData
from mlsubmit.report.evidence_html import section as evidence
from mlsubmit.report.html_assets import SCRIPT, STYLE  # re-exported: tests and the CSP read SCRIPT here
from mlsubmit.report.html_charts import LOG_RANGE, RCP_CLASS, WIDE_WIDTH, chart_svg, comparison_svg
from mlsubmit.report.html_findings import findings_section, path_html
from mlsubmit.report.inputs import SystemFacts
from mlsubmit.report.tables import NUMERIC, cells, comparison_lines, headers, price_note


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; img-src data:"



# Column names as a reviewer reads them, with their units; CSV and JSON keep the machine names (tables.HEADERS).
LABELS = {
    "minutes": "minutes (RCP-scaled)",
    "runs": "runs counted",
    "rcp": "RCP check",
    "scaling": "RCP factor",
    "host_processors": "host processors",
    "price": "price ({currency})",
    "perf_per_price_estimate": "runs/h per M {currency} (estimate)",
    "vs_baseline": "vs baseline",
    "energy_kwh": "energy (kWh)",
}


def _breakable(text: str) -> str:
    """Escaped text that may wrap after "_" or "-" (dgxa100_ngc21.05_pytorch) rather than mid-word."""
    return esc(text).replace("_", "_<wbr>").replace("-", "-<wbr>")


def labels(data: ReportData) -> list[str]:
    """The results table's column names as shown, with the currency where prices are."""
    currency = data.comparison.currency if data.comparison is not None else ""
    return [LABELS.get(name, name).format(currency=currency) for name in headers(data, display=True)]


def _table(head: Iterable[str], body: Iterable[Iterable[str]], *, numeric: frozenset[int] = frozenset(),
           classes: dict[int, dict[str, str]] | None = None) -> str:  # fmt: skip
    """`classes`: per column, a cell value's CSS class (the RCP verdict in colour)."""
    out = ["<table><thead><tr>", *(f"<th>{esc(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in body:
        out.append("<tr>")
        for i, cell in enumerate(row):
            css = ["num"] if i in numeric else []
            css += [c for c in [(classes or {}).get(i, {}).get(cell)] if c]
            attr = f' class="{" ".join(css)}"' if css else ""
            out.append(f"<td{attr}>{esc(cell) if i in numeric else _breakable(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _summary(data: ReportData) -> str:
    head = headers(data, display=True)
    numeric = frozenset(i for i, h in enumerate(head) if h in NUMERIC)
    body = [cells(r, digits=2, data=data, display=True) for r in data.rows]
    rcp = {head.index("rcp"): RCP_CLASS}
    # On a narrow window the wide results table scrolls by itself instead of widening the whole page.
    table = _table(labels(data), body, numeric=numeric, classes=rcp)
    parts = ['<h2 id="results">Results</h2>', f'<div class="scroll results">{table}</div>']
    parts.append('<p class="meta">minutes: the olympic mean times the RCP factor (the round\'s score); RCP check: '
                 '<span class="pass">Pass</span>, <span class="fail">Fail</span> (the runs converged faster than '
                 "the reference allows, or no reference fits), empty where not checked (open division).</p>")
    if data.comparison is not None:
        unit = f"runs/h per M {esc(data.comparison.currency)}"
        parts.append(f'<p><span class="estimate">Estimate</span> {unit} (perf_per_price_estimate) and vs baseline: '
                     'see <a href="#per-dollar">performance per dollar</a>.</p>')
    notes = [f"{r.score.system}/{r.score.benchmark}: {n}" for r in data.rows
             for n in [*r.score.notes, *([r.energy.note] if r.energy and r.energy.note else [])]]  # fmt: skip
    if notes:
        parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)


def _per_dollar(comparison: Comparison) -> str:
    parts = ['<h2 id="per-dollar">Performance per dollar</h2>',
             f'<p><span class="estimate">Estimate</span> {esc(price_note(comparison))}</p>']
    for i, group in enumerate(comparison.groups):
        title = f"{group.division or '?'} · {group.benchmark}"
        parts.append(f"<h3>{esc(title)}</h3>")
        if group.baseline is not None:
            parts.append(comparison_svg(group, f"ppd-{i}"))
        lines = comparison_lines(Comparison(comparison.time_basis, comparison.currency, "", (group,)))
        parts.append("<ul>" + "".join(f"<li>{esc(line.strip())}</li>" for line in lines[1:]) + "</ul>")
        if group.note:
            parts.append(f'<p class="meta">{esc(group.note)}</p>')
    return "".join(parts)


def _charts(data: ReportData) -> str:
    parts = ['<h2 id="charts">Time to train per benchmark</h2>',
             "<p class=\"meta\">Bar: the round's score (times the RCP factor where one applies); red, hatched and "
             "marked RCP fail: the result fails the RCP check. Dot: a run's own time, spread up and down the bar so "
             "close runs stay apart; ring: left out by the olympic mean; x: a run that does not count. Times that "
             f"span more than {LOG_RANGE:g}× are drawn on a log scale.</p>"]
    for b_index, bench in enumerate(data.benchmarks()):
        parts.append(f"<h3>{esc(bench)}</h3>")
        by_division = {d: [r for r in data.rows if r.score.benchmark == bench and r.score.division == d]
                       for d in ("closed", "open")}  # fmt: skip
        present = [d for d, rows in by_division.items() if rows]
        if len(present) == 2:  # side by side
            charts = [f"<section><h3>{d}</h3>{chart_svg(by_division[d], f'{b_index}-{d}')}</section>" for d in present]
            parts.append(f'<div class="pair">{"".join(charts)}</div>')
        # Alone: the page's width, no empty panel beside it, and no "(no open results)" under every benchmark.
        parts.extend(f"<section><h3>{d}</h3>{chart_svg(by_division[d], f'{b_index}-{d}', width=WIDE_WIDTH)}</section>"
                     for d in (present if len(present) == 1 else ()))  # fmt: skip
        other = [r for r in data.rows if r.score.benchmark == bench and r.score.division not in ("closed", "open")]
        if other:
            parts.append(f"<section><h3>division not closed or open</h3>"
                         f"{chart_svg(other, f'{b_index}-x', width=WIDE_WIDTH)}</section>")
    return "".join(parts)


def relative_to(paths: Sequence[str]) -> str:
    """The folder shown paths are relative to: the trees given, or what they have in common."""
    cleaned = [os.path.normpath(p) for p in paths if p]
    if not cleaned:
        return ""
    if len(cleaned) == 1:
        only = cleaned[0]
        return only if os.path.isdir(only) else os.path.dirname(only)
    try:
        return os.path.commonpath(cleaned)
    except ValueError:  # absolute and relative paths mixed
        return ""


def shown_path(path: str, base: str) -> str:
    if base and base != "." and path.startswith(base.rstrip("/") + "/"):
        return path[len(base.rstrip("/")) + 1 :]
    return path


def _runs(data: ReportData) -> str:
    base = relative_to(data.paths)
    parts = ['<h2 id="runs">Runs</h2>']
    if base:
        parts.append(f'<p class="meta">Paths are relative to <code class="path">{path_html(base)}</code>.</p>')
    head = ("run", "minutes", "status", "counted", "olympic", "to converge", "samples/s")
    for r in data.rows:
        s = r.score
        body = [
            (
                shown_path(run.path, base),
                "" if run.minutes is None else f"{run.minutes:.3f}",
                run.status or "",
                "yes" if run.counted else f"no: {run.reason}",
                "dropped" if run.olympic_dropped else "",
                "" if run.to_converge is None else f"{run.to_converge:g} {run.unit}",
                _throughput(run.throughput, run.counted),
            )
            for run in s.runs
        ]
        summary = f"{s.division or '?'} · {s.benchmark} · {s.system}"
        parts.append(f"<details><summary>{esc(summary)}</summary>{_table(head, body, numeric=frozenset({1, 6}))}"
                     "</details>")
    return "".join(parts)


def _throughput(value: float | None, counted: bool) -> str:
    if value is not None:
        return f"{value:.1f}"
    return "unknown" if counted else ""


def _system(system: SystemFacts, base: str = "") -> str:
    title = f"{system.id} — {system.get('system_name') or '?'} ({system.get('division') or '?'})"
    where = path_html(shown_path(system.path, base))
    if not system.readable:
        return f"<details><summary>{esc(title)}</summary><p>{where}: not readable as a JSON object " \
               "(see the findings).</p></details>"
    rows = system.totals()
    rows += list(system.fields)
    return f"<details><summary>{esc(title)}</summary><p class=\"meta\">{where}</p>" \
           f"{_table(('field', 'value'), rows)}</details>"


def render(data: ReportData) -> str:

    base = relative_to(data.paths)
    systems = "".join(_system(s, base) for s in data.systems) or '<p class="empty">no system descriptions</p>'
    title = f"MLPerf Training results, ruleset {data.ruleset}"
    return "".join(
        [
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{esc(title)}</h1>",
            f'<p class="meta">mlsubmit {esc(__version__)} · {esc(", ".join(data.paths))} · '
            f"{len(data.rows)} result(s) · {len(data.findings)} finding(s)</p>",
            '<nav><a href="#results">results</a> · '
            + ('<a href="#per-dollar">per dollar</a> · ' if data.comparison is not None else "")
            + '<a href="#charts">charts</a> · <a href="#runs">runs</a> · '
            '<a href="#findings-title">findings</a> · <a href="#systems">systems</a></nav>',
            _summary(data),
            _per_dollar(data.comparison) if data.comparison is not None else "",
            _charts(data),
            evidence(data.evidence),
            _runs(data),
            findings_section(data.findings, base),
            f'<h2 id="systems">System descriptions</h2>{systems}',
            f"<script>{SCRIPT}</script></body></html>\n",
        ]
    )
