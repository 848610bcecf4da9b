"""Differential test: `--profile reference` against mlperf-logging's package checker on every corpus tree.

The reference runs once per tree per test session, on a copy (it writes scaling.json), and the summarizer tests
read the same runs (tests/fixtures/summarizer_run.py).
Where it finishes, our exit status must equal its final verdict (it exits 0 either way; the verdict is its
"FOUND ERRORS" line), and the same folders must fail for the same reasons (file count, olympic tolerance, seeds,
RCP, system files). Where it crashes, we must still give findings, name the crash (TREE024) and exit 1.
The full profile must give findings and exit 0 or 1 on every tree, never a traceback, and write nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, tree_digest
from fixtures.differential import our_kinds, rounds
from fixtures.summarizer_run import package_check

pytestmark = pytest.mark.corpus
# What the installed mlperf-logging (4.1.68) says about each corpus tree: None = it crashes.
EXPECTED_REFERENCE = {
    "training_results_v1.0/GIGABYTE": None,  # KeyError: 'dlrm'
    "training_results_v1.0/Google": None,  # KeyError: 'dlrm'
    "training_results_v1.0/Graphcore": False,  # RCP fails on ipu-pod64-POPART-closed/bert
    "training_results_v1.0/Habana": False,  # runs log no seed
    "training_results_v1.0/PCL": True,  # "division": "close": seeds and RCP skipped
    "training_results_v1.1/Baidu": False,  # 5 non-compliant runs in one folder
    "training_results_v1.1/Google": True,  # open division
    "training_results_v1.1/Graphcore": False,  # weights_initialization records missing; RCP fails twice
}


def trees(corpus: Path) -> list[tuple[str, str, Path]]:
    return [
        (f"{rnd}/{org.name}", ruleset, org)
        for rnd, ruleset in rounds(corpus).items()
        for org in sorted(p for p in (corpus / rnd).iterdir() if p.is_dir())
    ]


@pytest.fixture(scope="module")
def reference_verdicts(corpus: Path, reference: Any, tmp_path_factory: pytest.TempPathFactory
                       ) -> dict[str, dict[str, object]]:
    """tools/reference_package_batch.py's verdict per tree, kept once per session: the summarizer tests read the
    same runs (tests/fixtures/summarizer_run.py)."""
    return {name: package_check(reference, tmp_path_factory, org, ruleset)[1] for name, ruleset, org in trees(corpus)}


@pytest.mark.slow
def test_reference_verdicts_are_as_recorded(reference_verdicts: dict[str, dict[str, object]]) -> None:
    """The verdicts pinned for the 2021 trees (each for a known reason); trees added later are compared with ours
    in the next test, not pinned here."""
    got = {name: (None if res["crash"] else res["ok"]) for name, res in reference_verdicts.items()}
    assert {name: got[name] for name in EXPECTED_REFERENCE if name in got} == {
        name: want for name, want in EXPECTED_REFERENCE.items() if name in got}


def test_profile_reference_gives_the_reference_verdict(
    corpus: Path, reference_verdicts: dict[str, dict[str, object]], run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    finished = agree = 0
    for name, ruleset, org in trees(corpus):
        code, out, err = run_cli("check", "--ruleset", ruleset, "--profile", "reference", "--format", "json", org)
        assert code in (0, 1), (name, err)
        data = json.loads(out)
        codes = {f["code"] for f in data["findings"]} | {f["code"] for e in data["files"] for f in e["findings"]}
        ref = reference_verdicts[name]
        if ref["crash"]:
            assert code == 1 and "TREE024" in codes, name
            continue
        finished += 1
        assert code == (0 if ref["ok"] else 1), (name, ref["error_lines"])
        findings = data["findings"] + [f for e in data["files"] for f in e["findings"]]
        assert our_kinds(findings) == ref["kinds"], name  # the same folders fail, for the same reasons
        agree += 1
    assert finished == agree > 0 and finished + sum(1 for r in reference_verdicts.values() if r["crash"]) == len(
        reference_verdicts)


def test_full_profile_never_crashes_and_writes_nothing(
    corpus: Path, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    before = tree_digest(corpus)
    for name, ruleset, org in trees(corpus):
        code, out, err = run_cli("check", "--ruleset", ruleset, "--format", "json", org)
        assert code in (0, 1) and not err.strip(), (name, err)
        data = json.loads(out)
        assert data["findings"], name  # every corpus tree has tree-level findings (no code, RCP results...)
    assert tree_digest(corpus) == before


def _crafted(root: Path) -> dict[str, Path]:
    """Small trees that each make the reference fail (or pass) for one reason; built with mllog, so trusted."""
    from fixtures.treefix import build_org, resnet_runs

    good = [36, 37, 37, 38, 39]
    trees: dict[str, Path] = {"clean": build_org(root / "clean" / "Org", {("p", "resnet"): resnet_runs(good)})}
    trees["count"] = build_org(root / "count" / "Org", {("p", "resnet"): resnet_runs(good[:4])})
    trees["system_file"] = build_org(root / "system_file" / "Org", {("p", "resnet"): resnet_runs(good)})
    system = trees["system_file"] / "systems" / "p.json"
    data = json.loads(system.read_text(encoding="utf-8"))
    del data["cooling"]
    system.write_text(json.dumps(data), encoding="utf-8")
    seeds = resnet_runs(good)
    seeds[3].seed = seeds[0].seed
    trees["seeds"] = build_org(root / "seeds" / "Org", {("p", "resnet"): seeds})
    trees["rcp"] = build_org(root / "rcp" / "Org", {("p", "resnet"): resnet_runs([30] * 5)})
    trees["bypass"] = build_org(root / "bypass" / "Org", {("p", "resnet"): resnet_runs([30] * 5)})
    (trees["bypass"] / "results/p/resnet/package_checker_params").write_bytes(b"rcp-bypass")
    two = resnet_runs(good)
    two[0].omit = two[1].omit = ("eval_samples",)
    trees["olympic"] = build_org(root / "olympic" / "Org", {("p", "resnet"): two})
    trees["close"] = build_org(root / "close" / "Org", {("p", "resnet"): resnet_runs([30] * 5)}, systems={"p": "close"})
    trees["unknown"] = build_org(root / "unknown" / "Org", {("p", "resnet"): resnet_runs(good), ("p", "gpt9"): []})
    return trees


def test_crafted_trees_fail_for_the_same_reasons(tmp_path: Path, run_cli: Callable[..., tuple[int, str, str]]) -> None:
    trees = _crafted(tmp_path)
    jobs = "".join(f"1.0.0\t{path}\n" for path in trees.values())
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"],
                          input=jobs, capture_output=True, text=True, check=True, timeout=600)  # fmt: skip
    refs = dict(zip(trees, (json.loads(line) for line in proc.stdout.splitlines()), strict=True))
    verdicts = {name: (None if r["crash"] else r["ok"]) for name, r in refs.items()}
    assert verdicts == {"clean": True, "count": False, "system_file": False, "seeds": False, "rcp": False,
                        "bypass": True, "olympic": False, "close": True, "unknown": True}  # fmt: skip
    for name, org in trees.items():
        code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--profile", "reference", "--format", "json", org)
        data = json.loads(out)
        findings = data["findings"] + [f for e in data["files"] for f in e["findings"]]
        assert code == (0 if refs[name]["ok"] else 1), name
        assert our_kinds(findings) == refs[name]["kinds"], name
