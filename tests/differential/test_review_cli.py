"""`mlsubmit review` as a user runs it: `python -m mlsubmit` in a subprocess, on trees written with mllog and on the
published rounds. Exit codes 0 (clean), 1 (an error finding), 2 (a missing folder, a bad argument); SARIF output
valid against the OASIS 2.1.0 schema; nothing under check is changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, tree_digest
from fixtures.reviewfix import THEIRS, preview_tree, trees

SARIF_SCHEMA = ROOT.parent / "shared" / "external" / "sarif-schema-2.1.0.json"


def review(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mlsubmit", "review", *map(str, argv)], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def sarif_valid() -> jsonschema.protocols.Validator:
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA} (../shared/external beside the repository)")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def _sarif_codes(text: str, valid: jsonschema.protocols.Validator) -> list[str]:
    doc = json.loads(text)
    assert sorted(valid.iter_errors(doc), key=str) == []
    return sorted(r["ruleId"] for run in doc["runs"] for r in run["results"])


def _borrow(paths: dict[str, Path]) -> list[str | Path]:
    return ["borrow", "--ruleset", "1.0.0", "--original", paths["original"], "--resubmitted",
            paths["resubmitted"], "--donor", paths["donor"]]


def test_borrow_valid_and_invalid(tmp_path: Path, sarif_valid: jsonschema.protocols.Validator) -> None:
    good = trees(tmp_path / "good", THEIRS)
    before = tree_digest(tmp_path / "good")
    done = review(*_borrow(good), "--format", "sarif")
    assert done.returncode == 0, done.stderr
    assert _sarif_codes(done.stdout, sarif_valid) == ["REV010"]
    bad = trees(tmp_path / "bad", {**THEIRS, "opt_lamb_beta_1": 0.9})
    done = review(*_borrow(bad), "--format", "sarif")
    assert done.returncode == 1, done.stderr
    assert _sarif_codes(done.stdout, sarif_valid) == ["REV002", "REV017"]
    assert tree_digest(tmp_path / "good") == before  # review only reads


def test_preview_held_and_not(tmp_path: Path, sarif_valid: jsonschema.protocols.Validator) -> None:
    before = preview_tree(tmp_path / "a", "preview", {16: 20.0, 64: 8.0})
    held = review("preview", "--previous", before, "--current", preview_tree(tmp_path / "b", "onprem", {16: 20.3,
                  64: 8.1}), "--format", "sarif")
    assert held.returncode == 0, held.stderr
    assert _sarif_codes(held.stdout, sarif_valid) == ["REV020", "REV020"]
    failed = review("preview", "--previous", before, "--current", preview_tree(tmp_path / "c", "onprem", {16: 25.0}))
    assert failed.returncode == 1 and "2 Preview point(s) compared, 1 failed" in failed.stdout


def test_missing_folder_and_bad_arguments_are_exit_2(tmp_path: Path) -> None:
    tree = preview_tree(tmp_path / "a", "preview", {16: 20.0})
    done = review("since", "--previous", tree, "--current", tmp_path / "gone", "--ruleset", "1.0.0")
    assert done.returncode == 2 and done.stdout == ""
    assert f"review since: --current {tmp_path / 'gone'}: no such folder" in done.stderr
    for argv in (["frobnicate"], ["preview", "--previous", tree], ["since", "--previous", tree, "--current", tree,
                                                                   "--format", "yaml"]):
        done = review(*argv)
        assert done.returncode == 2 and "Traceback" not in done.stderr, argv


@pytest.mark.corpus
def test_corpus_since_and_preview(corpus: Path, sarif_valid: jsonschema.protocols.Validator) -> None:
    done = review("since", "--previous", corpus / "training_results_v5.0/Lenovo", "--current",
                  corpus / "training_results_v5.1/Lenovo", "--format", "sarif")
    assert done.returncode == 0, done.stderr
    codes = _sarif_codes(done.stdout, sarif_valid)
    assert codes.count("REV034") == 2 and codes.count("REV033") == 3
    done = review("preview", "--previous", corpus / "training_results_v1.0", "--current",
                  corpus / "training_results_v1.1", "--format", "sarif")
    assert done.returncode == 1, done.stderr
    assert _sarif_codes(done.stdout, sarif_valid) == ["REV021"] * 15


@pytest.mark.corpus
def test_corpus_borrow_of_nothing(corpus: Path, sarif_valid: jsonschema.protocols.Validator) -> None:
    # Lenovo's published v5.0 llama2_70b_lora "resubmitted" as it was, against HPE's entry: it kept its own values.
    ours = corpus / "training_results_v5.0/Lenovo/results/4xSR680Ax8H200-SXM-141GB/llama2_70b_lora"
    donor = corpus / "training_results_v5.0/HPE/results/HPE-Cray-XD670-H200-SXM5-141GB_n1_24.09/llama2_70b_lora"
    done = review("borrow", "--original", ours, "--resubmitted", ours, "--donor", donor, "--format", "sarif")
    assert done.returncode == 1, done.stderr
    codes = _sarif_codes(done.stdout, sarif_valid)
    assert "REV016" in codes and "REV017" in codes and "REV010" not in codes
