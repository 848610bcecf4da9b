"""Run a ruleset's rule files over one log's records, with mlperf-logging's semantics and none of its risks.

Semantics kept from mlperf-logging's ComplianceChecker (so verdicts agree): the chain starts at `common.yaml`;
rule files queued by `enqueue_config` run in order, each with a fresh state `s` and its BEGIN block; a file that
defines a key discards the failures earlier files reported for that key; PRE/CHECK/POST run for every record of a
key except `submission_*` keys (first record only); REQ counts are checked after the records, then END.
Differences: findings carry the record's real line; nothing outside the whitelist runs; `enqueue_config` only
accepts a rule file that mlperf-logging ships, looked up by name (`Ruleset.resolve`), and a log value that names
no such file is a RULE008 finding.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from types import CodeType
from typing import TYPE_CHECKING, Any, cast

from mlsubmit.checker.logs.reader import ParsedLog, Record
from mlsubmit.checker.rules.files import KeyRule, RuleFile, Ruleset, RulesetError, get_ruleset
from mlsubmit.checker.rules.safe_eval import Refused, Snippet, namespace, run

from mlsubmit.codes import finding
from mlsubmit.findings import Finding, Location
from mlsubmit.support.datafiles import load_validated

if TYPE_CHECKING:
    from mlsubmit.checker.run.options import CheckOptions

_FAILED = object()  # what _exec returns when a snippet was refused or raised (a finding is already filed)


def _short(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except (ValueError, TypeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@functools.cache
def _notes() -> dict[tuple[str, str], str]:
    """(ruleset, key) -> hint, from checker/tables/rule-notes.yaml."""
    folder = importlib.resources.files("mlsubmit.checker").joinpath("tables")
    data = load_validated(folder.joinpath("rule-notes.yaml"), "rule-notes.schema.json", what="tables/rule-notes.yaml")
    return {(r, k): n["hint"] for n in data["notes"] for r in n["rulesets"] for k in n["keys"]}


def with_notes(findings: list[Finding], ruleset: str) -> list[Finding]:
    """Swap in the round-specific hint where a finding concerns a key with a note."""
    notes = _notes()
    out = []
    for f in findings:
        hint = next((h for (r, k), h in notes.items() if r == ruleset and k in f.message), None)
        out.append(replace(f, hint=hint) if hint else f)
    return out


@dataclass
class _Outcome:
    """Failures by key (a later rule file for the same key replaces them) and failures that always stand."""

    by_key: dict[str, list[Finding]] = field(default_factory=dict)
    fixed: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    def keyed(self, key: str, f: Finding) -> None:
        self.by_key.setdefault(key, []).append(f)

    def findings(self) -> list[Finding]:
        return [*self.warnings, *(f for fs in self.by_key.values() for f in fs), *self.fixed]


class _FileRun:
    """One rule file applied to the records (mlperf-logging's `configured_checks`)."""

    def __init__(self, engine: _LogRun, rules: RuleFile) -> None:
        self.e = engine
        self.rules = rules
        self.ns = namespace({}, engine.records, engine.enqueue)
        self.ns["ll"] = None
        self.ns["v"] = None

    def _exec(self, snip: Snippet, rec: Record | None, key: str | None, what: str) -> Any:
        """Run one snippet; a refusal or an exception becomes a finding (keyed like upstream's messages)."""
        if snip.code is None:
            self.e.refused(self.rules, snip, key)
            return _FAILED
        try:
            return run(snip, self.ns)
        except Refused:  # pragma: no cover - refused snippets are caught above
            return _FAILED
        except Exception as exc:
            self.e.crashed(self.rules, snip, rec, key, what, exc)
            return _FAILED

    def begin(self) -> None:
        for snip in self.rules.begin:
            self._exec(snip, None, None, "BEGIN")

    def records(self) -> dict[str, list[Any]]:
        keys = self.rules.keys
        reported: dict[str, list[Any]] = {k: [] for k in keys}
        ran_once: set[str] = set()
        first_seen: set[str] = set()
        atleast: dict[str, int] = {}
        ns = self.ns
        run = self.e
        for rec in self._with_rules(keys):
            rule = keys[rec.key]
            value = rec.value
            reported[rec.key].append(value.get("value") if isinstance(value, dict) else None)
            run.current = rec
            ns["ll"] = rec
            ns["v"] = value
            if rule.plain is not None:  # most records: evals of vetted code that only reads (KeyRule.plain)
                checks, at_least = rule.plain
                if checks is not None:  # compile_snippet's code for a tree the whitelist accepted
                    try:
                        passed = eval(checks, ns)
                    except Exception:
                        passed = False
                    if not passed:  # the checks one by one, for their findings: what only reads answers the same
                        self._checks(rule.check, rec)
                if at_least is not None:
                    self._at_least(rule, at_least, rec, atleast)
                continue
            if rec.key not in ran_once:
                self._key_checks(rule, rec)
            if rule.first_check and rec.key not in first_seen:
                first_seen.add(rec.key)
                self._checks(rule.first_check, rec)
            if rule.atleast_one is not None:
                n = atleast.setdefault(rec.key, 0)
                hit = self._exec(rule.atleast_one, rec, rec.key, "ATLEAST_ONE_CHECK")
                if hit is not _FAILED and hit:
                    atleast[rec.key] = n + 1
            if "submission_" in rec.key:
                ran_once.add(rec.key)
        self._unsatisfied(atleast)
        return reported

    def _unsatisfied(self, atleast: dict[str, int]) -> None:
        """RULE004 for each key whose ATLEAST_ONE_CHECK no record passed."""
        for key, hits in atleast.items():
            if hits == 0:
                snip = self.rules.keys[key].atleast_one
                assert snip is not None
                self.e.out.fixed.append(
                    finding(
                        "RULE004",
                        self.e.path,
                        f"no '{key}' record satisfies `{snip.source}` ({self.rules.name})",
                        line=self.e.lines_of(key)[-1] if self.e.lines_of(key) else None,
                    )
                )

    def _at_least(self, rule: KeyRule, code: CodeType, rec: Record, atleast: dict[str, int]) -> None:
        """ATLEAST_ONE_CHECK of a plain rule, as one eval of its vetted code; an exception is evaluated again the
        slow way, to file its finding."""
        n = atleast.setdefault(rec.key, 0)
        try:
            hit = eval(code, self.ns)
        except Exception:
            hit = self._exec(cast(Snippet, rule.atleast_one), rec, rec.key, "ATLEAST_ONE_CHECK")
        if hit is not _FAILED and hit:
            atleast[rec.key] = n + 1

    def _with_rules(self, keys: dict[str, KeyRule]) -> Iterator[Record]:
        """The records this file has rules for, in order, picked in one pass (most files name a few keys); a
        record a snippet appends meanwhile is still visited, as a loop over the live list would visit it."""
        records = self.e.records
        done = 0
        while done < len(records):
            batch = records[done:]
            done = len(records)
            yield from [r for r in batch if r.key in keys]

    def _key_checks(self, rule: KeyRule, rec: Record) -> None:
        for snip in rule.pre:
            self._exec(snip, rec, rec.key, "PRE")
        if rule.all_checks is None or not self._all_pass(rule.all_checks):
            self._checks(rule.check, rec)
        for snip in rule.post:
            self._exec(snip, rec, rec.key, "POST")

    def _all_pass(self, conjunction: Snippet) -> bool:
        """True when every check passes; on False or an exception the checks run one by one for their findings."""
        try:
            return bool(run(conjunction, self.ns))
        except Exception:
            return False

    def _checks(self, checks: tuple[Snippet, ...], rec: Record) -> None:
        for snip in checks:
            ok = self._exec(snip, rec, rec.key, "CHECK")
            if ok is not _FAILED and not ok:
                self.e.out.keyed(
                    rec.key,
                    finding(
                        "RULE001",
                        self.e.path,
                        f"'{rec.key}' fails `{snip.source}` with value {_short(rec.value.get('value'))} "
                        f"({self.rules.name})",
                        line=rec.line,
                    ),
                )

    def requirements(self, reported: dict[str, list[Any]]) -> None:
        counts, alternatives = self.rules.requirements
        for key, req, n in counts:
            values = reported[key]
            if req == "EXACTLY_ONE":
                if len(values) != 1:
                    self._exactly_one(key, values)
            elif len(values) < n:
                self._missing(key, req, len(values))
        for group in alternatives:
            if not any(reported.get(k) for k in group):
                names = " or ".join(f"'{k}'" for k in group)
                self.e.out.fixed.append(
                    finding("RULE002", self.e.path, f"at least one {names} record is required, found none "
                            f"({self.rules.name})")
                )

    def _exactly_one(self, key: str, values: list[Any]) -> None:
        lines = self.e.lines_of(key)
        related = tuple(Location(self.e.path, ln) for ln in lines[1:6])
        same = bool(values) and all(v == values[0] for v in values)
        if same:
            self.e.out.warnings.append(
                finding("RULE003", self.e.path, f"'{key}' must appear once; found {len(values)} with the same "
                        f"value ({self.rules.name})", line=lines[0] if lines else None, related=related)
            )
            return
        shown = ", ".join(sorted({_short(v, 40) for v in values}))
        msg = f"'{key}' must appear exactly once; found {len(values)}" + (f" with values [{shown}]" if values else "")
        self.e.out.keyed(
            key,
            finding("RULE002", self.e.path, f"{msg} ({self.rules.name})", line=lines[0] if lines else None,
                    related=related),
        )

    def _missing(self, key: str, req: str, found: int) -> None:
        self.e.out.keyed(
            key,
            finding("RULE002", self.e.path, f"'{key}' is required {req}; found {found} ({self.rules.name})"),
        )

    def end(self) -> None:
        for snip in self.rules.end_pre:
            self._exec(snip, None, None, "END PRE")
        self.ns["ll"] = self.ns["v"] = None
        self.e.current = None
        for snip in self.rules.end_check:
            ok = self._exec(snip, None, None, "END CHECK")
            if ok is not _FAILED and not ok:
                self.e.out.fixed.append(
                    finding("RULE005", self.e.path, f"end-of-log check failed: `{_short_src(snip)}` "
                            f"({self.rules.name})")
                )


def _short_src(snip: Snippet, limit: int = 160) -> str:
    text = " ".join(snip.source.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _LogRun:
    def __init__(self, records: list[Record], ruleset: Ruleset, path: str) -> None:
        self.given = records  # the log's own records: lines_of indexes these, never derived ones
        self.records = list(records)  # BEGIN blocks may append derived records; the caller's list stays as is
        self.ruleset = ruleset
        self.path = path
        self.out = _Outcome()
        self.queue: list[tuple[str, str]] = []
        self.asked: set[tuple[str, str]] = set()  # every rule file queued so far: each runs once per log
        self.current: Record | None = None
        self._lines: dict[str, list[int]] | None = None  # built on the first finding that needs it
        self._reported_refusals: set[int] = set()

    def lines_of(self, key: str) -> list[int]:
        if self._lines is None:
            self._lines = {}
            for rec in self.given:
                self._lines.setdefault(rec.key, []).append(rec.line)
        return self._lines.get(key, [])

    def enqueue(self, requested: object) -> None:
        """The `enqueue_config` the rule text calls: a file of this ruleset, by name, or a finding."""
        requested = str(requested)
        target = self.ruleset.resolve(requested)
        if target is not None and target not in self.asked:
            self.asked.add(target)
            self.queue.append(target)
            return
        # A file asked for again (a benchmark named `common`) would run the chain again, forever: upstream loops.
        why = "which already ran for this log" if target is not None else (
            f"which is not a rule file of ruleset {self.ruleset.version}")
        rec = self.current
        shown = requested.removeprefix(self.ruleset.prefix)
        code = "RULE008"
        if rec is not None and rec.key == "submission_benchmark" and _plain_name(rec.value.get("value")):
            code = "RULE009"
        self.out.fixed.append(
            finding(
                code,
                self.path,
                f"the value of '{rec.key if rec else '?'}' asks for rule file '{shown}', {why}; nothing was loaded",
                line=rec.line if rec else None,
            )
        )

    def refused(self, rules: RuleFile, snip: Snippet, key: str | None) -> None:
        if id(snip) in self._reported_refusals:
            return
        self._reported_refusals.add(id(snip))
        self.out.fixed.append(
            finding(
                "RULE007",
                self.path,
                f"{rules.name}{':' + key if key else ''}: snippet `{_short_src(snip, 80)}` refused: {snip.refusal}",
            )
        )

    def crashed(self, rules: RuleFile, snip: Snippet, rec: Record | None, key: str | None, what: str,
                exc: Exception) -> None:
        f = finding(
            "RULE006",
            self.path,
            f"{what} `{_short_src(snip, 100)}` of {rules.name} raised {type(exc).__name__}: {_short(str(exc), 80)}"
            + (f" on value {_short(rec.value.get('value'))}" if rec is not None else ""),
            line=rec.line if rec else None,
        )
        if key is None:
            self.out.fixed.append(f)
        else:
            self.out.keyed(key, f)

    def run(self) -> list[Finding]:
        first = (self.ruleset.version, "common.yaml")
        self.asked.add(first)
        self.queue.append(first)
        while self.queue:
            version, bare = self.queue.pop(0)
            rules = self.ruleset.file(bare, version)
            for key in rules.keys:
                self.out.by_key.pop(key, None)
            file_run = _FileRun(self, rules)
            file_run.begin()
            reported = file_run.records()
            file_run.requirements(reported)
            file_run.end()
        return self.out.findings()



def _plain_name(value: object) -> bool:
    return isinstance(value, str) and value.replace("_", "").isalnum()


def check_records(records: list[Record], ruleset: Ruleset, path: str) -> list[Finding]:
    """All RULE findings for one log's records (an empty list when the log passes)."""
    if not records:
        return []
    try:
        return with_notes(_LogRun(records, ruleset, path).run(), ruleset.version)
    except RulesetError as exc:
        return [finding("RULE007", path, f"rule files cannot be used: {exc}")]


def check_log(log: ParsedLog, options: CheckOptions) -> list[Finding]:
    """The rule files' findings for one parsed log: the log check every profile runs."""
    return check_records(log.records, get_ruleset(options.ruleset), log.path)
