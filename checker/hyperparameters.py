"""The closed-division hyperparameter table of rounds 1.0 and 1.1, enforced from data (HP findings).

The table lives in `checker/rulesets/hyperparameters-<round>.yaml`, one rule per row of training_rules.adoc
§Hyperparameters, validated against `schemas/hyperparameters.schema.json` when first used. This module holds
the constraint vocabulary the rows need (fixed value, one of, integer >= n, multiple of a base, base * 2^N,
list shape, one multiplier shared by several values, a formula of the global batch size, a per-chip multiple)
and the `when` conditions that make a row depend on another key. Nothing in the data is executed.

`check_log` applies the table to logs that claim the closed division (`mlsubmit check`); `closed_advice`
applies it whatever the log claims (`mlsubmit advise`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.logs import ParsedLog, Record

from mlsubmit.codes import finding
from mlsubmit.datafiles import load_yaml
from mlsubmit.findings import Finding
from mlsubmit.schema_loader import load_schema, validate_or_raise

if TYPE_CHECKING:
    from mlsubmit.checker.pipeline import CheckOptions

SCHEMA = "hyperparameters.schema.json"
_CODE_BY_REVIEW = {None: "HP001", "*": "HP002", "**": "HP002", "ambiguous": "HP004"}


@dataclass(frozen=True)
class Tolerance:
    """Two numbers are equal when |a - b| <= max(relative * max(|a|, |b|), absolute)."""

    relative: float = 1e-6
    absolute: float = 1e-12

    def close(self, a: float, b: float) -> bool:
        if a == b:
            return True
        if math.isinf(a) or math.isinf(b):
            return False
        return abs(a - b) <= max(self.relative * max(abs(a), abs(b)), self.absolute)

    def integral(self, q: float) -> bool:
        return math.isfinite(q) and abs(q - round(q)) <= self.relative * max(1.0, abs(q))


@dataclass(frozen=True)
class Outcome:
    ok: bool
    allowed: str
    detail: str = ""
    skipped: bool = False  # a value the constraint needs (the batch size) is missing: nothing can be said


Lookup = Callable[[str], Any]  # policy name -> first logged value, or None


def _num(value: Any) -> float | None:
    """A number from a log value; None for booleans, NaN, non-numbers and integers too big for a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        n = float(value)
    except OverflowError:  # JSON integers are unbounded
        return None
    return None if math.isnan(n) else n


