"""Run a ruleset's rule files over one log's records, with mlperf-logging's semantics and none of its risks.

Semantics kept from mlperf-logging's ComplianceChecker (so verdicts agree): the chain starts at `common.yaml`;
rule files queued by `enqueue_config` run in order, each with a fresh state `s` and its BEGIN block; a file that
defines a key discards the failures earlier files reported for that key; PRE/CHECK/POST run for every record of a
key except `submission_*` keys (first record only); REQ counts are checked after the records, then END.
Differences: findings carry the record's real line; nothing outside the whitelist runs; `enqueue_config` only
accepts a rule file that mlperf-logging ships, looked up by name (`Ruleset.resolve`), and a log value that names
no such file is a RULE008 finding (RULE010 when it climbs out of the rule folder with a path separator).
"""

from __future__ import annotations

import functools
import importlib.resources
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.logs.limits import PREFIX_BYTES, records_size
from mlsubmit.checker.logs.reader import ParsedLog, Record
from mlsubmit.checker.rules.filerun import FileRun
from mlsubmit.checker.rules.files import RuleFile, Ruleset, RulesetError, get_ruleset
from mlsubmit.checker.rules.safe_eval import Snippet
from mlsubmit.checker.rules.tally import (
    Lines,
    Outcome,
    count_keys,
    lines_of_records,
    short_repr,
    short_src,
)

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.repeats import Capped
from mlsubmit.core.support.datafiles import load_validated

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions




# the codes the `rules` check may emit (checker/engine/checks.py registers it)
CODES = frozenset({"LOG012", "RULE001", "RULE002", "RULE003", "RULE004", "RULE005", "RULE006", "RULE007", "RULE008",
                   "RULE009", "RULE010"})

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


PREFIX_RECORDS = 50_000  # records kept from the start of a log, for a rule file asked for while it streams
Asked = tuple[tuple[str, str], "FileRun | None", int]  # (ruleset, file), the file that asked, when it asked


