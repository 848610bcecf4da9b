"""The `layout` check: an organisation folder's layout (results/, benchmarks/ and nothing that is not part of a
submission) and its package_checker_params file, as the verify scripts of 2.0 and later read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.tree import params
from mlsubmit.checker.tree.folders import listdir, tree_policy

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE001", "TREE010", "TREE026", "TREE046", "TREE047"})


def check_layout(org: OrgTree, ruleset: str) -> list[Finding]:
    out = []
    if not org.sub("results").is_dir():
        out.append(finding("TREE001", org.display, "no results/ folder"))
    if org.sub("benchmark").is_dir():
        out.append(finding("TREE010", org.shown("benchmark"), "implementation code is in benchmark/, not benchmarks/"))
    allowed = set(tree_policy()["org_folder_allowed"]) | {"benchmark"}
    if params.applies(ruleset):  # the verify scripts of 2.0 and later read it
        allowed.add(params.NAME)
    out += params.read_org_params(org.root, org.shown(params.NAME), ruleset).findings
    out += [
        finding("TREE026", org.shown(name), f"{name!r} is not part of a submission")
        for name in listdir(org.root)
        if name not in allowed and not name.startswith(".")
    ]
    return out


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """The layout is judged from the listing alone: beside the log checks."""
    org.prepared.layout = check_layout(org, options.ruleset)


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    prep = org.prepared
    out, prep.layout = (check_layout(org, options.ruleset) if prep.layout is None else prep.layout), None
    return out
