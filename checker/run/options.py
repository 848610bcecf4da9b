"""What a check run is asked to do: `CheckOptions`, and the `Profile` that chooses its checks.

A profile lists the checks it runs, by module and function name inside `mlsubmit.checker`: the log checks (one
parsed log in, findings out), the preparations (tree work that needs no log, run beside the log checks) and the
org checks (an organisation tree and its logs' facts in, findings out). They are imported when first asked for, so
a run of a few logs does not pay for the tree checks. This is the one place a profile's meaning is written down.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlsubmit.checker.logs.facts import LogFacts
    from mlsubmit.checker.logs.reader import ParsedLog
    from mlsubmit.checker.run.discover import OrgTree

    from mlsubmit.findings import Finding

LogCheck = Callable[["ParsedLog", "CheckOptions"], list["Finding"]]
OrgCheck = Callable[["OrgTree", dict[str, "LogFacts"], "CheckOptions"], list["Finding"]]
OrgPrep = Callable[["OrgTree", "CheckOptions"], None]
CodeTask = tuple[Path, Mapping[str, Any] | None]  # a file to scan for secrets, with its tree's cached answers
CodePlan = Callable[["OrgTree", "CheckOptions"], list[CodeTask]]

# A progress display: given a total and a label, a context that yields the function to call once per item done.
# The command line passes its terminal bar (mlsubmit.cli.progress.tracker); the checker never draws anything.
Tracker = Callable[[int, str], AbstractContextManager[Callable[[], None]]]


def _nothing() -> None:
    return None


@contextmanager
def no_progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """The default Tracker: shows nothing."""
    yield _nothing


@dataclass(frozen=True)
class _Plan:
    log_checks: tuple[str, ...]
    preparations: tuple[str, ...]
    code_scan: str | None  # (org, options) -> the files whose secret scan is a task of the log pool
    org_checks: tuple[str, ...]
    hyperparameters: bool  # the closed-division table applies (unless --no-hyperparameters)
    demote_run_errors: bool  # a run's errors inside a tree count through the folder's olympic tolerance (TREE007)
    # the tree check is the reference package checker's own (no layout, implementation, hygiene or power rules)
    reference_tree: bool


HP_CHECK = "hyperparameters.apply:check_log"

_PLANS: dict[str, _Plan] = {
    "full": _Plan(
        log_checks=("rules.engine:check_log", HP_CHECK, "tree.resultfile:check_log"),
        preparations=("systems.agreement:prepare_org", "tree.check:prepare_org"),
        code_scan="tree.check:code_to_scan",
        org_checks=("systems.agreement:check_org", "tree.check:check_org"),
        hyperparameters=True,
        demote_run_errors=False,
        reference_tree=False,
    ),
    # only what mlperf-logging's package checker checks; its system-file check is part of the tree check
    "reference": _Plan(
        log_checks=("rules.engine:check_log",),
        preparations=("tree.check:prepare_org",),
        code_scan=None,
        org_checks=("tree.check:check_org",),
        hyperparameters=False,
        demote_run_errors=True,
        reference_tree=True,
    ),
}


def _load(name: str) -> Any:
    module, function = name.split(":")
    return getattr(importlib.import_module(f"mlsubmit.checker.{module}"), function)


class Profile(str, Enum):
    """`--profile`. A str, so its value is the command-line name and the cache key's word for it."""

    FULL = "full"
    REFERENCE = "reference"

    @property
    def plan(self) -> _Plan:
        return _PLANS[self.value]

    def log_checks(self, *, hyperparameters: bool = True) -> list[LogCheck]:
        names = [n for n in self.plan.log_checks if hyperparameters or n != HP_CHECK]
        return [_load(n) for n in names]

    def log_check(self, name: str) -> LogCheck:
        """One of the plan's log checks by its name (those that read a log's counters, not its records)."""
        return _load(name)

    def preparations(self) -> list[OrgPrep]:
        return [_load(n) for n in self.plan.preparations]

    def code_scan(self) -> CodePlan | None:
        return None if self.plan.code_scan is None else _load(self.plan.code_scan)

    def org_checks(self) -> list[OrgCheck]:
        return [_load(n) for n in self.plan.org_checks]


@dataclass(frozen=True)
class CheckOptions:
    ruleset: str
    profile: Profile = Profile.FULL  # a plain "full" or "reference" is accepted and turned into a Profile
    jobs: int = 0  # worker processes; 0: one per core
    cache_dir: Path | None = None
    changed_since: str | None = None
    strict: bool = False
    hyperparameters: bool = True  # the closed-division table (issue: HP checks)
    changed_paths: frozenset[str] | None = None  # resolved paths changed since --changed-since (set by run_check)
    # False: the log's facts are not extracted (empty LogFacts come back). Set by run_rounds, for logs outside an
    # organisation tree when its caller reads only findings; never with a cache, whose entries keep facts.
    facts: bool = True
    # --custom-rcps: the text of an RCP file (rcp/custom.py; its records replace the shipped RCPs of their
    # benchmark), checked when the options are made. The full profile only: the package checker takes none.
    custom_rcps: str | None = None
    # Run sets of raw job output (tree/runset.py): --system NAME for every run, else (resolved file, system) pairs
    # of the files a package.toml's [[results]] would package, else the log's platform; and how N of M > N runs
    # are chosen.
    run_system: str | None = None
    run_systems: tuple[tuple[str, str], ...] = ()
    run_select: str = "median-window"
    # The command line's progress display for work done outside the pool (the code scan); never part of a key.
    progress: Tracker = field(default=no_progress, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "profile", Profile(self.profile))
        if self.custom_rcps is not None:
            from mlsubmit.checker.rcp.custom import parse

            parse(self.custom_rcps)  # CustomRcpError (a ValueError) for a file the reference could not use

    @property
    def hp_table(self) -> bool:
        """The closed-division hyperparameter table is checked: the profile has it and it was not turned off."""
        return self.hyperparameters and self.profile.plan.hyperparameters
