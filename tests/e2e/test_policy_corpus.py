"""The default profile on every accepted corpus tree: no error beyond `--profile reference` that docs/policy.md
cannot justify with a rule the chair or the review enforces. Each tree is discovered, so a tree added later is
held to the same line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from mlsubmit.checker.rounds.detect import ruleset_of_path
from mlsubmit.checker.run.options import CheckOptions
from mlsubmit.checker.run.pipeline import run_check

from mlsubmit.findings import Report, Severity

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


def test_the_default_adds_no_error_it_cannot_justify(corpus: Path) -> None:
    unjustified: dict[str, list[str]] = {}
    for tree in _trees(corpus):
        ruleset = ruleset_of_path(tree)
        assert ruleset is not None
        full = _errors(run_check([str(tree)], CheckOptions(ruleset=ruleset, jobs=1)).report)
        ref = _errors(run_check([str(tree)], CheckOptions(ruleset=ruleset, jobs=1, profile="reference")).report)  # type: ignore[arg-type]
        added = {code for code, n in full.items() if n > ref.get(code, 0)}
        if _code_left_out(corpus, tree):
            added.discard("TREE013")  # no implementation in the corpus copy: the published tree has it
        if added:
            unjustified[str(tree.relative_to(corpus))] = sorted(added)
    assert unjustified == {}
