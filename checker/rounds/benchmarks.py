"""Per-benchmark facts of every training ruleset, from checker/tables/benchmarks.yaml (the one home for them).

Run counts, the olympic drop, the unit a run's convergence is counted in and which benchmarks a ruleset has:
the tree checks, the RCP check's messages, scoring, packaging's run selection and the report all ask here.
A round the installed mlperf-logging knows and the table does not (a new round on its first day) takes its
benchmark list and run counts from the installed release's benchmark_meta (`from_installed` says so).
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Callable, Sequence
from typing import Any

from mlsubmit.checker.upstream import installed

from mlsubmit.core.support.datafiles import load_validated


@functools.cache
def table() -> dict[str, Any]:
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/benchmarks.yaml")
    data: dict[str, Any] = load_validated(entry, "benchmarks.schema.json", what="tables/benchmarks.yaml")
    return data


def _row(benchmark: str) -> dict[str, Any] | None:
    row = table()["benchmarks"].get(benchmark)
    return row if isinstance(row, dict) else None


def allowed(ruleset: str) -> list[str]:
    """The benchmarks of a ruleset: the table's, else the installed release's (empty when neither knows it)."""
    if ruleset in table()["rulesets"]:
        return list(table()["rulesets"][ruleset])
    return list(installed.benchmark_meta().allowed.get(_round(ruleset), ()))


def from_installed(ruleset: str) -> bool:
    """The ruleset's benchmarks come from the installed mlperf-logging, not from our table."""
    return ruleset not in table()["rulesets"] and bool(allowed(ruleset))


def _round(ruleset: str) -> str:
    return ".".join(ruleset.split(".")[:2])


def runs(benchmark: str) -> int | None:
    """How many result logs a results folder of this benchmark holds (the installed release's count for a
    benchmark the table does not know)."""
    row = _row(benchmark)
    return int(row["runs"]) if row else installed.benchmark_meta().runs.get(benchmark)


def dropped(benchmark: str) -> int:
    """Runs the olympic mean drops at each end: as many non-compliant or non-converged runs are tolerated."""
    row = _row(benchmark)
    return int(row["dropped"]) if row else 1


def olympic_mean(values: Sequence[float], drop: int, *, failed: int = 0,
                 mean: Callable[[Sequence[float]], float] | None = None) -> float | None:
    """The olympic mean, the one implementation: the values less the `drop` lowest and `drop` highest, where
    `failed` runs (not in `values`) stand in for highest ones. None when more runs failed than `drop` or nothing
    is left. `mean`: another summation (the reference's numpy order), else the plain one."""
    if failed > drop:
        return None
    kept = sorted(values)[drop : len(values) - (drop - failed)]
    if not kept:
        return None
    return mean(kept) if mean is not None else sum(kept) / len(kept)


def unit(benchmark: str, ruleset: str = "") -> str:
    """What a run's convergence point counts: epochs, samples, tokens or steps (the RCP data's own unit)."""
    row = _row(benchmark)
    if row is None:
        return "epochs"
    return str(row.get("unit_by_ruleset", {}).get(ruleset, row["unit"]))


def has_rcp(benchmark: str) -> bool:
    row = _row(benchmark)
    return bool(row.get("rcp", True)) if row else True
