"""What the tree-level checks, the scorer and the report need from a log, extracted once while it is checked.

Facts are small and picklable, so a worker process can hand them back and the cache can store them; no check
above the log level reads a log file again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mlsubmit.checker.logs.limits import FACTS_BYTES, VALUE_CHARS, clip_value, value_size
from mlsubmit.checker.logs.rcp_lines import as_text
from mlsubmit.checker.logs.reader import ParsedLog, Record

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

# Keys whose every occurrence is kept, because a tree check or the scorer reads them all (the rest keep their
# first occurrence only). Per-epoch keys nobody reads (block_stop, epoch_stop, eval_stop) stay out: they were
# half of what workers pickled back to the parent.
SERIES_KEYS = frozenset(
    {
        "eval_accuracy", "seed", "run_start", "run_stop", "init_start", "init_stop", "submission_benchmark",
        "submission_division", "submission_org", "submission_platform", "submission_status", "train_samples",
        "global_batch_size",
    }
)  # fmt: skip


# Keys whose first record the tree checks, the scorer, the report and the ledger read (LogFacts.value: run sets,
# system agreement, the config file check, the score's batch size; run_start for the time): a check keeps the first
# record of these only (FactsBuilder(keys=TREE_KEYS)), not of every key: 40 logs of 9,000 keys of 1,000 characters,
# each log's facts within budget, kept 517 MB in all (issue 54). `extract` (review, advise) keeps every key.
TREE_KEYS = SERIES_KEYS | {"config_filename"}


class Occurrence(NamedTuple):
    """One record's value, metadata, time and line (a tuple: facts cross process boundaries by the thousand)."""

    value: Any
    metadata: Any
    time_ms: float
    line: int


@dataclass
class LogFacts:
    path: str
    sha256: str = ""
    size: int = 0
    readable: bool = True
    record_count: int = 0
    parse_errors: int = 0  # MLLOG lines that gave no record (the reference's seed checker fails such a log)
    # Codes of the error findings the log-level checks gave this log, set by the pipeline: a run with any is
    # "non-compliant" for olympic scoring (tree checks, score).
    error_codes: tuple[str, ...] = ()
    # The lines mlperf-logging's RCP reader acts on, as it reads them (logs/rcp_lines.py): the RCP check and each
    # run's convergence come from the reference's own reader run on these, so no log is read twice.
    rcp_lines: tuple[str, ...] = ()
    # [ruleset, the reference reader's answer on rcp_lines], computed where the log was read (a worker) for closed
    # runs, so the RCP check in the main process reads no run again; None: not computed, or the reader raises.
    rcp_answer: list[Any] | None = None
    first: dict[str, Occurrence] = field(default_factory=dict)
    series: dict[str, list[Occurrence]] = field(default_factory=dict)

    def value(self, key: str, default: Any = None) -> Any:
        occ = self.first.get(key)
        return occ.value if occ is not None else default

    def line(self, key: str) -> int | None:
        occ = self.first.get(key)
        return occ.line if occ is not None else None

    def all(self, key: str) -> list[Occurrence]:
        return self.series.get(key, [])

    @property
    def benchmark(self) -> str | None:
        v = self.value("submission_benchmark")
        return v if isinstance(v, str) else None

    @property
    def division(self) -> str | None:
        v = self.value("submission_division")
        return v if isinstance(v, str) else None

    @property
    def run_start_ms(self) -> float | None:
        occ = self.first.get("run_start")
        return occ.time_ms if occ else None

    @property
    def started_ms(self) -> float | None:
        """When the run started, for putting runs in order (TR1.1 §Scoring: "consecutive" by time): run_start, else
        the earliest record kept (package says PKG011 for such a run)."""
        start = self.run_start_ms
        if start is None and self.first:
            start = min(occ.time_ms for occ in self.first.values())
        return start

    @property
    def run_stop(self) -> Occurrence | None:
        stops = self.all("run_stop")
        return stops[0] if stops else None

    @property
    def status(self) -> str | None:
        stop = self.run_stop
        if stop is None or not isinstance(stop.metadata, dict):
            return None
        status = stop.metadata.get("status")
        return status if isinstance(status, str) else None

    @property
    def converged(self) -> bool:
        return self.status == "success"

    @property
    def minutes(self) -> float | None:
        """Time to train: run_start to run_stop, in minutes (TR1.0/TR1.1 "Benchmark results")."""
        start, stop = self.run_start_ms, self.run_stop
        if start is None or stop is None:
            return None
        return (stop.time_ms - start) / 60000.0


# mllog's call-site metadata: only the seed check reads it (the reference tells seeds apart by call site). Dropping
# it elsewhere shrinks what workers hand back to the parent by more than half.
_CALL_SITE = ("file", "lineno")
_KEEPS_CALL_SITE = frozenset({"seed"})


