"""The closed-division hyperparameter table of every round, 1.0 to 6.1, as data (read and validated here).

The table lives in `checker/tables/hyperparameters-<round>.yaml`, one rule per row of training_rules.adoc
§Hyperparameters (and its "Deprecated benchmarks hyperparameters" and side tables), validated against
`schemas/hyperparameters.schema.json` when first used. A round may extend another: rows replaced or added by id,
benchmarks the round retired taken out. A row whose letter differs from the reference code or from what the review
accepted has other readings, each with its sources, kept for every round in one file
(`tables/hyperparameter-readings.yaml`). apply.py applies the table to logs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.resources
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.hyperparameters.constraints import Tolerance

from mlsubmit.core.support.datafiles import load_validated

if TYPE_CHECKING:
    from importlib.abc import Traversable

SCHEMA = "hyperparameters.schema.json"
READINGS, READINGS_SCHEMA = "hyperparameter-readings.yaml", "hyperparameter-readings.schema.json"
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
    retired: Mapping[str, str] = dataclasses.field(default_factory=dict)  # benchmark -> the source retiring it

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
    )


def _table_files() -> list[Traversable]:
    """The shipped table files, by name; found by listing the folder, never built from input."""
    folder = importlib.resources.files("mlsubmit.checker").joinpath("tables")
    return sorted((e for e in folder.iterdir() if e.name.startswith("hyperparameters-") and e.name.endswith(".yaml")),
                  key=lambda e: e.name)


def _read_tables() -> dict[str, dict[str, Any]]:
    """Every shipped table file by round."""
    out: dict[str, dict[str, Any]] = {}
    for entry in _table_files():
        data = load_validated(entry, SCHEMA, what=f"tables/{entry.name}")
        if data["round"] in out:
            raise ValueError(f"tables/{entry.name}: round {data['round']} is defined twice")
        out[data["round"]] = data
    return out


def tables_digest() -> str:
    """sha256 of every shipped table file's bytes (readings too), by name: a cache entry made with other tables is
    a miss."""
    digest = hashlib.sha256()
    for entry in (*_table_files(), _readings_file()):
        digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


def _readings_file() -> Traversable:
    return importlib.resources.files("mlsubmit.checker").joinpath("tables").joinpath(READINGS)


@functools.cache
def _readings() -> dict[tuple[str, str, str], tuple[Reading, ...]]:
    """(round, benchmark, rule id) -> the row's readings other than its letter."""
    data = load_validated(_readings_file(), READINGS_SCHEMA, what=f"tables/{READINGS}")
    out: dict[tuple[str, str, str], tuple[Reading, ...]] = {}
    for row in data["rows"]:
        readings = tuple(Reading(r["constraint"], r["basis"], r["why"], tuple(r["sources"])) for r in row["readings"])
        for round_ in row["rounds"]:
            out[(round_, row["benchmark"], row["rule"])] = readings
    return out


def _with_readings(round_: str, benchmarks: Mapping[str, list[Rule]]) -> dict[str, tuple[Rule, ...]]:
    """The round's rules, each with the readings listed for it in this round (an extended round's are not kept)."""
    listed = {k: v for k, v in _readings().items() if k[0] == round_}
    out = {b: tuple(dataclasses.replace(r, readings=listed.pop((round_, b, r.id), ())) for r in rules)
           for b, rules in benchmarks.items()}
    if listed:
        raise ValueError(f"{READINGS}: round {round_} has no row " + ", ".join(f"{b} {i}" for _, b, i in listed))
    return out


def _extend(round_: str, data: Mapping[str, Any], base: Table) -> dict[str, list[Rule]]:
    """The rules of a round that extends `base`: its benchmarks less the retired ones, rows replaced and added."""
    retired = data.get("retire", {})
    unknown = sorted(set(retired) - set(base.benchmarks))
    if unknown:
        raise ValueError(f"hyperparameter table {round_}: cannot retire {', '.join(unknown)}")
    benchmarks = {b: list(rules) for b, rules in base.benchmarks.items() if b not in retired}
    for bench, rules in data.get("replace", {}).items():
        for new in (_rule(bench, r) for r in rules):
            ids = [r.id for r in benchmarks.get(bench, [])]
            if new.id not in ids:
                raise ValueError(f"hyperparameter table {round_}: {bench} has no rule {new.id} to replace")
            benchmarks[bench][ids.index(new.id)] = new
    for bench, rules in data.get("add", {}).items():
        benchmarks.setdefault(bench, []).extend(_rule(bench, r) for r in rules)
    return benchmarks


def _build(round_: str, raw: Mapping[str, dict[str, Any]], seen: tuple[str, ...] = ()) -> Table:
    data = raw[round_]
    if "extends" in data:
        parent = data["extends"]
        if parent in seen or parent not in raw:
            raise ValueError(f"hyperparameter table {round_}: cannot extend {parent!r}")
        base = _build(parent, raw, (*seen, round_))
        benchmarks = _extend(round_, data, base)
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
                 _with_readings(round_, benchmarks), bench_aliases, dict(data.get("retire", {})))


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
        wanted = f"hyperparameters-{round_}.yaml"
        entry = next((e for e in _table_files() if e.name == wanted), None)  # listed, never built into a path
        if entry is None:
            raise KeyError(round_)
        data: dict[str, Any] = load_validated(entry, SCHEMA, what=f"tables/{entry.name}")
        if data["round"] != round_:
            raise ValueError(f"tables/{entry.name}: declares round {data['round']}")
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
