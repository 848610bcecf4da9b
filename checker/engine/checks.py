"""The checks `mlsubmit check` can run, as registered objects: each names its stage and the codes it may emit.

A profile (checker/policy/profiles.py, data in checker/tables/profile-<name>.yaml) lists checks by their registered
name. The modules of the full profile's log checks and tree checks are imported here (a check of one log loads them
all anyway), and the reference profile's; those of the system descriptions (jsonschema) and of run sets (SQLite) are
imported when their check first runs.
Log checks are fed the log as the reader streams it: `start` gives the check's state for one log (a reader sink,
or None when it reads only what the reader counts), `finish` turns that state into findings.

Each code names the checks (and the commands other than `check`: COMMANDS) that emit it, in its catalogue entry
(`emitted_by` in mlsubmit/core/codes/*.yaml); a test holds registry, catalogue and emitting modules equal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.base.contract import Check, emitted_by
from mlsubmit.checker.hyperparameters import apply as hp_apply
from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.logs.sinks import RecordsOfKeys
from mlsubmit.checker.policy.profiles import ProfileSpec, load
from mlsubmit.checker.rules import engine as rules_engine
from mlsubmit.checker.rules.files import get_ruleset
from mlsubmit.checker.tree import full as tree_full
from mlsubmit.checker.tree import reference as tree_reference
from mlsubmit.checker.tree import resultfile

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.base.targets import LogRef
    from mlsubmit.checker.logs.reader import ParsedLog
    from mlsubmit.checker.logs.sinks import WholeLogReader

    from mlsubmit.core.findings import Finding


# --- the log checks ------------------------------------------------------------------------------------------


class _RulesState:
    """The rule files' stream of one log, and the whole-log reread whose cut (LOG012) it may report."""

    def __init__(self, stream: Any, whole: WholeLogReader) -> None:
        self.stream, self.whole = stream, whole
        self.feed = stream.feed


def _rules_start(ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> _RulesState:
    return _RulesState(rules_engine.RuleStream(get_ruleset(options.ruleset), ref.display, whole), whole)


def _rules_finish(state: _RulesState, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
    found = [*found, *state.stream.finish()]  # finishing may reread the whole log, and cut it (LOG012)
    return [*found, *([state.whole.cut] if state.whole.cut is not None else [])]


def _rules_load() -> Callable[..., Any]:
    return rules_engine.check_log


def _hp_start(ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> Any:
    return RecordsOfKeys(hp_keys(options.ruleset))


@functools.cache
def hp_keys(ruleset: str) -> frozenset[str]:
    """The keys the HP table reads in a round: worked out once per process, not per log (a table has ~30,000
    names to walk; per log that was a quarter of checking a small one)."""
    table = table_for(ruleset)
    rows = [(b, r) for b, found in table.benchmarks.items() for r in found] if table else []
    keys = {table.key(b, n) for b, r in rows for n in r.names()} if table else set()
    return frozenset(keys | {"submission_division", "submission_benchmark"})


def _hp_finish(kept: Any, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
    found = [*found, *hp_apply.check_log(kept.log(log), options)]
    found = hp_apply.merge_rule_duplicates(found)  # a value both catch: once
    return [*found, *kept.cut(log.path)]


def _hp_load() -> Callable[..., Any]:
    return hp_apply.check_log


def _result_file_load() -> Callable[..., Any]:
    return resultfile.check_log


def _result_file_finish(state: None, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
    return [*found, *_result_file_load()(log, options)]


def _read_load() -> Callable[..., Any]:
    return read_log


# --- the tree-level checks -----------------------------------------------------------------------------------


def _systems_prepare() -> Callable[..., Any]:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.agreement import prepare_org

    return prepare_org


def _systems_org() -> Callable[..., Any]:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.agreement import check_org

    return check_org


def _systems_file() -> Callable[..., Any]:
    # jsonschema (the system descriptions) only when a system file is checked (start-up)
    from mlsubmit.checker.systems.descriptions import check_system_file

    return lambda path, display, ruleset: check_system_file(path, display, ruleset)[1]  # the findings, not the doc


def _reference_file() -> Callable[..., Any]:
    return tree_reference.check_system_file


def _tree_prepare() -> Callable[..., Any]:
    return tree_full.prepare_org


def _tree_code() -> Callable[..., Any]:
    return tree_full.code_to_scan


def _tree_org() -> Callable[..., Any]:
    return tree_full.check_org


def _run_sets() -> Callable[..., Any]:
    # SQLite (the run ledger's storage) only for raw job output (start-up of a check of logs or trees)
    from mlsubmit.checker.tree.runset import check_raw_folder

    return check_raw_folder


def _reference_prepare() -> Callable[..., Any]:
    return tree_full.prepare_folders


def _reference_org() -> Callable[..., Any]:
    return tree_reference.check_org


CHECKS: dict[tuple[str, str], Check] = {
    (c.name, c.stage): c
    for c in (
        Check("read", "log", _read_load),
        Check("rules", "log", _rules_load, start=_rules_start, finish=_rules_finish),
        Check("hyperparameters", "log", _hp_load, start=_hp_start, finish=_hp_finish),
        Check("result-file", "log", _result_file_load, finish=_result_file_finish),
        Check("systems", "prepare", _systems_prepare),
        Check("systems", "org", _systems_org),
        # a system description given on its own
        Check("systems", "file", _systems_file),
        Check("tree", "prepare", _tree_prepare),
        Check("tree", "code", _tree_code),
        Check("tree", "org", _tree_org),
        Check("reference-tree", "prepare", _reference_prepare),
        Check("reference-tree", "org", _reference_org),
        # a system description on its own: the package checker's system_desc_checker verdict
        Check("reference-tree", "file", _reference_file),
        # a run set is judged as a results folder: the folder's codes, each labelled with its set
        Check("run-sets", "raw", _run_sets),
    )
}

# The commands other than `check` that emit codes (and `check` about the run itself: policy, waivers); a code's
# `emitted_by` in the catalogue names them as it names checks.
COMMANDS = ("advise", "package", "verify", "report", "review", "policy", "waivers", "capture", "runs")


def command_codes() -> dict[str, frozenset[str]]:
    """Each command's codes, as the catalogue's `emitted_by` names them."""
    return {name: emitted_by(name) for name in COMMANDS}


def check(name: str, stage: str) -> Check:
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


def stage(spec: ProfileSpec, name: str) -> list[Check]:
    """The profile's registered checks of that stage, in its order."""
    return [check(check_name, name) for check_name in spec.names(name)]


def run_by(options: CheckOptions, name: str) -> list[Check]:
    """The checks of that stage the options' profile runs. Asked for each log: the profile as loaded (cached), its
    checks validated once per check run by `plan`, and those of this stage looked up by `stage` anyway."""
    return stage(load(options.profile.value), name)


def names() -> set[str]:
    return {name for name, _ in CHECKS}


def registered_codes() -> set[str]:
    out: set[str] = set()
    for c in CHECKS.values():
        out |= c.codes
    for codes in command_codes().values():
        out |= codes
    return out
