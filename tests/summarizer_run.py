"""mlperf-logging's result summarizer run once per test session on copies of every corpus tree, for both
summarizer differentials (`e2e/test_chair_summary.py`: the chair's files; `e2e/test_report_reference.py`: the
report's scores). One run serves both because each costs minutes: the two tests share an xdist group, so the
session fixture (`tests/conftest.py: reference_summaries`) is built once, in one worker.

Per tree, on a copy, as `verify_for_vX.Y_training.sh` runs them: the package checker (its RCP step settles each
closed folder's `scaling.json`), then `result_summarizer --csv NAME.csv` (the chair's files), then the summarizer
once more into `NAME.settled.csv`: a folder whose RCP step the package checker did not reach (it stopped or
skipped it) has its `scaling.json` only after the first summarizer pass, and the report's score is the settled one.
This file is also the driver script; the tests' own process never runs the reference in-process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def corpus_trees(corpus: Path) -> list[tuple[str, Path, str]]:
    """(name, organisation tree, ruleset) of every results tree of every round folder, found, not listed."""
    from differential import rounds

    return [(f"{rnd}_{org.name}", org, ruleset) for rnd, ruleset in rounds(corpus).items() if (corpus / rnd).is_dir()
            for org in sorted((corpus / rnd).iterdir()) if (org / "results").is_dir()]  # fmt: skip


def run_all(corpus: Path, out: Path) -> dict[str, Any]:
    args = [f"{name}={tree}={ruleset}" for name, tree, ruleset in corpus_trees(corpus)]
    proc = subprocess.run([sys.executable, __file__, str(out), *args], capture_output=True, text=True,
                          timeout=1800, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


TOLERANCE = 0.01  # minutes: the report's score against the summarizer's


def scores_of_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """system id (from the row's details URL) -> benchmark -> {minutes, rcp, factor}."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        match = re.search(r"/systems/(.*)\.json$", row.get("details_url", ""))
        if match is None:
            continue
        benches = {}
        for key, value in row.items():
            bench = key.split(":")[0]
            # The reference fills every benchmark of the round; only folders it scored have a scaling factor.
            if key.endswith(":time_to_train") and row.get(f"{bench}:rcp_scaling_factor") is not None:
                benches[bench] = {"minutes": value, "rcp": row.get(f"{bench}:RCP") or "",
                                  "factor": row.get(f"{bench}:rcp_scaling_factor"),
                                  "energy": row.get(f"{bench}:Energy")}  # fmt: skip
        out[match.group(1)] = {"division": row.get("division"), "benchmarks": benches}
    return out


def ours(run_cli: Any, tree: Path, ruleset: str) -> dict[tuple[str, str], dict[str, Any]]:
    code, out, err = run_cli("report", "--ruleset", ruleset, "--format", "json", tree)
    assert code in (0, 1), err
    return {(r["system"], r["benchmark"]): r for r in json.loads(out)["results"]}


def compare(reference: dict[str, Any], mine: dict[tuple[str, str], dict[str, Any]]) -> tuple[int, list[str]]:
    """Every score the reference reports (settled pass) against ours; returns (compared, disagreements)."""
    compared, problems = 0, []
    for system, row in reference["passes"][1].items():
        for bench, ref in row["benchmarks"].items():
            got = mine.get((system, bench))
            if got is None:
                problems.append(f"{system}/{bench}: reference {ref['minutes']}, we have no result")
                continue
            want, have = ref["minutes"], got["time_to_train_minutes"]
            compared += 1
            if (want is None) != (have is None) or (want is not None and abs(want - have) > TOLERANCE):
                problems.append(f"{system}/{bench}: reference {want}, ours {have}")
            problems += [f"{system}/{bench}: {p}" for p in rcp_and_energy(ref, got)]
    return compared, problems


def rcp_and_energy(ref: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """The summarizer's RCP column and factor (closed results) and its Energy column (power/ logs) against ours."""
    out = []
    if ref["rcp"] and got["rcp"]["status"] != ref["rcp"]:
        out.append(f"RCP column: reference {ref['rcp']!r}, ours {got['rcp']['status']!r}")
    if ref["factor"] is not None and got["scaling_factor"] != pytest.approx(ref["factor"], rel=1e-9):
        out.append(f"scaling factor: reference {ref['factor']}, ours {got['scaling_factor']}")
    energy = (got.get("energy") or {}).get("joules")
    if ref.get("energy") is not None and (energy is None or energy != pytest.approx(ref["energy"], rel=1e-9)):
        out.append(f"energy: reference {ref['energy']}, ours {energy}")
    return out


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
            settled = _module("mlperf_logging.result_summarizer",
                              [copy, "training", ruleset, "--csv", os.path.join(out, f"{name}.settled.csv")])
        finally:
            os.chdir(here)
        result[name] = {"package_checker": checker, "summarizer": summarizer, "settled": settled}
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for `differential`
    raise SystemExit(_driver(sys.argv[1], sys.argv[2:]))
