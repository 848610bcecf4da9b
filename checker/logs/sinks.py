"""What `check` keeps of a log while the reader streams it: each log check's own state, never the records.

The rule files run batch by batch (rules.engine.RuleStream), the facts are gathered as they go (FactsBuilder),
and the hyperparameter table, which reads a handful of keys, gets those records only (at most MAX_KEPT).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlsubmit.checker.logs.facts import FactsBuilder
from mlsubmit.checker.logs.limits import HP_BYTES, WHOLE_BYTES, WHOLE_RECORDS, records_that_fit
from mlsubmit.checker.logs.reader import ParsedLog, Record, read_log

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

MAX_KEPT = 100_000  # records of the table's keys kept for the HP check (a real log has one of each)


class RecordsOfKeys:
    """The records whose key is in `keys`, in order, at most MAX_KEPT and HP_BYTES of them."""

    def __init__(self, keys: frozenset[str] | Callable[[], frozenset[str]]) -> None:
        self._keys = keys  # a callable is asked when the first records arrive: the log is opened before it
        self.records: list[Record] = []
        self.size = 0  # limits.records_size of `records`, within HP_BYTES
        self.seen = 0  # records of the keys, kept or not

    @property
    def keys(self) -> frozenset[str]:
        if callable(self._keys):
            self._keys = self._keys()
        return self._keys

    def feed(self, batch: list[Record]) -> None:
        keys = self.keys
        mine = [r for r in batch if r.key in keys]
        if mine and self.seen == len(self.records) < MAX_KEPT:  # nothing left out yet
            more, grown = records_that_fit(mine[: MAX_KEPT - len(self.records)], HP_BYTES - self.size)
            self.records += mine[:more]
            self.size += grown
        self.seen += len(mine)

    def cut(self, path: str) -> list[Finding]:
        """LOG012 when records of the table's keys were left out (past MAX_KEPT or HP_BYTES)."""
        if self.seen <= len(self.records):
            return []
        return [finding("LOG012", path, f"the hyperparameter table was checked on the first {len(self.records):,} "
                        f"records of its keys, of {self.seen:,}", line=self.records[-1].line if self.records else None)]

    def log(self, log: ParsedLog) -> ParsedLog:
        """The log as the HP check reads it: its path and the kept records."""
        return ParsedLog(path=log.path, records=self.records, record_count=log.record_count)


class WholeLogReader:
    """A log read again for the rule files that need its whole list (rules.engine): its first WHOLE_RECORDS
    records, and a LOG012 finding when there were more."""

    def __init__(self, path: Path, display: str, unpack: bool) -> None:
        self.path, self.display, self.unpack = path, display, unpack
        self.cut: Finding | None = None

    def __call__(self) -> list[Record]:
        kept: list[Record] = []
        total, size = [0], [0]

        def keep(batch: list[Record]) -> None:
            if total[0] == len(kept) < WHOLE_RECORDS:  # nothing left out yet
                more, grown = records_that_fit(batch[: WHOLE_RECORDS - len(kept)], WHOLE_BYTES - size[0])
                kept.extend(batch[:more])
                size[0] += grown
            total[0] += len(batch)

        read_log(self.path, self.display, digest=False, unpack=self.unpack, rcp_lines=False, sink=keep)
        if total[0] > len(kept):
            self.cut = finding("LOG012", self.display, f"the rule files that need the whole log were run on its "
                               f"first {len(kept):,} records, of {total[0]:,}", line=kept[-1].line if kept else None)
        return kept


def fan_out(*consumers: FactsBuilder | RecordsOfKeys | Any | None) -> Callable[[list[Record]], None]:
    """One reader sink feeding each consumer (anything with `feed(batch)`; None is skipped) in turn."""
    feeds = [c.feed for c in consumers if c is not None]

    def sink(batch: list[Record]) -> None:
        for feed in feeds:
            feed(batch)

    return sink
