"""Issue 38: an RCP bypass at the narrowest scope. `package.toml` gives checker params per benchmark folder
(`[[results]] checker_params`) or per system (`[system_checker_params]`); `package` writes each where and as the
reference package checker reads it, and the official verify steps pass the tree with the file and fail it without.
For each bypassed folder, the evidence of "Handling RCP failures" lands beside the organisation folder, never in it.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.demo import MODERN_SYSTEM
from fixtures.flowfix import BENCHMARK, ORG, RULESET, raw_output, verify_v61, write_job
from fixtures.synth import RunSpec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to export the implementation"),
]
Cli = Callable[..., tuple[int, str, str]]
SUCCESS = "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !"
FOLDER = f"results/{MODERN_SYSTEM}/{BENCHMARK}"
PLACEMENTS = {  # where the config puts the flag -> (the config's lines, the file package writes)
    "benchmark": ('checker_params = ["rcp-bypass"]\nimplementation = {', f"{FOLDER}/package_checker_params"),
    "system": (f'[system_checker_params]\n"{MODERN_SYSTEM}" = ["rcp-bypass"]\n\n[[results]]',
               f"results/{MODERN_SYSTEM}/package_checker_params"),
}


def passes(org: Path) -> bool:
    steps = verify_v61(org)
    return len(steps) == 3 and all(s.code == 0 for s in steps) and SUCCESS in steps[0].output


def fast_job(root: Path) -> Path:
    """`make demo`'s job with runs converging faster than the RCP allows: the reference's RCP check fails."""
    job = write_job(root, ROOT / "systems")
    for i, out in enumerate(sorted((job.root / "runs").iterdir())):
        spec = RunSpec(benchmark=BENCHMARK, ruleset=RULESET, platform="IPU-POD64", seed=900 + i,
                       start_ms=1_790_000_000_000 + i * 86_400_000, converge_at=2400)
        out.write_bytes(raw_output(spec))
    return job.config


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
def test_each_placement_passes_the_reference_with_the_file_and_fails_it_without(
    tmp_path: Path, run_cli: Cli, placement: str
) -> None:
    config = fast_job(tmp_path / "job")
    lines, written = PLACEMENTS[placement]
    anchor = "implementation = {" if placement == "benchmark" else "[[results]]"
    config.write_text(config.read_text(encoding="utf-8").replace(anchor, lines, 1), encoding="utf-8")
    code, out, err = run_cli("package", config, "--color", "never")
    assert code == 0, out + err
    built = tmp_path / "job" / "build" / "submission"
    org = built / ORG
    assert (org / written).read_bytes() == b"rcp-bypass"  # no newline: the only line the reference honours
    assert not (org / "package_checker_params").exists()  # the organisation's other folders keep their check
    assert "PKG063" in out and f"rcp-bypass written at the {placement} folder" in out
    manifest = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    assert f"{ORG}/{written}" in [f["path"] for f in manifest["files"]]
    assert not any("rcp-evidence" in f["path"] for f in manifest["files"])  # evidence is not in the archive

    chair = tmp_path / "chair"
    shutil.copytree(org, chair / ORG)
    assert passes(chair / ORG)
    shutil.rmtree(chair)
    shutil.copytree(org, chair / ORG)
    (chair / ORG / written).unlink()
    assert not passes(chair / ORG)
    (chair / ORG / written).write_bytes(b"rcp-bypass\n")  # what an editor saves: the reference ignores it
    assert not passes(chair / ORG)


def test_the_evidence_of_a_bypassed_folder(tmp_path: Path, run_cli: Cli) -> None:
    config = fast_job(tmp_path / "job")
    lines, _ = PLACEMENTS["benchmark"]
    config.write_text(config.read_text(encoding="utf-8").replace("implementation = {", lines, 1), encoding="utf-8")
    code, out, err = run_cli("package", config, "--color", "never")
    assert code == 0, out + err
    evidence = tmp_path / "job" / "build" / "submission" / "rcp-evidence" / MODERN_SYSTEM / BENCHMARK
    rows = list(csv.DictReader(io.StringIO((evidence / "rcp_convergence.csv").read_text(encoding="utf-8"))))
    assert [r["result_file"] for r in rows] == [f"result_{i}.txt" for i in range(10)]
    assert {r["samples_to_converge"] for r in rows} == {"2400"} and {r["olympic_mean"] for r in rows} == {"2400"}
    assert sum(r["in_olympic_mean"] == "yes" for r in rows) == 8  # the fastest and slowest are dropped
    assert float(rows[0]["rcp_mean"]) == pytest.approx(3178.67, abs=0.01)
    assert float(rows[0]["fastest_allowed"]) == pytest.approx(2960.63, abs=0.01)
    assert float(rows[0]["normalisation_needed"]) == pytest.approx(3178.6667 / 2400, rel=1e-4)
    assert rows[0]["bypass_written_at"] == "benchmark folder" and rows[0]["rcp_check_without_bypass"].startswith(
        "fail: RCP found")
    curves = list(csv.DictReader(io.StringIO((evidence / "eval_curves.csv").read_text(encoding="utf-8"))))
    assert {c["result_file"] for c in curves} == {f"result_{i}.txt" for i in range(10)}
    first = [c for c in curves if c["result_file"] == "result_0.txt"]
    assert [c["epoch_or_samples"] for c in first] == ["600", "1200", "1800", "2400"]
    assert first[-1]["eval_accuracy"] == "0.921"

    page = tmp_path / "report.html"  # the same figures, drawn in the HTML report
    code, out, err = run_cli("report", "--ruleset", RULESET, tmp_path / "job" / "build" / "submission" / ORG,
                             "--html", page)
    text = page.read_text(encoding="utf-8")
    assert '<h2 id="rcp-evidence">RCP bypass: the evidence for the review</h2>' in text, err
    assert f"{ORG}/{FOLDER}</h3>" in text and "bypass written at the benchmark folder" in text
    assert "normalisation to the RCP mean: ×1.3244" in text
    code, out, err = run_cli("report", "--ruleset", RULESET, tmp_path / "job" / "build" / "submission" / ORG,
                             "--format", "json")
    (ev,) = json.loads(out)["rcp_evidence"]
    assert (ev["scope"], ev["submission_mean"], len(ev["runs"])) == ("benchmark folder", 2400, 10)
    assert ev["normalisation"] == pytest.approx(float(rows[0]["normalisation_needed"]), rel=1e-5)
    section = text[text.index('id="rcp-evidence"'):text.index('id="runs"')]
    assert section.count("<svg") == 1 and "RCP mean 3,179" in section and "result_9.txt" in section


def test_a_folder_param_is_one_flag_for_a_packaged_system(tmp_path: Path, run_cli: Cli) -> None:
    config = fast_job(tmp_path / "job")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[[results]]", '[system_checker_params]\n"ipu-pod64-POPART-close" = '
                                   '["rcp-bypass"]\n\n[[results]]', 1), encoding="utf-8")  # fmt: skip
    code, _, err = run_cli("package", config)
    assert code == 2 and "no [[results]] entry packages that system" in err and MODERN_SYSTEM in err
    config.write_text(text.replace("implementation = {", 'checker_params = ["rcp-bypass", "seed-checker-bypass"]\n'
                                   "implementation = {", 1), encoding="utf-8")  # fmt: skip
    code, _, err = run_cli("package", config)
    assert code == 2 and "checker_params" in err
