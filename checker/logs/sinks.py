"""What `check` keeps of a log while the reader streams it: each log check's own state, never the records.

The rule files run batch by batch (rules.engine.RuleStream), the facts are gathered as they go (FactsBuilder),
and the hyperparameter table, which reads a handful of keys, gets those records only (at most MAX_KEPT).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlsubmit.checker.logs.facts import FactsBuilder
from mlsubmit.checker.logs.limits import WHOLE_RECORDS
from mlsubmit.checker.logs.reader import ParsedLog, Record, read_log

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

MAX_KEPT = 100_000  # records of the table's keys kept for the HP check (a real log has one of each)


class RecordsOfKeys:
    """The records whose key is in `keys`, in order, at most MAX_KEPT."""

    def __init__(self, keys: frozenset[str]) -> None:
        self.keys = keys
        self.records: list[Record] = []

    def feed(self, batch: list[Record]) -> None:
        if len(self.records) < MAX_KEPT:
            keys = self.keys
            self.records += [r for r in batch if r.key in keys][: MAX_KEPT - len(self.records)]

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
        total = [0]

        def keep(batch: list[Record]) -> None:
            total[0] += len(batch)
            kept.extend(batch[: max(0, WHOLE_RECORDS - len(kept))])

        read_log(self.path, self.display, digest=False, unpack=self.unpack, rcp_lines=False, sink=keep)
        if total[0] > WHOLE_RECORDS:
            self.cut = finding("LOG012", self.display, f"the rule files that need the whole log were run on its "
                               f"first {WHOLE_RECORDS:,} records, of {total[0]:,}", line=kept[-1].line)
        return kept


def fan_out(*consumers: FactsBuilder | RecordsOfKeys | Any | None) -> Callable[[list[Record]], None]:
    """One reader sink feeding each consumer (anything with `feed(batch)`; None is skipped) in turn."""
    feeds = [c.feed for c in consumers if c is not None]

    def sink(batch: list[Record]) -> None:
        for feed in feeds:
            feed(batch)

    return sink
