"""The results chair's summary: the tables mlperf-logging's result summarizer publishes for a training round.

`result_summarizer ORG training X.Y.Z --csv OUT.csv` writes two tables (4.1.68): a wide one, one row per system
with its time to train per benchmark, and a detailed one with six columns per benchmark (time_to_train, Energy,
GBS, samples_to_converge, RCP, rcp_scaling_factor). The rows come from the system descriptions; the numbers are
our own scores (`report.scoring`, `report.scored_energy`, `report.rcp_scaling`), taken as the summarizer takes them:

- one row per folder under `results/` whose `systems/<folder>.json` reads as JSON and has every field the row
  needs (the summarizer prints and skips the others);
- the RCP, GBS and samples_to_converge columns only where the system file says exactly "closed";
- the scaling factor the summarizer reads from `scaling.json`: the one its package checker settled.

`summary_files` (report/summary_files.py) writes the tables as the summarizer's files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker import CheckRun, LogFacts, OrgTree
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.upstream.npstats import mean as numpy_mean
from mlsubmit.core.support import jsontext, numbers
from mlsubmit.core.support.safe_io import SMALL_FILE, read_bounded
from mlsubmit.report.data import ReportData, ResultRow
from mlsubmit.report.scoring import NOT_CONVERGED, committed_scaling, convergence_point, max_dropped

Cell = str | int | float | None
SPEC_COLUMNS = ("division", "availability", "submitter", "system", "number_of_nodes", "host_processor_model_name",
                "host_processors_count", "accelerator_model_name", "accelerators_count", "framework", "notes",
                "private_id")  # fmt: skip
INT_COLUMNS = frozenset({"host_processors_count", "accelerators_count"})
METRICS = ("time_to_train", "Energy", "GBS", "samples_to_converge", "RCP", "rcp_scaling_factor")
URL_COLUMNS = ("details_url", "code_url")


@dataclass(frozen=True)
class Table:
    """One of the summarizer's tables: its columns and rows, in its order."""

    columns: tuple[str, ...]
    rows: list[tuple[Cell, ...]]
    text_columns: frozenset[str]  # columns of strings (the others hold numbers or nothing)


@dataclass(frozen=True)
class Summary:
    ruleset: str
    wide: Table
    detailed: Table


def round_benchmarks(ruleset: str) -> list[str]:
    return list(dict.fromkeys(benchmarks.allowed(ruleset)))  # the reference's list names stable_diffusion twice in 4.0


