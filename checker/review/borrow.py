"""Hyperparameter borrowing (training_rules.adoc §"Hyperparameter Borrowing", every round 1.0 to 6.1).

Given our original entry, our resubmitted entry and the donor's entry, say hyperparameter by hyperparameter which
values came from the donor, which changed and whether that is allowed; then the software and system against the
original, the scale rule and the benchmarks where borrowing is refused. The round's rules are data (rules.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.review.borrowing_rules import BorrowRules
from mlsubmit.checker.review.entries import Entry
from mlsubmit.checker.review.scale import scale_findings, system_findings
from mlsubmit.checker.rounds.detect import round_name, ruleset_of_path

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location
from mlsubmit.core.support import numbers

# Row verdicts, in the order the table shows them.
FROM_DONOR, SAME, BATCH, KEPT_OWN, CHANGED, SETTING, SETTING_CHANGED = (
    "from donor", "same in all three", "batch size (may change)", "kept own value", "changed",
    "setting kept", "setting changed")


@dataclass(frozen=True)
class Row:
    key: str
    original: Any
    donor: Any
    resubmitted: Any
    verdict: str
    line: int | None  # in the resubmission's first log


@dataclass
class Borrowing:
    original: Entry
    resubmitted: Entry
    donor: Entry
    rules: BorrowRules
    rows: list[Row] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def same_value(a: Any, b: Any) -> bool:
    """Logged values the same: numbers within the closed table's tolerance, anything else exactly."""
    kinds = (int, float)
    if isinstance(a, kinds) and isinstance(b, kinds) and not isinstance(a, bool) and not isinstance(b, bool):
        return numbers.nearly_equal(a, b, rel_tol=1e-6, abs_tol=1e-12)
    return bool(a == b)


def hyperparameter_keys(entry: Entry, rules: BorrowRules, ruleset: str) -> set[str]:
    """Keys of the entry's first log that are hyperparameters: the closed table's names for the benchmark (as the
    logs spell them), opt_* keys and the batch-size family; never what a run is or when it ran."""
    table = table_for(ruleset)
    named: set[str] = set()
    if table is not None:
        bench = table.table_name(entry.benchmark)
        for rule in table.benchmarks.get(bench, ()):
            named.update(table.key(bench, n) for n in rule.names())
    keys = set(entry.first.first)
    wanted = {k for k in keys if k in named or k.startswith("opt_") or k in rules.batch or k in rules.kept}
    return wanted - rules.not_hyperparameters


def _value(entry: Entry, key: str) -> Any:
    occ = entry.value(key)
    return occ.value if occ is not None else None


def _verdict(key: str, o: Any, d: Any, r: Any, rules: BorrowRules) -> str:
    if key in rules.kept:
        return SETTING if same_value(r, o) else SETTING_CHANGED
    if same_value(r, d):
        return SAME if same_value(d, o) else FROM_DONOR
    if key in rules.batch:
        return BATCH
    return KEPT_OWN if same_value(r, o) else CHANGED


def compare_hyperparameters(b: Borrowing, ruleset: str) -> None:
    keys = set().union(*(hyperparameter_keys(e, b.rules, ruleset) for e in (b.original, b.resubmitted, b.donor)))
    for key in sorted(keys):
        o, d, r = (_value(e, key) for e in (b.original, b.donor, b.resubmitted))
        occ = b.resubmitted.value(key)
        b.rows.append(Row(key, o, d, r, _verdict(key, o, d, r, b.rules), occ.line if occ else None))
    b.findings.extend(_row_findings(b))


_ROW_CODES = {KEPT_OWN: "REV002", CHANGED: "REV003", BATCH: "REV004", SETTING_CHANGED: "REV012"}


