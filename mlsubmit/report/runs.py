"""`mlsubmit runs show`: the run ledger per run set, as text, JSON, CSV or one self-contained HTML page.

Per set (system, benchmark, division): its runs by start time (a content seen at several paths is one run), every
window of N consecutive runs with its olympic score and the median one the rules take (the checker's rule,
`median_window`), and time to train and the RCP checker's epochs or samples to converge over time against the set's
RCP window (the RCP mean and the fastest allowed mean).

The ledger is read twice as a stream, in run-set order (SQLite sorts it, on disk when large): once for each set's
numbers (a few floats per run: the windows, the charts), once to write the runs. So time is linear in the ledger's
rows and memory holds no row longer than it is written. Every text from the ledger is made inert in every format
(controls and escapes shown, never sent to a terminal), escaped in HTML and kept from becoming a formula in CSV.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any

from mlsubmit.checker import median_window
from mlsubmit.checker.base.ledger import Entry as LedgerEntry
from mlsubmit.checker.base.ledger_rows import BY_SET, Reader
from mlsubmit.checker.rcp.planning import convergence_text, ledger_risk, percent
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.window import Window
from mlsubmit.core.support.display_escape import html_text as esc
from mlsubmit.core.support.display_escape import inert, spreadsheet_cell
from mlsubmit.report.runs_svg import histogram, run_chart

Key = tuple[str, str, str]


@dataclass
class SetView:
    system: str
    benchmark: str
    division: str
    minutes: list[float] = field(default_factory=list)  # per run in start order; inf: did not converge
    trained: list[float | None] = field(default_factory=list)  # time to train as recorded
    to_converge: list[float | None] = field(default_factory=list)
    converged: list[bool] = field(default_factory=list)
    rcp: tuple[float | None, float | None] = (None, None)  # the RCP mean and fastest allowed, as last recorded
    seen: str = ""
    ruleset: str = ""  # the newest entry's, for the risk's RCP records
    required: int | None = None
    window: Window | None = None
    risk: Any = None  # rcp/risk.py Risk of the scored runs: the chance of an RCP fail once N runs are in

    @property
    def label(self) -> str:
        return f"{self.system}/{self.benchmark} ({self.division})"

    def add(self, e: LedgerEntry) -> None:
        self.minutes.append(e.minutes if e.converged and e.minutes is not None else math.inf)
        self.trained.append(e.minutes)
        self.to_converge.append(e.to_converge)
        self.converged.append(e.converged)
        if e.first_seen > self.seen:
            self.rcp, self.seen, self.ruleset = (e.rcp_mean, e.rcp_fastest), e.first_seen, e.ruleset

    def marked(self, i: int) -> bool:
        return self.window is not None and self.window.start <= i < self.window.stop

    def to_dict(self) -> dict[str, object]:
        w = self.window
        return {"system": inert(self.system), "benchmark": inert(self.benchmark), "division": inert(self.division),
                "required": self.required, "windows": None if w is None else [_number(s) for s in w.scores],
                "median_window": None if w is None else {"first": w.start, "last": w.stop - 1,
                                                         "olympic_minutes": _number(w.score), "valid": w.valid},
                "rcp_mean": self.rcp[0], "rcp_fastest": self.rcp[1],
                "risk": None if self.risk is None else self.risk.to_dict()}

    def shade(self) -> tuple[int, int] | None:
        return None if self.window is None else (self.window.start, self.window.stop)

    def converged_only(self, values: Sequence[float | None]) -> list[float | None]:
        return [v if ok else None for v, ok in zip(values, self.converged, strict=True)]


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def runs(reader: Reader) -> Iterator[tuple[Key, int, LedgerEntry]]:
    """Each set's runs in start order, numbered from 0, a content once per set (its first entry in that order)."""
    key: Key | None = None
    seen: set[str] = set()
    for e in reader.entries(BY_SET):
        if (e.system, e.benchmark, e.division) != key:
            key, seen = (e.system, e.benchmark, e.division), set()
        if e.sha256 not in seen:
            seen.add(e.sha256)
            yield key, len(seen) - 1, e


