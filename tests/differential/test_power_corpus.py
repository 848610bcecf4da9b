"""Differential tests on every corpus tree with power logs: our power verdicts against mlperf-logging's power
checker, and our energy to train against its result summarizer, run after its package checker as the official
flow does (the package checker's RCP check writes the scaling.json the summarizer then applies to energy too).

The reference runs once per tree per test session, on copies of the trees (tests/fixtures/summarizer_run.py, shared
with test_chair_summary and test_reference_package). Trees are found by walking the corpus (every round, every
organisation with a results/*/*/power folder), so a tree added later is tested too.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixtures.summarizer_run import summaries, tree_name

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


# --- the reference's energy, from its detailed table ------------------------------------------------------------


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


# --- the tests --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trees(corpus: Path) -> list[tuple[Path, str]]:
    found = power_trees(corpus)
    if not found:
        pytest.skip(f"no corpus tree with power/ folders under {corpus}")
    return found


def test_power_verdicts_equal_the_reference_power_checker(trees: list[tuple[Path, str]]) -> None:
    from mlperf_logging.package_checker.power_checker import PowerChecker
    from mlsubmit.checker.power.folder import reference_verdict

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


MUTATIONS = {
    "drop_run": lambda runs: shutil.rmtree(runs[len(runs) // 2]),
    "drop_first_and_extra_node": lambda runs: (shutil.rmtree(runs[0]), _copy(runs[-1], "node_0.txt", "node_1.txt")),
    "extra_node": lambda runs: _copy(runs[1], "node_0.txt", "node_1.txt"),
    "renumbered": lambda runs: (runs[2] / "node_0.txt").rename(runs[2] / "node_3.txt"),
    "one_switch": lambda runs: _copy(runs[0], "node_0.txt", "sw_0.txt"),
    "stray": lambda runs: _copy(runs[0], "node_0.txt", "node_0.txt.bak"),
    "folder_is_a_file": lambda runs: (shutil.rmtree(runs[1]), runs[1].write_text("")),
}


def _copy(folder: Path, src: str, dst: str) -> None:
    shutil.copy(folder / src, folder / dst)


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutated_power_folders_get_the_reference_verdict(trees: list[tuple[Path, str]], tmp_path: Path,
                                                         mutation: str) -> None:  # fmt: skip
    from mlperf_logging.package_checker.power_checker import PowerChecker
    from mlsubmit.checker.power.folder import reference_verdict

    for n, power_dir in enumerate(p for org, _ in trees for p in sorted(org.glob("results/*/*/power"))):
        bench = tmp_path / str(n) / "sys" / power_dir.parent.name
        shutil.copytree(power_dir, bench / "power")
        results = sorted(str(bench / p.name) for p in power_dir.parent.glob("result_*.txt"))
        MUTATIONS[mutation](sorted(p for p in (bench / "power").iterdir()))
        logging.disable(logging.CRITICAL)
        try:
            want: set[str] | None = set(PowerChecker("5.0.0").check_power(str(bench / "power"), results)[1])
        except (ValueError, OSError):
            want = None
        finally:
            logging.disable(logging.NOTSET)
        ours = reference_verdict(bench / "power", "power", [Path(r).stem for r in results])
        assert (None if ours.crash else ours.failed) == want, (mutation, power_dir)


def test_each_runs_energy_equals_the_summarizers(trees: list[tuple[Path, str]]) -> None:
    """Every corpus run with power logs, against the summarizer's `_compute_total_power` on the same files."""
    from mlperf_logging.compliance_checker.mlp_parser import parse_file
    from mlperf_logging.result_summarizer import result_summarizer as rs
    from mlsubmit.checker.power.energy import run_energy

    runs = 0
    for org, ruleset in trees:
        for power_dir in sorted(org.glob("results/*/*/power")):
            for log in sorted(power_dir.parent.glob("result_*.txt")):
                start, stop = rs._query_run_start_stop(parse_file(str(log), ruleset)[0])
                want = rs._compute_total_power(str(power_dir.parent), str(log), stop - start, ruleset)
                got = run_energy(power_dir / log.stem, log.stem, stop - start)
                assert got.joules == pytest.approx(want, rel=RELATIVE), log
                runs += 1
    assert runs
    print(f"\n{runs} runs: energy equals the summarizer's _compute_total_power")


def test_energy_equals_the_reference_summarizer(run_cli: Any, trees: list[tuple[Path, str]], reference: Any,
                                                tmp_path_factory: pytest.TempPathFactory) -> None:  # fmt: skip
    """The summarizer's first pass after the package checker (its detailed table), as test_chair_summary runs it."""
    reference_energy = {}
    for org, ruleset in trees:
        folder, status = summaries(reference, tmp_path_factory, org, ruleset)
        assert status["summarizer"] == "0", status
        detailed = folder / f"{tree_name(org)}_detailed.json"
        reference_energy[str(org)] = _energy(json.loads(detailed.read_text()) if detailed.is_file() else [])
    compared = 0
    for org, ruleset in trees:
        ref = {"energy": reference_energy[str(org)]}
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
