"""The closed-division hyperparameter table of every round, 1.0 to 6.1, enforced from data (HP findings).

The table lives in `checker/rulesets/hyperparameters-<round>.yaml`, one rule per row of training_rules.adoc
§Hyperparameters (and its "Deprecated benchmarks hyperparameters" and side tables), validated against
`schemas/hyperparameters.schema.json` when first used. The constraint vocabulary the rows need (fixed value, one
of, integer >= n, multiple of a base, base * 2^N, list shape, one multiplier shared by several values, formulas of
other keys and of the global batch size, batch size lookup tables, a per-chip multiple) is in `hp_constraints.py`;
this module holds the table, its aliases (the table's benchmark and key names -> the logs') and the `when`
conditions that make a row depend on another key. Nothing in the data is executed.

`check_log` applies the table to logs that claim the closed division (`mlsubmit check`); `closed_advice`
applies it whatever the log claims (`mlsubmit advise`, through advice.py). A row whose letter differs from the
reference code or from what the review accepted lists those `readings`: a value that follows one is a warning
(HP009) naming the letter and the sources, and a value outside every reading stays an error.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.resources
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.hp_constraints import Lookup, Outcome, Tolerance, check_value, show_value
from mlsubmit.checker.logs import ParsedLog, Record

from mlsubmit.codes import finding
from mlsubmit.findings import Finding
from mlsubmit.support.datafiles import load_validated

if TYPE_CHECKING:
    from mlsubmit.checker.options import CheckOptions

SCHEMA = "hyperparameters.schema.json"
_CODE_BY_REVIEW = {None: "HP001", "*": "HP002", "**": "HP002", "ambiguous": "HP004"}


# --- the table as data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    name: str
    constraint: Mapping[str, Any]


@dataclass(frozen=True)
class Reading:
    """Another reading of a row, where its letter and the reference code or the accepted results differ: a value
    that follows it is accepted with a warning (HP009) that says what the letter says and why."""

    constraint: Mapping[str, Any]
    basis: str  # "reference", "accepted" or both: who computes or logged this reading
    why: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    id: str
    benchmark: str
    name: str  # as the policy table writes it
    line: int
    constraint: Mapping[str, Any]
    lines: tuple[int, ...] = ()
    review: str | None = None
    logged: bool = True
    when: tuple[Condition, ...] = ()
    note: str = ""
    section: str = ""  # when not the table's own section (the deprecated benchmarks' table, a side table)
    cite: str = ""  # another document the row comes from (6.1: mlperf-logging's rule files)
    readings: tuple[Reading, ...] = ()

    @property
    def code(self) -> str:
        return _CODE_BY_REVIEW[self.review]

    def names(self) -> set[str]:
        """Every policy name the rule reads: its own, its conditions', its formulas' (the letter's and readings')."""
        out = {self.name, *(c.name for c in self.when)}
        for constraint in (self.constraint, *(r.constraint for r in self.readings)):
            out.update(t["name"] for t in constraint.get("terms", ()) if "name" in t)
            out.update(t["batch"] for t in constraint.get("terms", ()) if "batch" in t)
            if "batch" in constraint:
                out.add(constraint["batch"])
        return out


@dataclass(frozen=True)
class Table:
    round: str
    rulesets: tuple[str, ...]
    source: Mapping[str, str]
    tolerance: Tolerance
    aliases: Mapping[str, Mapping[str, str]]
    benchmarks: Mapping[str, tuple[Rule, ...]]
    benchmark_aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)  # table name -> log name

    def table_name(self, benchmark: str) -> str:
        """The table's name for a benchmark the logs name `benchmark` (dlrm_dcnv2 -> dlrmv2)."""
        return next((t for t, b in self.benchmark_aliases.items() if b == benchmark), benchmark)

    def key(self, benchmark: str, name: str) -> str:
        """The log key for a policy name (the alias table), the name itself when they agree."""
        return self.aliases.get(benchmark, {}).get(name, name)

    def clause(self, rule: Rule) -> str:
        lines = ", ".join(f"L{n}" for n in (rule.line, *rule.lines))
        marks = f"{rule.review} " if rule.review in ("*", "**") else ""
        where = rule.cite or f"{self.source['tag']} §{rule.section or self.source['section']}"
        return f"{where}, {self.table_name(rule.benchmark)} {rule.name}, {lines} [{marks}{rule.id}]"


def _rule(benchmark: str, raw: Mapping[str, Any]) -> Rule:
    return Rule(
        id=raw["id"],
        benchmark=benchmark,
        name=raw["name"],
        line=raw["line"],
        constraint=raw["constraint"],
        lines=tuple(raw.get("lines", ())),
        review=raw.get("review"),
        logged=raw.get("logged", True),
        when=tuple(Condition(c["name"], c["is"]) for c in raw.get("when", ())),
        note=raw.get("note", ""),
        section=raw.get("section", ""),
        cite=raw.get("cite", ""),
        readings=tuple(Reading(r["constraint"], r["basis"], r["why"], tuple(r["sources"]))
                       for r in raw.get("readings", ())),
    )


