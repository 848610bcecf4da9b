"""review preview over every pair of consecutive rounds of the corpus (issue 41), as a review committee runs it:
each round folder as --previous and the next one as --current. Every Preview point gets exactly one class (held,
failed, not due, retired, no successor), whatever the round holds; a round added to the corpus later is tested
too. The published rounds' verdicts (training_results_v2.1 to v5.0, fetched) are in the issue's closing note."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from fixtures.differential import rounds
from mlsubmit.checker.review.preview import check_preview, points
from mlsubmit.checker.rounds.detect import version

CLASSES = {"REV020": "held", "REV022": "failed", "REV058": "not due", "REV059": "retired", "REV021": "no successor"}


def _pairs(corpus: Path) -> list[tuple[Path, Path]]:
    folders = sorted(rounds(corpus), key=lambda name: version(rounds(corpus)[name]))
    return [(corpus / a, corpus / b) for a, b in itertools.pairwise(folders)]


@pytest.mark.corpus
def test_every_preview_point_of_consecutive_corpus_rounds_gets_one_class(corpus: Path) -> None:
    pairs = _pairs(corpus)
    assert pairs, "the corpus has fewer than two rounds"
    for before, now in pairs:
        _, found = check_preview([str(before)], [str(now)])
        previews, _ = points([str(before)], "Preview")
        expected = sum(min(len({p.chips for p in group}), 2) if group else 0 for group in previews.values())
        judged = [f for f in found if f.code in CLASSES]
        assert len(judged) >= expected, (before.name, now.name)
        assert {f.code for f in found} <= {*CLASSES, "REV023", "REV024", "REV056"}, (before.name, now.name)
        for f in judged:
            assert f.path.startswith(str(before)), f.path  # a verdict is said on the Preview's own log
            if f.code in ("REV021", "REV022"):
                assert "per node" in f.message  # says which hardware was looked for, for the hand check


@pytest.mark.corpus
def test_corpus_v10_to_v11_previews_still_have_no_available_result(corpus: Path) -> None:
    # Google TPU v4 and GIGABYTE A100 of v1.0: v1.1 (154 days later by the publication dates) has no Available
    # result of the same submitter, division and hardware; v1.1's only TPU v4 bert is Google's open run.
    _, found = check_preview([str(corpus / "training_results_v1.0")], [str(corpus / "training_results_v1.1")])
    assert [f.code for f in found] == ["REV021"] * 15
