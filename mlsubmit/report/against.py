"""`report --against CHAIR.csv`: our summary beside the one the results chair distributed (mlcommons/training#877).

The chair's file is the result summarizer's OUT.csv (a column per benchmark) or OUT_detailed.csv (six per
benchmark). Rows are matched by `details_url`, which names the submitter and the system file; a result is a
system x benchmark. Numbers are equal when they agree to the precision the chair's cell is printed with, so a
summary rounded by a spreadsheet still matches. Each result that differs or is missing is one finding. A system's
row repeated in the chair's file (a hand-merged summary) is compared row by row, so no repeat hides a result.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.safe_io import read_bounded
from mlsubmit.report.summary import SPEC_COLUMNS, Summary, Table
from mlsubmit.report.summary_files import csv_cell

_LIMIT = 64 << 20  # a round's whole summary is a few hundred KiB


@dataclass(frozen=True)
class ChairRow:
    line: int
    cells: dict[str, str]


@dataclass(frozen=True)
class ChairSummary:
    path: str
    columns: list[str]
    rows: dict[str, list[ChairRow]]  # by details_url, in file order

    @property
    def detailed(self) -> bool:
        return any(c.endswith(":time_to_train") for c in self.columns)


def read_chair(path: Path) -> ChairSummary:
    """The chair's CSV; exit 2 (FatalError) when it cannot be read or is no summary."""
    try:
        text = read_bounded(path, _LIMIT).decode("utf-8-sig")
    except (OSError, ValueError) as exc:
        raise FatalError(f"--against {path}: cannot read it: {exc}") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    try:  # csv.Error: a field over csv's limit (131,072 characters), a NUL in 3.10
        header = next(reader, [])
        if "details_url" not in header or "system" not in header:
            raise FatalError(f"--against {path}: not a result summarizer CSV (no details_url or system column)")
        rows: dict[str, list[ChairRow]] = {}
        start = reader.line_num + 1
        for values in reader:
            cells = dict(zip(header, values, strict=False))
            rows.setdefault(cells.get("details_url", ""), []).append(ChairRow(start, cells))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise FatalError(f"--against {path}: not a CSV the summarizer writes, at line {reader.line_num}: {exc}") \
            from exc
    return ChairSummary(str(path), header, rows)


def _decimals(text: str) -> int | None:
    if "e" in text.lower() or "." not in text:
        return None
    return len(text.split(".", 1)[1])


def same_value(chair: str, ours: str) -> bool:
    """Equal as text, or as numbers to the chair's printed precision."""
    if chair.strip() == ours:
        return True
    try:
        want, have = float(chair), float(ours)
    except ValueError:
        return False
    places = _decimals(chair.strip())
    if places is not None:
        return abs(want - have) <= 0.5 * 10.0**-places * (1 + 1e-9)
    return math.isclose(want, have, rel_tol=1e-9)


def _benchmarks(table: Table) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in table.columns[len(SPEC_COLUMNS) : -2]:
        out.setdefault(name.split(":")[0], []).append(name)
    return out


def _present(cells: dict[str, str], names: Sequence[str]) -> bool:
    return any(cells.get(n, "") != "" for n in names if n.endswith(":time_to_train") or ":" not in n)


def _result(chair: ChairSummary, mine: dict[str, str], url: str, bench: str, names: list[str],
            row: ChairRow | None) -> Finding | None:  # fmt: skip
    system = url.rsplit("/", 1)[-1].removesuffix(".json")
    theirs = row.cells if row is not None else {}
    where = f"{mine.get('submitter') or theirs.get('submitter', '')} {system} {bench}"
    if not _present(mine, names):
        if row is None or not _present(theirs, names):
            return None
        return finding("REP004", chair.path, f"{where}: the chair's summary has a result here, ours none",
                       line=row.line)  # fmt: skip
    if row is None or not _present(theirs, names):
        reason = "no row for the system" if row is None else "an empty cell"
        return finding("REP002", chair.path, f"{where}: our result {_shown(mine, names)} has {reason} in the "
                                             f"chair's summary", line=row.line if row else 1)  # fmt: skip
    wrong = [n for n in [*SPEC_COLUMNS, *names] if n in theirs and not same_value(theirs[n], mine.get(n, ""))]
    if not wrong:
        return None
    detail = "; ".join(f"{n}: chair {theirs[n]!r}, ours {mine.get(n, '')!r}" for n in wrong)
    return finding("REP003", chair.path, f"{where} differs: {detail}", line=row.line)


def _shown(cells: dict[str, str], names: list[str]) -> str:
    time = next((n for n in names if n.endswith(":time_to_train") or ":" not in n), names[0])
    return f"({time} {cells.get(time, '')})"


def _our_rows(table: Table) -> Iterator[tuple[str, dict[str, str]]]:
    for row in table.rows:
        cells = {c: csv_cell(v) for c, v in zip(table.columns, row, strict=True)}
        yield cells["details_url"], cells


def compare_with_chair(summary: Summary, chair: ChairSummary) -> list[Finding]:
    """Every result of ours or the chair's that is missing on the other side or differs (`chair` read first, with
    `read_chair`, so that a file that cannot be read stops the command before anything is checked or written)."""
    table = summary.detailed if chair.detailed else summary.wide
    groups = _benchmarks(table)
    out: list[Finding] = []
    ours = dict(_our_rows(table))
    # a round's summary holds every submitter: only ours are compared
    submitters = {cells.get("submitter") for cells in ours.values()}
    theirs = {url for url, rows in chair.rows.items() if any(r.cells.get("submitter") in submitters for r in rows)}
    for url in sorted(set(ours) | theirs):
        mine = ours.get(url, {})
        for bench, names in groups.items():
            rows: list[ChairRow | None] = [*chair.rows.get(url, [])] or [None]
            for row in rows:
                found = _result(chair, mine, url, bench, names, row)
                if found is not None:
                    out.append(found)
    return out
