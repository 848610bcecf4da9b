"""`mlsubmit check`: read every log once, run the log-level checks on it, then the tree-level checks.

Log-level checks take a parsed log and return findings; tree-level checks take an organisation tree and the facts
of its logs. Logs are spread over a process pool; the rule files are loaded before the pool forks, so every worker
starts with compiled rules.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from mlsubmit.checker.base import pool
from mlsubmit.checker.base.cache import LogCache, context_key
from mlsubmit.checker.base.contract import OrgCheck, PrepareCheck
from mlsubmit.checker.base.options import CheckOptions, CodeTask, Tracker, no_progress
from mlsubmit.checker.base.targets import LogRef, OrgTree, Targets
from mlsubmit.checker.engine.checks import plan as plan_of
from mlsubmit.checker.engine.checks import run_by, stage
from mlsubmit.checker.engine.discover import discover
from mlsubmit.checker.engine.kept_facts import FactsBudget
from mlsubmit.checker.engine.log_checks import hp_keys
from mlsubmit.checker.hygiene import scan as hygiene
from mlsubmit.checker.hygiene.scan import Scanned
from mlsubmit.checker.hyperparameters import table as hp_tables
from mlsubmit.checker.hyperparameters.apply import coverage_findings
from mlsubmit.checker.logs.facts import TREE_KEYS, FactsBuilder, LogFacts
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.logs.sinks import WholeLogReader, fan_out
from mlsubmit.checker.policy.severity import Policy, RunFiles, in_force
from mlsubmit.checker.policy.waiver_pass import WaiverPass
from mlsubmit.checker.rcp.custom import parse as parse_rcps
from mlsubmit.checker.rcp.verdict import answer_for
from mlsubmit.checker.rounds.detect import round_name
from mlsubmit.checker.rules.files import get_ruleset

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Report, Severity
from mlsubmit.core.repeats import capped
from mlsubmit.core.support.safe_io import sha256_file as file_sha256

POOL_THRESHOLD = 8  # fewer logs than this are checked in-process: a pool costs more than it saves


@dataclass
class LogResult:
    findings: list[Finding]
    facts: LogFacts


def org_checks(options: CheckOptions) -> list[OrgCheck]:
    return [c.function() for c in run_by(options, "org")]


def org_preparations(options: CheckOptions) -> list[PrepareCheck]:
    """Work of the org checks that needs no log (system files, RCP statistics), run beside the log checks."""
    return [c.function() for c in run_by(options, "prepare")]


def _lookup(ref: LogRef, options: CheckOptions) -> tuple[str | None, LogResult | None]:
    """(content hash, cached result) when a cache is in use; the hash is kept to store the result after a miss."""
    cache = _cache(options)
    if cache is None:
        return None, None
    try:
        sha = file_sha256(ref.path)
    except OSError:
        return None, None  # unreadable: read_log turns it into a finding
    hit = cache.get(_key(ref, sha), ref.display)
    return sha, LogResult(*hit) if hit is not None else None


def _check_and_store(ref: LogRef, options: CheckOptions, sha: str | None) -> LogResult:
    cache = _cache(options)
    whole = options.facts or cache is not None  # the facts, with the log's hash, are read by someone
    builder = FactsBuilder(TREE_KEYS) if whole else None  # the keys the tree checks read
    whole_log = WholeLogReader(ref.path, ref.display, ref.unpack)
    checks = [c.function() for c in run_by(options, "log")]
    started = [(check, check.start(ref, options, whole_log)) for check in checks]
    log = read_log(ref.path, ref.display, digest=whole, unpack=ref.unpack, rcp_lines=whole,
                   sink=fan_out(builder, *(state for _, state in started)))
    findings = [*log.findings, *(builder.cut(log.path) if builder is not None else [])]
    if log.record_count:
        for check, state in started:  # in the profile's order, each fed as the log was read
            findings = check.finish(state, log, options, findings)
    findings = capped(findings)  # the log's cap over every source together (rule files, HP table, reader)
    facts = builder.facts(log) if builder is not None else LogFacts(path=log.path)
    if whole and facts.division == "closed" and facts.rcp_lines:  # read here, in parallel, not in the main process
        facts.rcp_answer = answer_for(facts, options.ruleset)
    facts.error_codes = tuple(sorted({f.code for f in findings if f.severity is Severity.ERROR}))
    if cache is not None and sha is not None and log.sha256 == sha:  # unchanged while it was read
        cache.put(_key(ref, sha), ref.display, findings, facts)
    return LogResult(findings, facts)


def _key(ref: LogRef, sha: str) -> str:
    """Raw job output is read unpacked, a result file as stored: the same bytes can give two results."""
    return f"{sha}-raw" if ref.unpack else sha


def _cache(options: CheckOptions) -> LogCache | None:
    if options.cache_dir is None:
        return None
    checks = plan_of(options.profile.value).key()
    return LogCache(options.cache_dir, context_key(options.ruleset, checks, tables_key(checks)))


@functools.cache  # asked twice per log; the digest reads every table file
def tables_key(log_checks: str) -> str:
    """The closed tables' digest when the profile's log checks read them, else "": the tables are data, edited
    without a release, and a cache entry made with other tables is a miss."""
    if "hyperparameters" not in log_checks.split(","):
        return ""
    return hp_tables.tables_digest()  # looked up when called: tests give other tables


Task = tuple[LogRef, CheckOptions]  # one log to check, with the options of its round
_R = TypeVar("_R")


def check_jobs(tasks: list[Task], prepare: Callable[[], None], progress: Tracker = no_progress,
               code: Sequence[CodeTask] = (), jobs: int = 0) -> tuple[list[LogResult], list[Scanned]]:
    """One result per (log, options) pair, in order, and one per file of `code` to scan for secrets; logs of
    several rounds and the code share one pool (`jobs` processes, 0: one per core).

    Cached logs are answered in this process (hashing is cheap; a pool is not); the rest are checked.
    `prepare` (tree-level work that needs no log) runs in this process beside the workers when there is a pool;
    without one there is nothing to overlap, and the org checks do that work themselves, only where needed.
    """
    done: dict[int, LogResult] = {}
    todo: list[tuple[int, LogRef, CheckOptions, str | None]] = []
    budget = FactsBudget()  # the facts of all the logs together
    for i, (ref, options) in enumerate(tasks):  # each file is hashed once; a miss carries its hash to its worker
        sha, hit = _lookup(ref, options)
        if hit is not None:
            done[i] = budget.admit(hit)
        else:
            todo.append((i, ref, options, sha))
    scanned: list[Scanned] = []
    if todo or code:
        checked = _check_uncached([t[1:] for t in todo], list(code), prepare, progress, jobs, budget)
        done.update(zip((t[0] for t in todo), checked[: len(todo)], strict=True))
        scanned = checked[len(todo) :]
    return [done[i] for i in range(len(tasks))], scanned


def _check_uncached(todo: list[tuple[LogRef, CheckOptions, str | None]], code: list[CodeTask],
                    prepare: Callable[[], None], progress: Tracker, jobs: int, budget: FactsBudget) -> list[Any]:
    """The logs' results, then the code files' (hygiene.scan_one), from one pool."""
    processes = max((options.jobs for _, options, _ in todo), default=jobs) or os.cpu_count() or 1
    count, label = len(todo) + len(code), "checking logs and code" if code else "checking logs"

    def work(i: int) -> Any:  # _check_and_store is looked up when called: a worker runs what was here at the fork
        return _check_and_store(*todo[i]) if i < len(todo) else hygiene.scan_one(*code[i - len(todo)])

    def keep(i: int, result: Any) -> Any:  # in this process, as each result arrives
        return budget.admit(result) if i < len(todo) else result

    with hygiene.scanning() if code else nullcontext():
        # in-process (also where there is no fork): rule files load as the logs ask for them
        if processes == 1 or count < POOL_THRESHOLD or not hasattr(os, "fork"):
            with progress(count, label) as advance:  # the CLI's bar: on a terminal, after a few seconds
                return [_advanced(keep(i, work(i)), advance) for i in range(count)]
        _before_fork(todo)
        return pool.run_shared(count, work, processes, prepare, progress, label, keep)


def _before_fork(todo: list[tuple[LogRef, CheckOptions, str | None]]) -> None:
    """What each worker would otherwise read for itself, read once here: each round's rule files, HP table and the
    keys it reads (a check in this process reads them as its first log asks)."""
    for options in {options.ruleset: options for _, options, _ in todo}.values():
        plan = plan_of(options.profile.value)
        if plan.runs("rules"):
            get_ruleset(options.ruleset)
        if plan.runs("hyperparameters"):
            hp_keys(options.ruleset)


def _advanced(result: _R, advance: Callable[[], None]) -> _R:
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
    if not (run.targets.system_files or run.targets.orgs):
        return  # logs alone: the system modules (and jsonschema) are not imported
    # jsonschema (the system descriptions) only for an organisation tree (start-up)
    from mlsubmit.checker.systems.agreement import org_system_files, system_changed

    checks = [c.function() for c in run_by(options, "file")]  # the profile's check of a loose file
    for sref in run.targets.system_files:
        run.report.add_file(sref.display, [f for check in checks for f in check(sref.path, sref.display,
                                                                                 options.ruleset)])
    for org in run.targets.orgs:
        for path, shown in org_system_files(org):
            if system_changed(org, path.stem, options):  # --changed-since: only the systems a change concerns
                run.report.add_file(shown)


def _logs_folder(path: str) -> str:
    """The folder whose logs a changed path concerns: for a power log (<bench>/power/result_<i>/node_<j>.txt) the
    results folder above power/, whose runs its checks compare with; else the path's own folder."""
    head, sep, _ = path.rpartition(os.sep + "power" + os.sep)
    return (head if sep else str(Path(path).parent)) + os.sep


