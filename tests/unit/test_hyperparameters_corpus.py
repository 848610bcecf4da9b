"""Every closed log of every results folder in the real corpus against its round's closed table (1.0 to 5.1).

The folders are found by walking the corpus, never listed by hand. No published closed log breaks an
error row of its round's table, and the HP findings `check` reports are exactly those the table gives.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from mlsubmit.checker import hp_table as hpt
from mlsubmit.checker import hyperparameters as hp
from mlsubmit.checker.logs import read_log
from mlsubmit.checker.pipeline import CheckOptions

from mlsubmit.findings import Severity

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
    for ruleset, path in closed_logs(corpus):
        log = read_log(path, str(path.relative_to(corpus)))
        division = log.first("submission_division")
        if division is None or division.payload != "closed":
            continue
        seen[ruleset] += 1
        found = hp.check_log(log, CheckOptions(ruleset=ruleset))
        assert [f for f in found if f.severity is Severity.ERROR] == [], (log.path, [f.message for f in found])
        assert found == [], (log.path, [f.message for f in found])  # and no warning either, as of this corpus
    # every round the corpus has, each with its closed logs (734 when this was written)
    assert set(seen) == {"1.0.0", "1.1.0", "4.0.0", "5.0.0", "5.1.0"}
    assert sum(seen.values()) >= 700


def test_every_closed_benchmark_of_the_corpus_is_in_its_rounds_table(corpus: Path) -> None:
    for ruleset, path in closed_logs(corpus):
        log = read_log(path)
        bench = log.first("submission_benchmark")
        table = hpt.table_for(ruleset)
        assert table is not None and bench is not None and bench.payload in table.benchmarks, path
