"""The HTML report: one self-contained page a reviewer can open offline.

Nothing is loaded from the network: charts are inline SVG drawn with matplotlib (imported only here), the style
sheet and the small filter script are inline, and a Content-Security-Policy forbids every other source. Everything
that comes from the checked tree (system ids, file names, messages, JSON values) is escaped: it is untrusted.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from mlsubmit import __version__
from mlsubmit.findings import Finding, Severity
from mlsubmit.report.data import PPP_UNIT, ReportData, ResultRow
from mlsubmit.report.inputs import SystemFacts
from mlsubmit.report.tables import cells, headers

if TYPE_CHECKING:
    from matplotlib.axes import Axes

MAX_FINDING_ROWS = 5000  # a page with more rows is slow to filter; the rest are counted, and `check` lists them

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:1200px;padding:0 1rem;color:#1b1f24}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:2px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #d0d7de;padding:.25rem .45rem;
text-align:left;vertical-align:top}th{background:#f3f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
td code,#findings td:nth-child(n+3),details td:nth-child(2){overflow-wrap:anywhere}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}.pair>section{min-width:0}
.pair h3{margin:.4rem 0}svg{max-width:100%;height:auto}.empty{color:#6e7781;font-style:italic}
.sev-error{color:#b3261e;font-weight:600}.sev-warning{color:#9a6700}.sev-info{color:#0969da}
.estimate{background:#fff8c5;padding:.1rem .3rem;border-radius:3px}.meta{color:#57606a}
details{margin:.3rem 0}summary{cursor:pointer}code{font-size:.92em}
"""

SCRIPT = """
(function () {
  var sev = document.getElementById("f-severity");
  var fam = document.getElementById("f-family");
  var shown = document.getElementById("f-shown");
  var rows = document.querySelectorAll("#findings tbody tr");
  function fromHash(name) {
    var m = new RegExp("(?:^|[#&])" + name + "=([A-Za-z]+)").exec(window.location.hash);
    return m ? m[1] : "";
  }
  function apply() {
    var n = 0;
    rows.forEach(function (row) {
      var ok = (!sev.value || row.dataset.severity === sev.value) &&
               (!fam.value || row.dataset.family === fam.value);
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = String(n);
  }
  sev.value = fromHash("severity");
  fam.value = fromHash("family");
  if (sev.selectedIndex < 0) { sev.value = ""; }
  if (fam.selectedIndex < 0) { fam.value = ""; }
  sev.addEventListener("change", apply);
  fam.addEventListener("change", apply);
  apply();
  document.body.dataset.filters = "ready";
})();
"""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; img-src data:"


def chart_svg(rows: Sequence[ResultRow], salt: str) -> str:
    """Horizontal bars: the score per system; dots: each run (hollow: dropped by the olympic mean; x: not counted)."""
    import matplotlib
    from matplotlib.figure import Figure

    rows = sorted(rows, key=lambda r: (r.score.time_to_train_minutes is None, r.score.time_to_train_minutes or 0))
    fig = Figure(figsize=(6.0, 0.9 + 0.45 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    for y, row in enumerate(rows):
        _draw_row(ax, y, row)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r.score.system for r in rows])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)  # a "$" in a system id must not start TeX
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.set_xlabel("time to train (minutes)")
    ax.grid(axis="x", color="#d0d7de", linewidth=0.6)
    ax.set_axisbelow(True)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 9}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _draw_row(ax: Axes, y: int, row: ResultRow) -> None:
    score = row.score.time_to_train_minutes
    if score is not None:
        ax.barh([y], [score], height=0.6, color="#4c78a8", alpha=0.35)
        ax.text(score, y - 0.33, f" {score:.2f}", va="bottom", fontsize=8, parse_math=False)
    for run in row.score.runs:
        if run.minutes is None:
            continue
        if not run.counted:
            ax.plot([run.minutes], [y], "x", color="#b3261e", markersize=6)
        elif run.olympic_dropped:
            ax.plot([run.minutes], [y], "o", mfc="none", mec="#1f3b5c", markersize=5)
        else:
            ax.plot([run.minutes], [y], "o", color="#1f3b5c", markersize=4)


