"""Results folders of an organisation tree as both tree checks see them: the listing, the policy data, the run
counts and olympic tolerance, the bypass files and the RCP findings. The full (default) profile's checks (layout.py,
results_folders.py, ... sharing shared.py) and the reference package checker's (reference.py) both build on this
module, never on each other.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.base.targets import BenchFolder, OrgTree, system_field
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.logs.input import is_result_log
from mlsubmit.checker.rcp import verdict as rcp
from mlsubmit.checker.rounds import benchmarks

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.datafiles import load_validated
from mlsubmit.core.support.safe_io import SMALL_FILE, read_bounded

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

NUMBERED = re.compile(r"^result_(\d+)\.txt$")


@functools.cache
def tree_policy() -> dict[str, Any]:
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/tree-policy.yaml")
    data: dict[str, Any] = load_validated(entry, "tree-policy.schema.json", what="tables/tree-policy.yaml")
    return data


def listdir(path: Path) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def bench_folders(org: OrgTree) -> list[BenchFolder]:
    out: list[BenchFolder] = []
    results = org.sub("results")
    for system in listdir(results):
        if not (results / system).is_dir():
            continue
        for bench in listdir(results / system):
            path = results / system / bench
            if not path.is_dir():
                continue
            folder = BenchFolder(system, bench, path, org.shown("results", system, bench))
            for name in listdir(path):
                entry = path / name
                if is_result_log(name) and entry.is_file():
                    folder.logs.append(os.path.join(folder.shown, name))
                elif name.startswith("."):
                    continue  # the reference's glob skips hidden names; hygiene reports them
                elif entry.is_dir() and name != "power":
                    nested = sum(1 for n in listdir(entry) if is_result_log(n))
                    if nested:
                        folder.nested_logs[name] = nested
                    else:
                        folder.others.append(name)
                else:
                    folder.others.append(name)
            out.append(folder)
    return out


def read_division(org: OrgTree, system: str) -> str | None:
    """The system file's `division` as written, or None."""
    value = system_field(org, system, "division")
    return value if isinstance(value, str) else None


def bypass_flags(folder: Path) -> tuple[set[str], set[str]]:
    """(flags the reference honours, flags written) from a package_checker_params file in the folder."""
    path = folder / "package_checker_params"
    if not path.is_file():
        return set(), set()
    try:
        lines = read_bounded(path, SMALL_FILE).decode("utf-8", "replace").splitlines(keepends=True)
    except OSError:
        return set(), set()
    exact = {line for line in lines if line in ("rcp-bypass", "seed-checker-bypass")}
    written = {line.strip() for line in lines if line.strip() in ("rcp-bypass", "seed-checker-bypass")}
    return exact, written


def check_counts(folder: BenchFolder) -> list[Finding]:
    want = benchmarks.runs(folder.name)
    have = len(folder.logs)
    if want is None or have == want:
        return []
    return [finding("TREE003", folder.shown, f"{have} result file(s) for {folder.name}, the round asks for {want}")]


def check_olympic(folder: BenchFolder, runs: list[LogFacts], also: set[str] | None = None) -> list[Finding]:
    bad = sorted({f.path for f in runs if f.error_codes} | (also or set()))  # `also`: runs failed by power checks
    allowed = benchmarks.dropped(folder.name)
    names = ", ".join(os.path.basename(p) for p in bad)
    if not bad:
        return []
    if len(bad) <= allowed:
        return [finding("TREE008", folder.shown, f"{len(bad)} non-compliant run(s) accepted: {names}")]
    return [finding("TREE007", folder.shown, f"{len(bad)} runs do not comply (at most {allowed} allowed): {names}")]


def rcp_findings(folder: BenchFolder, result: rcp.RcpResult) -> list[Finding]:
    if result.status in ("not_applicable", "not_checked"):  # not_checked: the crash itself is TREE024
        return []
    if result.status in ("pass", "bypassed"):
        return [finding("TREE019", folder.shown, result.message)]
    if result.status == "fail":
        return [finding("TREE018", folder.shown, fail_words(result))]
    code = "TREE021" if result.reference == "Batch sizes in files do not match" else "TREE020"
    return [finding(code, folder.shown, result.message)]


def fail_words(result: rcp.RcpResult) -> str:
    """TREE018's verdict in plain words, then the reference's numbers. The reference fails a folder exactly when
    the olympic mean is not at or above the fastest allowed: below it, or not a number."""
    mean, low = result.submission_mean, result.min_epochs
    if mean is None or low is None:
        why = "the folder fails the RCP check"
    elif math.isnan(mean):
        why = "the folder fails the RCP check: too few runs converged for an olympic mean of their convergence"
    elif mean < low:
        why = "the folder fails the RCP check: its runs converged faster than the reference allows"
    else:
        why = "the folder fails the RCP check"
    return f"{why}; {result.message}"


def holds_changed_path(folder: BenchFolder, options: CheckOptions) -> bool:
    """With --changed-since, only folders holding a changed path are checked again."""
    changed = options.changed_paths
    if changed is None:
        return True
    prefix = str(folder.path.resolve()) + os.sep
    return any(p.startswith(prefix) for p in changed)


def prepared_folders(org: OrgTree) -> list[BenchFolder]:
    """The folders prepare_org listed (taken, so a second check lists afresh), else listed now."""
    folders, org.prepared.folders = org.prepared.folders, None
    return bench_folders(org) if folders is None else folders
