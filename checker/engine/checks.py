"""The checks `mlsubmit check` can run, as registered objects: each names its stage, the codes it declares and what
runs it, typed by its stage's Protocol (checker/base/contract.py).

A profile (checker/policy/profiles.py, data in checker/tables/profile-<name>.yaml) lists checks by their registered
name. The modules of the log checks are imported here (a check of one log runs them); those of the checks of trees,
system descriptions (jsonschema) and run sets (SQLite) when their check first runs, or its codes are first asked for.

Each check declares the codes it may emit beside it (a `CODES` constant in its module), each command other than
`check` in COMMAND_CODES below; the catalogue's view of who emits a code (`emitters`) is worked out from these
declarations, and a test holds declarations and catalogue equal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload

from mlsubmit.checker.base.contract import (
    Check,
    CodeCheck,
    FileCheck,
    LogCheck,
    OrgCheck,
    PrepareCheck,
    RawCheck,
    declare,
    expanded_codes,
)
from mlsubmit.checker.engine import log_checks
from mlsubmit.checker.hyperparameters import apply as hp_apply
from mlsubmit.checker.logs import reader
from mlsubmit.checker.policy.profiles import ProfileSpec, load
from mlsubmit.checker.rules import engine as rules_engine
from mlsubmit.checker.tree import resultfile

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions


# --- the checks of trees, system files and run sets: imported when first run -----------------------------------
# A check of logs alone imports none of them (the power logs' reader, the RCP statistics, jsonschema, SQLite,
# numpy); each loader below imports its check's module, whose `CODES` sit beside the check.


class TreeCheck(Protocol):
    """A module holding an org-stage check and the codes it declares (checker/tree/<check>.py)."""

    @property
    def CODES(self) -> frozenset[str]: ...

    @property
    def check(self) -> OrgCheck: ...


class PreparedTreeCheck(TreeCheck, Protocol):
    """...with work that needs no log, done beside the log checks."""

    @property
    def prepare(self) -> PrepareCheck: ...


def _layout() -> PreparedTreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import layout

    return layout


def _results_folders() -> TreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import results_folders

    return results_folders


def _power() -> PreparedTreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import power

    return power


def _init_time() -> TreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import init_time

    return init_time


def _config_names() -> TreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import configfile

    return configfile


def _seeds() -> TreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import seeds

    return seeds


def _eval_cadence() -> TreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import eval_cadence

    return eval_cadence


def _convergence() -> PreparedTreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import convergence

    return convergence


def _implementations() -> PreparedTreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import implementations

    return implementations


def _hygiene_code() -> CodeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import hygiene

    return hygiene.code


def _hygiene() -> PreparedTreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import hygiene

    return hygiene


def _systems() -> PreparedTreeCheck:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems import agreement

    return agreement


def _systems_file() -> FileCheck:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.descriptions import check_system_file

    return lambda path, display, ruleset: check_system_file(path, display, ruleset)[1]  # the findings, not the doc


def _reference() -> PreparedTreeCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree import reference

    return reference


def _reference_file() -> FileCheck:
    # a tree check only for an organisation tree (start-up)
    from mlsubmit.checker.tree.reference import check_system_file

    return check_system_file


def _run_sets() -> RawCheck:
    # SQLite (the run ledger's storage) only for raw job output (start-up of a check of logs or trees)
    from mlsubmit.checker.tree.runset import check_raw_folder

    return check_raw_folder


def _run_sets_codes() -> frozenset[str]:
    # SQLite (the run ledger's storage) only when the run sets' codes are asked for (start-up)
    from mlsubmit.checker.tree.runset import CODES

    return CODES


# --- the registry --------------------------------------------------------------------------------------------

# Any org check may meet a folder or file of the tree it cannot read: the pipeline files TREE048 for it.
UNREADABLE = frozenset({"TREE048"})


def _log(name: str, run: LogCheck[Any], codes: frozenset[str]) -> Check[LogCheck[Any]]:
    return Check(name, "log", lambda: run, lambda: codes)


def _tree(name: str, load: Callable[[], TreeCheck]) -> Check[OrgCheck]:
    return Check(name, "org", lambda: load().check, lambda: load().CODES | UNREADABLE)


def _prepared(name: str, load: Callable[[], PreparedTreeCheck]) -> tuple[Check[PrepareCheck], Check[OrgCheck]]:
    """A tree check with a preparation: the preparation reports nothing, its org check what it found."""
    return Check(name, "prepare", lambda: load().prepare), _tree(name, load)


def _file(name: str, load: Callable[[], FileCheck], codes: Callable[[], TreeCheck]) -> Check[FileCheck]:
    return Check(name, "file", load, lambda: codes().CODES)


CHECKS: dict[tuple[str, str], Check[Any]] = {
    (c.name, c.stage): c
    for c in (
        _log("read", log_checks.Read(), reader.CODES),
        _log("rules", log_checks.Rules(), rules_engine.CODES),
        _log("hyperparameters", log_checks.Hyperparameters(), hp_apply.CODES),
        _log("result-file", log_checks.ResultFile(), resultfile.CODES),
        *_prepared("systems", _systems),
        _file("systems", _systems_file, _systems),  # a system description given on its own
        # the full profile's tree checks (checker/tree/<check>.py)
        *_prepared("layout", _layout),
        _tree("results-folders", _results_folders),
        *_prepared("power", _power),
        _tree("init-time", _init_time),
        _tree("config-names", _config_names),
        _tree("seeds", _seeds),
        _tree("eval-cadence", _eval_cadence),
        *_prepared("convergence-rcp", _convergence),
        *_prepared("implementations", _implementations),
        *_prepared("hygiene", _hygiene),
        Check("hygiene", "code", _hygiene_code),  # the secret scan's files, scanned by the pool beside the logs
        # the reference package checker's verdict; a system description on its own: its system_desc_checker's
        *_prepared("reference-tree", _reference),
        _file("reference-tree", _reference_file, _reference),
        # a run set is judged as a results folder: the folder's codes, each labelled with its set
        Check("run-sets", "raw", _run_sets, _run_sets_codes),
    )
}

# The commands other than `check` that emit codes (and `check` about the run itself: policy, waivers), with the
# codes each declares. A new code of a command is added to its line here.
COMMAND_CODES: dict[str, frozenset[str]] = {
    "advise": frozenset({"HP006", "HP007", "HP008", "HP010", "HP011", "RUN009"}),
    "package": frozenset({"PKG001", "PKG002", "PKG003", "PKG004", "PKG005", "PKG006", "PKG007", "PKG008", "PKG009",
                          "PKG010", "PKG011", "PKG012", "PKG013", "PKG020", "PKG030", "PKG031", "PKG032", "PKG033",
                          "PKG034", "PKG035", "PKG036", "PKG045", "PKG048", "PKG050", "PKG063", "PKG064",
                          "POL002"}),
    "verify": frozenset({"PKG040", "PKG041", "PKG042", "PKG043", "PKG044", "PKG045", "PKG046", "PKG047", "PKG048",
                         "PKG049", "PKG060", "PKG061", "PKG062", "PKG070", "PKG071", "PKG072", "PKG073", "PKG074",
                         "PKG075"}),
    "report": frozenset({"REP"}),  # the whole family
    "review": frozenset({"REV"}),  # the whole family
    "policy": frozenset({"POL001"}),
    "waivers": frozenset({"WVR"}),  # the whole family
    "capture": frozenset({"CAP"}),  # the whole family
    "runs": frozenset({"RUN008"}),
}
COMMANDS = tuple(COMMAND_CODES)

# Catalogued but emitted no more: kept so that old reports and waivers are still explained (docs/tree-checks.md).
RETIRED = frozenset({"TREE029"})

for _check in CHECKS.values():  # what the policy (under the engine) asks of a check's codes
    declare(_check.name, _check.declares)
for _name, _codes in COMMAND_CODES.items():
    declare(_name, functools.partial(frozenset, _codes))


# --- the derived view: who emits a code ----------------------------------------------------------------------


def command_codes() -> dict[str, frozenset[str]]:
    """Each command's declared codes (a family declared whole, read from the catalogue)."""
    return {name: expanded_codes(codes) for name, codes in COMMAND_CODES.items()}


