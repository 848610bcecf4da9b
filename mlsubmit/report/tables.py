"""The results table as text, CSV, Markdown or JSON; the HTML page lives in html_report.py.

One row per system × benchmark. The performance-per-price column appears only when some row has a price.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from typing import TextIO

from mlsubmit.report.data import PPP_UNIT, ReportData, ResultRow, to_json

HEADERS = ("division", "benchmark", "system", "minutes", "runs", "rcp", "scaling", "accelerators",
           "host_processors", "framework")  # fmt: skip
PPP_HEADER = "perf_per_price_estimate"


def _fmt(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _count_and_model(count: int | None, model: str) -> str:
    if count is None:
        return model
    return f"{count} x {model}" if model else str(count)


def cells(row: ResultRow, *, digits: int, with_price: bool) -> list[str]:
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
    if with_price:
        values.append(_fmt(row.perf_per_price, 2))
    return values


def headers(data: ReportData) -> list[str]:
    return [*HEADERS, PPP_HEADER] if data.has_prices else list(HEADERS)


def _price_note(data: ReportData) -> str:
    currency = next((r.price.currency for r in data.rows if r.price), "USD")
    return f"{PPP_HEADER}: {PPP_UNIT.format(currency=currency)}; list prices from prices.toml, not a quote."


def _printable(text: str) -> str:
    """Control characters from names in the tree (ANSI escapes, CR) must not reach the terminal."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def write_text(data: ReportData, stream: TextIO) -> None:
    head = headers(data)
    rows = [[_printable(c) for c in cells(r, digits=2, with_price=data.has_prices)] for r in data.rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    for line in [head, *rows]:
        stream.write("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n")
    for r in data.rows:
        for note in r.score.notes:
            stream.write(_printable(f"note: {r.score.system}/{r.score.benchmark}: {note}") + "\n")
    if data.has_prices:
        stream.write(_price_note(data) + "\n")
    counts = to_json(data)["findings"]
    stream.write(
        f"{len(data.rows)} result(s); findings: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['info']} info (run `mlsubmit check` for the list)\n"
    )


def write_csv(data: ReportData, stream: TextIO) -> None:
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(headers(data))
    for r in data.rows:
        writer.writerow(cells(r, digits=4, with_price=data.has_prices))


def _md(text: str) -> str:
    """Table cells: escape what Markdown would read as structure or markup (input is untrusted)."""
    out = _printable(text).replace("\\", "\\\\")
    for ch in "|*_`[]<>#":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def write_markdown(data: ReportData, stream: TextIO) -> None:
    head = headers(data)
    stream.write("| " + " | ".join(head) + " |\n")
    stream.write("|" + "|".join("---:" if h in ("minutes", "scaling", PPP_HEADER) else "---" for h in head) + "|\n")
    for r in data.rows:
        stream.write("| " + " | ".join(_md(c) for c in cells(r, digits=2, with_price=data.has_prices)) + " |\n")
    if data.has_prices:
        stream.write("\n" + _md(_price_note(data)) + "\n")


def write_json(data: ReportData, stream: TextIO) -> None:
    json.dump(to_json(data), stream, indent=2)
    stream.write("\n")


WRITERS: dict[str, Callable[[ReportData, TextIO], None]] = {
    "text": write_text,
    "json": write_json,
    "csv": write_csv,
    "markdown": write_markdown,
}
