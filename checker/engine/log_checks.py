"""The log checks: each fed a log as the reader streams it (`start` gives its state for the log, `finish` its
findings), typed by checker/base/contract.py's LogCheck; registered by checker/engine/checks.py, their codes declared
beside the work each does (`CODES` in logs/reader.py, rules/engine.py, hyperparameters/apply.py, tree/resultfile.py)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.hyperparameters import apply as hp_apply
from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.logs.sinks import RecordsOfKeys
from mlsubmit.checker.rules import engine as rules_engine
from mlsubmit.checker.rules.files import get_ruleset
from mlsubmit.checker.tree import resultfile

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.base.targets import LogRef
    from mlsubmit.checker.logs.reader import ParsedLog
    from mlsubmit.checker.logs.sinks import WholeLogReader

    from mlsubmit.core.findings import Finding


class Read:
    """The reader's own findings: every log is read by the pipeline, so there is nothing to add."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> None:
        return None

    def finish(self, state: None, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
        return found


class RulesState:
    """The rule files' stream of one log, and the whole-log reread whose cut (LOG012) it may report."""

    def __init__(self, stream: Any, whole: WholeLogReader) -> None:
        self.stream, self.whole = stream, whole
        self.feed = stream.feed


class Rules:
    """mlperf-logging's rule files, run by our engine as the log streams past."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> RulesState:
        return RulesState(rules_engine.RuleStream(get_ruleset(options.ruleset), ref.display, whole), whole)

    def finish(self, state: RulesState, log: ParsedLog, options: CheckOptions, found: list[Finding]
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


class Hyperparameters:
    """The closed hyperparameter table, over the records of the keys it reads."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> RecordsOfKeys:
        # the round's keys are worked out from its table when the first records arrive, after the log is opened
        return RecordsOfKeys(functools.partial(hp_keys, options.ruleset))

    def finish(self, kept: RecordsOfKeys, log: ParsedLog, options: CheckOptions, found: list[Finding]
               ) -> list[Finding]:
        found = [*found, *hp_apply.check_log(kept.log(log), options)]
        found = hp_apply.merge_rule_duplicates(found)  # a value both catch: once
        return [*found, *kept.cut(log.path)]


class ResultFile:
    """What a round asks a result file to hold besides its records: only what the reader counts."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader) -> None:
        return None

    def finish(self, state: None, log: ParsedLog, options: CheckOptions, found: list[Finding]) -> list[Finding]:
        return [*found, *resultfile.check_log(log, options)]