def _only_changed(targets: Targets, options: CheckOptions) -> CheckOptions:
    """--changed-since: keep the logs changed since the revision, and every log of a results folder holding a
    change (the folder's counts, seeds and RCP need all its runs; unchanged ones come from the cache when given).
    Organisation trees without a change are dropped."""
    # git only with --changed-since (start-up)
    from mlsubmit.core.support.git import changed_paths

    given = [ref.path for ref in targets.loose_logs] + [org.root for org in targets.orgs]
    changed: set[str] = set()
    for start in {str(Path(p).resolve().parent if Path(p).is_file() else Path(p).resolve()) for p in given}:
        changed |= changed_paths(Path(start), options.changed_since or "HEAD")
    targets.loose_logs = [r for r in targets.loose_logs if str(r.path.resolve()) in changed]
    kept = []
    for org in targets.orgs:
        root = str(org.root.resolve()) + os.sep
        if not any(p.startswith(root) for p in changed):
            continue
        folders = {_logs_folder(p) for p in changed if p.startswith(root)}
        org.logs = [r for r in org.logs if any(str(r.path.resolve()).startswith(f) for f in folders)]
        kept.append(org)
    targets.orgs = kept
    return replace(options, changed_paths=frozenset(changed))


def _judged_sets(run: CheckRun, options: CheckOptions) -> set[str]:
    """A folder of raw job output is gated as the run sets it holds, as a tree's results folders are: its set's
    TREE007 (too many) or TREE008 (accepted) decides, so its runs' own errors are its to judge. The runs so judged."""
    from mlsubmit.checker.tree.runset import judged_runs  # only with raw output: the run sets' checks load numpy

    judged: set[str] = set()
    for raw in run.targets.raw_folders:
        judged |= judged_runs(raw, {r.display: run.results[r.display].facts for r in raw.logs}, options)
    return judged


