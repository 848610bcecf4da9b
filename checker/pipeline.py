"""`mlsubmit check`: read every log once, run the log-level checks on it, then the tree-level checks.

Log-level checks take a parsed log and return findings; tree-level checks take an organisation tree and the facts
of its logs. Logs are spread over a process pool; the rule files are loaded before the pool forks, so every worker
starts with compiled rules.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

from mlsubmit.checker.cache import LogCache, context_key
from mlsubmit.checker.discover import LogRef, OrgTree, Targets, UsageError, discover
from mlsubmit.checker.engine import check_records
from mlsubmit.checker.facts import LogFacts, extract
from mlsubmit.checker.logs import ParsedLog, read_log
from mlsubmit.checker.ruleset import get_ruleset

from mlsubmit.findings import Finding, Report, Severity
from mlsubmit.progress import tracker
from mlsubmit.safe_io import sha256_file as file_sha256

POOL_THRESHOLD = 8  # fewer logs than this are checked in-process: a pool costs more than it saves
_PIPE_BLOCK = 1 << 16  # a Linux pipe's capacity


@dataclass(frozen=True)
class CheckOptions:
    ruleset: str
    profile: str = "full"  # "full" or "reference" (only what mlperf-logging's package checker checks)
    jobs: int = 0  # 0: one worker per core
    cache_dir: Path | None = None
    changed_since: str | None = None
    strict: bool = False
    hyperparameters: bool = True  # the closed-division table (issue: HP checks)
    changed_paths: frozenset[str] | None = None  # resolved paths changed since --changed-since (set by run_check)
    # False: the log's facts are not extracted (empty LogFacts come back). Set by run_rounds, for logs outside an
    # organisation tree when its caller reads only findings; never with a cache, whose entries keep facts.
    facts: bool = True


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
    from mlsubmit.checker.tree import check_org as tree_check

    if options.profile == "reference":  # the package checker's own system-file check is part of the tree check
        return [tree_check]
    from mlsubmit.checker.system_agreement import check_org as systems_check

    return [systems_check, tree_check]


OrgPrep = Callable[[OrgTree, CheckOptions], None]


def org_preparations(options: CheckOptions) -> list[OrgPrep]:
    """Work of the org checks that needs no log (system files, RCP statistics), run beside the log checks."""
    from mlsubmit.checker.tree import prepare_org as tree_prep

    if options.profile == "reference":
        return [tree_prep]
    from mlsubmit.checker.system_agreement import prepare_org as systems_prep

    return [systems_prep, tree_prep]


def check_log_file(ref: LogRef, options: CheckOptions) -> LogResult:
    """One log's findings and facts: from the cache when it holds them, else read and checked (and stored)."""
    sha, hit = _lookup(ref, options)
    return hit if hit is not None else _check_and_store(ref, options, sha)


def _lookup(ref: LogRef, options: CheckOptions) -> tuple[str | None, LogResult | None]:
    """(content hash, cached result) when a cache is in use; the hash is kept to store the result after a miss."""
    cache = _cache(options)
    if cache is None:
        return None, None
    try:
        sha = file_sha256(ref.path)
    except OSError:
        return None, None  # unreadable: read_log turns it into a finding
    hit = cache.get(sha, ref.display)
    return sha, LogResult(*hit) if hit is not None else None


def _check_and_store(ref: LogRef, options: CheckOptions, sha: str | None) -> LogResult:
    cache = _cache(options)
    whole = options.facts or cache is not None  # the facts, with the log's hash, are read by someone
    log = read_log(ref.path, ref.display, digest=whole)
    findings = list(log.findings)
    if log.records:
        for check in log_checks(options):
            findings.extend(check(log, options))
        if options.hyperparameters and options.profile == "full":  # a value two checks catch is reported once
            from mlsubmit.checker.hyperparameters import merge_rule_duplicates

            findings = merge_rule_duplicates(findings)
    facts = extract(log) if whole else LogFacts(path=log.path)
    facts.error_codes = tuple(sorted({f.code for f in findings if f.severity is Severity.ERROR}))
    if cache is not None and sha is not None and log.sha256 == sha:  # unchanged while it was read
        cache.put(sha, ref.display, findings, facts)
    return LogResult(findings, facts)


