"""What several checks of the full (default) profile need of one organisation tree, worked out once per check pass
and shared on `org.prepared` rather than by checks calling each other: the results folders as listed, the
organisation's package_checker_params flags, and per results folder its runs, the power checker's verdict (the
runs it fails count in the olympic tolerance), the division it is judged in and the bypass flags in force.

Each fact is worked out when a check first asks for it, so a profile without the checks that need it does not
pay for it. The facts belong to one pass (one `facts` mapping of the pipeline); a second check of the same tree
works afresh.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.logs.input import is_result_log
from mlsubmit.checker.power import folder as power_folder
from mlsubmit.checker.rcp import verdict as rcp
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds import division as division_of
from mlsubmit.checker.tree import params
from mlsubmit.checker.tree.folders import (
    bench_folders,
    bypass_flags,
    holds_changed_path,
    prepared_folders,
    read_division,
)

from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions


@dataclass
class FolderFacts:
    """One results folder's facts for the checks of one pass."""

    org: OrgTree
    folder: BenchFolder
    runs: list[LogFacts]
    ruleset: str
    org_flags: frozenset[str]  # the organisation's package_checker_params: the verify script's, from 2.0 on

    @cached_property
    def known(self) -> bool:
        """Whether the folder is named after a benchmark of the round (else only its name and entries are judged)."""
        return self.folder.name in benchmarks.allowed(self.ruleset)

    @cached_property
    def power(self) -> tuple[list[Finding], set[str]]:
        """The power check's findings and the runs (display paths) it fails."""
        return power_folder.check_folder(self.org, self.folder, self.runs, as_reference=False)

    @cached_property
    def division(self) -> str | None:
        """The division the system file gives, as written."""
        return read_division(self.org, self.folder.system)

    @cached_property
    def closed(self) -> bool:
        """Whether the folder is judged as closed (seeds, evaluation cadence, RCPs)."""
        return division_of.is_closed(self.division, self.runs)

    @cached_property
    def bypass(self) -> tuple[frozenset[str], frozenset[str]]:
        """(flags the reference honours, flags written) in the folder's and its system's package_checker_params."""
        honoured, written = bypass_flags(self.folder.path)
        sys_honoured, sys_written = bypass_flags(self.folder.path.parent)
        return frozenset(honoured | sys_honoured), frozenset(written | sys_written)

    @property
    def asked(self) -> frozenset[str]:
        """The bypass flags in force: the folder's and its system's as written, and the organisation's."""
        return self.bypass[1] | self.org_flags


@dataclass
class TreeFacts:
    """An organisation tree's facts for the checks of one pass."""

    facts: Mapping[str, LogFacts]  # the pass they belong to
    folders: list[BenchFolder]
    org_flags: frozenset[str]
    touched: list[FolderFacts] = field(default_factory=list)  # the folders checked (--changed-since: changed ones)

    def known(self) -> list[FolderFacts]:
        """The touched folders named after a benchmark of the round."""
        return [f for f in self.touched if f.known]

    def closed(self) -> list[FolderFacts]:
        """The touched folders of a benchmark of the round, judged as closed."""
        return [f for f in self.touched if f.known and f.closed]


def tree_facts(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> TreeFacts:
    """The tree's facts for this pass: made by the first check that asks, kept for the others."""
    kept = org.prepared.tree
    if kept is not None and kept.facts is facts:
        return kept
    folders = prepared_folders(org)
    org_flags = frozenset(params.read_org_params(org.root, org.shown(params.NAME), options.ruleset).flags)
    made = TreeFacts(facts, folders, org_flags)
    made.touched = [FolderFacts(org, f, f.facts(facts), options.ruleset, org_flags)
                    for f in folders if holds_changed_path(f, options)]
    org.prepared.tree = made
    return made


def listed_folders(org: OrgTree) -> list[BenchFolder]:
    """The results folders as a preparation lists them: once for all the preparations of a pass."""
    if org.prepared.folders is None:
        org.prepared.folders = bench_folders(org)
    return org.prepared.folders


def known_folders(folders: list[BenchFolder], ruleset: str) -> list[BenchFolder]:
    known = set(benchmarks.allowed(ruleset))
    return [f for f in folders if f.name in known]


def prepare_rcp(org: OrgTree, folders: list[BenchFolder], options: CheckOptions) -> None:
    """The RCP statistics of the benchmarks whose system file says closed (each system file read once)."""
    folders = known_folders(folders, options.ruleset)
    divisions = {system: read_division(org, system) for system in {f.system for f in folders}}
    rcp.prepare(options.ruleset, {f.name for f in folders if division_of.is_closed(divisions[f.system], [])})


def only_logs_changed(org: OrgTree, options: CheckOptions) -> bool:
    """With --changed-since: every change inside this organisation is an existing result log."""
    if options.changed_paths is None:
        return False
    root = str(org.root.resolve()) + os.sep
    mine = [Path(p) for p in options.changed_paths if p.startswith(root)]
    return all(p.is_file() and is_result_log(p.name) and p.parent.parent.parent.name == "results" for p in mine)
