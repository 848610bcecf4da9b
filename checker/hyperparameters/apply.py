"""The closed-division hyperparameter table of every round, 1.0 to 6.1, applied to logs (HP findings).

The table as data (rows, aliases from the table's benchmark and key names to the logs', `when` conditions that make
a row depend on another key) is read in `table.py`; the constraint vocabulary the rows need (fixed value, one
of, integer >= n, multiple of a base, base * 2^N, list shape, one multiplier shared by several values, formulas of
other keys and of the global batch size, batch size lookup tables, a per-chip multiple) is in `constraints.py`.
Nothing in the data is executed.

`check_log` applies the table to logs that claim the closed division (`mlsubmit check`); `closed_advice`
applies it whatever the log claims (`mlsubmit advise`, through as_closed.py). A row whose letter differs from the
reference code or from what the review accepted lists those `readings`: a value that follows one is a warning
(HP009) naming the letter and the sources, and a value outside every reading stays an error.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.hyperparameters.constraints import Lookup, Outcome, check_value, show_value
from mlsubmit.checker.hyperparameters.table import Rule, Table, covered_rulesets, table_for
from mlsubmit.checker.logs.reader import ParsedLog, Record

from mlsubmit.core.codes import code_info as code_info
from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

# --- applying the table to a log -----------------------------------------------------------------------------


# the codes the `hyperparameters` check may emit (checker/engine/checks.py registers it)
CODES = frozenset({"HP001", "HP002", "HP003", "HP004", "HP005", "HP009", "RULE001", "RULE002"})

def _first_payload(log: ParsedLog, key: str) -> Any:
    rec = log.first(key)
    return rec.payload if rec is not None else None


def _condition_text(key: str, value: Any, outcome: Outcome, constraint: Mapping[str, Any]) -> str:
    if constraint["kind"] == "fixed":
        return f"{key} is {show_value(value)}"
    return f"{key} is {show_value(value)} ({outcome.allowed})"


def _applies(rule: Rule, table: Table, lookup: Lookup) -> list[str] | None:
    """The reasons the rule applies (its `when` conditions, all met), or None when it does not apply."""
    reasons = []
    for cond in rule.when:
        value = lookup(cond.name)
        if value is None:
            return None  # the condition's key is missing: the compliance rules report that (RULE002)
        outcome = check_value(cond.constraint, value, lookup, table.tolerance)
        if not outcome.ok:
            return None
        reasons.append(_condition_text(table.key(rule.benchmark, cond.name), value, outcome, cond.constraint))
    return reasons


def _rule_findings(rule: Rule, table: Table, records: Sequence[Record], lookup: Lookup, path: str) -> list[Finding]:
    reasons = _applies(rule, table, lookup)
    if reasons is None:
        return []
    key = table.key(rule.benchmark, rule.name)
    what = f"'{key}'" + (f" (the table's {rule.name})" if key != rule.name else "")
    because = f" when {' and '.join(reasons)}" if reasons else ""
    note = f"; {rule.note}" if rule.note else ""
    out: list[Finding] = []
    seen: set[str] = set()
    for rec in records:  # every distinct value is checked (multi-rank logs repeat keys), at its first line
        if len(records) > 1:  # most keys are logged once: no need to tell values apart
            sig = json.dumps(rec.payload, sort_keys=True, default=str)
            if sig in seen:
                continue
            seen.add(sig)
        outcome = check_value(rule.constraint, rec.payload, lookup, table.tolerance)
        if outcome.ok or outcome.skipped:
            continue
        value, allowed = f"{what} is {show_value(rec.payload)}", f"{outcome.allowed}{because}{outcome.detail}"
        out.append(_reading_finding(rule, table, rec, lookup, f"{value}; the table's letter is {allowed}", path)
                   or finding(rule.code, path, f"{value}; closed allows {allowed}{note}"
                              f"{_no_reading(rule, table, rec, lookup)} ({table.clause(rule)})", line=rec.line))
    return out


def _reading_finding(rule: Rule, table: Table, rec: Record, lookup: Lookup, letter: str, path: str
                     ) -> Finding | None:
    """HP009 when the value breaks the row's letter but follows one of its accepted readings (the sources go in
    the hint, so the message stays a sentence)."""
    for reading in rule.readings:
        outcome = check_value(reading.constraint, rec.payload, lookup, table.tolerance)
        if outcome.ok:
            message = f"{letter} ({table.clause(rule)}); accepted as {outcome.allowed}: {reading.why}"
            hint = f"{code_info('HP009').hint} Sources ({reading.basis}): {'; '.join(reading.sources)}."
            return finding("HP009", path, message, line=rec.line, hint=hint)
    return None


def _no_reading(rule: Rule, table: Table, rec: Record, lookup: Lookup) -> str:
    """What the error adds when the row has readings the value does not follow either."""
    if not rule.readings:
        return ""
    outcomes = [check_value(r.constraint, rec.payload, lookup, table.tolerance) for r in rule.readings]
    shown = " or ".join(f"{o.allowed}{o.detail}" for o in outcomes)
    return f"; nor the accepted {'reading' if len(outcomes) == 1 else 'readings'}: {shown}"


def apply_table(log: ParsedLog, table: Table, benchmark: str) -> list[Finding]:
    """Every row of the benchmark's table the log breaks, whatever division it claims."""
    rules = [r for r in table.benchmarks.get(benchmark, ()) if r.logged and r.constraint["kind"] != "any"]
    keys = {table.key(benchmark, n) for r in rules for n in r.names()}
    index: dict[str, list[Record]] = {}
    for rec in [r for r in log.records if r.key in keys]:  # picked in one C-level pass: a few dozen of thousands
        index.setdefault(rec.key, []).append(rec)

    def lookup(name: str) -> Any:
        recs = index.get(table.key(benchmark, name))
        return recs[0].payload if recs else None

    out: list[Finding] = []
    for rule in rules:
        out.extend(_rule_findings(rule, table, index.get(table.key(benchmark, rule.name), []), lookup, log.path))
    return out