def _run_files(targets: Targets, own: dict[str, int], judged: set[str], policy: Policy) -> RunFiles:
    """What the policy needs to know of the run's logs to settle their findings in one pass: how many findings are
    each log's own, whose own errors a folder judges (profile run_errors: folder: the logs of trees and the runs of
    judged raw sets), which were checked alone (note_alone)."""
    spec = policy.spec
    if spec.run_errors == "folder":
        judged = judged | {ref.display for org in targets.orgs for ref in org.logs}
    alone = {r.display for r in targets.loose_logs if r.display not in judged} if spec.note_alone else set()
    return RunFiles(own=own, judged=frozenset(judged), alone=frozenset(alone))


def _policed(facts: LogFacts, policy: Policy, round_name: str) -> LogFacts:
    """The run's error codes as the policy leaves them (a code it makes a warning does not fail the run)."""
    if not facts.error_codes:
        return facts
    kept = policy.still_errors(facts.error_codes, round_name, facts.path)
    return facts if kept == facts.error_codes else replace(facts, error_codes=kept)


def run_check(paths: Iterable[str], options: CheckOptions, *, progress: Tracker = no_progress) -> CheckRun:
    """Every check that applies to `paths`, with one ruleset."""
    return run_rounds({options.ruleset: list(paths)}, options, progress=progress)[0]


