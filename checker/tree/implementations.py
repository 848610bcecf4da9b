"""The `implementations` check: every benchmark with results has its code under benchmarks/<benchmark>/, with a
README.md and a run_and_time.sh somewhere in it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.tree.configfile import code_folder
from mlsubmit.checker.tree.folders import listdir
from mlsubmit.checker.tree.shared import listed_folders, only_logs_changed, tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE011", "TREE012", "TREE013", "TREE048"})


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


def with_results(folders: list[BenchFolder], ruleset: str) -> set[str]:
    """The benchmarks of the round that have a results folder holding logs."""
    known = set(benchmarks.allowed(ruleset))
    return {f.name for f in folders if f.logs and f.name in known}


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """The code folders are judged from the listing alone: beside the log checks (not when only logs changed)."""
    if not only_logs_changed(org, options):
        org.prepared.implementations = check_implementations(org, with_results(listed_folders(org), options.ruleset))


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    if only_logs_changed(org, options):  # code and names did not change: the check cannot change
        return []
    done, org.prepared.implementations = org.prepared.implementations, None
    if done is not None:
        return done
    return check_implementations(org, with_results(tree_facts(org, facts, options).folders, options.ruleset))
