"""`mlsubmit check` never writes into a published tree of the corpus (tests/cli/test_cli_check.py: the command on made
inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import tree_digest


@pytest.mark.corpus
def test_corpus_trees_are_read_only(run_cli, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tree = corpus / "training_results_v1.0" / "Graphcore"
    before = tree_digest(tree)
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--output", tmp_path / "r.json", tree)
    assert code in (0, 1), err
    assert tree_digest(tree) == before
    assert len(json.loads((tmp_path / "r.json").read_text())["files"]) >= 50
