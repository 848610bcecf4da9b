"""The results table as text, CSV, Markdown or JSON; the HTML page lives in html.py.

One row per system × benchmark. With price rules, each row also has its price (or "none"), its performance per
price and its ratio to the baseline, and text and Markdown add the per-dollar comparison with its method; CSV has
no place for prose, so it names the time used in a column (docs/report.md).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from typing import TextIO

from mlsubmit.core.support.display_escape import spreadsheet_cell
from mlsubmit.report.compare import Comparison
from mlsubmit.report.data import ReportData, ResultRow, to_json

HEADERS = ("division", "benchmark", "system", "minutes", "runs", "rcp", "scaling", "accelerators",
           "host_processors", "framework")  # fmt: skip
PPP_HEADER = "perf_per_price_estimate"
PRICE_HEADERS = ("price", PPP_HEADER, "vs_baseline")
ENERGY_HEADER = "energy_joules"  # the summarizer's <benchmark>:Energy, present when some result has power logs
ENERGY_KWH = "energy_kwh"  # the same energy as a reader takes it in, in the text table and the HTML page
JOULES_PER_KWH = 3.6e6
NUMERIC = frozenset({"minutes", "scaling", "price", PPP_HEADER, "vs_baseline", ENERGY_HEADER, ENERGY_KWH})
MINUTES_NOTE = "minutes: RCP-scaled (the olympic mean times the RCP factor: the round's score)"
ENERGY_NOTE = (f"{ENERGY_HEADER}: energy to train from the power/ logs (node and switch logs summed per run), "
               "mean over the runs the score keeps, times the scaling factor")


def _fmt(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _count_and_model(count: int | None, model: str) -> str:
    if count is None:
        return model
    return f"{count} x {model}" if model else str(count)


def _price_cells(data: ReportData, row: ResultRow, digits: int, display: bool) -> list[str]:
    ppp, relative = data.per_dollar(row)
    if row.price is None:
        return ["none", "no price", ""]
    price = f"{row.price.amount:,.0f}" if display else f"{row.price.amount:.0f}"
    if ppp is None:
        return [price, "no score", ""]
    ratio = _fmt(relative, digits) if relative is not None else "no baseline"
    return [price, _fmt(ppp, digits), ratio]


def _energy_cell(row: ResultRow, digits: int, display: bool) -> str:
    joules = row.energy.joules if row.energy else None
    if joules is None or not display:
        return _fmt(joules, digits)
    return f"{joules / JOULES_PER_KWH:,.{digits}f}"


def cells(row: ResultRow, *, digits: int, data: ReportData, display: bool = False) -> list[str]:
    """`display`: for a reader (text, HTML): thousands separators and energy in kWh; else machine-readable."""
    s, sysf = row.score, row.system
    values = [
        s.division or "",
        s.benchmark,
        s.system,
        _fmt(s.time_to_train_minutes, digits),
        f"{s.counted_runs}/{len(s.runs)}",
        s.rcp.status,
        f"{s.scaling_factor:.4f}",
        _count_and_model(sysf.accelerators, sysf.get("accelerator_model_name")) if sysf else "",
        _count_and_model(sysf.host_processors, sysf.get("host_processor_model_name")) if sysf else "",
        sysf.get("framework") if sysf else "",
    ]
    if data.has_prices:
        values.extend(_price_cells(data, row, digits, display))
    if data.has_energy:
        values.append(_energy_cell(row, digits, display))
    return values


def headers(data: ReportData, *, display: bool = False) -> list[str]:
    energy = [ENERGY_KWH if display else ENERGY_HEADER] if data.has_energy else []
    return [*HEADERS, *(PRICE_HEADERS if data.has_prices else ()), *energy]


def price_note(comparison: Comparison) -> str:
    return f"method: {comparison.method()}"


def comparison_lines(comparison: Comparison, digits: int = 2) -> list[str]:
    """The per-dollar comparison in words, one line per benchmark × division and one per system."""
    out = []
    basis = "unscaled" if comparison.time_basis == "olympic" else "RCP-scaled"  # which minutes the figure used
    for group in comparison.groups:
        head = f"{group.division or '?'} {group.benchmark}: "
        head += f"baseline {group.baseline}" if group.baseline else "no baseline"
        out.append(head + (f" ({group.note})" if group.note and group.baseline else ""))
        for e in sorted(group.entries, key=lambda e: -(e.relative or e.per_dollar or -1.0)):
            if e.per_dollar is None:
                out.append(f"  {e.system}: {e.note}")
                continue
            ratio = f"{e.relative:.{digits}f}x baseline; " if e.relative is not None else ""
            price = f"{e.price.amount:,.0f} {e.price.currency} {e.price.basis}" if e.price else ""
            out.append(f"  {e.system}: {ratio}{e.per_dollar:.{digits}f} runs/h per million {comparison.currency}; "
                       f"{e.minutes or 0:.2f} min {basis}; {price}")  # fmt: skip
    return out


def _printable(text: str) -> str:
    """Control characters from names in the tree (ANSI escapes, CR) must not reach the terminal."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def write_text(data: ReportData, stream: TextIO) -> None:
    head = headers(data, display=True)
    rows = [[_printable(c) for c in cells(r, digits=2, data=data, display=True)] for r in data.rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    for line in [head, *rows]:
        stream.write("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n")
    stream.write(MINUTES_NOTE + "\n")
    for r in data.rows:
        for note in [*r.score.notes, *([r.energy.note] if r.energy and r.energy.note else [])]:
            stream.write(_printable(f"note: {r.score.system}/{r.score.benchmark}: {note}") + "\n")
    if data.comparison is not None:
        stream.write("\nperformance per dollar\n")
        for text in comparison_lines(data.comparison):
            stream.write(_printable(text) + "\n")
        stream.write(price_note(data.comparison) + "\n\n")
    if data.has_energy:
        stream.write(ENERGY_NOTE.replace(ENERGY_HEADER, f"{ENERGY_KWH} (1 kWh = 3.6 MJ)") + "\n")
    counts = to_json(data)["findings"]
    stream.write(
        f"{len(data.rows)} result(s); findings: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['info']} info (run `mlsubmit check` for the list)\n"
    )


def write_csv(data: ReportData, stream: TextIO) -> None:
    writer = csv.writer(stream, lineterminator="\n")
    time = [data.comparison.time_basis] if data.comparison else []
    writer.writerow([*headers(data), *(["ppp_time"] if time else [])])
    for r in data.rows:  # values from the tree (system ids, frameworks) never become formulas or control codes
        writer.writerow([spreadsheet_cell(c) for c in cells(r, digits=4, data=data) + time])


def _md(text: str) -> str:
    """Table cells: escape what Markdown would read as structure or markup (input is untrusted)."""
    out = _printable(text).replace("\\", "\\\\")
    for ch in "|*_`[]<>#":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def write_markdown(data: ReportData, stream: TextIO) -> None:
    head = headers(data)
    stream.write("| " + " | ".join(head) + " |\n")
    stream.write("|" + "|".join("---:" if h in NUMERIC else "---" for h in head) + "|\n")
    for r in data.rows:
        stream.write("| " + " | ".join(_md(c) for c in cells(r, digits=2, data=data)) + " |\n")
    if data.comparison is not None:
        stream.write("\n**Performance per dollar**\n\n")
        for line in comparison_lines(data.comparison):
            stream.write(("  - " if line.startswith("  ") else "- ") + _md(line.strip()) + "\n")
        stream.write("\n" + _md(price_note(data.comparison)) + "\n")


def write_json(data: ReportData, stream: TextIO) -> None:
    json.dump(to_json(data), stream, indent=2)
    stream.write("\n")


WRITERS: dict[str, Callable[[ReportData, TextIO], None]] = {
    "text": write_text,
    "json": write_json,
    "csv": write_csv,
    "markdown": write_markdown,
}
