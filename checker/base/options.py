"""What a check run is asked to do: `CheckOptions`, and the `Profile` that chooses its checks.

A profile is data (checker/tables/profile-<name>.yaml, read by checker/policy/profiles.py): the registered checks
it runs (checker/engine/checks.py) and each code's severity. `CheckOptions.policy` carries it with the project's and
the command line's settings, applied to the report after checking (checker/policy/severity.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlsubmit.checker.base.targets import OrgTree
    from mlsubmit.checker.logs.facts import LogFacts
    from mlsubmit.checker.logs.reader import ParsedLog
    from mlsubmit.checker.policy.profiles import ProfileSpec
    from mlsubmit.checker.policy.severity import Policy

    from mlsubmit.core.findings import Finding

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


class Profile(str, Enum):
    """`--profile`: a shipped profile (checker/tables/profile-<name>.yaml). A str, so its value is the command-line
    name."""

    FULL = "full"
    REFERENCE = "reference"

    @property
    def plan(self) -> ProfileSpec:
        """The profile's data: its checks by stage and its severities (checker/policy/profiles.py)."""
        # upward (a contract exception): the policy layer is built on these options
        from mlsubmit.checker.policy.profiles import load

        return load(self.value)


@dataclass(frozen=True)
class CheckOptions:
    ruleset: str
    profile: Profile = Profile.FULL  # a plain "full" or "reference" is accepted and turned into a Profile
    jobs: int = 0  # worker processes; 0: one per core
    cache_dir: Path | None = None
    changed_since: str | None = None
    strict: bool = False
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
    # --fail-on rcp-risk=P (or mlsubmit.toml [check] fail-on): a closed set whose chance of failing its RCP once
    # complete is above P gets RUN009 as an error (rcp/planning.py); None: RUN009 is information only.
    rcp_risk_limit: float | None = None
    # The command line's progress display for work done outside the pool (the code scan); never part of a key.
    progress: Tracker = field(default=no_progress, compare=False, repr=False)
    # The severities and selections applied to the report (None: the profile's own). Never part of a cache key:
    # it is applied after checking, to findings that hold the checks' own severities.
    policy: Policy | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "profile", Profile(self.profile))
        if self.policy is None or self.policy.profile != self.profile.value:
            # upward (a contract exception): the policy layer is built on these options
            from mlsubmit.checker.policy.severity import Policy

            layers = self.policy.layers if self.policy is not None else ()
            object.__setattr__(self, "policy", Policy(self.profile.value, layers))
        if self.custom_rcps is not None:
            # upward (a contract exception): the policy layer is built on these options
            from mlsubmit.checker.rcp.custom import parse

            parse(self.custom_rcps)  # CustomRcpError (a ValueError) for a file the reference could not use

    @property
    def hp_table(self) -> bool:
        """The closed-division hyperparameter table is checked: the profile runs it."""
        return self.profile.plan.runs("hyperparameters")

    @property
    def in_force(self) -> Policy:
        assert self.policy is not None  # set by __post_init__
        return self.policy