def run_rounds(groups: Mapping[str, Sequence[str]], base: CheckOptions, *, loose_facts: bool = True,
               progress: Tracker = no_progress) -> list[CheckRun]:
    """One CheckRun per ruleset (`base` with that ruleset); the logs of every round go through one pool.

    loose_facts=False: the caller reads only the reports, so logs outside an organisation tree (which no tree
    check reads) skip fact extraction, and their workers send back less."""
    base = replace(base, progress=progress) if progress is not no_progress else base
    if base.custom_rcps is not None:
        parse_rcps(base.custom_rcps)  # CustomRcpError (a ValueError) for a file the reference could not use
    plans = [_plan(list(paths), replace(base, ruleset=ruleset)) for ruleset, paths in groups.items()]
    tasks: list[Task] = []
    for options, run in plans:
        loose = options if loose_facts else replace(options, facts=False)
        in_sets = {ref.display for raw in run.targets.raw_folders for ref in raw.logs}  # run sets read facts
        tasks += [(ref, options if ref.display in in_sets else loose) for ref in run.targets.loose_logs]
        tasks += [(ref, options) for org in run.targets.orgs for ref in org.logs]

    def prepare() -> None:
        for options, run in plans:
            for org in run.targets.orgs:
                for prep in org_preparations(options):  # an unreadable folder: the check that needs it files TREE048
                    _attempt(partial(prep, org, options))

    code = _code_tasks(plans)
    logs, scanned = check_jobs(tasks, prepare, progress, [task for _, task in code], base.jobs)
    for (org, (path, _)), found in zip(code, scanned, strict=True):  # for the hygiene check (tree.code_to_scan)
        if org.prepared.scanned is None:
            org.prepared.scanned = {}
        org.prepared.scanned[path] = found
    results = iter(logs)
    waiving = in_force(base).waiving()  # one pass of the waivers over every round: unused is unused in all
    for options, run in plans:
        run.results = {ref.display: next(results) for ref in run.targets.all_logs()}
        _finish(run, options, waiving)
    if waiving is not None and plans:
        _file_waivers(waiving.own_findings(), [run.report for _, run in plans])
    return [run for _, run in plans]


def _file_waivers(found: list[Finding], reports: list[Report]) -> None:
    """The waivers' own findings (WVR), each under its file in the round that lists it, else with the last round's
    tree-level findings: where they fall when the rounds' reports are merged."""
    for f in found:
        home = next((r for r in reports if f.path in r.files), reports[-1])
        home.add(f)


