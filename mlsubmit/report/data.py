"""Assemble the report from one check run: a score per system × benchmark, with system facts and prices.

Everything comes from the facts and findings `run_check` produced; no log is read again (the reference summarizer
reads each log four times). System files and prices are small and read here, read-only.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from mlsubmit import __version__
from mlsubmit.checker import CheckRun, LogFacts, LogRef, OrgTree, mlperf_logging_version
from mlsubmit.checker.rounds.division import reference_closed, scored_division
from mlsubmit.checker.tree import rcp_evidence
from mlsubmit.core.findings import Finding
from mlsubmit.report.compare import Comparison, compare
from mlsubmit.report.inputs import (
    PRICES_FILE,
    Price,
    PriceBook,
    SystemFacts,
    read_system,
    tree_prices,
)
from mlsubmit.report.rcp_scaling import evaluate
from mlsubmit.report.scored_energy import EnergyResult, result_energy
from mlsubmit.report.scoring import RcpOutcome, Score, build_score, committed_scaling, run_result

PPP_UNIT = "time-to-train runs per hour per million {currency} of list price (estimate)"


@dataclass(frozen=True)
class ResultRow:
    score: Score
    system: SystemFacts | None
    price: Price | None
    no_price: str = ""  # why a row has no price, when prices were given
    energy: EnergyResult | None = None  # only for results folders with power/ logs


@dataclass
class ReportData:
    ruleset: str
    rows: list[ResultRow] = field(default_factory=list)
    systems: list[SystemFacts] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    comparison: Comparison | None = None  # present when some price rule was given
    evidence: list[Any] = field(default_factory=list)  # checker rcp_evidence.Evidence of each RCP-bypassed folder

    @property
    def has_prices(self) -> bool:
        return self.comparison is not None

    def per_dollar(self, row: ResultRow) -> tuple[float | None, float | None]:
        """The row's performance per price and its ratio to its group's baseline."""
        entry = self.comparison.entry(row.score.system, row.score.benchmark, row.score.division) \
            if self.comparison else None
        return (entry.per_dollar, entry.relative) if entry else (None, None)

    @property
    def has_energy(self) -> bool:
        return any(r.energy is not None for r in self.rows)

    def benchmarks(self) -> list[str]:
        return sorted({r.score.benchmark for r in self.rows})


def _division(system: SystemFacts | None, facts: Sequence[LogFacts]) -> str | None:
    """The division the result is scored in (checker.division.scored_division: the system file's, else the logs')."""
    written = system.get("division") if system is not None and system.readable else None
    return scored_division(written if isinstance(written, str) else None, facts)


def _score(
    refs: Sequence[LogRef], run: CheckRun, *, system_id: str, benchmark: str, system: SystemFacts | None, ruleset: str
) -> Score:
    facts = [run.results[r.display].facts for r in refs]
    runs = [
        run_result(r.display, run.results[r.display].facts, run.report.files.get(r.display, []), benchmark, ruleset)
        for r in refs
    ]
    division = _division(system, facts)
    rcp = RcpOutcome(status="")
    if reference_closed(division):  # the reference checks RCPs only for an exact "closed" (rules-spec §1.2)

        rcp = evaluate(benchmark, ruleset, facts)
    return build_score(
        system=system_id,
        benchmark=benchmark,
        division=division,
        runs=runs,
        facts=facts,
        rcp=rcp,
        committed=committed_scaling(refs[0].path.parent),
        ruleset=ruleset,
    )


def _org_systems(org: OrgTree) -> dict[str, SystemFacts]:
    folder = org.sub("systems")
    if not folder.is_dir():
        return {}
    out = {}
    try:
        listing = sorted(folder.iterdir())
    except OSError:  # unreadable: the check's TREE048 says so; the report shows no system facts
        return {}
    for path in listing:
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


def _priced(score: Score, system: SystemFacts | None, book: PriceBook, energy: EnergyResult | None = None) -> ResultRow:
    found = book.resolve(system, score.system)
    if isinstance(found, Price):
        return ResultRow(score, system, found, "", energy)
    return ResultRow(score, system, None, found, energy)


def collect(
    run: CheckRun,
    ruleset: str,
    *,
    prices: PriceBook | None = None,
    baseline: str | None = None,
    time_basis: str = "olympic",
) -> ReportData:
    data = ReportData(ruleset=ruleset)
    books = []
    for org in run.targets.orgs:
        systems = _org_systems(org)
        data.systems.extend(systems.values())
        book = _prices_for(org, prices, run)
        books.append(book)
        for (system_id, bench), refs in sorted(_groups(org.logs, lambda r: (r.system, r.benchmark)).items()):
            system = systems.get(system_id)
            score = _score(refs, run, system_id=system_id, benchmark=bench, system=system, ruleset=ruleset)
            energy = result_energy(score, {r.display: r.path for r in refs})
            data.rows.append(_priced(score, system, book, energy))
            data.evidence += _bypassed(org, refs, run, score, ruleset)
    loose = _groups(run.targets.loose_logs, lambda r: (os.path.dirname(r.display), _benchmark(run, r)))
    for (_folder, bench), refs in sorted(loose.items()):
        platform = run.results[refs[0].display].facts.value("submission_platform")
        system_id = platform if isinstance(platform, str) and platform else "unknown"
        score = _score(refs, run, system_id=system_id, benchmark=bench, system=None, ruleset=ruleset)
        data.rows.append(_priced(score, None, prices or PriceBook()))
    data.findings = run.report.all_findings()
    data.rows.sort(key=lambda r: (r.score.division != "closed", r.score.division or "", r.score.benchmark,
                                  r.score.system))
    if prices or baseline is not None or any(books):
        currency = next((r.price.currency for r in data.rows if r.price), "USD")
        data.comparison = compare(data.rows, time_basis=time_basis, baseline=baseline, currency=currency)
    return data


def _bypassed(org: OrgTree, refs: Sequence[LogRef], run: CheckRun, score: Score, ruleset: str) -> list[Any]:
    """The evidence "Handling RCP failures" asks for, for a closed folder whose RCP check a bypass switches off."""
    folder = refs[0].path.parent
    scope = rcp_evidence.bypass_scope(folder, org.root, ruleset) if reference_closed(score.division) else None
    if scope is None:
        return []
    facts = [run.results[r.display].facts for r in sorted(refs, key=lambda r: _result_index(r.path.name))]
    shown = org.shown("results", folder.parent.name, folder.name)
    return [rcp_evidence.bypass_evidence(shown, score.system, score.benchmark, ruleset, facts, scope)]


def _result_index(name: str) -> tuple[int, str]:
    stem = name.removesuffix(".txt").rsplit("_", 1)[-1]
    return (int(stem) if stem.isdigit() else 1 << 30, name)


def _evidence_dict(ev: Any) -> dict[str, Any]:
    """An RCP-bypassed folder's evidence as package writes it in rcp_convergence.csv and eval_curves.csv."""
    out = asdict(ev)
    out["normalisation"] = ev.normalisation
    for run in out["runs"]:
        run["curve"] = [list(point) for point in run["curve"]]
    return out


