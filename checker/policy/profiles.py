"""Profiles as data: `checker/tables/profile-<name>.yaml` (schemas/profile.schema.json), each the checks it runs
and each code's severity, per round where the round's rules differ. `extends:` takes another profile and changes
it: checks and run_errors given replace the base's, severities are added code by code."""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass, field
from typing import Any

from mlsubmit.checker.base.contract import Check
from mlsubmit.checker.engine import checks

from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Severity
from mlsubmit.core.support.datafiles import load_validated

SHIPPED = ("full", "reference")


@dataclass(frozen=True)
class CodeLevel:
    """A profile's severity for one code: a level for every round, or some rounds' own, and where it comes from."""

    default: Severity | None
    rounds: tuple[tuple[str, Severity], ...] = ()
    practice: str | None = None
    source: str = ""
    origin: str = ""  # the profile file that set it

    def level(self, round_name: str) -> Severity | None:
        return dict(self.rounds).get(round_name, self.default)


@dataclass(frozen=True)
class ProfileSpec:
    name: str
    description: str
    checks: tuple[tuple[str, tuple[str, ...]], ...]  # (stage, check names)
    run_errors: str  # "folder": a run's errors inside a tree are judged by its folder (TREE007); "log": its own
    note_alone: bool = False  # a log checked outside a tree says what its folder will make of its errors (POL001)
    severity: tuple[tuple[str, CodeLevel], ...] = field(default=())
    chain: tuple[str, ...] = ()  # this profile, then what it extends

    def names(self, stage: str) -> tuple[str, ...]:
        return dict(self.checks).get(stage, ())

    def stage(self, stage: str) -> list[Check]:
        return [checks.check(name, stage) for name in self.names(stage)]

    def runs(self, name: str, stage: str = "log") -> bool:
        return name in self.names(stage)

    def levels(self) -> dict[str, CodeLevel]:
        return dict(self.severity)

    def key(self) -> str:
        """What the cache key needs of the profile: the log checks it runs (severities are applied after it)."""
        return ",".join(self.names("log"))


def _file(name: str) -> Any:
    entry = importlib.resources.files("mlsubmit.checker").joinpath(f"tables/profile-{name}.yaml")
    if name not in SHIPPED:
        raise UsageError(f"no profile {name!r}; the profiles are: {', '.join(SHIPPED)}")
    data = load_validated(entry, "profile.schema.json", what=f"tables/profile-{name}.yaml")
    if data["profile"] != name:
        raise ValueError(f"tables/profile-{name}.yaml names itself {data['profile']!r}")
    return data


def _levels(data: dict[str, Any], origin: str) -> dict[str, CodeLevel]:
    out = {}
    for code, entry in data.get("severity", {}).items():
        level = entry.get("level")
        rounds = tuple(sorted((r, Severity(v)) for r, v in entry.get("rounds", {}).items()))
        practice = " ".join(entry["practice"].split()) if "practice" in entry else None
        out[code] = CodeLevel(Severity(level) if level else None, rounds, practice, " ".join(entry["source"].split()),
                              origin)
    return out


@functools.cache
def load(name: str) -> ProfileSpec:
    """The profile of that name with what it extends folded in (UsageError for an unknown name or a loop)."""
    chain: list[dict[str, Any]] = []
    seen = name
    while True:
        if seen in (d["profile"] for d in chain):
            raise ValueError(f"profile {name!r}: extends loops back to {seen!r}")
        data = _file(seen)
        chain.append(data)
        if "extends" not in data:
            break
        seen = data["extends"]
    stages: dict[str, tuple[str, ...]] = {}
    run_errors, note_alone, levels = "log", False, {}
    for data in reversed(chain):  # the base first, each extension over it
        origin = f"tables/profile-{data['profile']}.yaml"
        stages.update({stage: tuple(names) for stage, names in data.get("checks", {}).items()})
        run_errors = data.get("run_errors", run_errors)
        note_alone = data.get("note_alone", note_alone)
        levels.update(_levels(data, origin))
    for stage, names in stages.items():
        for check_name in names:
            checks.check(check_name, stage)  # KeyError: a profile file naming a check nobody registered
    return ProfileSpec(name=name, description=chain[0]["description"], checks=tuple(sorted(stages.items())),
                       run_errors=run_errors, note_alone=note_alone, severity=tuple(sorted(levels.items())),
                       chain=tuple(d["profile"] for d in chain))
