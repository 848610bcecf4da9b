"""One rule file applied to a log's records, batch by batch (mlperf-logging's `configured_checks`).

Per record it runs PRE, CHECK and POST (for a `submission_*` key, on its first record only), FIRST_CHECK and
ATLEAST_ONE_CHECK; after the records, the ATLEAST_ONE_CHECK verdicts, the REQ counts and END. What it keeps across
records is the file's state `s` and per-key tallies (tally.KeyTally), never the records. `engine.LogRun` chains the
files and joins their findings.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.logs.reader import Record
from mlsubmit.checker.rules.files import KeyRule, RuleFile
from mlsubmit.checker.rules.safe_eval import Evaluator, Refused, Snippet, namespace, run
from mlsubmit.checker.rules.tally import SHOWN_VALUES, KeyTally, Outcome, Values, count_keys, short_repr, short_src

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Location

if TYPE_CHECKING:
    from mlsubmit.checker.rules.engine import LogRun

_FAILED = object()  # what _exec returns when a snippet was refused or raised (a finding is already filed)


class FileRun:
    """One rule file applied to the records (mlperf-logging's `configured_checks`)."""

    def __init__(self, engine: LogRun, rules: RuleFile, loglines: list[Record], parent: FileRun | None,
                 seq: int, *, whole_log: bool = False) -> None:
        self.e = engine
        self.rules = rules
        self.parent = parent  # the file that asked for this one (None: common.yaml), and when (upstream's order)
        self.seq = seq
        self.out = Outcome()
        self.ns = namespace({}, loglines, engine.enqueue)
        self.ns["ll"] = None
        self.ns["v"] = None
        self.whole = whole_log  # run on the whole log, after the stream: it counts its own (it may see derived records)
        self.counts: Counter[str] = Counter() if whole_log else engine.counts  # streamed: shared, all see every record
        self.values = Values()  # of its EXACTLY_ONE keys
        self.ran_once: set[str] = set()
        self.first_seen: set[str] = set()
        self.atleast: dict[str, int] = {}
        self.last_line: dict[str, int] = {}  # of each ATLEAST_ONE_CHECK key, for its message

    def _exec(self, snip: Snippet, rec: Record | None, key: str | None, what: str) -> Any:
        """Run one snippet; a refusal or an exception becomes a finding (keyed like upstream's messages)."""
        if snip.code is None:
            self.e.refused(self.out, self.rules, snip, key)
            return _FAILED
        try:
            return run(snip, self.ns)
        except Refused:  # pragma: no cover - refused snippets are caught above
            return _FAILED
        except Exception as exc:
            self.e.crashed(self.out, self.rules, snip, rec, key, what, exc)
            return _FAILED

    def begin(self) -> None:
        self.e.active = self
        for snip in self.rules.begin:
            self._exec(snip, None, None, "BEGIN")

    def feed(self, batch: list[Record]) -> None:
        """Apply the file's rules to the next records of the log, in order (mlperf-logging's loop, one batch at a
        time: what it keeps across records is the state `s` and the per-key tallies, never the records)."""
        keys, once = self.rules.keys, self.rules.once_keys
        atleast = self.atleast
        ns = self.ns
        log_run = self.e
        log_run.active = self
        mine = [r for r in batch if r.key in keys]  # picked in one pass: most files name a few keys
        if self.whole:
            count_keys(self.counts, mine)
        for rec in mine:
            rule = keys[rec.key]
            value = rec.value
            if rec.key in once:  # REQ EXACTLY_ONE, the one that reads the values
                self.values.add(rec.key, value.get("value") if isinstance(value, dict) else None, rec.line)
            log_run.current = rec
            ns["ll"] = rec
            ns["v"] = value
            if rule.plain is not None:  # most records: evals of vetted code that only reads (KeyRule.plain)
                checks, at_least = rule.plain
                if checks is not None:  # a snippet the whitelist accepted (safe_eval's evaluator)
                    try:
                        passed = checks(ns)
                    except Exception:
                        passed = False
                    if not passed:  # the checks one by one, for their findings: what only reads answers the same
                        self._checks(rule.check, rec)
                if at_least is not None:
                    self._at_least(rule, at_least, rec, atleast)
                continue
            self._all_rules(rule, rec)

    def _log_lines(self, key: str) -> list[int]:
        """For a file run on the whole log: the lines of a key's records among the log's own (the first few and the
        last), not the records a BEGIN block may have added."""
        assert self.e.lines is not None  # kept by the engine before it runs such a file
        found = self.e.lines.get(key)
        return found.as_list() if found is not None else []

    def _all_rules(self, rule: KeyRule, rec: Record) -> None:
        """A record of a key whose rules write state or call out: PRE/CHECK/POST, FIRST_CHECK, ATLEAST_ONE_CHECK."""
        if rec.key not in self.ran_once:
            self._key_checks(rule, rec)
        if rule.first_check and rec.key not in self.first_seen:
            self.first_seen.add(rec.key)
            self._checks(rule.first_check, rec)
        if rule.atleast_one is not None:
            n = self.atleast.setdefault(rec.key, 0)
            self.last_line[rec.key] = rec.line
            hit = self._exec(rule.atleast_one, rec, rec.key, "ATLEAST_ONE_CHECK")
            if hit is not _FAILED and hit:
                self.atleast[rec.key] = n + 1
        if "submission_" in rec.key:
            self.ran_once.add(rec.key)

    def finish(self) -> None:
        """What mlperf-logging does after the records: ATLEAST_ONE_CHECK verdicts, REQ counts, then END."""
        self.e.active = self
        self._unsatisfied(self.atleast)
        self.requirements()
        self.end()

    def _unsatisfied(self, atleast: dict[str, int]) -> None:
        """RULE004 for each key whose ATLEAST_ONE_CHECK no record passed."""
        for key, hits in atleast.items():
            if hits == 0:
                snip = self.rules.keys[key].atleast_one
                assert snip is not None
                line: int | None = self.last_line[key]  # the key's last record went by here
                if self.whole:
                    lines = self._log_lines(key)
                    line = lines[-1] if lines else None
                self.out.fixed.append(
                    finding(
                        "RULE004",
                        self.e.path,
                        f"no '{key}' record satisfies `{snip.source}` ({self.rules.name})",
                        line=line,
                    )
                )

    def _at_least(self, rule: KeyRule, evaluate: Evaluator, rec: Record, atleast: dict[str, int]) -> None:
        """ATLEAST_ONE_CHECK of a plain rule, as one evaluation of its vetted snippet; an exception is filed as the
        slow way (_exec) files it: the snippet only reads, so evaluating it again would raise the same (a log whose
        every record raises paid for two evaluations a record)."""
        n = atleast.setdefault(rec.key, 0)
        self.last_line[rec.key] = rec.line
        try:
            hit = evaluate(self.ns)
        except Exception as exc:
            assert rule.atleast_one is not None  # the snippet `evaluate` was made from
            self.e.crashed(self.out, self.rules, rule.atleast_one, rec, rec.key, "ATLEAST_ONE_CHECK", exc)
            return
        if hit:
            atleast[rec.key] = n + 1

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
                self.out.keyed(
                    rec.key,
                    finding(
                        "RULE001",
                        self.e.path,
                        f"'{rec.key}' fails `{snip.source}` with value {short_repr(rec.value.get('value'))} "
                        f"({self.rules.name})",
                        line=rec.line,
                    ),
                )

    def requirements(self) -> None:
        required, alternatives = self.rules.requirements
        counts = self.counts
        for key, req, n in required:
            found = counts[key]
            if req == "EXACTLY_ONE":
                if found != 1:
                    self._exactly_one(key, self.values.seen(key))
            elif found < n:
                self._missing(key, req, found)
        for group in alternatives:  # a key of the group that this file does not name counts as absent, as upstream
            if not any(counts[k] for k in group if k in self.rules.keys):
                names = " or ".join(f"'{k}'" for k in group)
                self.out.fixed.append(
                    finding("RULE002", self.e.path, f"at least one {names} record is required, found none "
                            f"({self.rules.name})")
                )

    def _exactly_one(self, key: str, seen: KeyTally) -> None:
        lines = self._log_lines(key) if self.whole else seen.lines.as_list()
        related = tuple(Location(self.e.path, ln) for ln in lines[1:6])
        if seen.count and seen.same:
            self.out.warnings.append(
                finding("RULE003", self.e.path, f"'{key}' must appear once; found {seen.count} with the same "
                        f"value ({self.rules.name})", line=lines[0] if lines else None, related=related)
            )
            return
        values = sorted(seen.values())
        shown = ", ".join(values[:SHOWN_VALUES]) + (", ..." if len(values) > SHOWN_VALUES else "")
        msg = f"'{key}' must appear exactly once; found {seen.count}"
        msg += f" with values [{shown}]" if seen.count else ""
        self.out.keyed(
            key,
            finding("RULE002", self.e.path, f"{msg} ({self.rules.name})", line=lines[0] if lines else None,
                    related=related),
        )

    def _missing(self, key: str, req: str, found: int) -> None:
        self.out.keyed(
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
                self.out.fixed.append(
                    finding("RULE005", self.e.path, f"end-of-log check failed: `{short_src(snip)}` "
                            f"({self.rules.name})")
                )

