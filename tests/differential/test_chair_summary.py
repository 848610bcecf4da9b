"""Differential test: `mlsubmit report --summary-csv` against mlperf-logging's result summarizer, every corpus tree.

The reference runs as the chair runs it in `verify_for_vX.Y_training.sh`: the package checker first (its RCP step
settles each closed folder's `scaling.json`), then `result_summarizer ORG training X.Y.Z --csv OUT.csv`. Both write
into the tree, so they run on a copy, once per tree per test session (`tests/fixtures/summarizer_run.py`, whose
package checker verdicts test_reference_package reads too). Ours runs on the corpus itself and writes
nothing there. The four files are compared cell by cell (a number to the precision the reference prints it, which is
the float's shortest text) and then byte by byte.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest
from fixtures.summarizer_run import TOLERANCE, compare, corpus_trees, ours, scores_of_rows

SUFFIXES = (".csv", ".json", "_detailed.csv", "_detailed.json")
# A tree where the reference summarizer fails or differs for a known reason: tree name -> the reason. None today.
KNOWN: dict[str, str] = {}
# A tree the reference package checker cannot check: the official flow stops there (`set -e`); the summarizer is
# still run on it, with its scaling.json files as published.
CHECKER_CRASHES = {
    "training_results_v1.0_GIGABYTE": "KeyError: 'dlrm' (its 1.0.0 seed check has no DLRM entry; corpus README)",
    "training_results_v1.0_Google": "KeyError: 'dlrm' (its 1.0.0 seed check has no DLRM entry; corpus README)",
}


# --- the tests ----------------------------------------------------------------------------------------------------


def summarizer_layout_is_ours() -> bool:
    """Whether the installed summarizer writes the tables --summary-csv writes (4.1.68's: a detailed table, a
    private_id column). Older releases of the supported range (4.1.30) write no detailed table and a power one."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    return hasattr(rs, "_get_strong_scaling_metric_schema")


def _cells_equal(want: str, have: str) -> bool:
    if want == have:
        return True
    try:
        return float(want) == float(have)  # the reference prints the shortest text of the float: exact
    except ValueError:
        return False


def compare_csv(want: Path, have: Path) -> tuple[int, int, int, list[str]]:
    """(equal, differing, missing) system x benchmark results of a wide or detailed CSV, and what differs."""
    ref, ours = _rows(want), _rows(have)
    assert ref[0] == ours[0], f"columns differ: {ref[0]} / {ours[0]}"
    header = ref[0]
    url = header.index("details_url")
    mine = {row[url]: row for row in ours[1]}
    equal = differing = missing = 0
    problems = []
    for row in ref[1]:
        other = mine.get(row[url])
        for bench, cols in _benchmark_columns(header).items():
            if all(row[i] == "" for i in cols) and (other is None or all(other[i] == "" for i in cols)):
                continue
            if other is None:
                missing += 1
                problems.append(f"{row[url]} {bench}: no row")
            elif all(_cells_equal(row[i], other[i]) for i in [*range(12), *cols]):  # the system's columns too
                equal += 1
            else:
                differing += 1
                problems.append(f"{row[url]} {bench}: {[row[i] for i in cols]} / {[other[i] for i in cols]}")
    return equal, differing, missing, problems


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    return rows[0], rows[1:]