def columns(ruleset: str, *, detailed: bool) -> tuple[str, ...]:
    names = round_benchmarks(ruleset)
    per = [f"{b}:{m}" for b in names for m in METRICS] if detailed else names
    return (*SPEC_COLUMNS, *per, *URL_COLUMNS)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = jsontext.loads(read_bounded(path, SMALL_FILE).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


_NEEDED = ("division", "status", "submitter", "system_name", "host_processor_model_name", "number_of_nodes",
           "host_processor_core_count", "host_processors_per_node", "accelerator_model_name",
           "accelerators_per_node", "framework", "hw_notes", "sw_notes")  # fmt: skip


def _framework(text: str) -> str:
    found = re.search(r" commit hash = .*", text) if "TensorFlow" in text else None
    return text.replace(found.group(0), "") if found else text


def spec_cells(desc: Mapping[str, Any], private_id: Any) -> dict[str, Cell] | None:
    """The row's system columns, or None where the summarizer skips the system (a missing field, a count that
    is not an integer)."""
    if any(key not in desc for key in _NEEDED):
        return None
    try:
        nodes = int(desc["number_of_nodes"])
        hosts, accelerators = int(desc["host_processors_per_node"]) * nodes, int(desc["accelerators_per_node"]) * nodes
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(Infinity)
        return None
    if max(abs(nodes), abs(hosts), abs(accelerators)) > numbers.MAX_COUNT:
        return None  # no system's (SYS048); the reference's str() of a product of thousands of digits fails
    name, model = desc["system_name"], desc["accelerator_model_name"]
    tpu = name == "tpu-v3"
    return {
        "division": _text(desc["division"]), "availability": _text(desc["status"]),
        "submitter": _text(desc["submitter"]),
        "system": f"TPUv3.{int(desc['accelerators_per_node']) * 2}" if tpu else _text(name),
        "number_of_nodes": _text(desc["number_of_nodes"]),
        "host_processor_model_name": _text(desc["host_processor_model_name"]), "host_processors_count": hosts,
        "accelerator_model_name": "TPUv3" if model == "tpu-v3" else _text(model), "accelerators_count": accelerators,
        "framework": _framework(desc["framework"]) if isinstance(desc["framework"], str) else _text(desc["framework"]),
        "notes": ";".join(str(s) for s in (desc["hw_notes"], desc["sw_notes"]) if s),
        "private_id": _text(private_id),
    }  # fmt: skip


def url_prefix(ruleset: str) -> str:
    return "https://github.com/mlcommons/training_results_v" + ruleset[:3] + ruleset[3:].replace(".0", "")


def urls(ruleset: str, submitter: Any, system: str) -> dict[str, Cell]:
    prefix = url_prefix(ruleset)
    return {"details_url": f"{prefix}/blob/main/{submitter}/systems/{system}.json",
            "code_url": f"{prefix}/blob/master/{submitter}/benchmarks"}  # fmt: skip


def _folders(path: Path) -> list[Path]:
    try:
        return sorted((p for p in path.iterdir() if p.is_dir()), key=lambda p: p.name)
    except OSError:
        return []


def batch_and_points(facts: Sequence[LogFacts], ruleset: str) -> tuple[float, float | None]:
    """The GBS and samples_to_converge columns: one global batch size for all runs (-1 where they disagree or
    none is logged) and the mean convergence point less the lowest and highest (numpy's summation)."""
    sizes = {_number(f.value("global_batch_size"), -1.0) for f in facts}
    if len(sizes) > 1:
        return -1.0, None
    points = [NOT_CONVERGED if p is None else p for p in (convergence_point(f, ruleset) for f in facts)]
    size = next(iter(sizes), -1.0)
    benchmark = facts[0].benchmark if facts else None
    if sum(p == NOT_CONVERGED for p in points) > max_dropped(benchmark or "") or len(points) < 3:
        return size, None
    kept = sorted(points)[1:-1]
    return size, float(numpy_mean(kept))


def _number(value: Any, default: float) -> float:
    number = numbers.finite(value)  # the files hold finite numbers only (JSON has no Infinity)
    return default if number is None else number


@dataclass(frozen=True)
class _Folder:
    benchmark: str
    path: Path
    row: ResultRow | None
    facts: list[LogFacts]


def _metrics(folder: _Folder, closed: bool, ruleset: str) -> dict[str, Cell]:
    b, row = folder.benchmark, folder.row
    score = row.score if row is not None else None
    factor = score.scaling_factor if score is not None else committed_scaling(folder.path) or 1.0
    out: dict[str, Cell] = {f"{b}:rcp_scaling_factor": float(factor)}
    minutes = score.time_to_train_minutes if score is not None else None
    if minutes is not None:
        out[f"{b}:time_to_train"] = minutes
    if closed and score is not None and score.rcp.status:  # no status: the reference's RCP step raised
        out[f"{b}:RCP"] = score.rcp.status
        size, points = batch_and_points(folder.facts, ruleset)
        out[f"{b}:GBS"] = size
        if points is not None:
            out[f"{b}:samples_to_converge"] = points
    if row is not None and row.energy is not None and row.energy.joules is not None:
        out[f"{b}:Energy"] = row.energy.joules
    return out


def _system_rows(org: OrgTree, run: CheckRun, by_key: Mapping[tuple[str, str], ResultRow],
                 ruleset: str, private_ids: Mapping[tuple[str, str], str]
                 ) -> Iterator[tuple[dict[str, Cell], dict[str, Cell]]]:
    """(wide, detailed) cells of each system of one organisation the summarizer gives a row; `private_ids`: ids
    generated in this run ((org display, system) -> id), which the summarizer shows as it writes them."""
    for system_folder in _folders(org.sub("results")):
        system = system_folder.name
        desc = _load(org.sub("systems", f"{system}.json"))
        if desc is None:
            continue
        private = _load(system_folder / "privateid.json") or {}
        spec = spec_cells(desc, private_ids.get((org.display, system), private.get("private_id", "")))
        if spec is None:
            continue
        wide, detailed = dict(spec), dict(spec)
        for path in _folders(system_folder):
            bench = "maskrcnn" if path.name == "mask" else path.name
            row = by_key.get((system, path.name))
            facts = [run.results[r.display].facts for r in org.logs
                     if r.system == system and r.benchmark == path.name and r.display in run.results]  # fmt: skip
            folder = _Folder(bench, path, row, facts)
            detailed.update(_metrics(folder, desc["division"] == "closed", ruleset))
            minutes = row.score.time_to_train_minutes if row is not None else None
            if minutes is not None:
                wide[bench] = minutes
        link = urls(ruleset, desc["submitter"], system)
        yield {**wide, **link}, {**detailed, **link}


def _sort_key(row: tuple[Cell, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((1, 0) if v is None else (0, v) for v in row)  # pandas' sort_values: missing values last


def _table(cells: list[dict[str, Cell]], names: tuple[str, ...], metric_text: bool) -> Table:
    text = {*SPEC_COLUMNS, *URL_COLUMNS} - INT_COLUMNS
    if metric_text:
        text |= {n for n in names if n.endswith(":RCP")}
    rows = []
    for c in cells:
        values = tuple(c.get(n, "" if n.endswith(":RCP") and metric_text else None) for n in names)
        rows.append(tuple(_typed(n, v, text) for n, v in zip(names, values, strict=True)))
    return Table(columns=names, rows=sorted(rows, key=_sort_key), text_columns=frozenset(text))


def _typed(name: str, value: Cell, text: set[str]) -> Cell:
    if value is None or name in text:
        return value
    return int(value) if name in INT_COLUMNS else float(value)


def build(data: ReportData, run: CheckRun, private_ids: Mapping[tuple[str, str], str] | None = None) -> Summary:
    """Both tables over every organisation the report read (loose logs have no system file: no row)."""
    owner = {ref.display: org.display for org in run.targets.orgs for ref in org.logs}
    wide: list[dict[str, Cell]] = []
    detailed: list[dict[str, Cell]] = []
    for org in run.targets.orgs:
        by_key = {(r.score.system, r.score.benchmark): r for r in data.rows
                  if r.score.runs and owner.get(r.score.runs[0].path) == org.display}  # fmt: skip
        for w, d in _system_rows(org, run, by_key, data.ruleset, private_ids or {}):
            wide.append(w)
            detailed.append(d)
    return Summary(
        ruleset=data.ruleset,
        wide=_table(wide, columns(data.ruleset, detailed=False), metric_text=False),
        detailed=_table(detailed, columns(data.ruleset, detailed=True), metric_text=True),
    )
