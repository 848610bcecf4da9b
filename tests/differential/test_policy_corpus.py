"""The default profile on every accepted corpus tree: no error beyond `--profile reference` that docs/policy.md
cannot justify with a rule the chair or the review enforces. Each tree is discovered, so a tree added later is
held to the same line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from mlsubmit.checker.base.contract import STAGES
from mlsubmit.checker.base.options import CheckOptions, Profile
from mlsubmit.checker.engine.checks import command_codes, plan, stage
from mlsubmit.checker.engine.pipeline import run_check
from mlsubmit.checker.rounds.detect import ruleset_of_path

from mlsubmit.core.findings import Report, Severity

pytestmark = pytest.mark.corpus


def _trees(corpus: Path) -> list[Path]:
    return sorted(t for r in corpus.glob("training_results_v*") for t in r.iterdir() if (t / "results").is_dir())


def _errors(report: Report) -> Counter[str]:
    return Counter(f.code for f in report.all_findings() if f.severity is Severity.ERROR)


def _code_left_out(corpus: Path, tree: Path) -> bool:
    """The corpus copy holds no implementation code for this tree (v1.x trees, and the PARTIAL ones): the
    published tree has it (README of the corpus)."""
    partial = (corpus / "PARTIAL").read_text(encoding="utf-8").split() if (corpus / "PARTIAL").is_file() else []
    return not (tree / "benchmarks").is_dir() or str(tree.relative_to(corpus)) in partial


def _declared(profile: Profile) -> set[str]:
    """The codes the profile's registered checks say they may emit (and the pipeline's POL001)."""
    codes = set(command_codes()["policy"])
    for name in STAGES:
        for check in stage(plan(profile.value), name):
            codes |= check.codes
    return codes


def _checked(tree: Path, ruleset: str, profile: Profile, undeclared: set[str]) -> Counter[str]:
    report = run_check([str(tree)], CheckOptions(ruleset=ruleset, jobs=1, profile=profile)).report
    undeclared |= {f.code for f in report.all_findings()} - _declared(profile)
    return _errors(report)


# The default's code for a rule the reference profile reports under another code: the same refusal.
_SAME_RULE = {"SYS015": "TREE027"}  # a status spelling the installed system_desc_checker refuses
# Errors the default adds where the package checker passes but the result summarizer would publish the value wrong
# (docs/policy.md, "System descriptions, field by field"): PCL v1.0's "division": "close" is a division of no
# results table.
_PUBLISHED_WRONG = {"training_results_v1.0/PCL": {"SYS013"}}


def test_the_default_adds_no_error_it_cannot_justify(corpus: Path) -> None:
    unjustified: dict[str, list[str]] = {}
    undeclared: set[str] = set()
    laxer: list[str] = []
    for tree in _trees(corpus):
        ruleset = ruleset_of_path(tree)
        assert ruleset is not None
        full = _checked(tree, ruleset, Profile.FULL, undeclared)
        ref = _checked(tree, ruleset, Profile.REFERENCE, undeclared)
        if ref and not full:
            laxer.append(str(tree.relative_to(corpus)))
        added = {code for code, n in full.items() if n > ref.get(code, 0) + ref.get(_SAME_RULE.get(code, ""), 0)}
        if _code_left_out(corpus, tree):
            added.discard("TREE013")  # no implementation in the corpus copy: the published tree has it
        added -= _PUBLISHED_WRONG.get(str(tree.relative_to(corpus)), set())
        if added:
            unjustified[str(tree.relative_to(corpus))] = sorted(added)
    assert unjustified == {}
    assert laxer == [], "trees the official package checker refuses and the default profile passes"
    assert undeclared == set(), "codes emitted by no check of the profile (checker/engine/checks.py)"
