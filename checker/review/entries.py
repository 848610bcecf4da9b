"""One entry of a results tree as the review sees it: results/<system>/<benchmark>/ with its runs' facts, its
system description, its scale (accelerators) and its score (the olympic mean of the run times, in minutes).

Everything is read with the checker's own readers (logs.reader + logs.facts, systems.jsonfile,
systems.descriptions.summarize, rounds.benchmarks.olympic_mean); nothing is written.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker.logs.facts import LogFacts, Occurrence, extract
from mlsubmit.checker.logs.input import is_result_log
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.systems.descriptions import summarize
from mlsubmit.checker.systems.jsonfile import JsonDocument, read_json
from mlsubmit.checker.systems.knowledge import knowledge

from mlsubmit.core.errors import UsageError


@dataclass
class Entry:
    folder: Path
    shown: str  # the folder as the user wrote it
    system: str  # the results/<system> folder's name
    runs: list[LogFacts] = field(default_factory=list)
    system_doc: JsonDocument | None = None

    @property
    def first(self) -> LogFacts:
        return self.runs[0]

    @property
    def benchmark(self) -> str:
        return self.first.benchmark or self.folder.name

    @property
    def org(self) -> str | None:
        """The log's submission_org; the tree's folder name where the log left a placeholder (HPE's v5.0 n1
        stable_diffusion logs say SUBMISSION_ORG_PLACEHOLDER)."""
        value = self.first.value("submission_org")
        if isinstance(value, str) and value not in knowledge().log_placeholders:
            return value
        return self.tree.name if self.tree is not None else None

    @property
    def tree(self) -> Path | None:
        """The organisation tree holding the entry (…/<org>/results/<system>/<benchmark>), when laid out so."""
        parent = self.folder.parent.parent
        return parent.parent if parent.name == "results" else None

    @property
    def system_data(self) -> dict[str, Any]:
        doc = self.system_doc
        return doc.data if doc is not None and doc.is_object else {}

    @property
    def accelerators(self) -> int | None:
        return summarize(self.system_data, self.system).accelerators

    @property
    def minutes(self) -> float | None:
        """The entry's score: olympic mean of its converged runs' times (None when too many failed)."""
        times = [t for f in self.runs if f.converged and (t := f.minutes) is not None and math.isfinite(t)]
        return benchmarks.olympic_mean(times, benchmarks.dropped(self.benchmark),
                                       failed=len(self.runs) - len(times))

    def value(self, key: str) -> Occurrence | None:
        return self.first.first.get(key)

    @property
    def system_problem(self) -> str | None:
        """Why the entry's system description cannot be used (None when it can)."""
        doc = self.system_doc
        where = f"systems/{self.system}.json"
        if doc is None:
            return f"no {where} beside the entry"
        return None if doc.is_object else doc_problem(doc, where)


def doc_problem(doc: JsonDocument, where: str) -> str | None:
    """"<where> is not valid JSON" or "<where> is a JSON <type>, not an object"; None for an object."""
    if not doc.decoded:
        return f"{where} is not readable JSON (mlsubmit check says why)"
    if isinstance(doc.data, dict):
        return None
    return f"{where} is a JSON {json_type(doc.data)}, not an object"


def json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), "object")


def log_names(folder: Path) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted((n for n in names if is_result_log(n) and (folder / n).is_file()),
                  key=lambda n: (len(n), n))


def system_doc(tree: Path | None, system: str) -> JsonDocument | None:
    if tree is None:
        return None
    path = tree / "systems" / f"{system}.json"
    return read_json(path, str(path)) if path.is_file() else None


def read_entry(folder: str | Path, *, limit: int | None = None) -> Entry:
    """The entry in `folder` (its first `limit` runs when given); a usage error when it holds no result log."""
    path = Path(folder)
    names = log_names(path)[:limit] if limit else log_names(path)
    if not names:
        raise UsageError(f"{folder}: no result_*.txt logs in this folder (give a results/<system>/<benchmark> "
                         f"folder)")
    entry = Entry(path, str(folder), path.parent.name)
    for name in names:
        entry.runs.append(extract(read_log(path / name, os.path.join(str(folder), name), rcp_lines=False)))
    entry.system_doc = system_doc(entry.tree, entry.system)
    return entry


def entry_folders(tree: Path, benchmark: str) -> list[Path]:
    """results/<system>/<benchmark> folders of an organisation tree, or of every organisation of a round folder."""
    found: list[Path] = []
    for results in (tree / "results", *sorted(tree.glob("*/results"))):
        if results.is_dir():
            found.extend(sorted(p for p in results.glob(f"*/{benchmark}") if p.is_dir()))
    return found


def entry_folders_all(trees: list[Path]) -> list[Path]:
    """Every results/<system>/<benchmark> folder holding result logs, in organisation trees or round folders."""
    found: list[Path] = []
    for tree in trees:
        for results in (tree / "results", *sorted(tree.glob("*/results"))):
            if results.is_dir():
                found.extend(p for p in sorted(results.glob("*/*")) if p.is_dir() and log_names(p))
    return found
