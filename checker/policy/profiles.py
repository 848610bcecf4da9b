"""Profiles as data: `checker/tables/profile-<name>.yaml` (schemas/profile.schema.json), each the checks it runs
and each code's severity, per round where the round's rules differ. `extends:` takes another profile and changes
it: checks and run_errors given replace the base's, severities are added code by code. The checks are named here;
the engine looks them up in its registry (checker/engine/checks.py's `plan`)."""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass, field
from typing import Any

from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Severity
from mlsubmit.core.support.datafiles import load_validated

SHIPPED = ("full", "reference")


@dataclass(frozen=True)
class FieldLevel:
    """A code's level in one field of a file (and, with `case`, in one case the check names there)."""

    field: str
    case: str | None
    level: Severity
    practice: str | None
    source: str

    def label(self) -> str:
        return self.field + (f" ({self.case})" if self.case else "")


@dataclass(frozen=True)
class CodeLevel:
    """A profile's severity for one code: a level for every round, or some rounds' own, per field of the file where
    the fields differ, and where it comes from."""

    default: Severity | None
    rounds: tuple[tuple[str, Severity], ...] = ()
    practice: str | None = None
    source: str = ""
    origin: str = ""  # the profile file that set it
    fields: tuple[FieldLevel, ...] = ()

    def level(self, round_name: str) -> Severity | None:
        return dict(self.rounds).get(round_name, self.default)

    def in_field(self, name: str | None, case: str | None) -> FieldLevel | None:
        """The field's level for that case, else the field's own; None when the profile names neither."""
        if name is None:
            return None
        found = {(f.field, f.case): f for f in self.fields}
        return found.get((name, case)) if case and (name, case) in found else found.get((name, None))


@dataclass(frozen=True)
class ProfileSpec:
    name: str
    description: str
    checks: tuple[tuple[str, tuple[str, ...]], ...]  # (stage, check names)
    run_errors: str  # "folder": a run's errors inside a tree are judged by its folder (TREE007); "log": its own
    note_alone: bool = False  # a log checked outside a tree says what its folder will make of its errors (POL001)
    kept_errors: frozenset[str] = frozenset()  # a run's codes that stay errors inside a tree (run_errors: folder)
    severity: tuple[tuple[str, CodeLevel], ...] = field(default=())
    chain: tuple[str, ...] = ()  # this profile, then what it extends

    def names(self, stage: str) -> tuple[str, ...]:
        return dict(self.checks).get(stage, ())

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


def _words(entry: dict[str, Any], key: str) -> str | None:
    return " ".join(entry[key].split()) if key in entry else None


def _fields(entry: dict[str, Any]) -> tuple[FieldLevel, ...]:
    out = []
    for name, given in entry.get("fields", {}).items():
        out.append(FieldLevel(name, None, Severity(given["level"]), _words(given, "practice"), _words(given, "source")
                              or ""))
        for case, sub in given.get("cases", {}).items():
            out.append(FieldLevel(name, case, Severity(sub["level"]), _words(sub, "practice"), _words(sub, "source")
                                  or ""))
    return tuple(out)


def _levels(data: dict[str, Any], origin: str) -> dict[str, CodeLevel]:
    out = {}
    for code, entry in data.get("severity", {}).items():
        level = entry.get("level")
        rounds = tuple(sorted((r, Severity(v)) for r, v in entry.get("rounds", {}).items()))
        out[code] = CodeLevel(Severity(level) if level else None, rounds, _words(entry, "practice"),
                              _words(entry, "source") or "", origin, _fields(entry))
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
    run_errors, note_alone, levels, kept = "log", False, {}, set()
    for data in reversed(chain):  # the base first, each extension over it
        origin = f"tables/profile-{data['profile']}.yaml"
        stages.update({stage: tuple(names) for stage, names in data.get("checks", {}).items()})
        run_errors = data.get("run_errors", run_errors)
        note_alone = data.get("note_alone", note_alone)
        kept.update(data.get("kept_errors", ()))  # an extension may add codes, never take the base's away
        levels.update(_levels(data, origin))
    return ProfileSpec(name=name, description=chain[0]["description"], checks=tuple(sorted(stages.items())),
                       run_errors=run_errors, note_alone=note_alone, kept_errors=frozenset(kept),
                       severity=tuple(sorted(levels.items())),
                       chain=tuple(d["profile"] for d in chain))
