"""Differential tests on every corpus tree with power logs: our power verdicts against mlperf-logging's power
checker, and our energy to train against its result summarizer, run after its package checker as the official
flow does (the package checker's RCP check writes the scaling.json the summarizer then applies to energy too).

The reference runs in one subprocess (this file is also its driver), on copies of the trees in a temporary working
directory. Trees are found by walking the corpus (every round, every organisation with a results/*/*/power
folder), so a tree added later is tested too.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.corpus
RELATIVE = 1e-9


def power_trees(corpus: Path) -> list[tuple[Path, str]]:
    """(organisation folder, ruleset) for every corpus organisation with at least one power/ folder."""
    out = []
    for round_dir in sorted(corpus.glob("training_results_v*")):
        match = re.fullmatch(r"training_results_v(\d+)\.(\d+)", round_dir.name)
        if match is None:
            continue
        orgs = sorted(p for p in round_dir.iterdir() if (p / "results").is_dir())
        out += [(org, f"{match.group(1)}.{match.group(2)}.0") for org in orgs if any(org.glob("results/*/*/power"))]
    return out


# --- the driver: runs in a subprocess -------------------------------------------------------------------------


def _energy(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        match = re.search(r"/systems/(.*)\.json$", row.get("details_url", ""))
        if match is None:
            continue
        for key, value in row.items():
            if key.endswith(":Energy") and value is not None and value == value:  # NaN: not reported
                bench = key.split(":")[0]
                out[f"{match.group(1)}/{bench}"] = {"energy": value, "factor": row.get(f"{bench}:rcp_scaling_factor")}
    return out


def _official_flow(source: str, ruleset: str) -> dict[str, Any]:
    from mlperf_logging.package_checker import package_checker as pc
    from mlperf_logging.result_summarizer import result_summarizer as rs

    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "copy", os.path.basename(source))
        shutil.copytree(source, tree)
        os.chdir(tmp)
        out: dict[str, Any] = {}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():  # fmt: skip
            warnings.simplefilter("ignore")
            try:
                pc.check_training_result_files(tree, "training", ruleset, True, False, False, False, False)
            except Exception as exc:
                out["checker_crash"] = f"{type(exc).__name__}: {exc}"[:300]
            try:
                _, _, detailed, _ = rs.summarize_results(tree, "training", ruleset)
                out["energy"] = _energy(json.loads(detailed.to_json(orient="records")) if len(detailed) else [])
            except Exception as exc:
                out["summarizer_crash"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


def _driver(argv: list[str]) -> int:
    result = {}
    for item in argv:
        source, ruleset = item.rsplit("=", 1)
        result[source] = _official_flow(source, ruleset)
    json.dump(result, sys.stdout)
    return 0


# --- the tests --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trees(corpus: Path) -> list[tuple[Path, str]]:
    found = power_trees(corpus)
    if not found:
        pytest.skip(f"no corpus tree with power/ folders under {corpus}")
    return found


def test_power_verdicts_equal_the_reference_power_checker(trees: list[tuple[Path, str]]) -> None:
    from mlperf_logging.package_checker.power_checker import PowerChecker
    from mlsubmit.checker.power import reference_verdict

    folders = 0
    for org, ruleset in trees:
        for power_dir in sorted(org.glob("results/*/*/power")):
            results = sorted(str(p) for p in power_dir.parent.glob("result_*.txt"))
            names = [Path(p).stem for p in results]
            logging.disable(logging.CRITICAL)
            try:
                _, want = PowerChecker(ruleset).check_power(str(power_dir), results)
            finally:
                logging.disable(logging.NOTSET)
            ours = reference_verdict(power_dir, "power", names)
            assert ours.crash is None and ours.failed == set(want), power_dir
            folders += 1
    assert folders
    print(f"\n{folders} power folders in {len(trees)} tree(s): same verdict as the reference power checker")


def test_energy_equals_the_reference_summarizer(run_cli: Any, trees: list[tuple[Path, str]]) -> None:
    args = [f"{org}={ruleset}" for org, ruleset in trees]
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=1800,
                          check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    reference = json.loads(proc.stdout)
    compared = 0
    for org, ruleset in trees:
        ref = reference[str(org)]
        assert "summarizer_crash" not in ref, ref
        code, out, err = run_cli("report", "--ruleset", ruleset, "--format", "json", org)
        assert code in (0, 1), err
        ours = {f"{r['system']}/{r['benchmark']}": r for r in json.loads(out)["results"]}
        powered = {k for k, r in ours.items() if r.get("energy") and r["energy"]["joules"] is not None}
        assert powered == set(ref["energy"]), org
        for key, want in ref["energy"].items():
            got = ours[key]
            assert got["scaling_factor"] == pytest.approx(want["factor"], rel=RELATIVE), key
            assert got["energy"]["joules"] == pytest.approx(want["energy"], rel=RELATIVE), key
            compared += 1
    assert compared
    print(f"\n{compared} energy figures equal the reference summarizer's (relative {RELATIVE})")


if __name__ == "__main__":
    sys.exit(_driver(sys.argv[1:]))
