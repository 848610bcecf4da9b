"""The full (default) profile's organisation-level tree checks: layout, run counts, names, olympic tolerance, seeds,
evaluation cadence, RCPs, init time, hygiene.

Input is the organisation folder and the facts of its logs (each log was read once by the pipeline); nothing here
reads a log again or writes anything. `--profile reference` is answered by `reference.py`, which runs only what
mlperf-logging's package checker runs; the default profile runs everything below. Both build on `folders.py`. The
system-file pairing and the log/system-file agreement are `systems/agreement.py`'s.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.hygiene import scan as hygiene
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.logs.input import is_result_log
from mlsubmit.checker.power import folder as power
from mlsubmit.checker.rcp import verdict as rcp
from mlsubmit.checker.rcp.custom import for_benchmark
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds import division as division_of
from mlsubmit.checker.rounds.detect import round_name, version
from mlsubmit.checker.tree import params, seeds
from mlsubmit.checker.tree.configfile import check_config_names, code_folder
from mlsubmit.checker.tree.folders import (
    NUMBERED,
    bench_folders,
    bypass_flags,
    check_counts,
    check_olympic,
    listdir,
    policy,
    prepared_folders,
    rcp_findings,
    read_division,
    touched,
)

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support.names import did_you_mean
from mlsubmit.core.support.numbers import finite

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions


def init_minutes(facts: LogFacts) -> tuple[float, int] | None:
    starts, stops = facts.all("init_start"), facts.all("init_stop")
    if not starts or not stops:
        return None
    return (stops[0].time_ms - starts[0].time_ms) / 60000.0, stops[0].line


def init_limit(ruleset: str, division: str) -> float:
    table = policy()["init_limit_minutes"]
    limits = table.get(round_name(ruleset), table["default"])
    return float(limits["open" if division == "open" else "closed"])


# --- checks of one benchmark folder -------------------------------------------------------------------------


def check_names(folder: BenchFolder) -> list[Finding]:
    out = []
    numbers = []
    for shown in folder.logs:
        m = NUMBERED.match(os.path.basename(shown))
        if m:
            numbers.append(int(m.group(1)))
        else:
            out.append(finding("TREE006", shown, f"{os.path.basename(shown)!r} is not numbered result_<i>.txt"))
    if numbers and not out:
        first = min(numbers)
        if first not in (0, 1) or sorted(numbers) != list(range(first, first + len(numbers))):
            out.append(finding("TREE006", folder.shown, f"runs are numbered {sorted(numbers)}, not 0..N-1 or 1..N"))
    return out


SCALING_ALLOWED_FROM = (6, 1, 0)  # mlcommons/training#879: the chair regenerates it, so submitting it is no error


def check_entries(folder: BenchFolder, ruleset: str) -> list[Finding]:
    out = []
    scaling_allowed = version(ruleset) >= SCALING_ALLOWED_FROM
    for name in folder.others:
        shown = os.path.join(folder.shown, name)
        if name == "scaling.json":
            if not scaling_allowed:
                out.append(finding("TREE005", shown, "scaling.json written by an earlier run of the reference checker"))
        elif name not in policy()["results_folder_allowed"]:
            out.append(finding("TREE004", shown, f"{name!r} is not a result_<i>.txt log"))
    for name, count in folder.nested_logs.items():
        out.append(
            finding("TREE009", os.path.join(folder.shown, name), f"{count} result log(s) one level too deep: unchecked")
        )
    return out


def check_init(runs: list[LogFacts], ruleset: str) -> list[Finding]:
    out = []
    for facts in runs:
        got = init_minutes(facts)
        if got is None:
            continue
        minutes, line = got
        limit = init_limit(ruleset, facts.division or "closed")
        if minutes > limit:
            out.append(
                finding(
                    "TREE023",
                    facts.path,
                    f"initialisation took {minutes:.1f} min; round {round_name(ruleset)} allows {limit:g} min",
                    line=line,
                )
            )
    return out


def check_folder(org: OrgTree, folder: BenchFolder, facts: dict[str, LogFacts], options: CheckOptions,
                 org_flags: frozenset[str] = frozenset()) -> list[Finding]:
    if folder.name not in benchmarks.allowed(options.ruleset):
        return [
            finding("TREE002", folder.shown, f"{folder.name!r} is not a benchmark of ruleset {options.ruleset}"
                    + did_you_mean(folder.name, benchmarks.allowed(options.ruleset))),
            *check_entries(folder, options.ruleset),
        ]
    runs = folder.facts(facts)
    powered, power_failed = power.check_folder(org, folder, runs, as_reference=False)
    out = [*check_counts(folder), *check_names(folder), *check_entries(folder, options.ruleset), *powered]
    out += check_olympic(folder, runs, power_failed)
    out += check_init(runs, options.ruleset)
    out += check_config_names(org, folder.name, runs, options.ruleset)
    division = read_division(org, folder.system)
    out += _division_note(folder, division, runs)
    if not division_of.closed(division, runs):
        return out
    honoured, written = bypass_flags(folder.path)
    sys_honoured, sys_written = bypass_flags(folder.path.parent)
    for flag in sorted((written | sys_written) - (honoured | sys_honoured)):
        why = f"{flag} requested, but the reference ignores it (trailing newline)"
        out.append(finding("TREE022", folder.shown, why))
    for flag in sorted(honoured | sys_honoured):
        out.append(finding("TREE022", folder.shown, f"{flag} requested in package_checker_params"))
    asked = written | sys_written | org_flags  # the organisation's flags are the verify script's, from 2.0 on
    return (out + closed_set_checks(folder, runs, options, asked, org_flags)[0]
            + _in_progress(folder, runs, options, params.BERT_TRAIN_SAMPLES in org_flags))


def _in_progress(folder: BenchFolder, runs: list[LogFacts], options: CheckOptions, train_samples: bool = False
                 ) -> list[Finding]:
    """RUN009 for a results folder still short of the round's N runs: its chance of an RCP fail once complete,
    its runs read as the verdict reads them (the tree's rcp_bert_train_samples)."""
    n = benchmarks.runs(folder.name)
    if n is None or len(runs) >= n:
        return []
    # the RCP planning's numpy (rcp/risk.py) only for an incomplete set of runs (start-up of a check)
    from mlsubmit.checker.rcp.planning import risk_finding

    ordered = sorted(runs, key=lambda f: (math.inf if f.started_ms is None else f.started_ms, f.path))
    found = risk_finding(folder.shown, folder.name, options.ruleset, ordered, limit=options.rcp_risk_limit,
                         rcps=for_benchmark(options.custom_rcps, folder.name), train_samples=train_samples)
    return [found] if found is not None else []


def _division_note(folder: BenchFolder, division: str | None, runs: list[LogFacts]) -> list[Finding]:
    """TREE025 where the logs say closed and the system file does not: the division the folder is judged in."""
    if division == "closed" or not any(f.division == "closed" for f in runs):
        return []
    if division is None:
        why = (f"systems/{folder.system}.json gives no division (missing, unreadable or without the field); the logs "
               "say closed, so the folder is judged as closed")
    else:
        why = (f"the logs say closed, but the system file says division {division!r}, which the package checker and "
               f"the result summarizer take: the folder is judged as {division!r} (no seed or RCP check) and listed "
               f"in {division_of.table(division)}")
    return [finding("TREE025", folder.shown, why)]


# CLOSED: the quality measure "must be evaluated at least as frequently ... as in the reference implementation";
# ResNet-50: "Every 4 epochs with offset 0 or 1 or 2 or 3" (TR1.0 L402 ... TR4.0 L457, section "Quality measure").
# Only a longer gap breaks it: more frequent evaluations are allowed, and where the first one falls is not judged
# (epoch 0 before training, 0- and 1-based numbering all occur in accepted trees).
EVAL_EVERY_EPOCHS = {"resnet": 4.0}


def check_eval_cadence(benchmark: str, runs: list[LogFacts]) -> list[Finding]:
    """TREE051 at a closed run's first evaluation that comes more epochs after the latest earlier one than its
    benchmark allows (evaluations repeated by several ranks, or logged out of order, make no gap)."""
    every = EVAL_EVERY_EPOCHS.get(benchmark)
    if every is None:
        return []
    out: list[Finding] = []
    for facts in runs:
        latest: float | None = None
        for occ in facts.all("eval_accuracy"):
            epoch = finite(occ.metadata.get("epoch_num")) if isinstance(occ.metadata, dict) else None
            if epoch is None:
                continue
            if latest is not None and epoch - latest > every:
                why = (f"evaluated at epoch {epoch:g}, {epoch - latest:g} epochs after the evaluation at epoch "
                       f"{latest:g}: a closed {benchmark} run is evaluated at least every {every:g} epochs")
                out.append(finding("TREE051", facts.path, why, line=occ.line))
                break
            latest = epoch if latest is None else max(latest, epoch)
    return out


def closed_set_checks(folder: BenchFolder, runs: list[LogFacts], options: CheckOptions,
                      asked: frozenset[str] | set[str], org_flags: frozenset[str] = frozenset(), *,
                      judge_rcp: bool = True) -> tuple[list[Finding], rcp.RcpResult | None]:
    """The checks of a closed set of runs, a results folder's or a run set's of raw output (tree/runset.py): seeds,
    the evaluation cadence and the RCP verdict (also returned, for the run set's projected score). `asked`: the
    bypass flags in force; judge_rcp=False: a run set too small for an olympic mean yet."""
    out: list[Finding] = []
    if params.SEED_BYPASS not in asked:
        out += seeds.check_seeds(runs).findings
    out += check_eval_cadence(folder.name, runs)
    if not (judge_rcp and benchmarks.has_rcp(folder.name)):
        return out, None
    result = rcp.evaluate_cached(folder.name, options.ruleset, runs, closed=True, cache_dir=options.cache_dir,
                                 bypass=params.RCP_BYPASS in asked,
                                 train_samples=params.BERT_TRAIN_SAMPLES in org_flags,  # the verify script's
                                 rcps=for_benchmark(options.custom_rcps, folder.name))  # fmt: skip
    out += rcp_findings(folder, result)
    if result.crash:
        out.append(finding("TREE024", folder.shown, f"RCP checker: {result.message}"))
    return out, result


# --- organisation-level checks ------------------------------------------------------------------------------


def check_layout(org: OrgTree, ruleset: str) -> list[Finding]:
    out = []
    if not org.sub("results").is_dir():
        out.append(finding("TREE001", org.display, "no results/ folder"))
    if org.sub("benchmark").is_dir():
        out.append(finding("TREE010", org.shown("benchmark"), "implementation code is in benchmark/, not benchmarks/"))
    allowed = set(policy()["org_folder_allowed"]) | {"benchmark"}
    if params.applies(ruleset):  # the verify scripts of 2.0 and later read it
        allowed.add(params.NAME)
    out += params.read_org_params(org.root, org.shown(params.NAME), ruleset).findings
    out += [
        finding("TREE026", org.shown(name), f"{name!r} is not part of a submission")
        for name in listdir(org.root)
        if name not in allowed and not name.startswith(".")
    ]
    return out


def _raise(exc: OSError) -> None:
    raise exc


def _has_file(root: Path, name: str) -> bool:
    """Whether a file `name` is anywhere under root; OSError for a folder that cannot be listed (os.walk would pass
    over it, and its README.md would be reported missing)."""
    return any(name in files for _, _, files in os.walk(root, onerror=_raise))


def check_implementations(org: OrgTree, benchmarks: set[str]) -> list[Finding]:
    out = []
    for bench in sorted(benchmarks):
        impl, shown = code_folder(org, bench)
        if not impl.is_dir():
            out.append(_no_implementation(impl.parent, bench, shown, benchmarks))
            continue
        try:
            missing = [(code, name) for code, name in (("TREE011", "README.md"), ("TREE012", "run_and_time.sh"))
                       if not _has_file(impl, name)]
        except OSError as exc:
            out.append(finding("TREE048", str(exc.filename or shown), f"cannot be read ({exc.strerror or exc}); the "
                               f"{bench} implementation's README.md and run_and_time.sh were not looked for"))
            continue
        out += [finding(code, shown, f"no {name} in the {bench} implementation") for code, name in missing]
    return out


def _no_implementation(root: Path, bench: str, shown: str, benchmarks: set[str]) -> Finding:
    """TREE013; a warning when the code folder holds folders named after no benchmark with results, which may be
    its code under another name (the review accepted that; the submission still has its code, SR L301-312)."""
    names = listdir(root) if root.is_dir() else []
    others = sorted(n for n in names if n not in benchmarks and not n.startswith(".") and (root / n).is_dir())
    if not others:
        return finding("TREE013", shown, f"no implementation for {bench}")
    return finding("TREE013", shown, f"no implementation named {bench}; {', '.join(others)} may be its code under "
                   "another name; accepted in practice: published trees keep code under other names (5.0 HPE: "
                   "dlrm_dcnv2 in dlrm_v2; 4.0 Intel-HabanaLabs: llama2_70b_lora in llm_finetune)",
                   severity=Severity.WARNING)


def prepare_folders(org: OrgTree, options: CheckOptions) -> list[BenchFolder]:
    """What both tree checks need that no log decides, done beside the log checks (the pipeline runs this only
    with a pool, so a run answered from --cache skips it): the folder listing and the RCP statistics of the
    benchmarks whose system file says closed."""
    every = org.prepared.folders = bench_folders(org)
    known = set(benchmarks.allowed(options.ruleset))
    folders = [f for f in every if f.name in known]
    divisions = {system: read_division(org, system) for system in {f.system for f in folders}}  # each file once
    rcp.prepare(options.ruleset, {f.name for f in folders if division_of.closed(divisions[f.system], [])})
    return every


def prepare_org(org: OrgTree, options: CheckOptions) -> None:
    """prepare_folders, then the layout, implementation and hygiene checks, which look only at files (the
    secret scan of the code is a task of the pool: `code_to_scan`)."""
    every = prepare_folders(org, options)
    known = set(benchmarks.allowed(options.ruleset))
    folders = [f for f in every if f.name in known]
    org.prepared.layout = check_layout(org, options.ruleset)
    for folder in folders:
        if touched(folder, options):
            power.prepare_folder(org, folder)
    if not only_logs_changed(org, options):
        org.prepared.implementations = check_implementations(org, _with_results(every, options.ruleset))
    if org.prepared.walk is not None:  # code_to_scan walked the tree
        org.prepared.entry_findings = hygiene.entry_findings(org.prepared.walk, org.display, options.ruleset)


def _with_results(folders: list[BenchFolder], ruleset: str) -> set[str]:
    known = set(benchmarks.allowed(ruleset))
    return {f.name for f in folders if f.logs and f.name in known}


SECRETS_UNDER = ("benchmarks", "benchmark")  # implementation code: logs and system files are not scanned


def code_to_scan(org: OrgTree, options: CheckOptions) -> list[tuple[Path, Mapping[str, Any] | None]]:
    """The files whose secret scan the pipeline gives its worker pool, beside the logs: the implementation code,
    unless only logs changed, each with the cache's answers for its tree (the task hashes the file and looks
    there first). The walk is kept for the hygiene check."""
    if only_logs_changed(org, options):
        return []
    walked = hygiene.walk(org.root, secrets_under=SECRETS_UNDER, changed=options.changed_paths)
    if walked is None:
        return []
    org.prepared.walk = walked
    kept = None if options.cache_dir is None else hygiene.cached_answers(options.cache_dir, walked.pack)
    return [(path, kept) for path in walked.secret_paths]


def _hygiene(org: OrgTree, options: CheckOptions) -> list[Finding]:
    """With --changed-since, only changed files are scanned for secrets (the others were, when they changed).
    What the pipeline's pool scanned (`code_to_scan`) is not scanned again."""
    prep = org.prepared
    walked, scanned, entries = prep.walk, prep.scanned, prep.entry_findings
    prep.walk, prep.scanned, prep.entry_findings = None, None, None  # taken: a second check scans afresh
    return hygiene.scan(org.root, org.display, secrets_under=SECRETS_UNDER, cache_dir=options.cache_dir,
                        workers=options.jobs, changed=options.changed_paths, progress=options.progress,
                        walked=walked, scanned=scanned, entries=entries, ruleset=options.ruleset)


def check_org(org: OrgTree, facts: dict[str, LogFacts], options: CheckOptions) -> list[Finding]:
    prep = org.prepared
    folders = prepared_folders(org)
    out, prep.layout = (check_layout(org, options.ruleset) if prep.layout is None else prep.layout), None
    org_flags = frozenset(params.read_org_params(org.root, org.shown(params.NAME), options.ruleset).flags)
    for folder in folders:
        if touched(folder, options):
            out += check_folder(org, folder, facts, options, org_flags)
    if only_logs_changed(org, options):  # code, names and files did not change: their checks cannot change
        return out
    done, prep.implementations = prep.implementations, None
    out += check_implementations(org, _with_results(folders, options.ruleset)) if done is None else done
    return out + _hygiene(org, options)


def only_logs_changed(org: OrgTree, options: CheckOptions) -> bool:
    """With --changed-since: every change inside this organisation is an existing result log."""
    if options.changed_paths is None:
        return False
    root = str(org.root.resolve()) + os.sep
    mine = [Path(p) for p in options.changed_paths if p.startswith(root)]
    return all(p.is_file() and is_result_log(p.name) and p.parent.parent.parent.name == "results" for p in mine)