def _show(value: Any) -> str:
    """A value as the message shows it: JSON, with integral floats of our own arithmetic written as integers."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, list) and len(value) <= 8 and all(isinstance(v, (int, float)) for v in value):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _same(expected: Any, value: Any, tol: Tolerance) -> bool:
    """Equality for table values: booleans and strings exactly, numbers within the tolerance, lists per item."""
    if isinstance(expected, (bool, str)):
        return type(value) is type(expected) and value == expected
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(
            _same(e, v, tol) for e, v in zip(expected, value, strict=True)
        )
    n = _num(value)
    return n is not None and tol.close(n, float(expected))


# --- the constraint vocabulary: kind -> (spec, value, lookup, tolerance) -> Outcome -------------------------


def _any(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    return Outcome(True, "any value")


def _fixed(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    return Outcome(_same(spec["value"], value, tol), _show(spec["value"]))


def _one_of(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    ok = any(_same(v, value, tol) for v in spec["values"])
    return Outcome(ok, "one of " + ", ".join(_show(v) for v in spec["values"]))


def _integer(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    low = spec.get("min")
    n = _num(value)
    # A float with an integral value (37.0) is accepted: frameworks log integers through float variables.
    ok = n is not None and math.isfinite(n) and n.is_integer() and (low is None or n >= low)
    return Outcome(ok, "an integer" + (f" >= {low}" if low is not None else ""))


_BOUNDS = {"gt": (">", float.__gt__), "ge": (">=", float.__ge__), "lt": ("<", float.__lt__), "le": ("<=", float.__le__)}


def _range(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    n = _num(value)
    parts = [(sym, test, float(spec[k])) for k, (sym, test) in _BOUNDS.items() if k in spec]
    ok = n is not None and all(test(n, bound) for _, test, bound in parts)
    return Outcome(ok, " and ".join(f"{sym} {_show(bound)}" for sym, _, bound in parts))


def _multiple_of(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base = float(spec["base"])
    n = _num(value)
    ok = n is not None and math.isfinite(n) and tol.integral(n / base)
    return Outcome(ok, f"{_show(base)}*k for an integer k")


def _power_of_two_multiple(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base = float(spec["base"])
    n = _num(value)
    exponent = math.log2(n / base) if n is not None and n > 0 and math.isfinite(n / base) else None
    allowed = f"{_show(base)}*2^N for an integer N"
    if exponent is None:
        return Outcome(False, allowed)
    if tol.integral(exponent):
        return Outcome(True, allowed)
    near = round(exponent)
    return Outcome(False, allowed, f"; nearest: {_show(base * 2.0**near)} (N={near})")


def _shape(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    dims = list(spec["dims"])
    trailing = bool(spec.get("trailing_ones"))
    allowed = _show(dims) + (" (a trailing channel dimension of 1 may follow)" if trailing else "")
    if not isinstance(value, list) or len(value) < len(dims):
        return Outcome(False, allowed)
    head, tail = value[: len(dims)], value[len(dims) :]
    ok = _same(dims, head, tol) and (not tail or (trailing and all(_same(1, t, tol) for t in tail)))
    return Outcome(ok, allowed)


def _terms(spec: Mapping[str, Any], value: Any, lookup: Lookup) -> list[float] | None:
    """The numbers a multiplier rule ties together: elements of this value or values of other keys."""
    out: list[float] = []
    for term in spec["terms"]:
        v = lookup(term["name"]) if "name" in term else value
        if "index" in term:
            v = v[term["index"]] if isinstance(v, list) and len(v) > term["index"] else None
        n = _num(v)
        if n is None or not math.isfinite(n):
            return None
        out.append(n)
    return out


def _multiplier(spec: Mapping[str, Any], value: Any, lookup: Lookup, scale: float,
                slack: Callable[[float], float], allowed: str) -> Outcome:
    """Is there one integer k with value_i == base_i * scale * (1 + k/d) for every term (within `slack`)?"""
    if "length" in spec and not (isinstance(value, list) and len(value) == spec["length"]):
        return Outcome(False, allowed, f"; a list of {spec['length']} numbers is needed")
    values = _terms(spec, value, lookup)
    if values is None:
        return Outcome(False, allowed)
    d = int(spec["denominator"])
    bases = [float(t["base"]) * scale for t in spec["terms"]]
    raw = [d * (v / b - 1) for v, b in zip(values, bases, strict=True)]
    if not all(math.isfinite(k) for k in raw):
        return Outcome(False, allowed)
    candidates = {f(k) for k in raw for f in (math.floor, math.ceil)}

    def fits(k: int) -> bool:
        return all(abs(v - b * (1 + k / d)) <= slack(b * (1 + k / d)) for v, b in zip(values, bases, strict=True))

    if any(fits(k) for k in candidates):
        return Outcome(True, allowed)
    k = round(raw[0])
    nearest = [round(b * (1 + k / d), 6) for b in bases]
    return Outcome(False, allowed, f"; with k={k} that is {_show(nearest)}")


def _shared_multiplier(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    bases = [t["base"] for t in spec["terms"]]
    allowed = f"{_show(bases)}*(1 + k/{spec['denominator']}) with one integer k"
    return _multiplier(spec, value, lookup, 1.0, lambda x: max(tol.relative * abs(x), tol.absolute), allowed)


def _batch_formula(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    bases = [t["base"] for t in spec["terms"]]
    ref, name = spec["reference_batch"], spec["batch"]
    allowed = (f"{_show(bases)}*(1 + K/{spec['denominator']})*{_show(ref)}/{name} with one integer K "
               f"(each within {_show(spec['rounding'])} of the exact value)")
    batch = _num(lookup(name))
    if batch is None or batch <= 0 or not math.isfinite(batch):
        return Outcome(True, allowed, skipped=True)
    rounding = float(spec["rounding"]) + 1e-9
    out = _multiplier(spec, value, lookup, float(ref) / batch, lambda x: rounding, allowed)
    return Outcome(out.ok, allowed, f"; {name} is {_show(batch)}{out.detail}")


def _per_chip_multiple(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base, also, name = int(spec["base"]), list(spec.get("also", [])), spec["batch"]
    allowed = (" or ".join(_show(a) for a in also) + " or " if also else "") + (
        f"{base}*m where m (the batch per chip) divides {name}")
    n = _num(value)
    if n is None:
        return Outcome(False, allowed)
    if any(tol.close(n, float(a)) for a in also):
        return Outcome(True, allowed)
    m = n / base
    if not (tol.integral(m) and round(m) >= 1):
        return Outcome(False, allowed)
    batch = _num(lookup(name))
    if batch is None or not batch.is_integer() or batch <= 0:
        return Outcome(True, allowed, skipped=True)
    ok = int(batch) % round(m) == 0
    return Outcome(ok, allowed, "" if ok else f"; {name} is {_show(batch)}, which {round(m)} does not divide")


KINDS: dict[str, Callable[[Mapping[str, Any], Any, Lookup, Tolerance], Outcome]] = {
    "any": _any,
    "fixed": _fixed,
    "one_of": _one_of,
    "integer": _integer,
    "range": _range,
    "multiple_of": _multiple_of,
    "power_of_two_multiple": _power_of_two_multiple,
    "shape": _shape,
    "shared_multiplier": _shared_multiplier,
    "batch_formula": _batch_formula,
    "per_chip_multiple": _per_chip_multiple,
}


def check_value(constraint: Mapping[str, Any], value: Any, lookup: Lookup | None = None,
                tolerance: Tolerance | None = None) -> Outcome:
    """Evaluate one constraint of the vocabulary (`lookup` gives other keys' values by name)."""
    return KINDS[constraint["kind"]](constraint, value, lookup or (lambda name: None), tolerance or Tolerance())


# --- the table as data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    name: str
    constraint: Mapping[str, Any]


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

    @property
    def code(self) -> str:
        return _CODE_BY_REVIEW[self.review]

    def names(self) -> set[str]:
        """Every policy name the rule reads: its own, its conditions', its formula's."""
        out = {self.name, *(c.name for c in self.when)}
        out.update(t["name"] for t in self.constraint.get("terms", ()) if "name" in t)
        if "batch" in self.constraint:
            out.add(self.constraint["batch"])
        return out


@dataclass(frozen=True)
class Table:
    round: str
    rulesets: tuple[str, ...]
    source: Mapping[str, str]
    tolerance: Tolerance
    aliases: Mapping[str, Mapping[str, str]]
    benchmarks: Mapping[str, tuple[Rule, ...]]

    def key(self, benchmark: str, name: str) -> str:
        """The log key for a policy name (the alias table), the name itself when they agree."""
        return self.aliases.get(benchmark, {}).get(name, name)

    def clause(self, rule: Rule) -> str:
        lines = ", ".join(f"L{n}" for n in (rule.line, *rule.lines))
        marks = f"{rule.review} " if rule.review in ("*", "**") else ""
        return (f"{self.source['tag']} §{self.source['section']}, {rule.benchmark} {rule.name}, {lines} "
                f"[{marks}{rule.id}]")


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
    )


