"""The chair's summary as the result summarizer's files: OUT.csv, OUT.json, OUT_detailed.csv, OUT_detailed.json.

The summarizer writes its tables through pandas (`to_csv`, then `to_json(orient="records")` read back and
dumped with an indent of 2). The bytes follow from that:

- CSV: a header line, "\\n" line ends, minimal quoting; a missing value is an empty cell, a number in a number
  column is the shortest text that reads back as the same float ("3072.0", "34.48876666666666");
- JSON: a list of objects in column order, missing values null; a float goes through pandas' encoder (ten
  decimals, trailing zeros dropped; "%.10g" outside 1e-15..1e16) and is read back, so it prints as Python
  prints that float; non-ASCII characters are escaped.

`--xlsx` needs pandas' xlsxwriter engine, which mlperf-logging does not install (and its `writer.save()` is gone
from pandas 2); `write_xlsx` writes the same rows, one sheet per division, with openpyxl when it is installed.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.support import atomic
from mlsubmit.core.support.display_escape import inert
from mlsubmit.report.summary import Cell, Summary, Table

_PRECISION = 10  # pandas' default double_precision for to_json


def json_float(value: float) -> float:
    """The float pandas' to_json writes for `value`, as json.loads reads it back."""
    sign = -1.0 if value < 0 else 1.0
    x = abs(value)
    if x > 1e16 - 1 or (x != 0.0 and x < 1e-15):
        return float(f"{value:.{_PRECISION}g}")
    scale = 10.0**_PRECISION
    whole = int(x)
    scaled = (x - whole) * scale
    frac = int(scaled)
    rest = scaled - frac
    if rest > 0.5 or (rest == 0.5 and (frac == 0 or frac & 1)):  # the encoder's own tie rule
        frac += 1
    if frac >= scale:
        frac, whole = 0, whole + 1
    return sign * float(f"{whole}.{frac:0{_PRECISION}d}")


def _json_cell(value: Cell) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else json_float(value)
    return value


def table_json(table: Table) -> str:
    records = [{c: _json_cell(v) for c, v in zip(table.columns, row, strict=True)} for row in table.rows]
    return json.dumps(records, indent=2)


def csv_cell(value: Cell) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def table_csv(table: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([csv_cell(v) for v in row])
    return out.getvalue()


def sibling_file(path: Path, suffix: str) -> Path:
    """OUT.csv -> OUT<suffix> (the summarizer replaces every ".csv" in the path; only the name's is meant)."""
    return path.with_name(path.name[: -len(".csv")] + suffix)


def summary_paths(out: Path) -> dict[str, Path]:
    if not out.name.endswith(".csv") or out.name == ".csv":
        raise UsageError(f"--summary-csv {out}: the name must end in .csv, as the result summarizer's --csv")
    return {"csv": out, "json": sibling_file(out, ".json"), "detailed_csv": sibling_file(out, "_detailed.csv"),
            "detailed_json": sibling_file(out, "_detailed.json")}  # fmt: skip


def _write_text(path: Path, text: str) -> None:
    """Whole files only: written beside the target and renamed over it (a lone surrogate from a system file is
    written as its escape: the reference would stop on it)."""
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise FatalError(f"cannot write {path}: {exc.strerror or exc}") from exc


def write_summary(summary: Summary, out: Path) -> list[Path]:
    """The four files `result_summarizer --csv OUT.csv` writes for a training round; returns their paths."""
    paths = summary_paths(out)
    _write_text(paths["csv"], table_csv(summary.wide))
    _write_text(paths["json"], table_json(summary.wide))
    _write_text(paths["detailed_csv"], table_csv(summary.detailed))
    _write_text(paths["detailed_json"], table_json(summary.detailed))
    return list(paths.values())


_AVAILABILITY = ("Available on-premise", "Available cloud", "Preview", "Research, Development, or Internal (RDI)")
# The system files' spellings of `status` (the summarizer maps them from a config file its package leaves out)
_SPELLINGS = {"onprem": 0, "available": 0, "available on-premise": 0, "cloud": 1, "available cloud": 1,
              "preview": 2, "rdi": 3, "research": 3, "research, development, or internal (rdi)": 3}  # fmt: skip


def availability_section(status: Cell) -> str:
    """The workbook section of a row; a status of no known spelling is a section of its own (no row is lost)."""
    index = _SPELLINGS.get(str(status).strip().lower())
    return _AVAILABILITY[index] if index is not None else str(status)


def xlsx_ready(out: Path) -> Any:
    """openpyxl's Workbook, or a usage error (asked before anything is checked or written): a name not ending in
    .xlsx, or openpyxl not installed."""
    if not out.name.endswith(".xlsx") or out.name == ".xlsx":
        raise UsageError(f"--summary-xlsx {out}: the name must end in .xlsx")
    try:
        from openpyxl import Workbook  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        raise UsageError("--summary-xlsx needs openpyxl: pip install openpyxl (or '/path/to/mlsubmit-clone[xlsx]')") \
            from exc
    return Workbook


def write_xlsx(summary: Summary, out: Path) -> None:
    """The wide table as a workbook: a sheet per division, rows grouped by availability, each with an ID
    `<round>-NNNN` (the summarizer's layout, without its styling)."""
    book = xlsx_ready(out)()  # openpyxl's Workbook
    book.remove(book.active)
    table, index = summary.wide, 0
    at = {name: i for i, name in enumerate(table.columns)}
    for division in ("closed", "open"):
        sheet = book.create_sheet(division)
        sheet.append(["ID", *table.columns])
        rows = [r for r in table.rows if r[at["division"]] == division]
        sections = dict.fromkeys([*_AVAILABILITY, *(availability_section(r[at["availability"]]) for r in rows)])
        for name in sections:
            section = [r for r in rows if availability_section(r[at["availability"]]) == name]
            if section:
                _append(sheet, [name])
            for row in section:
                _append(sheet, [f"{summary.ruleset[:3]}-{index:04}", *row])
                index += 1
    try:
        with atomic.replacing(out, binary=True) as stream:
            book.save(stream)
    except OSError as exc:
        raise FatalError(f"cannot write {out}: {exc.strerror or exc}") from exc


def _append(sheet: Any, row: list[Any]) -> None:
    """A row of text from the tree as text: control characters (which a workbook cannot hold) shown as escapes, and
    a value starting with '=' kept a string, never a formula the chair's spreadsheet would evaluate."""
    sheet.append([inert(v) if isinstance(v, str) else v for v in row])
    for cell in sheet[sheet.max_row]:
        if isinstance(cell.value, str) and cell.data_type == "f":
            cell.data_type = "s"
