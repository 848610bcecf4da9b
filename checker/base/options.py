"""What a check run is asked to do: `CheckOptions`, a plain record, and the `Profile` that chooses its checks.

A profile is data (checker/tables/profile-<name>.yaml, read by checker/policy/profiles.py): the registered checks
it runs (checker/engine/checks.py's `plan`) and each code's severity. `CheckOptions.policy` carries it with the
project's and the command line's settings, applied to the report after checking (checker/policy/severity.py's
`in_force`). What these options mean is read above this floor: the engine turns the profile into checks, and
checks --custom-rcps before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:

    pass

CodeTask = tuple[Path, Mapping[str, Any] | None]  # a file to scan for secrets, with its tree's cached answers

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


class Severities(Protocol):
    """What the options know of the policy they carry (checker/policy/severity.py's `Policy`): the profile it
    was made for."""

    @property
    def profile(self) -> str: ...


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
    # benchmark), checked by the engine before anything runs. The full profile only: the package checker takes
    # none.
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
    # The severities and selections applied to the report (None: the profile's own; one made for another profile
    # keeps its layers over this one's: checker/policy/severity.py's `in_force`). Never part of a cache key: it is
    # applied after checking, to findings that hold the checks' own severities.
    policy: Severities | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "profile", Profile(self.profile))