def _benchmark(run: CheckRun, ref: LogRef) -> str:
    return run.results[ref.display].facts.benchmark or "unknown"


def result_dict(row: ResultRow, data: ReportData) -> dict[str, Any]:
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
    elif row.no_price and data.comparison is not None:
        out["price"] = None
        out["price_note"] = row.no_price
    ppp, relative = data.per_dollar(row)
    if row.price is not None and ppp is not None and data.comparison is not None:
        unit = PPP_UNIT.format(currency=row.price.currency)
        out["performance_per_price"] = {"value": ppp, "unit": unit, "estimate": True,
                                        "time": data.comparison.time_basis, "relative_to_baseline": relative}
    out["runs"] = [r.to_dict() for r in s.runs]
    if row.energy is not None:
        out["energy"] = row.energy.to_dict()
        for run in out["runs"]:
            got = row.energy.runs.get(run["path"])
            run["energy_joules"] = got.joules if got is not None else None
    return out


def to_json(data: ReportData) -> dict[str, Any]:
    counts = Counter(f.severity.value if f.waived is None else "waived" for f in data.findings)
    return {
        "tool": {"name": "mlsubmit", "version": __version__, "ruleset": data.ruleset, "command": "report",
                 "mlperf_logging": mlperf_logging_version()},
        "results": [result_dict(r, data) for r in data.rows],
        **({"comparison": data.comparison.to_dict()} if data.comparison else {}),
        **({"rcp_evidence": [_evidence_dict(e) for e in data.evidence]} if data.evidence else {}),
        "findings": {k: counts.get(k, 0) for k in ("error", "warning", "info")}
        | ({"waived": counts["waived"]} if counts.get("waived") else {}),
    }
