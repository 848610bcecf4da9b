"""`mlsubmit runs show`: the run ledger per run set, as text, JSON or one self-contained HTML page.

Per set (system, benchmark, division): its runs by start time (a content seen at several paths is one run), every
window of N consecutive runs with its olympic score and the median one the rules take (the checker's rule,
`median_window`), and time to train and the RCP checker's epochs or samples to converge over time against the set's
RCP window (the RCP mean and the fastest allowed mean). Every value comes from the ledger, which validated it; text
from it is escaped and made inert in the page.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from mlsubmit.checker import median_window
from mlsubmit.checker.base.ledger import Entry as LedgerEntry
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.window import Window
from mlsubmit.core.support.display_escape import inert


@dataclass
class SetView:
    system: str
    benchmark: str
    division: str
    runs: list[LedgerEntry] = field(default_factory=list)  # one per content, by start time
    required: int | None = None
    window: Window | None = None

    @property
    def label(self) -> str:
        return f"{self.system}/{self.benchmark} ({self.division})"

    @property
    def rcp(self) -> tuple[float | None, float | None]:
        """The RCP mean and fastest allowed, as last recorded."""
        latest = max(self.runs, key=lambda e: e.first_seen)
        return latest.rcp_mean, latest.rcp_fastest

    def to_dict(self) -> dict[str, object]:
        w = self.window
        return {"system": self.system, "benchmark": self.benchmark, "division": self.division,
                "required": self.required, "runs": [e.sha256 for e in self.runs],
                "windows": None if w is None else [_number(s) for s in w.scores],
                "median_window": None if w is None else {"first": w.start, "last": w.stop - 1,
                                                         "olympic_minutes": _number(w.score), "valid": w.valid},
                "rcp_mean": self.rcp[0], "rcp_fastest": self.rcp[1]}


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def minutes(entry: LedgerEntry) -> float:
    return entry.minutes if entry.converged and entry.minutes is not None else math.inf


def views(entries: Sequence[LedgerEntry]) -> list[SetView]:
    sets: dict[tuple[str, str, str], SetView] = {}
    for e in entries:
        view = sets.setdefault((e.system, e.benchmark, e.division), SetView(e.system, e.benchmark, e.division))
        if all(r.sha256 != e.sha256 for r in view.runs):
            view.runs.append(e)
    for view in sets.values():
        view.runs.sort(key=lambda e: (math.inf if e.run_start_ms is None else e.run_start_ms, e.shown))
        view.required = benchmarks.runs(view.benchmark)
        n = view.required
        if n is not None and len(view.runs) >= n:
            view.window = median_window([minutes(e) for e in view.runs], n, view.benchmark)
    return [sets[k] for k in sorted(sets)]


def _start(entry: LedgerEntry) -> str:
    if entry.run_start_ms is None:
        return "?"
    return datetime.fromtimestamp(entry.run_start_ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M")


def _status(view: SetView) -> str:
    n, have = view.required, len(view.runs)
    if n is None:
        return f"{have} run(s); the rules name no run count"
    if have < n:
        return f"{have} of {n} runs: {n - have} more needed"
    assert view.window is not None
    return f"{have} runs, N = {n}: the rules take {view.window.why(have)}"


def write_text(sets: Sequence[SetView], entries: Sequence[LedgerEntry]) -> str:
    lines = [f"{len(entries)} ledger entries, {len(sets)} run set(s)"]
    for view in sets:
        lines += ["", f"{inert(view.label)}: {_status(view)}"]
        mean, fastest = view.rcp
        if mean is not None and fastest is not None:
            lines.append(f"  RCP window: fastest allowed {fastest:.4g}, RCP mean {mean:.4g} "
                         f"{benchmarks.unit(view.benchmark)}")
        w = view.window
        for i, e in enumerate(view.runs):
            mark = "*" if w is not None and w.start <= i < w.stop else " "
            shown = f"{e.minutes:.2f} min" if e.minutes is not None else "-"
            conv = f"{e.to_converge:.6g} {e.unit}" if e.to_converge is not None else "did not converge"
            lines.append(f" {mark}{i:3d} {_start(e)}  {shown:>11}  {conv:<24} {e.verdict:<4} {e.sha256[:12]} "
                         f"{inert(e.shown)}")
    return "\n".join(lines) + "\n"


def write_json(sets: Sequence[SetView], entries: Sequence[LedgerEntry]) -> str:
    body = {"runs": [e.to_dict() for e in entries], "sets": [v.to_dict() for v in sets]}
    return json.dumps(body, indent=2, sort_keys=False, allow_nan=False) + "\n"


def esc(value: object) -> str:
    return html.escape(inert(str(value)), quote=True)


_W, _H, _PAD = 560.0, 180.0, 30.0


def _chart(values: Sequence[float | None], lines: Sequence[tuple[str, float | None]], title: str) -> str:
    """An inline SVG of values by run (start order) with horizontal reference lines; no script, no fonts."""
    shown = [v for v in values if v is not None] + [v for _, v in lines if v is not None]
    if not shown:
        return f"<p>{esc(title)}: no values</p>"
    low, high = min(shown), max(shown)
    span = (high - low) or abs(high) or 1.0
    low, high = low - span * 0.1, high + span * 0.1
    step = (_W - 2 * _PAD) / max(1, len(values) - 1)

    def y(v: float) -> float:
        return _H - _PAD - (v - low) / (high - low) * (_H - 2 * _PAD)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W:.0f}" height="{_H:.0f}" role="img">',
             f"<title>{esc(title)}</title>", f'<text x="{_PAD}" y="14" font-size="12">{esc(title)}</text>']
    for name, v in lines:
        if v is not None:
            parts.append(f'<line x1="{_PAD}" x2="{_W - _PAD}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#b3261e" '
                         f'stroke-dasharray="4 3"/><text x="{_W - _PAD}" y="{y(v) - 3:.1f}" font-size="10" '
                         f'text-anchor="end">{esc(name)} {v:.4g}</text>')
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    parts += [f'<circle cx="{_PAD + i * step:.1f}" cy="{y(v):.1f}" r="3" fill="#1f5fa8"><title>run {i}: {v:.6g}'
              "</title></circle>" for i, v in points]
    return "".join(parts) + "</svg>"


_STYLE = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;"
          "border-bottom:1px solid #ddd;text-align:left}tr.window{background:#eef4fb}")


def write_html(sets: Sequence[SetView], entries: Sequence[LedgerEntry]) -> str:
    body = [f"<h1>Run ledger</h1><p>{len(entries)} entries, {len(sets)} run set(s)</p>"]
    for view in sets:
        mean, fastest = view.rcp
        w = view.window
        body.append(f"<h2>{esc(view.label)}</h2><p>{esc(_status(view))}</p>")
        body.append(_chart([e.to_converge for e in view.runs], [("RCP mean", mean), ("fastest allowed", fastest)],
                           f"{benchmarks.unit(view.benchmark)} to converge, by start time"))
        body.append(_chart([e.minutes for e in view.runs], [], "time to train (minutes), by start time"))
        rows = ["<tr><th>#</th><th>start (UTC)</th><th>minutes</th><th>to converge</th><th>verdict</th>"
                "<th>seed</th><th>sha256</th><th>file</th><th>first seen</th></tr>"]
        for i, e in enumerate(view.runs):
            cls = ' class="window"' if w is not None and w.start <= i < w.stop else ""
            rows.append(f"<tr{cls}><td>{i}</td><td>{esc(_start(e))}</td><td>{esc(e.minutes)}</td>"
                        f"<td>{esc(e.to_converge)}</td><td>{esc(e.verdict)}</td><td>{esc(e.seed)}</td>"
                        f"<td>{esc(e.sha256[:16])}</td><td>{esc(e.shown)}</td><td>{esc(e.first_seen)}</td></tr>")
        body.append("<table>" + "".join(rows) + "</table>")
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" '
            "content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>mlsubmit run ledger</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>\n")


WRITERS = {"text": write_text, "json": write_json, "html": write_html}