def check_log(log: ParsedLog, options: CheckOptions) -> list[Finding]:
    """HP findings for a log that claims the closed division (open runs may change hyperparameters freely)."""
    table = table_for(options.ruleset)
    if table is None or _first_payload(log, "submission_division") != "closed":
        return []
    benchmark = _first_payload(log, "submission_benchmark")
    if not isinstance(benchmark, str) or benchmark not in table.benchmarks:
        return []  # the compliance rules report a missing or unknown benchmark
    return apply_table(log, table, benchmark)


def closed_advice(log: ParsedLog, ruleset: str) -> list[Finding]:
    """The table's verdict on a log as if it were closed (for `mlsubmit advise`)."""
    table = table_for(ruleset)
    if table is None or not log.records:
        return []
    benchmark = _first_payload(log, "submission_benchmark")
    if not isinstance(benchmark, str) or benchmark not in table.benchmarks:
        rec = log.first("submission_benchmark")
        shown = "no submission_benchmark" if rec is None else f"submission_benchmark {show_value(benchmark)}"
        gone = (f" (round {table.round} retired {benchmark}: {table.retired[benchmark]})"
                if isinstance(benchmark, str) and benchmark in table.retired else "")
        return [finding("HP005", log.path, f"{shown}{gone}: the round {table.round} closed table lists "
                        + ", ".join(sorted(table.benchmarks)), line=rec.line if rec else None)]
    return apply_table(log, table, benchmark)


def coverage_findings(ruleset: str) -> list[Finding]:
    """One run-level info finding when the chosen ruleset has no table (said once, never silently)."""
    if table_for(ruleset) is not None:
        return []
    covered = ", ".join(covered_rulesets())
    return [finding("HP003", "", f"ruleset {ruleset}: the closed-division hyperparameter table covers rulesets "
                    f"{covered} only; hyperparameter values were checked only by the ruleset's rule files")]


def merge_rule_duplicates(findings: Sequence[Finding]) -> list[Finding]:
    """One report per broken value: a row of our table and a rule file's CHECK failing the same record.

    The rule file's finding (RULE001, an error: the verifier is the rules' source of truth) is kept and names the
    table's row too; the HP finding at that path and line is dropped (an accepted reading, HP009, without a word in
    the rule file's message). Anything else passes through unchanged.
    """
    rule_lines = {(f.path, f.line) for f in findings if f.code == "RULE001" and f.line is not None}
    # An accepted reading (HP009) a rule file refuses is dropped too: the verifier is the source of truth.
    dropped = {(f.path, f.line) for f in findings if f.family == "HP" and (f.path, f.line) in rule_lines}
    hp = {(f.path, f.line): f for f in findings
          if f.family == "HP" and f.code != "HP009" and (f.path, f.line) in dropped}
    if not dropped:
        return list(findings)
    out: list[Finding] = []
    for f in findings:
        if f.family == "HP" and (f.path, f.line) in dropped:
            continue
        if f.code == "RULE001" and (f.path, f.line) in hp:
            same = hp[(f.path, f.line)].message
            f = dataclasses.replace(f, message=f"{f.message}; the closed table says the same: {same}")
        out.append(f)
    return out

