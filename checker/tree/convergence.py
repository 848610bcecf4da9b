"""The `convergence-rcp` check: a closed results folder's convergence against the reference convergence points (the
RCP verdict, TREE018-TREE021, TREE024), and for a folder still short of the round's runs its chance of an RCP fail
once complete (RUN009). Also the checks of a closed set of runs that a run set of raw output shares with a results
folder (`closed_set_checks`, for tree/runset.py): seeds, evaluation cadence and the RCP verdict."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rcp import verdict as rcp
from mlsubmit.checker.rcp.custom import for_benchmark
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.tree import params, seeds
from mlsubmit.checker.tree.eval_cadence import check_eval_cadence
from mlsubmit.checker.tree.folders import rcp_findings
from mlsubmit.checker.tree.shared import FolderFacts, listed_folders, prepare_rcp, tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE018", "TREE019", "TREE020", "TREE021", "TREE024", "RUN009"})


def rcp_verdict(folder: BenchFolder, runs: list[LogFacts], options: CheckOptions, asked: frozenset[str] | set[str],
                org_flags: frozenset[str]) -> tuple[list[Finding], rcp.RcpResult]:
    """The RCP verdict of a closed set of runs of a benchmark with RCPs, and its findings. `asked`: the bypass
    flags in force; the organisation's flags are the verify script's (rcp_bert_train_samples)."""
    result = rcp.evaluate_cached(folder.name, options.ruleset, runs, closed=True, cache_dir=options.cache_dir,
                                 bypass=params.RCP_BYPASS in asked,
                                 train_samples=params.BERT_TRAIN_SAMPLES in org_flags,  # the verify script's
                                 rcps=for_benchmark(options.custom_rcps, folder.name))  # fmt: skip
    out = rcp_findings(folder, result)
    if result.crash:
        out.append(finding("TREE024", folder.shown, f"RCP checker: {result.message}"))
    return out, result


def closed_set_checks(folder: BenchFolder, runs: list[LogFacts], options: CheckOptions,
                      asked: frozenset[str] | set[str], org_flags: frozenset[str] = frozenset(), *,
                      judge_rcp: bool = True) -> tuple[list[Finding], rcp.RcpResult | None]:
    """The checks of a closed set of runs of a run set of raw output (tree/runset.py), as the `seeds`,
    `eval-cadence` and `convergence-rcp` checks judge a results folder: the RCP verdict is also returned, for the
    run set's projected score. `asked`: the bypass flags in force; judge_rcp=False: a run set too small for an
    olympic mean yet."""
    out: list[Finding] = []
    if params.SEED_BYPASS not in asked:
        out += seeds.check_seeds(runs).findings
    out += check_eval_cadence(folder.name, runs)
    if not (judge_rcp and benchmarks.has_rcp(folder.name)):
        return out, None
    found, result = rcp_verdict(folder, runs, options, asked, org_flags)
    return out + found, result


def in_progress(folder: BenchFolder, runs: list[LogFacts], options: CheckOptions, train_samples: bool = False
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


def check_folder(facts: FolderFacts, options: CheckOptions) -> list[Finding]:
    out: list[Finding] = []
    if benchmarks.has_rcp(facts.folder.name):
        out += rcp_verdict(facts.folder, facts.runs, options, facts.asked, facts.org_flags)[0]
    return out + in_progress(facts.folder, facts.runs, options, params.BERT_TRAIN_SAMPLES in facts.org_flags)


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """The RCP statistics of the benchmarks whose system file says closed, beside the log checks."""
    prepare_rcp(org, listed_folders(org), options)


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    return [f for folder in tree_facts(org, facts, options).closed() for f in check_folder(folder, options)]
