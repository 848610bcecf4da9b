"""Assemble the report from one check run: a score per system × benchmark, with system facts and prices.

Everything comes from the facts and findings `run_check` produced; no log is read again (the reference summarizer
reads each log four times). System files and prices are small and read here, read-only.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlsubmit import __version__
from mlsubmit.checker.discover import LogRef, OrgTree
from mlsubmit.checker.facts import LogFacts
from mlsubmit.checker.pipeline import CheckRun
from mlsubmit.findings import Finding
from mlsubmit.report.inputs import (
    PRICES_FILE,
    Price,
    PriceBook,
    SystemFacts,
    performance_per_price,
    read_system,
    tree_prices,
)
from mlsubmit.report.scoring import RcpOutcome, Score, build_score, committed_scaling, run_result

PPP_UNIT = "time-to-train runs per hour per million {currency} of list price (estimate)"


@dataclass(frozen=True)
class ResultRow:
    score: Score
    system: SystemFacts | None
    price: Price | None

    @property
    def perf_per_price(self) -> float | None:
        return performance_per_price(self.score.time_to_train_minutes, self.price)


@dataclass
class ReportData:
    ruleset: str
    rows: list[ResultRow] = field(default_factory=list)
    systems: list[SystemFacts] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    @property
    def has_prices(self) -> bool:
        return any(r.perf_per_price is not None for r in self.rows)

    def benchmarks(self) -> list[str]:
        return sorted({r.score.benchmark for r in self.rows})


def _division(system: SystemFacts | None, facts: Sequence[LogFacts]) -> str | None:
    """The system description's division (what the reference uses), else the one most logs state."""
    if system is not None and system.readable and system.get("division"):
        return system.get("division")
    stated = Counter(f.division for f in facts if f.division)
    return stated.most_common(1)[0][0] if stated else None


def _score(
    refs: Sequence[LogRef], run: CheckRun, *, system_id: str, benchmark: str, system: SystemFacts | None, ruleset: str
) -> Score:
    facts = [run.results[r.display].facts for r in refs]
    runs = [
        run_result(r.display, run.results[r.display].facts, run.report.files.get(r.display, []), benchmark)
        for r in refs
    ]
    division = _division(system, facts)
    rcp = RcpOutcome(status="")
    if division == "closed":  # the reference checks RCPs only for an exact "closed" (rules-spec §1.2)
        from mlsubmit.report.rcp_scaling import evaluate

        rcp = evaluate(benchmark, ruleset, facts)
    return build_score(
        system=system_id,
        benchmark=benchmark,
        division=division,
        runs=runs,
        facts=facts,
        rcp=rcp,
        committed=committed_scaling(refs[0].path.parent),
    )


def _org_systems(org: OrgTree) -> dict[str, SystemFacts]:
    folder = org.sub("systems")
    if not folder.is_dir():
        return {}
    out = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name.endswith(".json"):
            facts = read_system(path, org.shown("systems", path.name))
            out[facts.id] = facts
    return out


def _groups(refs: Iterable[LogRef], key: Any) -> dict[tuple[str, str], list[LogRef]]:
    out: dict[tuple[str, str], list[LogRef]] = {}
    for ref in refs:
        out.setdefault(key(ref), []).append(ref)
    return out


def _prices_for(org: OrgTree, given: PriceBook | None, run: CheckRun) -> PriceBook:
    """The tree's prices.toml under the ones given with --prices; a broken tree file becomes a REP finding."""
    book = given or PriceBook()
    path = org.sub(PRICES_FILE)
    if path.is_file():
        found, problem = tree_prices(path, org.shown(PRICES_FILE))
        if problem is not None:
            run.report.add(problem)
        book = book.merged(found)
    return book


def collect(run: CheckRun, ruleset: str, *, prices: PriceBook | None = None) -> ReportData:
    data = ReportData(ruleset=ruleset)
    for org in run.targets.orgs:
        systems = _org_systems(org)
        data.systems.extend(systems.values())
        book = _prices_for(org, prices, run)
        for (system_id, bench), refs in sorted(_groups(org.logs, lambda r: (r.system, r.benchmark)).items()):
            system = systems.get(system_id)
            score = _score(refs, run, system_id=system_id, benchmark=bench, system=system, ruleset=ruleset)
            data.rows.append(ResultRow(score, system, book.lookup(system, system_id)))
    loose = _groups(run.targets.loose_logs, lambda r: (os.path.dirname(r.display), _benchmark(run, r)))
    for (_folder, bench), refs in sorted(loose.items()):
        platform = run.results[refs[0].display].facts.value("submission_platform")
        system_id = platform if isinstance(platform, str) and platform else "unknown"
        score = _score(refs, run, system_id=system_id, benchmark=bench, system=None, ruleset=ruleset)
        data.rows.append(ResultRow(score, None, (prices or PriceBook()).lookup(None, system_id)))
    data.findings = run.report.all_findings()
    data.rows.sort(key=lambda r: (r.score.division != "closed", r.score.division or "", r.score.benchmark,
                                  r.score.system))
    return data


def _benchmark(run: CheckRun, ref: LogRef) -> str:
    return run.results[ref.display].facts.benchmark or "unknown"


def result_dict(row: ResultRow) -> dict[str, Any]:
    s = row.score
    out: dict[str, Any] = {
        "system": s.system,
        "benchmark": s.benchmark,
        "division": s.division,
        "time_to_train_minutes": s.time_to_train_minutes,
        "olympic_minutes": s.olympic_minutes,
        "scaling_factor": s.scaling_factor,
        "rcp": {"status": s.rcp.status, "message": s.rcp.message},
        "samples_to_converge": s.samples_to_converge,
        "runs_counted": s.counted_runs,
        "notes": list(s.notes),
        "system_facts": row.system.to_dict() if row.system and row.system.readable else None,
    }
    if row.price is not None:
        out["price"] = row.price.to_dict()
        ppp = row.perf_per_price
        if ppp is not None:
            unit = PPP_UNIT.format(currency=row.price.currency)
            out["performance_per_price"] = {"value": ppp, "unit": unit, "estimate": True}
    out["runs"] = [r.to_dict() for r in s.runs]
    return out


def to_json(data: ReportData) -> dict[str, Any]:
    counts = Counter(f.severity.value for f in data.findings)
    return {
        "tool": {"name": "mlsubmit", "version": __version__, "ruleset": data.ruleset, "command": "report"},
        "results": [result_dict(r) for r in data.rows],
        "findings": {k: counts.get(k, 0) for k in ("error", "warning", "info")},
    }