def _read_tables() -> dict[str, dict[str, Any]]:
    """Every shipped table file by round; files are found by listing the folder, never from input."""
    folder = importlib.resources.files("mlsubmit.checker").joinpath("rulesets")
    out: dict[str, dict[str, Any]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith("hyperparameters-") and entry.name.endswith(".yaml"):
            data = load_validated(entry, SCHEMA, what=f"rulesets/{entry.name}")
            if data["round"] in out:
                raise ValueError(f"rulesets/{entry.name}: round {data['round']} is defined twice")
            out[data["round"]] = data
    return out


def tables_digest() -> str:
    """sha256 of every shipped table file's bytes, by name: a cache entry made with other tables is a miss."""
    folder = importlib.resources.files("mlsubmit.checker").joinpath("rulesets")
    digest = hashlib.sha256()
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith("hyperparameters-") and entry.name.endswith(".yaml"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


def _build(round_: str, raw: Mapping[str, dict[str, Any]], seen: tuple[str, ...] = ()) -> Table:
    data = raw[round_]
    if "extends" in data:
        parent = data["extends"]
        if parent in seen or parent not in raw:
            raise ValueError(f"hyperparameter table {round_}: cannot extend {parent!r}")
        base = _build(parent, raw, (*seen, round_))
        benchmarks = {b: list(rules) for b, rules in base.benchmarks.items()}
        for bench, rules in data.get("replace", {}).items():
            for new in (_rule(bench, r) for r in rules):
                ids = [r.id for r in benchmarks.get(bench, [])]
                if new.id not in ids:
                    raise ValueError(f"hyperparameter table {round_}: {bench} has no rule {new.id} to replace")
                benchmarks[bench][ids.index(new.id)] = new
        for bench, rules in data.get("add", {}).items():
            benchmarks.setdefault(bench, []).extend(_rule(bench, r) for r in rules)
        tolerance = base.tolerance
        aliases = {**base.aliases, **{b: {**base.aliases.get(b, {}), **a} for b, a in data.get("aliases", {}).items()}}
        bench_aliases = {**base.benchmark_aliases, **data.get("benchmark_aliases", {})}
    else:
        benchmarks = {b: [_rule(b, r) for r in spec["rules"]] for b, spec in data["benchmarks"].items()}
        tolerance, aliases = Tolerance(**data["tolerance"]), data["aliases"]
        bench_aliases = dict(data.get("benchmark_aliases", {}))
    for bench, rules in benchmarks.items():
        if len({r.id for r in rules}) != len(rules):
            raise ValueError(f"hyperparameter table {round_}: {bench} repeats a rule id")
    return Table(round_, tuple(data["rulesets"]), data["source"], tolerance, aliases,
                 {b: tuple(rules) for b, rules in benchmarks.items()}, bench_aliases)


@functools.cache
def tables() -> dict[str, Table]:
    """The tables by ruleset version ("1.0.0" -> the round 1.0 table), loaded and validated once per process."""
    raw = _read_tables()
    out: dict[str, Table] = {}
    for round_ in raw:
        table = _build(round_, raw)
        for ruleset in table.rulesets:
            out[ruleset] = table
    return out


class _OneRound(dict[str, dict[str, Any]]):
    """The table files of one round and the rounds it extends, each read when first asked for (a check of one
    round loads one or two of the twelve files: ~2 ms each, where all of them cost ~30 ms a process)."""

    def __missing__(self, round_: str) -> dict[str, Any]:
        folder = importlib.resources.files("mlsubmit.checker").joinpath("rulesets")
        wanted = f"hyperparameters-{round_}.yaml"
        entry = next((e for e in folder.iterdir() if e.name == wanted), None)  # listed, never built into a path
        if entry is None:
            raise KeyError(round_)
        data: dict[str, Any] = load_validated(entry, SCHEMA, what=f"rulesets/{entry.name}")
        if data["round"] != round_:
            raise ValueError(f"rulesets/{entry.name}: declares round {data['round']}")
        self[round_] = data
        return data

    def __contains__(self, round_: object) -> bool:
        try:
            self[str(round_)]
        except KeyError:
            return False
        return True


@functools.cache
def table_for(ruleset: str) -> Table | None:
    """The table of one ruleset ("5.1.0" -> round 5.1), reading only its round's files when they name it."""
    round_ = ".".join(ruleset.split(".")[:2])
    raw = _OneRound()
    if round_ in raw:
        table = _build(round_, raw)
        if ruleset in table.rulesets:
            return table
    return tables().get(ruleset)


def covered_rulesets() -> tuple[str, ...]:
    return tuple(sorted(tables()))


# --- applying the table to a log -----------------------------------------------------------------------------


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
        letter = f"{what} is {show_value(rec.payload)}; closed allows {outcome.allowed}{because}{outcome.detail}"
        out.append(_reading_finding(rule, table, rec, lookup, letter, path)
                   or finding(rule.code, path, f"{letter}{note}{_no_reading(rule, table, rec, lookup)} "
                              f"({table.clause(rule)})", line=rec.line))
    return out


def _reading_finding(rule: Rule, table: Table, rec: Record, lookup: Lookup, letter: str, path: str
                     ) -> Finding | None:
    """HP009 when the value breaks the row's letter but follows one of its accepted readings."""
    for reading in rule.readings:
        outcome = check_value(reading.constraint, rec.payload, lookup, table.tolerance)
        if outcome.ok:
            message = (f"{letter} ({table.clause(rule)}); accepted as {outcome.allowed}: {reading.why} "
                       f"[{reading.basis}: {'; '.join(reading.sources)}]")
            return finding("HP009", path, message, line=rec.line)
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
        return [finding("HP005", log.path, f"{shown}: the round {table.round} closed table lists "
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
    table's row too; the HP finding at that path and line is dropped. Anything else passes through unchanged.
    """
    rule_lines = {(f.path, f.line) for f in findings if f.code == "RULE001" and f.line is not None}
    hp = {(f.path, f.line): f for f in findings if f.family == "HP" and (f.path, f.line) in rule_lines}
    if not hp:
        return list(findings)
    out: list[Finding] = []
    for f in findings:
        if f.family == "HP" and (f.path, f.line) in hp:
            continue
        if f.code == "RULE001" and (f.path, f.line) in hp:
            same = hp[(f.path, f.line)].message
            f = dataclasses.replace(f, message=f"{f.message}; the closed table says the same: {same}")
        out.append(f)
    return out