def _table(head: Iterable[str], body: Iterable[Iterable[str]], *, numeric: frozenset[int] = frozenset()) -> str:
    out = ["<table><thead><tr>", *(f"<th>{esc(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in body:
        out.append("<tr>")
        for i, cell in enumerate(row):
            out.append(f'<td class="num">{esc(cell)}</td>' if i in numeric else f"<td>{esc(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _summary(data: ReportData) -> str:
    head = headers(data)
    numeric = frozenset(i for i, h in enumerate(head) if h in ("minutes", "scaling", "perf_per_price_estimate"))
    body = [cells(r, digits=2, with_price=data.has_prices) for r in data.rows]
    parts = ["<h2 id=\"results\">Results</h2>", _table(head, body, numeric=numeric)]
    if data.has_prices:
        currency = next((r.price.currency for r in data.rows if r.price), "USD")
        parts.append(
            f'<p><span class="estimate">Estimate</span> perf_per_price_estimate: '
            f"{esc(PPP_UNIT.format(currency=currency))}, from list prices in prices.toml; not a quote.</p>"
        )
    notes = [f"{r.score.system}/{r.score.benchmark}: {n}" for r in data.rows for n in r.score.notes]
    if notes:
        parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)


def _charts(data: ReportData) -> str:
    parts = ['<h2 id="charts">Time to train per benchmark</h2>',
             "<p class=\"meta\">Bar: the round's score (times the RCP factor where one applies). Dot: a run's own "
             "time; hollow: left out by the olympic mean; x: a run that does not count.</p>"]
    for b_index, bench in enumerate(data.benchmarks()):
        parts.append(f"<h3>{esc(bench)}</h3><div class=\"pair\">")
        for division in ("closed", "open"):
            rows = [r for r in data.rows if r.score.benchmark == bench and r.score.division == division]
            parts.append(f"<section><h3>{division}</h3>")
            parts.append(chart_svg(rows, f"{b_index}-{division}") if rows else '<p class="empty">no results</p>')
            parts.append("</section>")
        parts.append("</div>")
        other = [r for r in data.rows if r.score.benchmark == bench and r.score.division not in ("closed", "open")]
        if other:
            parts.append(f"<section><h3>division not closed or open</h3>{chart_svg(other, f'{b_index}-x')}</section>")
    return "".join(parts)


def _runs(data: ReportData) -> str:
    parts = ['<h2 id="runs">Runs</h2>']
    head = ("run", "minutes", "status", "counted", "olympic", "to converge", "samples/s")
    for r in data.rows:
        s = r.score
        body = [
            (
                run.path,
                "" if run.minutes is None else f"{run.minutes:.3f}",
                run.status or "",
                "yes" if run.counted else f"no: {run.reason}",
                "dropped" if run.olympic_dropped else "",
                "" if run.to_converge is None else f"{run.to_converge:g} {run.unit}",
                "" if run.throughput is None else f"{run.throughput:.1f}",
            )
            for run in s.runs
        ]
        summary = f"{s.division or '?'} · {s.benchmark} · {s.system}"
        parts.append(f"<details><summary>{esc(summary)}</summary>{_table(head, body, numeric=frozenset({1, 6}))}"
                     "</details>")
    return "".join(parts)


def _findings(findings: Sequence[Finding]) -> str:
    ordered = sorted(findings, key=lambda f: (f.severity.rank, f.path, f.line or 0, f.code))
    families = sorted({f.family for f in ordered})
    options_sev = "".join(f'<option value="{s.value}">{s.value}</option>' for s in Severity)
    options_fam = "".join(f'<option value="{esc(f)}">{esc(f)}</option>' for f in families)
    parts = [
        '<h2 id="findings-title">Findings</h2><p>',
        f'<label>severity <select id="f-severity"><option value="">all</option>{options_sev}</select></label> ',
        f'<label>family <select id="f-family"><option value="">all</option>{options_fam}</select></label> ',
        f'<span class="meta">showing <span id="f-shown">{min(len(ordered), MAX_FINDING_ROWS)}</span> of '
        f"{len(ordered)}</span></p>",
        '<table id="findings"><thead><tr><th>severity</th><th>code</th><th>where</th><th>message</th>'
        "<th>hint</th></tr></thead><tbody>",
    ]
    for f in ordered[:MAX_FINDING_ROWS]:
        where = f.path + (f":{f.line}" if f.line else (f"#{f.pointer}" if f.pointer else ""))
        parts.append(
            f'<tr data-severity="{esc(f.severity.value)}" data-family="{esc(f.family)}">'
            f'<td class="sev-{esc(f.severity.value)}">{esc(f.severity.value)}</td><td>{esc(f.code)}</td>'
            f"<td><code>{esc(where)}</code></td><td>{esc(f.message)}</td><td>{esc(f.hint)}</td></tr>"
        )
    parts.append("</tbody></table>")
    if len(ordered) > MAX_FINDING_ROWS:
        parts.append(f"<p>{len(ordered) - MAX_FINDING_ROWS} more; run <code>mlsubmit check</code> for all.</p>")
    return "".join(parts)


def _system(system: SystemFacts) -> str:
    title = f"{system.id} — {system.get('system_name') or '?'} ({system.get('division') or '?'})"
    if not system.readable:
        return f"<details><summary>{esc(title)}</summary><p>{esc(system.path)}: not readable as a JSON object " \
               "(see the findings).</p></details>"
    rows = system.totals()
    rows += list(system.fields)
    return f"<details><summary>{esc(title)}</summary><p class=\"meta\">{esc(system.path)}</p>" \
           f"{_table(('field', 'value'), rows)}</details>"


def render(data: ReportData) -> str:
    systems = "".join(_system(s) for s in data.systems) or '<p class="empty">no system descriptions</p>'
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
            '<nav><a href="#results">results</a> · <a href="#charts">charts</a> · <a href="#runs">runs</a> · '
            '<a href="#findings-title">findings</a> · <a href="#systems">systems</a></nav>',
            _summary(data),
            _charts(data),
            _runs(data),
            _findings(data.findings),
            f'<h2 id="systems">System descriptions</h2>{systems}',
            f"<script>{SCRIPT}</script></body></html>\n",
        ]
    )