def _code_tasks(plans: list[tuple[CheckOptions, CheckRun]]) -> list[tuple[OrgTree, CodeTask]]:
    """The implementation files to scan for secrets, with their organisation: tasks of the log pool."""
    out: list[tuple[OrgTree, CodeTask]] = []
    for options, run in plans:
        if not run.targets.orgs:  # logs alone: no tree check's module is loaded (start-up)
            continue
        for plan in (c.function() for c in run_by(options, "code")):
            for org in run.targets.orgs:  # an unreadable folder: the hygiene check files TREE048 when it lists it
                tasks = _attempt(partial(plan, org, options))
                out += [] if isinstance(tasks, OSError) else [(org, task) for task in tasks]
    return out


def _plan(paths: list[str], options: CheckOptions) -> tuple[CheckOptions, CheckRun]:
    targets = discover(paths)
    if not (targets.all_logs() or targets.orgs or targets.system_files):
        raise UsageError(
            "nothing to check: no result logs (result_*.txt), files with :::MLLOG records, system descriptions or "
            "organisation folders under "
            + ", ".join(paths)
            + (f" (passed over as documents: {', '.join(targets.documents)})" if targets.documents else "")
        )
    if options.changed_since:
        options = _only_changed(targets, options)
    return options, CheckRun(targets, report=Report(strict=options.strict))


def _finish(run: CheckRun, options: CheckOptions, waiving: WaiverPass | None = None) -> None:
    """File the logs' findings, then the system files and the tree-level checks of every organisation; then the
    policy over them all, once per finding (levels, selections, run errors a folder judges, waivers)."""
    plan, policy, name = plan_of(options.profile.value), in_force(options), round_name(options.ruleset)
    if plan.runs("hyperparameters"):  # said once, first of the tree's findings
        run.report.extend(coverage_findings(options.ruleset))
    for ref in run.targets.all_logs():
        run.report.add_file(ref.display, run.results[ref.display].findings)
    in_sets = bool(run.targets.raw_folders) and plan.run_errors == "folder" and bool(stage(plan, "raw"))
    judged = _judged_sets(run, options) if in_sets else set()
    own = {ref.display: len(run.results[ref.display].findings) for ref in run.targets.all_logs()}
    logs = _run_files(run.targets, own, judged, policy)  # before the tree checks add findings to the logs' files
    _add_system_files(run, options)
    for sets in stage(plan, "raw") if run.targets.raw_folders else ():  # raw job output: its run sets
        for raw in run.targets.raw_folders:
            run.report.extend(sets.function()(raw, {r.display: run.results[r.display].facts for r in raw.logs},
                                              options))
    for org in run.targets.orgs:
        for ref in org.logs:  # kept for the report too: a run's error codes as the policy leaves them
            run.results[ref.display].facts = _policed(run.results[ref.display].facts, policy, name)
        facts = {ref.display: run.results[ref.display].facts for ref in org.logs}
        unreadable = [_unreadable(org, PermissionError(13, "Permission denied", p)) for p in org.unreadable]
        for check in org_checks(options):
            found = _attempt(partial(check, org, facts, options))
            if isinstance(found, OSError):  # a folder or file of the tree the user cannot read (permissions)
                unreadable.append(_unreadable(org, found))
            else:
                run.report.extend(found)
        run.report.extend({(f.path, f.message): f for f in unreadable}.values())
    policy.settle(run.report, name, logs, waiving)


def _attempt(call: Callable[[], _R]) -> _R | OSError:
    """The call's result, or the OSError it raised (unreadable parts of a tree are findings, not crashes)."""
    try:
        return call()
    except OSError as exc:
        return exc


def _unreadable(org: OrgTree, exc: OSError) -> Finding:
    """TREE048 for the first path of an organisation a check could not list or read; the check stops there."""
    where = str(exc.filename) if exc.filename else org.display
    return finding("TREE048", where, f"cannot be read ({exc.strerror or exc}); the checks that need it were not made")