_NO_META: dict[str, Any] = {}  # shared by every occurrence whose metadata was only its call site; never mutated


def _meta(key: str, meta: Any) -> Any:
    if key in _KEEPS_CALL_SITE or type(meta) is not dict or "file" not in meta:
        return meta
    if len(meta) == 2 and "lineno" in meta:  # mllog's usual {"file", "lineno"}: nothing else to keep
        return _NO_META
    return {k: v for k, v in meta.items() if k not in _CALL_SITE}


MAX_KEYS = 10_000  # distinct keys whose first record is kept (a real log has a few dozen)
MAX_SERIES = 100_000  # occurrences kept per series key (a real log: at most a few thousand evals)


class FactsBuilder:
    """Facts gathered batch by batch as the log is read (a reader sink): the first record of each key (of `keys`
    only, when given) and the series, each bounded (MAX_KEYS, MAX_SERIES, and FACTS_BYTES for all), so memory does
    not follow the records."""

    def __init__(self, keys: frozenset[str] | None = None) -> None:
        self.keys = keys
        self.first: dict[str, Occurrence] = {}
        self.series: dict[str, list[Occurrence]] = {}
        self.size = 0  # limits.value_size of the occurrences kept; past FACTS_BYTES no more are kept
        self.left: Record | None = None  # the first record past FACTS_BYTES
        self.clipped: Record | None = None  # the first record whose value or metadata was kept clipped
        self.earliest: Record | None = None  # of the records of other keys than `keys`: LogFacts.started_ms reads it

    def feed(self, batch: list[Record]) -> None:
        if self.size > FACTS_BYTES:
            return
        first, series, keys = self.first, self.series, self.keys
        added: list[Any] = []
        for rec in batch:
            key = rec.key
            occ = None
            if keys is not None and key not in keys:
                if self.earliest is None or rec.timestamp < self.earliest.timestamp:
                    self.earliest = rec
                continue
            if key not in first and len(first) < MAX_KEYS:
                occ = first[key] = self._occurrence(rec)
                added.append(occ)
                self.size += len(key)  # a key may be long too
            if key in SERIES_KEYS:
                kept = series.setdefault(key, [])
                if len(kept) < MAX_SERIES:
                    if occ is None:
                        occ = self._occurrence(rec)
                        added.append(occ)
                    kept.append(occ)
        if added:
            self.size += value_size([(o.value, o.metadata) for o in added])
            if self.size > FACTS_BYTES:
                self.left = batch[-1]

    def _occurrence(self, rec: Record) -> Occurrence:
        """The record as the facts keep it: a value or metadata entry past limits.VALUE_CHARS clipped (noted)."""
        record = rec.value
        value, clipped = clip_value(record.get("value"))
        meta = _meta(rec.key, record.get("metadata"))
        if type(meta) is dict and meta:
            kept = {k: clip_value(v) for k, v in meta.items()}
            if any(c for _, c in kept.values()):
                meta, clipped = {k: v for k, (v, _) in kept.items()}, True
        meta, whole = clip_value(meta)
        if (clipped or whole) and self.clipped is None:
            self.clipped = rec
        return Occurrence(value, meta, rec.timestamp, rec.line)

    def cut(self, path: str) -> list[Finding]:
        """LOG012 when the facts stopped at FACTS_BYTES: what the tree checks and the score read of this log may
        miss records after that line; and when a value was kept clipped."""
        out = []
        if self.clipped is not None:
            out.append(finding("LOG012", path, f"the value or metadata of '{self.clipped.key[:80]}' is longer than "
                               f"the facts the tree checks, the score and the ledger read keep ({VALUE_CHARS:,} "
                               f"characters a string); they read it clipped, with its length and digest",
                               line=self.clipped.line))
        if self.left is not None:
            out.append(finding("LOG012", path, f"the facts the tree checks and the score read of this log were kept "
                               f"up to {FACTS_BYTES >> 20} MiB of values; records after this line are left out",
                               line=self.left.line))
        return out

    def facts(self, log: ParsedLog) -> LogFacts:
        early = self.earliest
        if early is not None and not any(o.time_ms <= early.timestamp for o in self.first.values()):
            self.first[early.key] = self._occurrence(early)  # the run's start when it has no run_start
        return LogFacts(path=log.path, sha256=log.sha256, size=log.size, readable=log.readable,
                        record_count=log.record_count, parse_errors=log.parse_errors,
                        rcp_lines=as_text(log.rcp_lines), first=self.first, series=self.series)


def extract(log: ParsedLog) -> LogFacts:
    """The facts of a log read with its records kept (read_log without a sink)."""
    builder = FactsBuilder()
    builder.feed(log.records)
    return builder.facts(log)
