"""The `config-names` check: `config_filename` names a config submitted with the benchmark's implementation
(ruleset 6.1.0 and later).

Training_policies PR #592 made `config_filename` mandatory in every closed and open 6.1 log and says it "must
identify the matching submitted config"; mlperf-logging's 6.1 rule file checks only that it is there and not empty.
Before 6.1 the key is optional (6.0's common.yaml) and no rule says what it names, so nothing is checked there.
A log often carries the path the config had inside the job's container, so a value identifies a file when its
last component is the name of a file under `benchmarks/<benchmark>/implementations/`, with or without the suffix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rounds.detect import version
from mlsubmit.checker.tree.shared import tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.names import did_you_mean

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE050"})  # the `config-names` check's

KEY = "config_filename"
NAMED_FROM = (6, 1, 0)  # training_policies PR #592


def code_folder(org: OrgTree, bench: str) -> tuple[Path, str]:
    """The benchmark's implementation folder and how it is shown: `benchmarks/` (or the misspelt `benchmark/`
    when only that exists, TREE010), then `implementations/` when there is one."""
    code_dir = "benchmarks" if org.sub("benchmarks").is_dir() or not org.sub("benchmark").is_dir() else "benchmark"
    root = org.sub(code_dir, bench)
    if (root / "implementations").is_dir():
        return root / "implementations", org.shown(code_dir, bench, "implementations")
    return root, org.shown(code_dir, bench)


def file_names(root: Path) -> set[str]:
    """Every file name under `root` (links to folders are not followed, as in the hygiene walk)."""
    return {name for _, _, files in os.walk(root) for name in files}


def check_config_names(org: OrgTree, bench: str, runs: list[LogFacts], ruleset: str) -> list[Finding]:
    """TREE050 once per value that names no submitted file, at the first run that logs it."""
    if version(ruleset) < NAMED_FROM:
        return []
    firsts: dict[str, tuple[object, LogFacts]] = {}  # by repr: a value may be a list or a dict
    for facts in runs:
        if KEY in facts.first:
            firsts.setdefault(repr(facts.value(KEY)), (facts.value(KEY), facts))
    if not firsts:
        return []
    root, shown = code_folder(org, bench)
    names = file_names(root) if root.is_dir() else set()
    stems = {os.path.splitext(n)[0] for n in names}
    out = []
    for value, facts in firsts.values():
        if not isinstance(value, str) or not value.strip():
            why = f"{KEY} {value!r} is not a file name"
        else:
            base = _last_part(value)
            if base in names or base in stems:
                continue
            why = f"{KEY} {value!r} names no file under {shown}" + did_you_mean(base, names)
        out.append(finding("TREE050", facts.path, why, line=facts.line(KEY)))
    return out


def _last_part(value: str) -> str:
    """The file name a value ends in, whether the job ran on a POSIX or a Windows host."""
    posix = PurePosixPath(value.strip()).name
    return PureWindowsPath(posix).name if "\\" in posix else posix


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    """The `config-names` check, over every results folder of a benchmark of the round."""
    return [f for folder in tree_facts(org, facts, options).known()
            for f in check_config_names(org, folder.folder.name, folder.runs, options.ruleset)]
