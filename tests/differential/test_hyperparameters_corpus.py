"""Every closed log of every results folder in the real corpus against its round's closed table (1.0 to 5.1).

The folders are found by walking the corpus, never listed by hand. No published closed log breaks an
error row of its round's table; the only warnings are values that follow a reading the review accepted (HP009).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from mlsubmit.checker.engine.pipeline import CheckOptions
from mlsubmit.checker.hyperparameters import apply as hp
from mlsubmit.checker.hyperparameters import table as hpt
from mlsubmit.checker.logs.reader import read_log

from mlsubmit.core.findings import Severity

pytestmark = pytest.mark.corpus

_ROUND = re.compile(r"training_results_v(\d+\.\d+)")


def closed_logs(corpus: Path) -> list[tuple[str, Path]]:
    out = []
    for folder in sorted(p for p in corpus.glob("training_results_v*/*/results/*/*") if p.is_dir()):
        m = _ROUND.search(str(folder))
        assert m is not None
        out.extend((f"{m.group(1)}.0", log) for log in sorted(folder.glob("result_*.txt")))
    return out


def test_no_published_closed_log_breaks_its_rounds_table(corpus: Path) -> None:
    seen: Counter[str] = Counter()
    readings: Counter[tuple[str, str, str]] = Counter()
    for ruleset, path in closed_logs(corpus):
        log = read_log(path, str(path.relative_to(corpus)))
        division = log.first("submission_division")
        if division is None or division.payload != "closed":
            continue
        seen[ruleset] += 1
        found = hp.check_log(log, CheckOptions(ruleset=ruleset))
        assert [f for f in found if f.severity is Severity.ERROR] == [], (log.path, [f.message for f in found])
        # The only warnings: values that follow a reading the review accepted (HP009), each naming its row.
        assert {f.code for f in found} <= {"HP009"}, (log.path, [f.message for f in found])
        for f in found:
            row = re.findall(r"\[([A-Z]{2}-\w+)\]", f.message)[0]
            readings[(ruleset, str(log.first("submission_benchmark").payload), row)] += 1  # type: ignore[union-attr]
    # every round the corpus has, each with its closed logs (734 when this was written)
    assert {"1.0.0", "1.1.0", "4.0.0", "4.1.0", "5.0.0", "5.1.0"} <= set(seen)
    assert sum(seen.values()) >= 700
    # the accepted practice the corpus holds (v4.1 NVIDIA gpt3, v5.0 IBM+CoreWeave+NVIDIA llama31_405b), at least
    assert readings[("4.1.0", "gpt3", "GP-10")] >= 3
    assert all(readings[("5.0.0", "llama31_405b", row)] >= 3 for row in ("LL-10", "LL-11", "LL-13"))


def test_every_closed_benchmark_of_the_corpus_is_in_its_rounds_table(corpus: Path) -> None:
    for ruleset, path in closed_logs(corpus):
        log = read_log(path)
        bench = log.first("submission_benchmark")
        table = hpt.table_for(ruleset)
        assert table is not None and bench is not None and bench.payload in table.benchmarks, path