def views(reader: Reader) -> tuple[dict[Key, SetView], int]:
    """The run sets in the ledger's set order, with their windows; and how many entries the ledger holds."""
    sets: dict[Key, SetView] = {}
    for key, _, e in runs(reader):
        sets.setdefault(key, SetView(*key)).add(e)
    for view in sets.values():
        view.required = n = benchmarks.runs(view.benchmark)
        if n is not None and len(view.minutes) >= n:
            view.window = median_window(view.minutes, n, view.benchmark)
        view.risk = _risk(view)
    return sets, reader.count() - len(reader.left_out)


def _risk(view: SetView) -> Any:
    """The set's risk from its scored runs (the median window's, or all so far), closed sets only."""
    if view.division != "closed":
        return None
    w = view.window
    first, stop = (w.start, w.stop) if w is not None else (0, len(view.minutes))
    scored = [(view.to_converge[i] if view.converged[i] else None, view.trained[i]) for i in range(first, stop)]
    return ledger_risk(view.ruleset, view.benchmark, scored, *view.rcp)


def start_text(ms: float | None) -> str:
    """A start time in UTC to the minute; "?" for none or one no calendar holds (a log may say 1e300)."""
    if ms is None:
        return "?"
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, ValueError, OSError):
        return "?"


def _status(view: SetView) -> str:
    n, have = view.required, len(view.minutes)
    if n is None:
        return f"{have} run(s); the rules name no run count"
    if have < n:
        return f"{have} of {n} runs: {n - have} more needed"
    assert view.window is not None
    return f"{have} runs, N = {n}: the rules take {view.window.why(have)}"


def write_text(reader: Reader, out: IO[str]) -> None:
    sets, total = views(reader)
    out.write(f"{total} ledger entries, {len(sets)} run set(s)\n")
    for key, i, e in runs(reader):
        view = sets[key]
        if i == 0:
            out.write(f"\n{inert(view.label)}: {_status(view)}\n")
            mean, fastest = view.rcp
            if mean is not None and fastest is not None:
                unit = inert(benchmarks.unit(view.benchmark))
                out.write(f"  RCP window: fastest allowed {convergence_text(fastest, unit)}, "
                          f"RCP mean {convergence_text(mean, unit)}\n")
            if view.risk is not None:
                out.write(f"  risk: {view.risk.words(benchmarks.unit(view.benchmark))}\n")
        shown, conv = _time_cells(e)
        out.write(f" {'*' if view.marked(i) else ' '}{i:3d} {start_text(e.run_start_ms)}  {shown:>11}  {conv:<24} "
                  f"{e.verdict:<4} {e.sha256[:12]} {inert(e.shown)}\n")


def _time_cells(e: LedgerEntry) -> tuple[str, str]:
    """A run's minutes and its epochs or samples to converge as the text and HTML tables show them: a run that
    did not converge says so (never a bare None)."""
    shown = f"{e.minutes:.2f} min" if e.minutes is not None else "-"
    conv = convergence_text(e.to_converge, inert(e.unit)) if e.to_converge is not None else "did not converge"
    return shown, conv


def _inert_entry(e: LedgerEntry) -> dict[str, object]:
    return {k: inert(v) if isinstance(v, str) else v for k, v in e.to_dict().items()}


def write_json(reader: Reader, out: IO[str]) -> None:
    """{"runs": [every entry, oldest first], "sets": [...], "left_out": [rows that are no entry]}, written as
    it is read; every text inert."""
    sets, _ = views(reader)
    out.write('{"runs": [')
    for k, e in enumerate(reader.entries()):
        out.write(("," if k else "") + "\n  " + json.dumps(_inert_entry(e), allow_nan=False))
    out.write('\n], "sets": [')
    current = None
    for key, i, e in runs(reader):
        if key != current:
            head = json.dumps(sets[key].to_dict(), allow_nan=False)[:-1] + ', "runs": ['
            out.write(("]}," if current is not None else "") + "\n  " + head)
            current = key
        out.write(("," if i else "") + json.dumps(e.sha256))
    out.write(("]}" if current is not None else "") + '\n], "left_out": ')
    out.write(json.dumps([{"row": i, "why": why} for i, why in sorted(reader.left_out.items())]) + "}\n")