class LogRun:
    """The chain of rule files over one log, fed its records in batches as they are read.

    mlperf-logging runs the files one after another, each over every record. Here they run side by side: a file
    asked for by `enqueue_config` starts at once and is first given the records already read (kept from the start
    of the log while they are few: a `submission_*` record near the top asks for it). A file asked for later, one
    whose snippets read the whole log (`loglines`), and every file after either, run after the stream on the log
    read again (the one place memory follows the records, up to the reader's limit). Each file keeps its own
    findings; they are joined at the end in the order the files would have run (breadth first, as upstream's
    queue). Where running side by side could change a verdict (two files asking for the same file; a streamed file
    after a whole-log one, which would see its derived records), the whole chain runs again upstream's way.
    """

    def __init__(self, ruleset: Ruleset, path: str, reread: Callable[[], list[Record]]) -> None:
        self.ruleset = ruleset
        self.path = path
        self.reread = reread
        self.runs: list[FileRun] = []  # streamed, in the order they started
        self.waiting: list[Asked] = []
        self.deferred: list[Asked] = []
        self.prefix: list[list[Record]] | None = []  # the batches read so far, while they are few (PREFIX_RECORDS)
        self.prefix_count = 0
        self.prefix_bytes = 0  # limits.records_size of the prefix, within PREFIX_BYTES: a record may hold 16 MiB
        self.asked: dict[tuple[str, str], set[int]] = {}  # every file asked for, and id() of the files that asked
        self.seq = 0
        self.current: Record | None = None
        self.active: FileRun | None = None
        # records of each key, for the streamed files (each sees every one): every key while a file may still start
        # streaming (the first PREFIX_RECORDS), then only the keys the streamed files name (`named`)
        self.counts: Counter[str] = Counter()
        self.named: frozenset[str] = frozenset()
        self.lines: dict[str, Lines] | None = None  # of every key, for the files run on the whole log
        self._reported_refusals: set[int] = set()
        self._crash_heads: dict[tuple[Any, ...], str] = {}  # RULE006's message head per snippet and error
        self._begin()

    def _begin(self) -> None:
        first = (self.ruleset.version, "common.yaml")
        self.asked[first] = set()  # common.yaml runs first whoever asks for it again
        self.waiting.append((first, None, 0))
        self._start()

    def feed(self, batch: list[Record]) -> None:
        if self.prefix is not None:
            self.prefix.append(batch)  # the reader hands each batch over and never touches it again
            self.prefix_count += len(batch)
            if len(self.prefix) > 1:  # one batch is one chunk read (at most 17 MiB): a log of one is never sized
                first = records_size(self.prefix[0]) if len(self.prefix) == 2 else 0
                self.prefix_bytes += first + records_size(batch)
            count_keys(self.counts, batch)
        else:
            count_keys(self.counts, batch, self.named)
        for run in list(self.runs):
            run.feed(batch)
        self._start()
        if self.prefix is not None and (self.prefix_count > PREFIX_RECORDS or self.prefix_bytes > PREFIX_BYTES):
            self._close_prefix()

    def _close_prefix(self) -> None:
        """No file starts streaming from here on (a later one runs on the log read again): the counts keep the keys
        the streamed files name, and only those are counted further, so a log of millions of distinct keys keeps
        a few dozen counts, not one per key."""
        self.prefix = None
        self.named = frozenset().union(*(run.rules.keys for run in self.runs))
        for key in [k for k in self.counts if k not in self.named]:
            del self.counts[key]

    def _start(self) -> None:
        """Start the files asked for: streamed from here when the records so far are at hand, else deferred."""
        while self.waiting:
            asked = self.waiting.pop(0)
            (version, bare), parent, seq = asked
            rules = self.ruleset.file(bare, version)
            if self.prefix is None or self.deferred or rules.reads_whole_log:
                self.deferred.append(asked)
                continue
            run = FileRun(self, rules, [], parent, seq)
            self.runs.append(run)
            run.begin()
            for batch in self.prefix:
                run.feed(batch)

    def finish(self) -> list[Finding]:
        self.prefix = None
        for run in self.runs:
            run.finish()
        streamed = self.runs
        order = _breadth_first([*streamed, *self._run_deferred()])
        if any(len(askers) > 1 for askers in self.asked.values()) or _streamed_after_whole(order, streamed):
            order = self._one_after_another()
        out = Outcome()
        for run in order:  # as if each file ran after the one before: a file naming a key drops earlier findings
            for key in [k for k in out.by_key if k in run.rules.keys]:
                del out.by_key[key]
            out.warnings.extend(run.out.warnings)
            out.fixed.extend(run.out.fixed)
            for key, found in run.out.by_key.items():
                out.by_key.setdefault(key, Capped()).extend(found)
            run.ns.clear()  # its state `s` and, for a whole-log file, the records
        # files and engine refer to each other: untie them, so that they go now, not at a later garbage collection
        self.runs, self.active, self.current, self.asked = [], None, None, {}
        return out.findings()

    def _one_after_another(self) -> list[FileRun]:
        """The whole chain again, upstream's way, on the log read again."""
        self.runs, self.waiting, self.deferred, self.prefix, self.asked = [], [], [], None, {}
        self._reported_refusals = set()
        self._begin()
        return self._run_deferred()

    def _run_deferred(self) -> list[FileRun]:
        """The deferred files, one after another, on the whole log read again, in upstream's order."""
        if not self.deferred:
            return []
        records = self.reread()
        self.lines = lines_of_records(records)  # the log's own records (never derived ones); files count their own
        loglines = list(records)  # BEGIN blocks may append derived records; the caller's list stays as is
        done: list[FileRun] = []
        queue = sorted(self.deferred, key=lambda a: a[2])
        while queue:
            (version, bare), parent, seq = queue.pop(0)
            run = FileRun(self, self.ruleset.file(bare, version), loglines, parent, seq, whole_log=True)
            run.begin()
            fed = 0
            while fed < len(loglines):  # a record a snippet appends meanwhile is still visited, as upstream
                batch = loglines[fed:]
                fed = len(loglines)
                run.feed(batch)
            run.finish()
            done.append(run)
            queue += self.waiting
            self.waiting = []
        return done

    def enqueue(self, requested: object) -> None:
        """The `enqueue_config` the rule text calls: a file of this ruleset, by name, or a finding."""
        requested = str(requested)
        target = self.ruleset.resolve(requested)
        if target is not None:
            self.seq += 1
            first = target not in self.asked
            self.asked.setdefault(target, set()).add(id(self.active))
            if first:
                self.waiting.append((target, self.active, self.seq))
                return
        # A file asked for again (a benchmark named `common`) would run the chain again, forever: upstream loops.
        why = "which already ran for this log" if target is not None else (
            f"which is not a rule file of ruleset {self.ruleset.version}")
        rec = self.current
        shown = requested.removeprefix(self.ruleset.prefix)
        if len(shown) > 1000:  # a value may be 16 MiB: never quoted whole (its head and its file name at the end)
            shown = f"{shown[:500]}...{shown[-500:]}"
        code = "RULE008"
        if rec is not None and rec.key == "submission_benchmark" and _plain_name(rec.value.get("value")):
            code = "RULE009"
        if target is None and _climbs(requested):  # mlperf-logging would open, and run, a file of the log's choosing
            code, why = "RULE010", "outside the ruleset's folder: mlperf-logging would load and run that file"
        assert self.active is not None  # only a running file's snippets call it
        self.active.out.fixed.append(
            finding(
                code,
                self.path,
                f"the value of '{rec.key if rec else '?'}' asks for rule file '{shown}', {why}; nothing was loaded",
                line=rec.line if rec else None,
            )
        )

    def refused(self, out: Outcome, rules: RuleFile, snip: Snippet, key: str | None) -> None:
        if id(snip) in self._reported_refusals:
            return
        self._reported_refusals.add(id(snip))
        out.fixed.append(
            finding(
                "RULE007",
                self.path,
                f"{rules.name}{':' + key if key else ''}: snippet `{short_src(snip, 80)}` refused: {snip.refusal}",
            )
        )

    def crashed(self, out: Outcome, rules: RuleFile, snip: Snippet, rec: Record | None, key: str | None,
                what: str, exc: Exception) -> None:
        # A log may fail this way on every record: the message's head is worked out once per snippet and error,
        # and past the log's cap (mlsubmit/core/repeats.py) the failure is counted without building a Finding.
        cause = (id(snip), what, rules.name, type(exc), str(exc))
        head = self._crash_heads.get(cause)
        if head is None:
            head = (f"{what} `{short_src(snip, 100)}` of {rules.name} raised {type(exc).__name__}: "
                    f"{short_repr(cause[4], 80)}")
            if len(self._crash_heads) < 10_000:  # an error quoting each record's value would grow it without end
                self._crash_heads[cause] = head
        message = head + (f" on value {short_repr(rec.value.get('value'))}" if rec is not None else "")
        line = rec.line if rec else None
        if key is None:
            found = out.fixed
        elif (found_for_key := out.by_key.get(key)) is not None:
            found = found_for_key
        else:
            found = out.by_key[key] = Capped()
        if not found.counted("RULE006", message, line):
            found.append(finding("RULE006", self.path, message, line=line))