def _read_tables() -> dict[str, dict[str, Any]]:
    """Every shipped table file by round; files are found by listing the folder, never from input."""
    schema = load_schema(SCHEMA)
    folder = importlib.resources.files("mlsubmit.checker").joinpath("rulesets")
    out: dict[str, dict[str, Any]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith("hyperparameters-") and entry.name.endswith(".yaml"):
            data = load_yaml(entry.read_text(encoding="utf-8"))
            validate_or_raise(data, schema, what=f"rulesets/{entry.name}")
            if data["round"] in out:
                raise ValueError(f"rulesets/{entry.name}: round {data['round']} is defined twice")
            out[data["round"]] = data
    return out


def _build(round_: str, raw: dict[str, dict[str, Any]], seen: tuple[str, ...] = ()) -> Table:
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
        tolerance, aliases = base.tolerance, base.aliases
    else:
        benchmarks = {b: [_rule(b, r) for r in spec["rules"]] for b, spec in data["benchmarks"].items()}
        tolerance, aliases = Tolerance(**data["tolerance"]), data["aliases"]
    for bench, rules in benchmarks.items():
        if len({r.id for r in rules}) != len(rules):
            raise ValueError(f"hyperparameter table {round_}: {bench} repeats a rule id")
    return Table(round_, tuple(data["rulesets"]), data["source"], tolerance, aliases,
                 {b: tuple(rules) for b, rules in benchmarks.items()})


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


def table_for(ruleset: str) -> Table | None:
    return tables().get(ruleset)


def covered_rulesets() -> tuple[str, ...]:
    return tuple(sorted(tables()))


# --- applying the table to a log -----------------------------------------------------------------------------


def _first_payload(log: ParsedLog, key: str) -> Any:
    rec = log.first(key)
    return rec.payload if rec is not None else None


def _condition_text(key: str, value: Any, outcome: Outcome, constraint: Mapping[str, Any]) -> str:
    if constraint["kind"] == "fixed":
        return f"{key} is {_show(value)}"
    return f"{key} is {_show(value)} ({outcome.allowed})"


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
        sig = json.dumps(rec.payload, sort_keys=True, default=str)
        if sig in seen:
            continue
        seen.add(sig)
        outcome = check_value(rule.constraint, rec.payload, lookup, table.tolerance)
        if outcome.ok or outcome.skipped:
            continue
        message = (f"{what} is {_show(rec.payload)}; closed allows {outcome.allowed}{because}{outcome.detail}"
                   f"{note} ({table.clause(rule)})")
        out.append(finding(rule.code, path, message, line=rec.line))
    return out


def apply_table(log: ParsedLog, table: Table, benchmark: str) -> list[Finding]:
    """Every row of the benchmark's table the log breaks, whatever division it claims."""
    rules = [r for r in table.benchmarks.get(benchmark, ()) if r.logged and r.constraint["kind"] != "any"]
    keys = {table.key(benchmark, n) for r in rules for n in r.names()}
    index: dict[str, list[Record]] = {}
    for rec in log.records:
        if rec.key in keys:
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
        shown = "no submission_benchmark" if rec is None else f"submission_benchmark {_show(benchmark)}"
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


# --- division advice -----------------------------------------------------------------------------------------


def as_closed(records: Sequence[Record]) -> list[Record]:
    """A copy of the records in which the log claims the closed division (the caller's records are untouched)."""
    return [
        dataclasses.replace(rec, value={**rec.value, "value": "closed"}) if rec.key == "submission_division" else rec
        for rec in records
    ]


def advise_log(path: str | Path, display: str, ruleset: str, *, table_only: bool = False) -> list[Finding]:
    """Everything that would keep this run out of the closed division of `ruleset`, with lines.

    The table is applied whatever the log claims; unless `table_only`, mlperf-logging's closed rule files are
    run too (through mlsubmit's own engine), on a copy of the records whose submission_division says closed.
    A log without a submission_division record is not given one: the missing record is the advice.
    """
    from mlsubmit.checker.engine import check_records
    from mlsubmit.checker.logs import read_log
    from mlsubmit.checker.ruleset import get_ruleset

    log = read_log(path, display)
    findings = list(log.findings)
    if log.records:
        findings.extend(closed_advice(log, ruleset))
        if not table_only:
            findings.extend(check_records(as_closed(log.records), get_ruleset(ruleset), log.path))
    return findings
