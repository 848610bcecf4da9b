"""What the rules ask of a submitter whose RCP check is bypassed: evidence, per results folder.

The training rules' "Handling RCP failures" (TR6.0 lines 574-593, the same since 2.0): a submission failing the RCP
test is rejected unless the Submitters' Working Group approves it, and all evidence is due by the end of review week
1; the WG may instead normalise the runs' epochs to the reference's. So for each folder whose RCP check a
`package_checker_params` bypasses, this gathers each run's convergence point against the RCP (its mean, the
fastest the check allows, the olympic mean of the runs, the normalisation the WG would apply) and each run's
evaluation curve, from the same facts and the same RCP verdict the check used. The numbers come from
mlperf-logging's RCP code (checker.rcp), never recomputed here.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rcp.verdict import NOT_CONVERGED, rcp_verdict
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.tree import params as org_params
from mlsubmit.checker.tree.folders import bypass_flags

CONVERGENCE_CSV, CURVES_CSV = "rcp_convergence.csv", "eval_curves.csv"
_X_KEYS = ("epoch_num", "samples_count", "epoch_count")  # where an eval_accuracy record says how far training got


@dataclass(frozen=True)
class RunEvidence:
    name: str  # the result file's name
    seed: Any
    converged: bool
    to_converge: float | None  # epochs or samples (the RCP's unit); None when the run did not converge
    in_mean: bool  # counted by the olympic mean
    curve: tuple[tuple[float | None, float], ...]  # (epoch or samples when the record says, accuracy)


@dataclass(frozen=True)
class Evidence:
    folder: str  # as shown: <org>/results/<system>/<benchmark>
    system: str
    benchmark: str
    scope: str  # where the bypass was written: "benchmark folder", "system folder" or "organisation"
    unit: str
    verdict: str  # the RCP check's own message, as without the bypass
    batch_size: Any
    rcp_mean: float | None
    fastest_allowed: float | None
    submission_mean: float | None
    runs: tuple[RunEvidence, ...]

    @property
    def normalisation(self) -> float | None:
        """RCP mean / the runs' olympic mean: the factor the WG would scale the score by to normalise the runs to
        the reference (1 when the runs are not faster than the RCP mean)."""
        if not self.rcp_mean or not self.submission_mean:
            return None
        return max(1.0, self.rcp_mean / self.submission_mean)


def bypass_scope(folder: Path, org_root: Path, ruleset: str) -> str | None:
    """Where an RCP bypass for this results folder is written as the reference reads it, narrowest first."""
    if "rcp-bypass" in bypass_flags(folder)[0]:
        return "benchmark folder"
    if "rcp-bypass" in bypass_flags(folder.parent)[0]:
        return "system folder"
    if org_params.RCP_BYPASS in org_params.read_org_params(org_root, "", ruleset).flags:
        return "organisation"
    return None


def bypass_evidence(shown: str, system: str, benchmark: str, ruleset: str, facts: list[LogFacts], scope: str
                    ) -> Evidence:
    """The evidence for one bypassed folder; `facts` in result-file order."""
    result = rcp_verdict(benchmark, ruleset, facts, closed=True)  # the verdict without the bypass
    points = {c.path: c for c in result.runs}
    values = []
    for f in facts:
        conv = points.get(f.path)
        values.append(conv.epochs if conv is not None and conv.converged else math.inf)
    counted = _counted(values, benchmarks.dropped(benchmark))
    runs = tuple(
        RunEvidence(name=Path(f.path).name, seed=f.value("seed"), converged=math.isfinite(v),
                    to_converge=v if math.isfinite(v) and v < NOT_CONVERGED else None, in_mean=i in counted,
                    curve=_curve(f))
        for i, (f, v) in enumerate(zip(facts, values, strict=True))
    )  # fmt: skip
    return Evidence(folder=shown, system=system, benchmark=benchmark, scope=scope,
                    unit=benchmarks.unit(benchmark, ruleset), verdict=f"{result.status}: {result.message}",
                    batch_size=result.batch_size, rcp_mean=result.rcp_mean, fastest_allowed=result.min_epochs,
                    submission_mean=result.submission_mean, runs=runs)  # fmt: skip


def _counted(values: list[float], drop: int) -> set[int]:
    """Indexes the olympic mean keeps: all but the `drop` fastest and `drop` slowest (non-converged count slowest)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    return set(order[drop : len(order) - drop]) if len(order) > 2 * drop else set()


def _curve(facts: LogFacts) -> tuple[tuple[float | None, float], ...]:
    out = []
    for occ in facts.all("eval_accuracy"):
        meta = occ.metadata if isinstance(occ.metadata, dict) else {}
        x = next((meta[k] for k in _X_KEYS if isinstance(meta.get(k), (int, float))), None)
        if isinstance(occ.value, (int, float)) and not isinstance(occ.value, bool) and math.isfinite(occ.value):
            out.append((float(x) if x is not None else None, float(occ.value)))
    return tuple(out)


def _number(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.6g}"


def _safe(value: object) -> str:
    """A cell from a log (a seed) cannot start a spreadsheet formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def convergence_csv(ev: Evidence) -> str:
    """One row per run, then the folder's RCP figures (the same on every row, so each row stands alone)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["result_file", "seed", "converged", f"{ev.unit}_to_converge", "in_olympic_mean",
                     "olympic_mean", "rcp_mean", "fastest_allowed", "normalisation_needed", "batch_size",
                     "bypass_written_at", "rcp_check_without_bypass"])  # fmt: skip
    for run in ev.runs:
        writer.writerow([run.name, _safe(run.seed), "yes" if run.converged else "no", _number(run.to_converge),
                         "yes" if run.in_mean else "no", _number(ev.submission_mean), _number(ev.rcp_mean),
                         _number(ev.fastest_allowed), _number(ev.normalisation), _safe(ev.batch_size), ev.scope,
                         _safe(ev.verdict)])  # fmt: skip
    return buf.getvalue()


def curves_csv(ev: Evidence) -> str:
    """Every evaluation of every run: the curve the WG compares with the reference's."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["result_file", "eval_index", "epoch_or_samples", "eval_accuracy"])
    for run in ev.runs:
        for i, (x, y) in enumerate(run.curve):
            writer.writerow([run.name, i, _number(x), f"{y:.6g}"])
    return buf.getvalue()