def _breadth_first(runs: list[FileRun]) -> list[FileRun]:
    """The files in the order upstream's queue runs them: each file's, in the order it asked for them, after the
    files before it."""
    children: dict[int, list[FileRun]] = {}
    for run in sorted(runs, key=lambda r: r.seq):
        children.setdefault(id(run.parent), []).append(run)
    order = children.get(id(None), [])[:1]
    for run in order:  # grows while it is walked
        order += children.get(id(run), [])
    return order


def _streamed_after_whole(order: list[FileRun], streamed: list[FileRun]) -> bool:
    """A streamed file upstream would run after a deferred one (it would see what a BEGIN block appended)."""
    ids = {id(r) for r in streamed}
    ranks = [i for i, r in enumerate(order) if id(r) not in ids]
    return bool(ranks) and any(id(r) in ids for r in order[ranks[0] :])


def _plain_name(value: object) -> bool:
    return isinstance(value, str) and value.replace("_", "").isalnum()


def _climbs(requested: str) -> bool:
    """A name asked of `enqueue_config` whose file part holds a path separator: mlperf-logging joins it to its rule
    folder, so `../` (or `/proc/self/cwd/...`) reaches any file, the tree's own included."""
    _folder, _sep, bare = requested.partition("/")
    return "/" in bare or "\\" in bare


def check_records(records: list[Record], ruleset: Ruleset, path: str) -> list[Finding]:
    """All RULE findings for one log's records (an empty list when the log passes)."""
    if not records:
        return []
    rules = RuleStream(ruleset, path, lambda: records)
    rules.feed(records)
    return rules.finish()


class RuleStream:
    """The rule files' check of one log, fed its records batch by batch (the reader's sink); `reread` gives the
    whole list again, for the rule files that need it (LogRun)."""

    def __init__(self, ruleset: Ruleset, path: str, reread: Callable[[], list[Record]]) -> None:
        self.path = path
        self.version = ruleset.version
        self.failed: list[Finding] = []
        self.run: LogRun | None = None
        # the chain (its first rule file compiled) starts with the first records: after the log is opened, so that
        # reading starts without waiting on it (issue 56, tools/trace_path.py)
        self._chain = (ruleset, reread)

    def _started(self) -> LogRun | None:
        if self.run is None and not self.failed:
            ruleset, reread = self._chain
            self._guard(lambda: setattr(self, "run", LogRun(ruleset, self.path, reread)))
        return self.run

    def _guard(self, call: Callable[[], Any]) -> Any:
        if self.failed:
            return None
        try:
            return call()
        except RulesetError as exc:
            self.failed = [finding("RULE007", self.path, f"rule files cannot be used: {exc}")]
            return None

    def feed(self, batch: list[Record]) -> None:
        run = self._started() if batch else None
        if run is not None:
            self._guard(lambda: run.feed(batch))

    def finish(self) -> list[Finding]:
        run = self._started()
        found = self._guard(run.finish) if run is not None else None
        return self.failed or with_notes(found or [], self.version)


def check_log(log: ParsedLog, options: CheckOptions) -> list[Finding]:
    """The rule files' findings for one parsed log: the log check every profile runs."""
    return check_records(log.records, get_ruleset(options.ruleset), log.path)
