"""The checks `mlsubmit check` can run, as registered objects: each names its stage, the codes it declares and what
runs it, typed by its stage's Protocol (checker/base/contract.py).

A profile (checker/policy/profiles.py, data in checker/tables/profile-<name>.yaml) lists checks by their registered
name. The modules of the full profile's log checks and tree checks are imported here (a check of one log loads them
all anyway), and the reference profile's; those of the system descriptions (jsonschema) and of run sets (SQLite) are
imported when their check first runs, their declarations from modules of their own.

Each check declares the codes it may emit beside it (a `CODES` constant in its module), each command other than
`check` in COMMAND_CODES below; the catalogue's view of who emits a code (`emitters`, `explain`'s "emitted by") is
worked out from these declarations, and a test holds declarations and catalogue equal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

from mlsubmit.checker.base.contract import (
    Check,
    CodeCheck,
    FileCheck,
    LogCheck,
    OrgCheck,
    PrepareCheck,
    RawCheck,
    declare,
    expand,
)
from mlsubmit.checker.hyperparameters import apply as hp_apply
from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.logs import reader
from mlsubmit.checker.logs.sinks import RecordsOfKeys
from mlsubmit.checker.policy.profiles import ProfileSpec, load
from mlsubmit.checker.rules import engine as rules_engine
from mlsubmit.checker.rules.files import get_ruleset
from mlsubmit.checker.systems import emits as systems_emits
from mlsubmit.checker.tree import (
    configfile,
    convergence,
    eval_cadence,
    hygiene,
    implementations,
    init_time,
    layout,
    power,
    reference,
    resultfile,
    results_folders,
    runset_emits,
    seeds,
    shared,
)

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.base.targets import LogRef, OrgTree
    from mlsubmit.checker.logs.reader import ParsedLog
    from mlsubmit.checker.logs.sinks import WholeLogReader

    from mlsubmit.core.findings import Finding


# --- the log checks ------------------------------------------------------------------------------------------


class _Read:
    """The reader's own findings: every log is read by the pipeline, so there is nothing to add."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> None:
        return None

    def finish(self, state: None, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
        return found


class _RulesState:
    """The rule files' stream of one log, and the whole-log reread whose cut (LOG012) it may report."""

    def __init__(self, stream: Any, whole: WholeLogReader) -> None:
        self.stream, self.whole = stream, whole
        self.feed = stream.feed


class _Rules:
    """mlperf-logging's rule files, run by our engine as the log streams past."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> _RulesState:
        return _RulesState(rules_engine.RuleStream(get_ruleset(options.ruleset), ref.display, whole), whole)

    def finish(self, state: _RulesState, log: ParsedLog, options: CheckOptions, found: list[Finding]
               ) -> list[Finding]:
        found = [*found, *state.stream.finish()]  # finishing may reread the whole log, and cut it (LOG012)
        return [*found, *([state.whole.cut] if state.whole.cut is not None else [])]


@functools.cache
def hp_keys(ruleset: str) -> frozenset[str]:
    """The keys the HP table reads in a round: worked out once per process, not per log (a table has ~30,000
    names to walk; per log that was a quarter of checking a small one)."""
    table = table_for(ruleset)
    rows = [(b, r) for b, found in table.benchmarks.items() for r in found] if table else []
    keys = {table.key(b, n) for b, r in rows for n in r.names()} if table else set()
    return frozenset(keys | {"submission_division", "submission_benchmark"})


class _Hyperparameters:
    """The closed hyperparameter table, over the records of the keys it reads."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> RecordsOfKeys:
        return RecordsOfKeys(hp_keys(options.ruleset))

    def finish(self, kept: RecordsOfKeys, log: ParsedLog, options: CheckOptions, found: list[Finding]
               ) -> list[Finding]:
        found = [*found, *hp_apply.check_log(kept.log(log), options)]
        found = hp_apply.merge_rule_duplicates(found)  # a value both catch: once
        return [*found, *kept.cut(log.path)]


class _ResultFile:
    """What a round asks a result file to hold besides its records: only what the reader counts."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> None:
        return None

    def finish(self, state: None, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
        return [*found, *resultfile.check_log(log, options)]


# --- the lazily imported checks ------------------------------------------------------------------------------


def _systems_prepare() -> PrepareCheck:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.agreement import prepare_org

    return prepare_org


def _systems_org() -> OrgCheck:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.agreement import check_org

    return check_org


def _systems_file() -> FileCheck:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.descriptions import check_system_file

    return lambda path, display, ruleset: check_system_file(path, display, ruleset)[1]  # the findings, not the doc


def _reference_prepare(org: OrgTree, options: CheckOptions) -> None:
    shared.prepare_folders(org, options)  # the folder listing and the RCP statistics


def _run_sets() -> RawCheck:
    # SQLite (the run ledger's storage) only for raw job output (start-up of a check of logs or trees)
    from mlsubmit.checker.tree.runset import check_raw_folder

    return check_raw_folder


# --- the registry --------------------------------------------------------------------------------------------

# Any org check may meet a folder or file of the tree it cannot read: the pipeline files TREE048 for it.
UNREADABLE = frozenset({"TREE048"})
NONE: frozenset[str] = frozenset()  # a preparation's codes: its org check reports what it found


def _log(name: str, run: LogCheck[Any], codes: frozenset[str]) -> Check[LogCheck[Any]]:
    return Check(name, "log", lambda: run, codes)


def _prepare(name: str, load: Callable[[], PrepareCheck]) -> Check[PrepareCheck]:
    return Check(name, "prepare", load, NONE)


def _code(name: str, load: Callable[[], CodeCheck]) -> Check[CodeCheck]:
    return Check(name, "code", load, NONE)


def _org(name: str, load: Callable[[], OrgCheck], codes: frozenset[str]) -> Check[OrgCheck]:
    return Check(name, "org", load, codes | UNREADABLE)


def _raw(name: str, load: Callable[[], RawCheck], codes: frozenset[str]) -> Check[RawCheck]:
    return Check(name, "raw", load, codes)


def _file(name: str, load: Callable[[], FileCheck], codes: frozenset[str]) -> Check[FileCheck]:
    return Check(name, "file", load, codes)


# The full profile's tree checks, each in its module with its `CODES` beside it: the org-stage `check`, and a
# `prepare` where it has work that needs no log, a `code` where the pool scans files for it.
TREE_CHECKS: tuple[Check[Any], ...] = (
    _prepare("layout", lambda: layout.prepare),
    _org("layout", lambda: layout.check, layout.CODES),
    _org("results-folders", lambda: results_folders.check, results_folders.CODES),
    _prepare("power", lambda: power.prepare),
    _org("power", lambda: power.check, power.CODES),
    _org("init-time", lambda: init_time.check, init_time.CODES),
    _org("config-names", lambda: configfile.check, configfile.CODES),
    _org("seeds", lambda: seeds.check, seeds.CODES),
    _org("eval-cadence", lambda: eval_cadence.check, eval_cadence.CODES),
    _prepare("convergence-rcp", lambda: convergence.prepare),
    _org("convergence-rcp", lambda: convergence.check, convergence.CODES),
    _prepare("implementations", lambda: implementations.prepare),
    _org("implementations", lambda: implementations.check, implementations.CODES),
    _prepare("hygiene", lambda: hygiene.prepare),
    _code("hygiene", lambda: hygiene.code),
    _org("hygiene", lambda: hygiene.check, hygiene.CODES),
)


CHECKS: dict[tuple[str, str], Check[Any]] = {
    (c.name, c.stage): c
    for c in (
        _log("read", _Read(), reader.CODES),
        _log("rules", _Rules(), rules_engine.CODES),
        _log("hyperparameters", _Hyperparameters(), hp_apply.CODES),
        _log("result-file", _ResultFile(), resultfile.CODES),
        _prepare("systems", _systems_prepare),
        _org("systems", _systems_org, systems_emits.CODES),
        # a system description given on its own
        _file("systems", _systems_file, systems_emits.CODES),
        *TREE_CHECKS,
        _prepare("reference-tree", lambda: _reference_prepare),
        _org("reference-tree", lambda: reference.check_org, reference.CODES),
        # a system description on its own: the package checker's system_desc_checker verdict
        _file("reference-tree", lambda: reference.check_system_file, reference.CODES),
        # a run set is judged as a results folder: the folder's codes, each labelled with its set
        _raw("run-sets", _run_sets, runset_emits.CODES),
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
    declare(_check.name, _check.declared)
for _name, _codes in COMMAND_CODES.items():
    declare(_name, _codes)


# --- the derived view: who emits a code ----------------------------------------------------------------------


def command_codes() -> dict[str, frozenset[str]]:
    """Each command's declared codes (a family declared whole, read from the catalogue)."""
    return {name: expand(codes) for name, codes in COMMAND_CODES.items()}


def emitted_by(name: str) -> frozenset[str]:
    """The codes the check (at every stage) or command of that name declares."""
    if name in COMMAND_CODES:
        return expand(COMMAND_CODES[name])
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
