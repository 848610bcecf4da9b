"""Differential test: `--profile reference` against mlperf-logging's package checker on every corpus tree.

The reference runs once for all trees, in one process, each tree on a temporary copy (it writes scaling.json).
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

import pytest
from conftest import ROOT, tree_digest

pytestmark = pytest.mark.corpus
ROUNDS = {"training_results_v1.0": "1.0.0", "training_results_v1.1": "1.1.0"}
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
        for rnd, ruleset in ROUNDS.items()
        for org in sorted(p for p in (corpus / rnd).iterdir() if p.is_dir())
    ]


@pytest.fixture(scope="module")
def reference_verdicts(corpus: Path) -> dict[str, dict[str, object]]:
    jobs = "".join(f"{ruleset}\t{path}\n" for _, ruleset, path in trees(corpus))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"],
        input=jobs, capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    by_tree = {}
    for (name, _, _), res in zip(trees(corpus), results, strict=True):
        by_tree[name] = res
    return by_tree


def test_reference_verdicts_are_as_recorded(reference_verdicts: dict[str, dict[str, object]]) -> None:
    got = {name: (None if res["crash"] else res["ok"]) for name, res in reference_verdicts.items()}
    assert got == EXPECTED_REFERENCE


def our_kinds(findings: list[dict[str, object]]) -> dict[str, int]:
    """Per failing folder (or system file), what failed: the same grouping as the reference's ERROR lines."""
    errors = [f for f in findings if f["severity"] == "error"]

    def places(*codes: str, folder: bool = False) -> int:
        paths = {str(f["path"]) for f in errors if f["code"] in codes}
        return len({p.rsplit("/", 1)[0] if folder and p.endswith(".txt") else p for p in paths})

    return {
        "system_file": places("TREE027"),
        "count": places("TREE003"),
        "olympic": places("TREE007"),
        "seeds": places("TREE014", "TREE015", "TREE016", folder=True),
        "rcp": places("TREE018", "TREE020", "TREE021"),
    }


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
    assert (finished, agree) == (6, 6)


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