def _cache(options: CheckOptions) -> LogCache | None:
    if options.cache_dir is None:
        return None
    return LogCache(options.cache_dir, context_key(options.ruleset, options.profile, options.hyperparameters))


Job = tuple[LogRef, CheckOptions]


def check_jobs(jobs: list[Job], prepare: Callable[[], None]) -> list[LogResult]:
    """One result per (log, options) pair, in order; logs of several rounds share one pool.

    Cached logs are answered in this process (hashing is cheap; a pool is not); the rest are checked.
    `prepare` (tree-level work that needs no log) runs in this process beside the workers when there is a pool;
    without one there is nothing to overlap, and the org checks do that work themselves, only where needed.
    """
    done: dict[int, LogResult] = {}
    todo: list[tuple[int, LogRef, CheckOptions, str | None]] = []
    for i, (ref, options) in enumerate(jobs):  # each file is hashed once; a miss carries its hash to its worker
        sha, hit = _lookup(ref, options)
        if hit is not None:
            done[i] = hit
        else:
            todo.append((i, ref, options, sha))
    if todo:
        done.update(zip((t[0] for t in todo), _check_uncached([t[1:] for t in todo], prepare), strict=True))
    return [done[i] for i in range(len(jobs))]


def _check_uncached(todo: list[tuple[LogRef, CheckOptions, str | None]], prepare: Callable[[], None]
                    ) -> list[LogResult]:
    jobs = max(options.jobs for _, options, _ in todo) or os.cpu_count() or 1
    # in-process (also where there is no fork): rule files load as the logs ask for them
    if jobs == 1 or len(todo) < POOL_THRESHOLD or not hasattr(os, "fork"):
        with tracker(len(todo), "checking logs") as advance:  # a bar only on a terminal, after a few seconds
            return [_advanced(_check_and_store(*job), advance) for job in todo]
    return _shared(todo, jobs, prepare)


class WorkerError(RuntimeError):
    """A worker process failed; the message carries its traceback."""


class _Counter:
    """The logs not yet taken, shared by every process: whoever is free takes the next one.

    This process takes from the front of the list and workers from the back, so each mostly meets one round's
    logs (and compiles one round's rule files), and all finish within about a log of each other. The pair
    (front, back) lives in a pipe. Taking reads its 16 bytes, which only one process can do at a time; writing the
    new pair back hands it on. So it needs no lock and no shared memory: multiprocessing's `Value` costs ~20 ms
    to set up (ctypes and a memory arena), a third of a typical run's serial start. Pipe reads and writes this
    small are atomic.
    """

    def __init__(self, count: int) -> None:
        self._read, self._write = os.pipe()
        self._put(0, count)

    def _put(self, front: int, back: int) -> None:
        os.write(self._write, front.to_bytes(8, "little") + back.to_bytes(8, "little"))

    def take(self, *, from_back: bool = False) -> int | None:
        """The index of a log to check, or None when none is left."""
        data = os.read(self._read, 16)
        front, back = int.from_bytes(data[:8], "little"), int.from_bytes(data[8:], "little")
        if front >= back:
            self._put(front, back)
            return None
        if from_back:
            back -= 1
            taken = back
        else:
            taken = front
            front += 1
        self._put(front, back)
        return taken

    def stop(self) -> None:
        """Make every later take() return None: a worker that died holding the pair would otherwise leave the
        others waiting for it forever."""
        try:
            self._put(0, 0)
        except OSError:  # closed: the run is already over
            pass

    def close(self) -> None:
        os.close(self._read)
        os.close(self._write)


def _worker(todo: list[tuple[LogRef, CheckOptions, str | None]], counter: _Counter, out: BinaryIO) -> None:
    """In a worker process: check logs until none is left, sending each result as it is done, then None."""
    try:
        while (i := counter.take(from_back=True)) is not None:
            _send(out, (i, _check_and_store(*todo[i])))
        _send(out, None)
    except BaseException:  # reported to the parent, which raises it; this process just ends
        import traceback  # only on a failure

        _send(out, ("error", traceback.format_exc()))


def _send(out: BinaryIO, message: object) -> None:
    import pickle

    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(data).to_bytes(8, "little") + data)


