"""A round the installed mlperf-logging knows and mlsubmit's tables do not (issue 50): a release made here that knows
a fictitious ruleset 7.0.0 as a copy of 6.1.0 (rule files, RCP data, package- and RCP-checker lists,
benchmark_meta; fixtures/future_round.py), first on PYTHONPATH of `mlsubmit check`. A 6.1 tree relabelled 7.0
checks as it does under 6.1: benchmarks, run counts and RCP data from the release, said once on stderr and in the
JSON report, and the checks that need our own data for the round named as skipped, never failing a folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.future_round import write_release
from fixtures.synth import RunSpec
from fixtures.treefix import build_org

BENCHMARK = "llama2_70b_lora"
SYSTEM = "ipu-pod16"


def _tree(root: Path) -> Path:
    base = RunSpec(benchmark=BENCHMARK, ruleset="6.1.0", platform="IPU-POD16", converge_at=3400, raw_output=True)
    specs = [replace(base, seed=200 + i, start_ms=1_760_000_000_000 + i * 10_000_000) for i in range(10)]
    org = build_org(root, {(SYSTEM, BENCHMARK): specs})
    system = org / "systems" / f"{SYSTEM}.json"
    data = json.loads(system.read_text(encoding="utf-8"))
    data.update({"status": "Available on-premise", "host_network_card_count": "2"})
    system.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (org / "benchmarks" / BENCHMARK / "implementations" / "ipu" / "config.yaml").write_text("a: 1\n", "utf-8")
    return org


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("future")
    release = write_release(root / "release", "6.1.0", "7.0.0")
    return _tree(root / "Org"), dict(os.environ, PYTHONPATH=str(release))


def _check(org: Path, env: dict[str, str], ruleset: str) -> tuple[int, dict[str, object], str]:
    proc = subprocess.run([sys.executable, "-m", "mlsubmit", "check", "--ruleset", ruleset, "--format", "json",
                           str(org)], capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _codes(report: dict[str, object]) -> list[str]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return sorted(f["code"] for f in findings)


def test_a_round_only_the_installed_release_knows_checks_as_its_source_round(
        made: tuple[Path, dict[str, str]]) -> None:
    org, env = made
    code, report, err = _check(org, env, "6.1.0")
    assert code == 0, report
    assert "round_data" not in report["tool"] and "mlsubmit's tables" not in err  # type: ignore[operator]
    new_code, new_report, new_err = _check(org, env, "7.0.0")
    assert new_code == 0, new_report
    assert "TREE002" not in _codes(new_report)  # llama2_70b_lora is a 7.0 benchmark of the release
    assert "TREE019" in _codes(new_report)  # the release's training_7.0.0 RCP data judged the folder
    assert _codes(new_report) == sorted([*_codes(report), "HP003"])  # the closed table: said skipped, as info
    said = [line for line in new_err.splitlines() if "mlsubmit's tables have no round 7.0" in line]
    assert len(said) == 1, new_err
    assert "closed hyperparameter table (HP003)" in said[0] and "mlsubmit review" in said[0]
    tool = new_report["tool"]
    assert isinstance(tool, dict) and tool["round_data"] == said[0].removeprefix("mlsubmit: ")


def test_a_folder_the_new_round_does_not_list_is_still_refused(made: tuple[Path, dict[str, str]]) -> None:
    org, env = made
    moved = org.parent / "Org405" / "Org"
    build_org(moved, {(SYSTEM, "llama31_405b"): []}, code=())  # retired in 6.1, so not in the release's 7.0 list
    (moved / "results" / SYSTEM / "llama31_405b" / "result_0.txt").write_text("", encoding="utf-8")
    code, report, _err = _check(moved, env, "7.0.0")
    assert code == 1 and "TREE002" in _codes(report)


def test_the_review_says_what_it_lacks_for_the_new_round(made: tuple[Path, dict[str, str]]) -> None:
    org, env = made
    proc = subprocess.run([sys.executable, "-m", "mlsubmit", "review", "since", "--previous", str(org), "--current",
                           str(org), "--previous-ruleset", "6.1.0", "--ruleset", "7.0.0", "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    said = [line for line in proc.stderr.splitlines() if "mlsubmit's tables have no round 7.0" in line]
    assert len(said) == 1 and "borrowing rules (mlsubmit review)" in said[0]
    assert json.loads(proc.stdout)["tool"]["round_data"] == said[0].removeprefix("mlsubmit: ")