def _benchmark_columns(header: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, name in enumerate(header[12:-2], start=12):
        out.setdefault(name.split(":")[0], []).append(i)
    return out


def _files_against_chair(run_cli: Any, corpus: Path, tmp_path: Path, out: dict[str, Path], verdicts: dict[str, Any]
                         ) -> tuple[list[str], list[str]]:
    """--summary-csv's four files against the chair's (cell by cell, then bytes), and --against them: no finding."""
    lines: list[str] = []
    problems: list[str] = []
    for name, tree, ruleset in corpus_trees(corpus):
        verdict = verdicts[name]
        if verdict["package_checker"] not in ("0", "1"):
            assert name in CHECKER_CRASHES and verdict["package_checker"].startswith(CHECKER_CRASHES[name][:15]), \
                f"{name}: the reference package checker crashed: {verdict['package_checker']}"
        if verdict["summarizer"] != "0":
            assert name in KNOWN, f"{name}: the reference summarizer failed ({verdict['summarizer']})"
            lines.append(f"{name}: reference failed ({verdict['summarizer']}): {KNOWN[name]}")
            continue
        code, _, err = run_cli("report", "--ruleset", ruleset, tree, "--summary-csv", tmp_path / f"{name}.csv",
                               "-o", os.devnull)  # fmt: skip
        assert code in (0, 1), err
        counts = [0, 0, 0]
        for suffix in (".csv", "_detailed.csv"):
            equal, differing, missing, wrong = compare_csv(out[name] / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
            counts = [a + b for a, b in zip(counts, (equal, differing, missing), strict=True)]
            problems += [f"{name}{suffix}: {w}" for w in wrong]
        for chair in (f"{name}.csv", f"{name}_detailed.csv"):  # --against the reference's own summary: no finding
            _, _, err = run_cli("report", "--ruleset", ruleset, tree, "--against", out[name] / chair, "-o", os.devnull)
            if "every result agrees" not in err:
                problems.append(f"{name}: --against {chair}: {err[-1500:]}")
        theirs = out[name]
        same = [s for s in SUFFIXES if (theirs / f"{name}{s}").read_bytes() == (tmp_path / f"{name}{s}").read_bytes()]
        lines.append(f"{name}: package checker exit {verdict['package_checker']}; results (wide + detailed) "
                     f"equal {counts[0]}, differing {counts[1]}, missing {counts[2]}; "
                     f"byte-identical files {len(same)}/{len(SUFFIXES)}")  # fmt: skip
        if name not in KNOWN and len(same) != len(SUFFIXES):
            problems.append(f"{name}: files differ: {sorted(set(SUFFIXES) - set(same))}")
    return lines, problems


def _scores_against_settled(run_cli: Any, corpus: Path, out: dict[str, Path], verdicts: dict[str, Any]
                            ) -> tuple[list[str], list[str]]:
    """The report's scores (time to train, RCP verdict and factor, energy) against the summarizer's settled pass."""
    total = ran = scaled = 0
    problems: list[str] = []
    trees = corpus_trees(corpus)
    for name, tree, ruleset in trees:
        if verdicts[name]["settled"] != "0":
            continue
        ran += 1
        detailed = out[name] / f"{name}.settled_detailed.json"
        rows = json.loads(detailed.read_text()) if detailed.is_file() else []
        mine = ours(run_cli, tree, ruleset)
        compared, wrong = compare({"passes": [None, scores_of_rows(rows)]}, mine)
        total += compared
        problems += [f"{name}: {w}" for w in wrong]
        scaled += sum(1 for r in mine.values() if r["scaling_factor"] > 1.0)
    assert ran, "the reference summarizer ran on no tree"
    return [f"report scores: {ran}/{len(trees)} trees, {total} system x benchmark scores equal within {TOLERANCE} "
            f"min, {scaled} scaled by an RCP factor"], problems


@pytest.mark.corpus
@pytest.mark.slow
def test_summary_files_and_scores_equal_the_reference_summarizer_on_every_corpus_tree(
    run_cli: Any, corpus: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """One test for both, reading one reference run per tree: the chair's files from `report --summary-csv`, and
    `report`'s own scores."""
    runs = request.getfixturevalue("reference_summaries")
    out, verdicts = {n: folder for n, (folder, _) in runs.items()}, {n: v for n, (_, v) in runs.items()}
    lines, problems = _scores_against_settled(run_cli, corpus, out, verdicts)
    if summarizer_layout_is_ours():
        more_lines, more = _files_against_chair(run_cli, corpus, tmp_path, out, verdicts)
        lines, problems = lines + more_lines, problems + more
    else:  # the scores are still compared: they do not depend on the files' layout
        lines.append("files not compared: the installed mlperf-logging's summarizer writes an older layout (no "
                     "OUT_detailed.csv, an OUT_power.csv); --summary-csv writes 4.1.68's")
    print("\n" + "\n".join(lines))
    assert not problems, "\n".join(problems)

