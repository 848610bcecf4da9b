"""`review preview` on the corpus: no v1.0 preview has an available v1.1 result
(tests/unit/checker/review/test_review_preview.py: made trees)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlsubmit.checker.review.preview import check_preview


@pytest.mark.corpus
def test_corpus_v10_previews_have_no_available_v11_result(corpus: Path) -> None:
    # v1.1's only Available TPU v4 bert is Google's open 4096-core run: not the closed Preview's division.
    _, found = check_preview([str(corpus / "training_results_v1.0")], [str(corpus / "training_results_v1.1")])
    assert [f.code for f in found] == ["REV021"] * 15
