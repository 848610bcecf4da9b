"""`mlsubmit check`: read every log once, run the log-level checks on it, then the tree-level checks.

Log-level checks take a parsed log and return findings; tree-level checks take an organisation tree and the facts
of its logs. Logs are spread over a process pool; the rule files are loaded before the pool forks, so every worker
starts with compiled rules.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker.discover import LogRef, OrgTree, Targets, discover
from mlsubmit.checker.engine import check_records
from mlsubmit.checker.facts import LogFacts, extract
from mlsubmit.checker.logs import ParsedLog, read_log
from mlsubmit.checker.ruleset import get_ruleset

from mlsubmit.findings import Finding, Report
from mlsubmit.progress import tracker

POOL_THRESHOLD = 8  # fewer logs than this are checked in-process: a pool costs more than it saves


@dataclass(frozen=True)
class CheckOptions:
    ruleset: str
    profile: str = "full"  # "full" or "reference" (only what mlperf-logging's package checker checks)
    jobs: int = 0  # 0: one worker per core
    cache_dir: Path | None = None
    changed_since: str | None = None
    strict: bool = False
    hyperparameters: bool = True  # the closed-division table (issue: HP checks)


@dataclass
class LogResult:
    findings: list[Finding]
    facts: LogFacts


LogCheck = Callable[[ParsedLog, CheckOptions], list[Finding]]
OrgCheck = Callable[[OrgTree, dict[str, LogFacts], CheckOptions], list[Finding]]


def _rule_check(log: ParsedLog, options: CheckOptions) -> list[Finding]:
    return check_records(log.records, get_ruleset(options.ruleset), log.path)


def log_checks(options: CheckOptions) -> list[LogCheck]:
    checks: list[LogCheck] = [_rule_check]
    if options.hyperparameters and options.profile == "full":
        from mlsubmit.checker.hyperparameters import check_log as hp_check

        checks.append(hp_check)
    return checks


def org_checks(options: CheckOptions) -> list[OrgCheck]:
    from mlsubmit.checker.systems import check_org as systems_check
    from mlsubmit.checker.tree import check_org as tree_check

    return [systems_check, tree_check]


def check_log_file(ref: LogRef, options: CheckOptions) -> LogResult:
    log = read_log(ref.path, ref.display)
    findings = list(log.findings)
    if log.records:
        for check in log_checks(options):
            findings.extend(check(log, options))
    return LogResult(findings, extract(log))


def _check_one(args: tuple[LogRef, CheckOptions]) -> LogResult:
    return check_log_file(*args)


def check_logs(refs: list[LogRef], options: CheckOptions) -> dict[str, LogResult]:
    get_ruleset(options.ruleset).load_all()  # compile once here, so forked workers inherit it
    jobs = options.jobs or os.cpu_count() or 1
    if jobs == 1 or len(refs) < POOL_THRESHOLD:
        with tracker(len(refs), "checking logs") as advance:  # a bar only on a terminal, after a few seconds
            return {ref.display: _advanced(check_log_file(ref, options), advance) for ref in refs}
    import multiprocessing

    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    chunk = max(1, len(refs) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        results = pool.map(_check_one, [(ref, options) for ref in refs], chunksize=chunk)
        with tracker(len(refs), "checking logs") as advance:  # entered after the workers forked
            return {ref.display: _advanced(res, advance) for ref, res in zip(refs, results, strict=True)}


def _advanced(result: LogResult, advance: Callable[[], None]) -> LogResult:
    advance()
    return result


@dataclass
class CheckRun:
    targets: Targets
    results: dict[str, LogResult] = field(default_factory=dict)
    report: Report = field(default_factory=Report)


def _add_system_files(run: CheckRun, options: CheckOptions) -> None:
    """System descriptions given on their own are checked here; those of org trees are listed (so each shows a
    verdict) and checked with their tree by the systems org check."""
    from mlsubmit.checker.systems import check_system_file, org_system_files

    for sref in run.targets.system_files:
        run.report.add_file(sref.display, check_system_file(sref.path, sref.display, options.ruleset)[1])
    for org in run.targets.orgs:
        for _path, shown in org_system_files(org):
            run.report.add_file(shown)


def run_check(paths: Iterable[str], options: CheckOptions) -> CheckRun:
    targets = discover(list(paths))
    run = CheckRun(targets, report=Report(strict=options.strict))
    if options.hyperparameters and options.profile == "full":  # said once; also loads the HP table before forking
        from mlsubmit.checker.hyperparameters import coverage_findings

        run.report.extend(coverage_findings(options.ruleset))
    refs = targets.all_logs()
    run.results = check_logs(refs, options)
    for ref in refs:
        run.report.add_file(ref.display, run.results[ref.display].findings)
    _add_system_files(run, options)
    for org in targets.orgs:
        facts = {ref.display: run.results[ref.display].facts for ref in org.logs}
        for check in org_checks(options):
            run.report.extend(check(org, facts, options))
    return run
