"""Differential test: `mlsubmit report --summary-csv` against mlperf-logging's result summarizer, every corpus tree.

The reference runs as the chair runs it in `verify_for_vX.Y_training.sh`: the package checker first (its RCP step
settles each closed folder's `scaling.json`), then `result_summarizer ORG training X.Y.Z --csv OUT.csv`. Both write
into the tree, so they run on a copy, in one subprocess for all trees (this file is also its driver), once per test
session. Ours runs on the corpus itself and writes nothing there. The four files are compared cell by cell (a
number to the precision the reference prints it, which is the float's shortest text) and then byte by byte.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SUFFIXES = (".csv", ".json", "_detailed.csv", "_detailed.json")
# A tree where the reference summarizer fails or differs for a known reason: tree name -> the reason. None today.
KNOWN: dict[str, str] = {}
# A tree the reference package checker cannot check: the official flow stops there (`set -e`); the summarizer is
# still run on it, with its scaling.json files as published.
CHECKER_CRASHES = {
    "training_results_v1.0_GIGABYTE": "KeyError: 'dlrm' (its 1.0.0 seed check has no DLRM entry; corpus README)",
    "training_results_v1.0_Google": "KeyError: 'dlrm' (its 1.0.0 seed check has no DLRM entry; corpus README)",
}


# --- the driver: runs inside a subprocess -------------------------------------------------------------------------


def _module(name: str, argv: list[str]) -> str:
    """Run `python -m name argv...` in this process; its exit status, or the exception it raised."""
    saved = sys.argv
    sys.argv = [name, *argv]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_module(name, run_name="__main__", alter_sys=False)
        return "0"
    except SystemExit as exc:
        return str(exc.code if exc.code is not None else 0)
    except Exception as exc:  # the reference's own crash: reported per tree, never hidden
        return f"{type(exc).__name__}: {exc}"[:300]
    finally:
        sys.argv = saved


def _driver(out: str, items: list[str]) -> int:
    import logging

    logging.disable(logging.CRITICAL)
    result = {}
    for item in items:
        name, source, ruleset = item.split("=")
        copy = os.path.join(out, "copy", name, os.path.basename(source))
        shutil.copytree(source, copy)
        here = os.getcwd()
        os.chdir(out)  # both write beside themselves: package_checker.log, and summary.json without --csv
        try:
            checker = _module("mlperf_logging.package_checker", [copy, "training", ruleset])
            summarizer = _module("mlperf_logging.result_summarizer",
                                 [copy, "training", ruleset, "--csv", os.path.join(out, f"{name}.csv")])
        finally:
            os.chdir(here)
        result[name] = {"package_checker": checker, "summarizer": summarizer}
    json.dump(result, sys.stdout)
    return 0


# --- the tests ----------------------------------------------------------------------------------------------------


def corpus_trees(corpus: Path) -> list[tuple[str, Path, str]]:
    from differential import rounds  # here, not at the top: this file also runs as the driver script

    return [(f"{rnd}_{org.name}", org, ruleset) for rnd, ruleset in rounds(corpus).items()
            for org in sorted((corpus / rnd).iterdir()) if (org / "results").is_dir()]  # fmt: skip


def summarizer_layout_is_ours() -> bool:
    """Whether the installed summarizer writes the tables --summary-csv writes (4.1.68's: a detailed table, a
    private_id column). Older releases of the supported range (4.1.30) write no detailed table and a power one."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    return hasattr(rs, "_get_strong_scaling_metric_schema")


@pytest.fixture(scope="session")
def reference_summaries(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("chair")
    args = [f"{name}={tree}={ruleset}" for name, tree, ruleset in corpus_trees(corpus)]
    proc = subprocess.run([sys.executable, __file__, str(out), *args], capture_output=True, text=True,
                          timeout=1800, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out, json.loads(proc.stdout)


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


@pytest.mark.corpus
@pytest.mark.slow
def test_summary_files_equal_the_reference_summarizer_on_every_corpus_tree(
    run_cli: Any, corpus: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if not summarizer_layout_is_ours():
        pytest.skip("the installed mlperf-logging's summarizer writes an older layout (no OUT_detailed.csv, an "
                    "OUT_power.csv); --summary-csv writes 4.1.68's")
    out, verdicts = request.getfixturevalue("reference_summaries")
    lines, problems = [], []
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
            equal, differing, missing, wrong = compare_csv(out / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
            counts = [a + b for a, b in zip(counts, (equal, differing, missing), strict=True)]
            problems += [f"{name}{suffix}: {w}" for w in wrong]
        for chair in (f"{name}.csv", f"{name}_detailed.csv"):  # --against the reference's own summary: no finding
            _, _, err = run_cli("report", "--ruleset", ruleset, tree, "--against", out / chair, "-o", os.devnull)
            if "every result agrees" not in err:
                problems.append(f"{name}: --against {chair}: {err[-1500:]}")
        same = [s for s in SUFFIXES if (out / f"{name}{s}").read_bytes() == (tmp_path / f"{name}{s}").read_bytes()]
        lines.append(f"{name}: package checker exit {verdict['package_checker']}; results (wide + detailed) "
                     f"equal {counts[0]}, differing {counts[1]}, missing {counts[2]}; "
                     f"byte-identical files {len(same)}/{len(SUFFIXES)}")  # fmt: skip
        if name not in KNOWN and len(same) != len(SUFFIXES):
            problems.append(f"{name}: files differ: {sorted(set(SUFFIXES) - set(same))}")
    print("\n" + "\n".join(lines))
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    raise SystemExit(_driver(sys.argv[1], sys.argv[2:]))
