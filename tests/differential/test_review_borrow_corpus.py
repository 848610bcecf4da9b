"""Borrowing on published round 5.0/5.1 entries: Lenovo's llama2_70b_lora resubmitted with HPE's hyperparameters
(written with mllog into a temporary tree holding Lenovo's published system description), validly and keeping one
of its own; and Nebius's llama31_405b (5.1), where borrowing is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures.synth_org import runs, write_org
from mlsubmit.checker.review.borrow import check_borrowing, hyperparameter_keys
from mlsubmit.checker.review.borrowing_rules import rules_for
from mlsubmit.checker.review.entries import Entry, read_entry

pytestmark = pytest.mark.corpus

LENOVO = "training_results_v5.0/Lenovo"
SYSTEM = "4xSR680Ax8H200-SXM-141GB"
HPE = "training_results_v5.0/HPE/results/HPE-Cray-XD670-H200-SXM5-141GB_n1_24.09/llama2_70b_lora"


def _hps(entry: Entry, ruleset: str) -> dict[str, Any]:
    rules = rules_for(ruleset)
    assert rules is not None
    return {k: entry.value(k).value for k in hyperparameter_keys(entry, rules, ruleset)}  # type: ignore[union-attr]


def _resubmission(tmp: Path, corpus: Path, org: str, system: str, bench: str, hps: dict[str, Any],
                  ruleset: str) -> Entry:
    (tmp / "systems").mkdir(parents=True)
    src = corpus / f"training_results_v{ruleset[:3]}" / org / "systems" / f"{system}.json"
    (tmp / "systems" / f"{system}.json").write_bytes(src.read_bytes())  # a temporary tree, never the project
    write_org(tmp, {}, {(system, bench): runs([20.0] * 10, org=org, ruleset=ruleset, hyperparameters=hps)})
    return read_entry(tmp / "results" / system / bench)


def _codes(original: Entry, resubmitted: Entry, donor: Entry, ruleset: str) -> list[str]:
    rules = rules_for(ruleset)
    assert rules is not None
    return sorted(f.code for f in check_borrowing(original, resubmitted, donor, rules, ruleset).findings)


def test_lenovo_borrows_hpe_hyperparameters(corpus: Path, tmp_path: Path) -> None:
    original = read_entry(corpus / LENOVO / "results" / SYSTEM / "llama2_70b_lora")
    donor = read_entry(corpus / HPE)
    theirs = _hps(donor, "5.0.0")
    valid = _resubmission(tmp_path / "a", corpus, "Lenovo", SYSTEM, "llama2_70b_lora", theirs, "5.0.0")
    assert _codes(original, valid, donor, "5.0.0") == ["REV010"]
    mine = _hps(original, "5.0.0")
    kept = {**theirs, "opt_learning_rate_training_steps": mine["opt_learning_rate_training_steps"]}
    invalid = _resubmission(tmp_path / "b", corpus, "Lenovo", SYSTEM, "llama2_70b_lora", kept, "5.0.0")
    assert _codes(original, invalid, donor, "5.0.0") == ["REV002", "REV017"]


def test_llama31_405b_refuses_borrowing(corpus: Path, tmp_path: Path) -> None:
    results = corpus / "training_results_v5.1/Nebius/results"
    folder = next(p for p in sorted(results.glob("*/llama31_405b")))
    original = read_entry(folder)
    hps = {**_hps(original, "5.1.0"), "opt_base_learning_rate": 1e-4}
    resubmitted = _resubmission(tmp_path, corpus, "Nebius", folder.parent.name, "llama31_405b", hps, "5.1.0")
    ibm = next((corpus / "training_results_v5.0/IBM+CoreWeave+NVIDIA/results").glob("*/llama31_405b"))
    assert "REV001" in _codes(original, resubmitted, read_entry(ibm), "5.1.0")


def test_a_placeholder_org_is_the_tree_s(corpus: Path) -> None:
    # HPE's n1 stable_diffusion logs say SUBMISSION_ORG_PLACEHOLDER: the donor search must still skip HPE's own.
    from mlsubmit.checker.review.donors import rank_donors

    own = read_entry(corpus / "training_results_v5.0/HPE/results/HPE-Cray-XD670-H200-SXM5-141GB_n1_24.09/"
                                "stable_diffusion")
    assert own.org == "HPE"
    ranked = rank_donors(own, own, [str(corpus / "training_results_v5.0")], rules_for("5.0.0"), "5.0.0")  # type: ignore[arg-type]
    assert {c.entry.org for c in ranked} == {"Lenovo"}