def emitted_by(name: str) -> frozenset[str]:
    """The codes the check (at every stage) or command of that name declares."""
    if name in COMMAND_CODES:
        return expanded_codes(COMMAND_CODES[name])
    return frozenset(code for c in CHECKS.values() if c.name == name for code in c.codes)


@functools.cache
def _emitters() -> Mapping[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for name in [*dict.fromkeys(c.name for c in CHECKS.values()), *COMMANDS]:
        for code in sorted(emitted_by(name)):
            out.setdefault(code, []).append(name)
    return {code: tuple(names) for code, names in out.items()}


def emitters(code: str) -> tuple[str, ...]:
    """The checks and commands that declare `code`, checks in registry order, then commands (the catalogue's
    `emitted_by`, derived); () for a code nobody emits (retired, or unknown)."""
    return _emitters().get(code, ())


def check(name: str, stage: str) -> Check[Any]:
    """The registered check of that name and stage (KeyError when there is none)."""
    return CHECKS[(name, stage)]


def plan(profile: str) -> ProfileSpec:
    """The profile of that name (checker/policy/profiles.py), every check it names looked up here (KeyError: a
    profile file naming a check nobody registered)."""
    spec = load(profile)
    for stage_name, check_names in spec.checks:
        for name in check_names:
            check(name, stage_name)
    return spec


@overload
def stage(spec: ProfileSpec, name: Literal["log"]) -> list[Check[LogCheck[Any]]]: ...
@overload
def stage(spec: ProfileSpec, name: Literal["prepare"]) -> list[Check[PrepareCheck]]: ...
@overload
def stage(spec: ProfileSpec, name: Literal["code"]) -> list[Check[CodeCheck]]: ...
@overload
def stage(spec: ProfileSpec, name: Literal["org"]) -> list[Check[OrgCheck]]: ...
@overload
def stage(spec: ProfileSpec, name: Literal["raw"]) -> list[Check[RawCheck]]: ...
@overload
def stage(spec: ProfileSpec, name: Literal["file"]) -> list[Check[FileCheck]]: ...
@overload
def stage(spec: ProfileSpec, name: str) -> list[Check[Any]]: ...
def stage(spec: ProfileSpec, name: str) -> list[Check[Any]]:
    """The profile's registered checks of that stage, in its order (each typed by its stage's Protocol)."""
    return [check(check_name, name) for check_name in spec.names(name)]


@overload
def run_by(options: CheckOptions, name: Literal["log"]) -> list[Check[LogCheck[Any]]]: ...
@overload
def run_by(options: CheckOptions, name: Literal["prepare"]) -> list[Check[PrepareCheck]]: ...
@overload
def run_by(options: CheckOptions, name: Literal["code"]) -> list[Check[CodeCheck]]: ...
@overload
def run_by(options: CheckOptions, name: Literal["org"]) -> list[Check[OrgCheck]]: ...
@overload
def run_by(options: CheckOptions, name: Literal["raw"]) -> list[Check[RawCheck]]: ...
@overload
def run_by(options: CheckOptions, name: Literal["file"]) -> list[Check[FileCheck]]: ...
def run_by(options: CheckOptions, name: str) -> list[Check[Any]]:
    """The checks of that stage the options' profile runs. Asked for each log: the profile as loaded (cached), its
    checks validated once per check run by `plan`, and those of this stage looked up by `stage` anyway."""
    return stage(load(options.profile.value), name)


def names() -> set[str]:
    return {name for name, _ in CHECKS}


def registered_codes() -> set[str]:
    """Every code a check or command declares."""
    out: set[str] = set()
    for c in CHECKS.values():
        out |= c.codes
    for codes in command_codes().values():
        out |= codes
    return out
