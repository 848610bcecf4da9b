"""The `power` check of an organisation tree: each results folder's power/ logs, as the reference power checker
judges their listing and as the power rules judge what the logs show (checker/power/folder.py). The runs it fails
are counted by the results folder's olympic tolerance (results_folders.py), from the same verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.power import folder as power_folder
from mlsubmit.checker.tree.folders import holds_changed_path
from mlsubmit.checker.tree.shared import known_folders, listed_folders, tree_facts

from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"POW001", "POW002", "POW003", "POW004", "POW010", "POW011", "POW012", "POW013", "POW014",
                   "POW015", "POW016", "POW017", "POW018", "POW019", "POW020", "TREE024"})


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """The power checker's verdicts and the power logs, beside the log checks: they need no result log."""
    for folder in known_folders(listed_folders(org), options.ruleset):
        if holds_changed_path(folder, options):
            power_folder.prepare_folder(org, folder)


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    return [f for folder in tree_facts(org, facts, options).known() for f in folder.power[0]]
