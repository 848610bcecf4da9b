"""The `implementations` check: every benchmark with results has its code under benchmarks/<benchmark>/, with a
README.md and a run_and_time.sh somewhere in it, and a README.md that says something."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.tree.configfile import code_folder
from mlsubmit.checker.tree.folders import listdir
from mlsubmit.checker.tree.shared import known_folders, listed_folders, only_logs_changed, tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support.safe_io import open_regular

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE011", "TREE012", "TREE013", "TREE048", "TREE052"})


def _files_named(root: Path, names: tuple[str, ...]) -> dict[str, list[Path]]:
    """Every file under root with one of `names`, by name, depth first in name order (as os.walk goes, links to
    folders not entered, but with a stack of its own: os.walk recurses, and a thousand nested folders ended the
    check in RecursionError). OSError for a folder that cannot be listed: os.walk would pass over it, and its
    README.md would be reported missing."""
    found: dict[str, list[Path]] = {name: [] for name in names}
    stack = [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as listing:
            entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in listing)
        for name, is_dir in entries:
            if not is_dir and name in found:
                found[name].append(folder / name)
        stack.extend(folder / name for name, is_dir in reversed(entries) if is_dir)
    return found


BLANK_READ = 64 << 10  # a README with more bytes than this is not blank, whatever they are


def _blank(path: Path) -> bool:
    """Whether a file holds nothing but white space (one that cannot be read, or is not a regular file, is not
    judged blank: the hygiene check names links and the unreadable)."""
    try:
        with open_regular(path) as fh:
            return not fh.read(BLANK_READ + 1).strip()
    except OSError:
        return False


def _blank_readmes(readmes: list[Path], bench: str, shown: str, impl: Path) -> list[Finding]:
    """TREE052 when every README.md of the implementation is blank: none gives the run command (SR "Source code
    requirements for training inspection", L579-583)."""
    if not readmes or not all(_blank(p) for p in readmes):
        return []
    where = os.path.join(shown, os.path.relpath(readmes[0], impl))
    which = f"all {len(readmes)} README.md files of the {bench} implementation are" if len(readmes) > 1 else \
        f"the {bench} implementation's README.md is"
    return [finding("TREE052", where, f"{which} empty: none gives the run command and its flags")]


def check_implementations(org: OrgTree, benchmarks: set[str]) -> list[Finding]:
    out = []
    for bench in sorted(benchmarks):
        impl, shown = code_folder(org, bench)
        if not impl.is_dir():
            out.append(_no_implementation(impl.parent, bench, shown, benchmarks))
            continue
        try:
            found = _files_named(impl, ("README.md", "run_and_time.sh"))
        except OSError as exc:
            out.append(finding("TREE048", str(exc.filename or shown), f"cannot be read ({exc.strerror or exc}); the "
                               f"{bench} implementation's README.md and run_and_time.sh were not looked for"))
            continue
        out += [finding(code, shown, f"no {name} in the {bench} implementation")
                for code, name in (("TREE011", "README.md"), ("TREE012", "run_and_time.sh")) if not found[name]]
        out += _blank_readmes(found["README.md"], bench, shown, impl)
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
    return {f.name for f in known_folders(folders, ruleset) if f.logs}


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
