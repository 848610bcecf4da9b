"""What a check keeps of all its logs' facts together: each log's are bounded (logs/facts.py, FACTS_BYTES), but the
tree checks read every log's at once, so 40 logs of 20,000 1,000-character seeds each, every log within its own
budget, kept 929 MB (issue 54). Past FACTS_TOTAL in all, a log's facts are reduced to the first record of each key
(its series and the lines the RCP reader reads are not kept) and a LOG012 on the log says so.

Results are admitted as they arrive: with one process in the order of the logs; with several, the logs past the
budget are those that finished last. Real trees stay far below it (the corpus's 825 logs: 39 MB as counted).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, TypeVar

from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.logs.limits import ELEMENT_COST, FACTS_TOTAL, value_size

from mlsubmit.core.codes import finding

_R = TypeVar("_R")


def facts_cost(facts: LogFacts) -> int:
    """What `facts` take, as limits.value_size counts them: every occurrence kept, its key, and the RCP lines."""
    occurrences = [*facts.first.values(), *(o for kept in facts.series.values() for o in kept)]
    keys = sum(map(len, facts.first)) + sum(map(len, facts.series))
    lines = sum(map(len, facts.rcp_lines)) + ELEMENT_COST * len(facts.rcp_lines)
    return value_size([(o.value, o.metadata) for o in occurrences]) + keys + lines


def cut_to_first_occurrences(facts: LogFacts) -> LogFacts:
    """The facts with each series cut to its first occurrence and no RCP lines (the reader's answer, when the
    worker computed it, is kept: it is small)."""
    return replace(
        facts,
        series={k: v[:1] for k, v in facts.series.items()},
        rcp_lines=(),
        error_codes=tuple(sorted({*facts.error_codes, "LOG012"})),
    )


class FactsBudget:
    """FACTS_TOTAL over the facts of every log of one check; `admit` each log's result (anything with `findings`
    and `facts`, a dataclass) as it arrives, from any thread."""

    def __init__(self, total: int = FACTS_TOTAL) -> None:
        self.total = total
        self.used = 0
        self.lock = threading.Lock()

    def admit(self, result: _R) -> _R:
        got: Any = result
        facts: LogFacts = got.facts
        cost = facts_cost(facts)
        with self.lock:
            fits = self.used + cost <= self.total
            if fits:
                self.used += cost
        if fits:
            return result
        small = cut_to_first_occurrences(facts)
        with self.lock:
            self.used += facts_cost(small)
        cut = finding(
            "LOG012",
            facts.path,
            f"the facts of this check's logs passed {self.total >> 20} MiB in all: "
            "the tree checks read this log's first record of each key only, not its series (seeds, "
            "evaluations, run_stop) or the lines the RCP reader reads",
        )
        return replace(got, findings=[*got.findings, cut], facts=small)