_CSV_HEAD = ("system", "benchmark", "division", "run", "median_window", "start_utc", "minutes", "to_converge",
             "unit", "verdict", "seed", "sha256", "file", "first_seen")


def write_csv(reader: Reader, out: IO[str]) -> None:
    """One row per run of each set, in start order; every text a spreadsheet shows as text."""
    sets, _ = views(reader)
    table = csv.writer(out, lineterminator="\n")
    table.writerow(_CSV_HEAD)
    for key, i, e in runs(reader):
        texts = (e.system, e.benchmark, e.division)
        numbers = (i, "yes" if sets[key].marked(i) else "", start_text(e.run_start_ms), e.minutes, e.to_converge)
        table.writerow([spreadsheet_cell(t) for t in texts] + ["" if v is None else v for v in numbers]
                       + [spreadsheet_cell(t) for t in (e.unit, e.verdict)] + ["" if e.seed is None else e.seed]
                       + [spreadsheet_cell(t) for t in (e.sha256, e.shown, e.first_seen)])


def _risk_html(view: SetView) -> str:
    """The set's risk in words and as a histogram of the final score over the passing draws."""
    risk = view.risk
    if risk is None:
        return ""
    unit = benchmarks.unit(view.benchmark)
    marks = [] if risk.score is None else [("10 %", risk.score[0]), ("median", risk.score[1]),
                                           ("90 %", risk.score[2])]
    title = (f"final score once {risk.required} runs are in: P(RCP fail) {percent(risk.p_fail, risk.certain)}, "
             f"P(normalised) {percent(risk.p_normalised, risk.certain)}")
    if risk.runs >= risk.required:  # the verdict itself: nothing to draw
        return f'<p class="risk">{esc(risk.words(unit))}</p>'
    return (f'<p class="risk">{esc(risk.words(unit))}</p>'
            + histogram(risk.histogram, marks, title, "final score (minutes, after normalisation), passing draws"))


_STYLE = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;"
          "border-bottom:1px solid #ddd;text-align:left}tr.window{background:#fbeec8}"
          "p.risk{max-width:60em}svg{display:block;margin:1em 0}")
_ROW_HEAD = ("<table><tr><th>#</th><th>start (UTC)</th><th>minutes</th><th>to converge</th><th>verdict</th>"
             "<th>seed</th><th>sha256</th><th>file</th><th>first seen</th></tr>")


def _set_head(view: SetView) -> str:
    unit = benchmarks.unit(view.benchmark)
    return (f"<h2>{esc(view.label)}</h2><p>{esc(_status(view))}</p>"
            + run_chart(view.converged_only(view.to_converge), [("RCP mean", view.rcp[0]),
                        ("fastest allowed", view.rcp[1])], f"{unit} to converge, by start time", unit, view.shade())
            + run_chart(view.converged_only(view.trained), [], "time to train, by start time", "minutes",
                        view.shade())
            + _risk_html(view) + _ROW_HEAD)


def write_html(reader: Reader, out: IO[str]) -> None:
    sets, total = views(reader)
    out.write('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" '
              "content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>mlsubmit run ledger</title>"
              f"<style>{_STYLE}</style></head><body><h1>Run ledger</h1><p>{total} entries, {len(sets)} run set(s)</p>")
    started = False
    for key, i, e in runs(reader):
        view = sets[key]
        if i == 0:
            out.write(("</table>" if started else "") + _set_head(view))
            started = True
        cls = ' class="window"' if view.marked(i) else ""
        shown, conv = _time_cells(e)
        seed = "-" if e.seed is None else e.seed
        out.write(f"<tr{cls}><td>{i}</td><td>{esc(start_text(e.run_start_ms))}</td><td>{esc(shown)}</td>"
                  f"<td>{esc(conv)}</td><td>{esc(e.verdict)}</td><td>{esc(seed)}</td>"
                  f"<td>{esc(e.sha256[:16])}</td><td>{esc(e.shown)}</td><td>{esc(e.first_seen)}</td></tr>")
    out.write(("</table>" if started else "") + "</body></html>\n")


WRITERS: dict[str, Callable[[Reader, IO[str]], None]] = {
    "text": write_text, "json": write_json, "csv": write_csv, "html": write_html}
