"""How well run planning (RUN009) predicts the RCP verdict, on the published sets of the corpus.

For every closed results folder with an RCP and its full N runs: the runs in start order, the prediction made
from the first k (k = 3 .. N-1) against the verdict of all N (mlperf-logging's RCP check, as `check` gives it).
Prints a Markdown calibration table (predicted chance of a fail, in bands, against the observed rate), the sets
that failed, and the time per assessment, without cross-validation; tools/rcp_risk_fit.py gives the
cross-validated figures docs/runs.md quotes.

    .venv/bin/python tools/rcp_calibration.py [CORPUS]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlsubmit.checker import read_log  # noqa: E402
from mlsubmit.checker.logs.facts import LogFacts, extract  # noqa: E402
from mlsubmit.checker.rcp import planning, risk  # noqa: E402
from mlsubmit.checker.rcp.verdict import RcpResult, evaluate  # noqa: E402
from mlsubmit.checker.rounds import benchmarks  # noqa: E402

BANDS = ((0.0, 0.01), (0.01, 0.1), (0.1, 0.5), (0.5, 0.9), (0.9, 0.99), (0.99, 1.0001))


def folders(corpus: Path) -> Iterator[tuple[str, Path]]:
    """(ruleset, results folder) of every round the RCP checker knows."""
    for round_dir in sorted(corpus.glob("training_results_v*")):
        ruleset = round_dir.name.removeprefix("training_results_v") + ".0"
        for folder in sorted(round_dir.glob("*/results/*/*")):
            if folder.is_dir() and any(folder.glob("result_*.txt")):
                yield ruleset, folder


def closed_set(ruleset: str, folder: Path) -> list[LogFacts] | None:
    """The folder's runs in start order, when it is a closed set with an RCP and exactly N runs."""
    bench, n = folder.name, benchmarks.runs(folder.name)
    files = sorted(folder.glob("result_*.txt"))
    if n is None or len(files) != n or not benchmarks.has_rcp(bench) or bench not in benchmarks.allowed(ruleset):
        return None
    facts = [extract(read_log(p, str(p))) for p in files]
    if not all(f.division == "closed" for f in facts):
        return None
    facts.sort(key=lambda f: (math.inf if f.started_ms is None else f.started_ms, f.path))
    return [replace(f, path=os.path.join(str(folder), f"result_{i}.txt")) for i, f in enumerate(facts)]



def judged_sets(corpus: Path) -> Iterator[tuple[str, Path, list[LogFacts], RcpResult]]:
    """(ruleset, folder, its runs in start order, the RCP checker's verdict on all of them) of every closed set with
    its N runs that the checker judges (pass, fail or error)."""
    for ruleset, folder in folders(corpus):
        facts = closed_set(ruleset, folder)
        if facts is None:
            continue
        verdict = evaluate(folder.name, ruleset, facts, closed=True)
        if verdict.status in ("pass", "fail", "error"):
            yield ruleset, folder, facts, verdict

def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default=os.environ.get("MLSUBMIT_CORPUS", str(ROOT.parent / "shared"
                                                                                            / "corpus")))
    args = parser.parse_args(argv)
    rows: list[tuple[float, bool, str, int]] = []
    failed_sets, sets, spent, calls = [], 0, 0.0, 0
    for ruleset, folder, facts, verdict in judged_sets(Path(args.corpus)):
        sets += 1
        name = str(folder.relative_to(args.corpus))
        if not verdict.passed:
            failed_sets.append(f"{name} ({verdict.status}: {verdict.message})")
        for k in range(3, len(facts)):
            start = time.perf_counter()
            found, _ = planning.assess_facts(folder.name, ruleset, facts[:k])
            spent, calls = spent + time.perf_counter() - start, calls + 1
            if found is not None:
                rows.append((found.p_fail, not verdict.passed, name, k))
    print(table(rows, sets, failed_sets, spent / max(1, calls)))
    return 0


def table(rows: list[tuple[float, bool, str, int]], sets: int, failed: list[str], per_set: float) -> str:
    lines = [f"{sets} closed sets with their N runs ({len(failed)} fail their RCP), {len(rows)} predictions "
             f"(k = 3 .. N-1; model {risk.MODEL}); {per_set * 1000:.0f} ms a "
             "prediction on average", "",
             "| predicted P(RCP fail) | predictions | sets | mean predicted | observed fail rate |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for low, high in BANDS:
        band = [r for r in rows if low <= r[0] < high]
        if not band:
            lines.append(f"| {low:.0%}-{min(high, 1):.0%} | 0 | 0 | - | - |")
            continue
        mean = sum(r[0] for r in band) / len(band)
        seen = sum(r[1] for r in band)
        lines.append(f"| {low:.0%}-{min(high, 1):.0%} | {len(band)} | {len({r[2] for r in band})} | {mean:.1%} | "
                     f"{seen}/{len(band)} = {seen / len(band):.1%} |")
    brier = sum((p - f) ** 2 for p, f, _, _ in rows) / max(1, len(rows))
    lines += ["", f"Brier score {brier:.4f} (always predicting the observed base rate: "
              f"{_base(rows):.4f})", "", "Sets that fail:", *(f"- {f}" for f in failed)]
    return "\n".join(lines)


def _base(rows: list[tuple[float, bool, str, int]]) -> float:
    rate = sum(r[1] for r in rows) / max(1, len(rows))
    return sum((rate - r[1]) ** 2 for r in rows) / max(1, len(rows))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