@dataclass
class _Process:
    """A forked worker: its pid and the read end of the pipe its results come through."""

    pid: int
    results: BinaryIO


def _fork(todo: list[tuple[LogRef, CheckOptions, str | None]], counter: _Counter) -> _Process:
    """A worker made with a bare fork: it inherits the logs to check and every module and compiled rule file
    loaded here, and nothing has to be pickled to start it. (multiprocessing's machinery costs ~10 ms of
    imports, a sixth of the serial start of a run, for what this needs: a fork and a pipe.)"""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns, never runs the parent's exit handlers or flushes its buffers
        code = 0
        try:
            os.close(read)
            # results leave in blocks of a pipe's size: one wake-up of the parent's receiver for dozens of them
            # (one per result cost a thread switch each, a tenth of the pool's CPU); the last block on closing
            with os.fdopen(write, "wb", buffering=_PIPE_BLOCK) as out:
                _worker(todo, counter, out)
        except BaseException:  # the parent sees the pipe end without a last message
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    return _Process(pid, os.fdopen(read, "rb", buffering=1 << 20))


class _Receiver(threading.Thread):
    """Collects one worker's results as they come, so the worker never waits on a full pipe. The buffered
    reader takes everything waiting in the pipe with one read, and frames are unpickled in a row while this
    thread holds the GIL: a busy main thread gives it up only every few ms."""

    def __init__(self, proc: _Process, results: list[LogResult | None], counter: _Counter) -> None:
        super().__init__(name=f"mlsubmit-results-{proc.pid}", daemon=True)
        self.proc = proc
        self.results = results
        self.counter = counter
        self.failure: str | None = None

    def run(self) -> None:
        try:
            self._receive()
        except Exception:  # a frame that does not unpickle: the run cannot be trusted
            import traceback  # only on a failure

            self._fail(traceback.format_exc())

    def _receive(self) -> None:
        import pickle

        stream = self.proc.results
        while True:
            head = stream.read(8)
            data = stream.read(int.from_bytes(head, "little")) if len(head) == 8 else b""
            if not data:
                self._fail("a worker process ended without reporting (killed?)")
                return
            message: Any = pickle.loads(data)
            if message is None:
                return
            if message[0] == "error":
                self._fail(str(message[1]))
                return
            self.results[message[0]] = message[1]

    def _fail(self, why: str) -> None:
        self.failure = why
        self.counter.stop()  # the others stop after their current log


