"""The closed hyperparameter tables of a round's training_rules.adoc, read as text (never run): every row of the
AsciiDoc tables under §Hyperparameters and §Deprecated benchmarks hyperparameters whose header names Model, Name
and Constraint, with its line. The side tables of batch size -> learning rate have other headers and are skipped
here; `mlsubmit rounds draft` (draft.py) carries their rows from the previous round when their text is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

MAIN_SECTION = "Hyperparameters"
_SECTIONS = (MAIN_SECTION, "Deprecated benchmarks hyperparameters")
_MARK = "$$*$$"  # how the documents write an asterisk in a name (one per asterisk)
_COLUMNS = ("model", "optimizer", "name", "constraint")


@dataclass(frozen=True)
class Row:
    """One row of a hyperparameter table: its cells as written, the name without its asterisks."""

    line: int
    section: str  # the heading the table sits under
    model: str
    optimizer: str
    name: str
    marks: str  # "", "*" or "**"
    constraint: str

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """What says two rounds' rows are the same row with the same text."""
        return self.model, self.optimizer, self.name, self.marks, " ".join(self.constraint.split())


def split_name(cell: str) -> tuple[str, str]:
    """A Name cell -> (name, asterisks): `label smoothing$$*$$$$*$$` -> ("label smoothing", "**")."""
    text = cell.replace(_MARK, "*").strip()
    name = text.rstrip("*").strip()
    return name, "*" * (len(text) - len(text.rstrip("*")))


def _cells(text: str) -> list[str]:
    return [c.strip() for c in text.split("|")[1:]]


def heading(text: str) -> tuple[int, str] | None:
    """(level, title) of a section heading (`== Title`), None for any other line. Read without a regular expression:
    a lazy title before optional trailing spaces looked for the line's end from each position, quadratic (`= x`,
    60,000 spaces and `y` took 37 s)."""
    level = len(text) - len(text.lstrip("="))
    if level == 0 or not text[level:level + 1].isspace():
        return None
    return level, text[level:].strip()


def _sections(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first, end, heading) of each section whose tables are read, by 0-based line index."""
    levels = [heading(text) for text in lines]
    out: list[tuple[int, int, str]] = []
    for i, found in enumerate(levels):
        if found and found[1] in _SECTIONS:
            level = found[0]
            end = next((j for j in range(i + 1, len(lines)) if (h := levels[j]) and h[0] <= level), len(lines))
            out.append((i, end, found[1]))
    return out


def _tables(lines: list[str], first: int, end: int) -> list[tuple[int, int]]:
    """(first, end) line indexes of the rows of each |=== table in lines[first:end]."""
    fences = [i for i in range(first, end) if lines[i].strip() == "|==="]
    return list(zip(fences[0::2], fences[1::2], strict=False))


def _columns(header: list[str]) -> dict[str, int] | None:
    names = [h.strip().lower() for h in header]
    if not all(c in names for c in ("model", "name", "constraint")):
        return None
    return {c: names.index(c) for c in _COLUMNS if c in names}


def read_rows(text: str) -> list[Row]:
    """Every row of the hyperparameter tables, in document order. A row whose cells continue on the next lines is
    joined (its line is its first)."""
    lines = text.splitlines()
    rows: list[Row] = []
    for first, end, section in _sections(lines):
        for start, stop in _tables(lines, first, end):
            rows.extend(_table_rows(lines, start, stop, section))
    return rows


def _table_rows(lines: list[str], start: int, stop: int, section: str) -> list[Row]:
    parts: list[tuple[int, list[str]]] = []  # each row's line and its text line by line (joined once: linear)
    for i in range(start + 1, stop):
        text = lines[i].strip()
        if text.startswith("|"):
            parts.append((i + 1, [text]))
        elif text and parts:
            parts[-1][1].append(text)
    pieces = [(line, " ".join(texts)) for line, texts in parts]
    if not pieces:
        return []
    columns = _columns(_cells(pieces[0][1]))
    if columns is None:
        return []
    rows = []
    for line, row_text in pieces[1:]:
        cells = _cells(row_text)
        if len(cells) <= max(columns.values()):
            continue
        name, marks = split_name(cells[columns["name"]])
        rows.append(Row(line, section, cells[columns["model"]], cells[columns["optimizer"]]
                        if "optimizer" in columns else "", name, marks, cells[columns["constraint"]]))
    return rows