def _row_findings(b: Borrowing) -> list[Finding]:
    out: list[Finding] = []
    path = b.resubmitted.first.path
    donor_at = Location(b.donor.first.path)
    for row in b.rows:
        code = _ROW_CODES.get(row.verdict)
        if code is None:
            continue
        message = (f"{row.key}: resubmitted {_shown(row.resubmitted)}, donor {_shown(row.donor)}, original "
                   f"{_shown(row.original)} "
                   f"({row.verdict}; {b.rules.cite(b.rules.group_line)})")
        out.append(finding(code, path, message, line=row.line, related=[donor_at]))
    if not any(r.verdict == FROM_DONOR for r in b.rows):
        out.append(finding("REV016", path, "no hyperparameter of the resubmission comes from the donor where the "
                           "donor's differs from the original's: this is not a borrowing of the donor's values"))
    return out


def _shown(value: Any) -> str:
    return "not logged" if value is None else repr(value)


def donor_findings(b: Borrowing) -> list[Finding]:
    """The donor must be another submitter's entry of the same benchmark; the benchmark must allow borrowing."""
    out: list[Finding] = []
    path, rules = b.resubmitted.first.path, b.rules
    if b.resubmitted.benchmark in rules.refused:
        line = rules.refused[b.resubmitted.benchmark]
        out.append(finding("REV001", path, f"{b.resubmitted.benchmark}: hyperparameter borrowing is not allowed "
                           f"in round {rules.round} ({rules.cite(line)})"))
    if b.donor.benchmark != b.resubmitted.benchmark:
        out.append(finding("REV011", path, f"the donor's entry is {b.donor.benchmark}, the resubmission "
                           f"{b.resubmitted.benchmark}: borrow from the same benchmark "
                           f"({rules.cite(rules.group_line)})",
                           related=[Location(b.donor.first.path)]))
    elif b.donor.org is not None and b.donor.org == b.original.org:
        out.append(finding("REV011", path, f"the donor's entry is {b.donor.org}'s own: borrowing takes another "
                           f"submitter's hyperparameters ({rules.cite(rules.group_line)})",
                           related=[Location(b.donor.first.path)]))
    theirs, ours = ruleset_of_path(b.donor.folder), ruleset_of_path(b.original.folder)
    if theirs and ours and theirs != ours:  # "during the review period": this round's entries only
        out.append(finding("REV011", path, f"the donor's entry is of round {round_name(theirs)}, the original of "
                           f"{round_name(ours)}: borrow from an entry of the same round "
                           f"({rules.cite(rules.group_line)})",
                           related=[Location(b.donor.first.path)]))
    return out


def borrowing_finding(b: Borrowing) -> Finding:
    """REV010 with the numbers, or REV017 when any error was found."""
    counts = {v: sum(1 for r in b.rows if r.verdict == v) for v in (FROM_DONOR, SAME, BATCH, KEPT_OWN, CHANGED)}
    scale = f"{b.original.accelerators} -> {b.resubmitted.accelerators} accelerators"
    said = (f"{counts[FROM_DONOR]} hyperparameters from the donor ({b.donor.shown}), {counts[SAME]} the same in "
            f"all three, {counts[BATCH]} of the batch-size family changed, {counts[KEPT_OWN]} kept, "
            f"{counts[CHANGED]} changed; scale {scale}")
    errors = [f for f in b.findings if f.severity.value == "error"]
    path = b.resubmitted.first.path
    if errors:
        return finding("REV017", path, f"not a valid borrowing ({len(errors)} errors): {said}")
    return finding("REV010", path, f"a valid borrowing: {said}")


def check_borrowing(original: Entry, resubmitted: Entry, donor: Entry, rules: BorrowRules,
                    ruleset: str) -> Borrowing:
    b = Borrowing(original, resubmitted, donor, rules)
    b.findings.extend(donor_findings(b))
    compare_hyperparameters(b, ruleset)
    b.findings.extend(system_findings(original, resubmitted, rules))
    b.findings.extend(scale_findings(original, resubmitted, rules))
    b.findings.append(borrowing_finding(b))
    return b