def _shared(todo: list[tuple[LogRef, CheckOptions, str | None]], jobs: int, prepare: Callable[[], None]
            ) -> list[LogResult]:
    """`jobs - 1` worker processes and this one take logs one at a time from a shared counter, so all finish
    within about one log of each other, and this process's share is never pickled. Workers send each result as
    it is done; a thread per worker receives them. This process first does `prepare` (tree work that needs no
    log). Rule files are compiled where they are needed, after the fork, so that is done in parallel too."""
    counter = _Counter(len(todo))
    results: list[LogResult | None] = [None] * len(todo)
    gc.freeze()  # a forked worker's collector then never walks (and so copies) the pages it shares with us
    try:
        procs = [_fork(todo, counter) for _ in range(jobs - 1)]
    finally:
        gc.unfreeze()  # here, in the parent, everything is collectable again
    receivers = [_Receiver(proc, results, counter) for proc in procs]
    for receiver in receivers:
        receiver.start()
    try:
        prepare()
        with tracker(len(todo), "checking logs") as advance:
            while (i := counter.take()) is not None:
                results[i] = _advanced(_check_and_store(*todo[i]), advance)
            for receiver in receivers:
                receiver.join()
    except BaseException:  # an error here or an interrupt: the workers' remaining logs are not wanted
        for proc in procs:
            _kill(proc.pid)
        raise
    finally:
        for proc in procs:
            os.waitpid(proc.pid, 0)
            proc.results.close()
        counter.close()
    failure = next((r.failure for r in receivers if r.failure is not None), None)
    if failure is not None:
        raise WorkerError(f"a worker process failed:\n{failure}")
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def _kill(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:  # already gone
        pass


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
    if not (run.targets.system_files or run.targets.orgs):
        return  # logs alone: the system modules (and jsonschema) are not imported
    from mlsubmit.checker.system_agreement import org_system_files
    from mlsubmit.checker.systems import check_system_file

    for sref in run.targets.system_files:
        run.report.add_file(sref.display, check_system_file(sref.path, sref.display, options.ruleset)[1])
    for org in run.targets.orgs:
        for _path, shown in org_system_files(org):
            run.report.add_file(shown)


def _only_changed(targets: Targets, options: CheckOptions) -> CheckOptions:
    """--changed-since: keep the logs changed since the revision, and every log of a results folder holding a
    change (the folder's counts, seeds and RCP need all its runs; unchanged ones come from the cache when given).
    Organisation trees without a change are dropped."""
    from mlsubmit._git import changed_paths

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
        folders = {str(Path(p).parent) + os.sep for p in changed if p.startswith(root)}
        org.logs = [r for r in org.logs if any(str(r.path.resolve()).startswith(f) for f in folders)]
        kept.append(org)
    targets.orgs = kept
    return replace(options, changed_paths=frozenset(changed))


def _demote_run_errors(run: CheckRun) -> None:
    """--profile reference: a run's own errors count through its folder's olympic tolerance (TREE007), as in the
    package checker, so inside organisation trees they are shown as warnings."""
    for org in run.targets.orgs:
        for ref in org.logs:
            found = run.report.files.get(ref.display, [])
            run.report.files[ref.display] = [
                replace(f, severity=Severity.WARNING) if f.severity is Severity.ERROR else f for f in found
            ]


def run_check(paths: Iterable[str], options: CheckOptions) -> CheckRun:
    """Every check that applies to `paths`, with one ruleset."""
    return run_rounds({options.ruleset: list(paths)}, options)[0]


def run_rounds(groups: Mapping[str, Sequence[str]], base: CheckOptions, *, loose_facts: bool = True
               ) -> list[CheckRun]:
    """One CheckRun per ruleset (`base` with that ruleset); the logs of every round go through one pool.

    loose_facts=False: the caller reads only the reports, so logs outside an organisation tree (which no tree
    check reads) skip fact extraction, and their workers send back less."""
    plans = [_plan(list(paths), replace(base, ruleset=ruleset)) for ruleset, paths in groups.items()]
    jobs: list[Job] = []
    for options, run in plans:
        loose = options if loose_facts else replace(options, facts=False)
        jobs += [(ref, loose) for ref in run.targets.loose_logs]
        jobs += [(ref, options) for org in run.targets.orgs for ref in org.logs]

    def prepare() -> None:
        for options, run in plans:
            for org in run.targets.orgs:
                for prep in org_preparations(options):
                    prep(org, options)

    results = iter(check_jobs(jobs, prepare))
    for options, run in plans:
        run.results = {ref.display: next(results) for ref in run.targets.all_logs()}
        _finish(run, options)
    return [run for _, run in plans]


def _plan(paths: list[str], options: CheckOptions) -> tuple[CheckOptions, CheckRun]:
    targets = discover(paths)
    if not (targets.all_logs() or targets.orgs or targets.system_files):
        raise UsageError(
            "nothing to check: no result logs (result_*.txt), system descriptions or organisation folders under "
            + ", ".join(paths)
        )
    if options.changed_since:
        options = _only_changed(targets, options)
    run = CheckRun(targets, report=Report(strict=options.strict))
    if options.hyperparameters and options.profile == "full":  # said once; also loads the HP table before forking
        from mlsubmit.checker.hyperparameters import coverage_findings

        run.report.extend(coverage_findings(options.ruleset))
    return options, run


def _finish(run: CheckRun, options: CheckOptions) -> None:
    """File the logs' findings, then the system files and the tree-level checks of every organisation."""
    for ref in run.targets.all_logs():
        run.report.add_file(ref.display, run.results[ref.display].findings)
    if options.profile == "reference":  # before the tree checks add their own findings to these files
        _demote_run_errors(run)
    _add_system_files(run, options)
    for org in run.targets.orgs:
        facts = {ref.display: run.results[ref.display].facts for ref in org.logs}
        for check in org_checks(options):
            run.report.extend(check(org, facts, options))
