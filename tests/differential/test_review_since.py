"""mlsubmit review since: our tree against our tree of the previous round (mllog trees, and corpus pairs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.synth_org import runs, system, write_org
from mlsubmit.checker.review.since import check_since

from mlsubmit.cli import main


def _org(root: Path, systems: dict[str, dict[str, object]], entries: dict[tuple[str, str], dict[str, object]],
         ruleset: str) -> str:
    write_org(root, systems, {k: runs([20.0] * 3, ruleset=ruleset, hyperparameters=v) for k, v in entries.items()})
    return str(root)


def _codes(before: str, now: str, rulesets: tuple[str, str]) -> list[str]:
    return sorted(f.code for f in check_since(before, now, rulesets))


def test_unchanged_tree(tmp_path: Path) -> None:
    a = _org(tmp_path / "a", {"pod16": system()}, {("pod16", "bert"): {}}, "1.0.0")
    b = _org(tmp_path / "b", {"pod16": system()}, {("pod16", "bert"): {}}, "1.0.0")
    assert _codes(a, b, ("1.0.0", "1.0.0")) == ["REV030"]


def test_changes_are_said(tmp_path: Path) -> None:
    a = _org(tmp_path / "a", {"pod16": system()}, {("pod16", "bert"): {}, ("pod16", "resnet"): {}}, "1.0.0")
    b = _org(tmp_path / "b", {"pod16": system(framework="PopART SDK 2.3")},
             {("pod16", "bert"): {"opt_lamb_beta_1": 0.62}, ("pod16", "maskrcnn"): {}}, "1.1.0")
    found = check_since(a, b, ("1.0.0", "1.1.0"))
    assert sorted(f.code for f in found) == ["REV031", "REV032", "REV033", "REV035"]
    moved = next(f for f in found if f.code == "REV035")
    assert moved.message == "pod16/bert: opt_lamb_beta_1 moved since the previous round: 0.9 -> 0.62"


def test_retired_benchmark(tmp_path: Path) -> None:
    a = _org(tmp_path / "a", {"s": system()}, {("s", "llama31_405b"): {}}, "6.0.0")
    b = _org(tmp_path / "b", {"s": system()}, {("s", "llama31_8b"): {}}, "6.1.0")
    codes = _codes(a, b, ("6.0.0", "6.1.0"))
    assert "REV034" in codes and "REV032" not in codes


@pytest.mark.corpus
def test_corpus_lenovo_50_to_51(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["review", "since", "--previous", str(corpus / "training_results_v5.0/Lenovo"),
               "--current", str(corpus / "training_results_v5.1/Lenovo"), "--format", "json"])
    out = capsys.readouterr().out
    assert rc == 0  # warnings and information only
    assert out.count('"REV034"') == 2 and out.count('"REV033"') == 3  # bert, stable_diffusion retired in 5.1


@pytest.mark.corpus
def test_corpus_graphcore_10_to_11(corpus: Path) -> None:
    found = check_since(str(corpus / "training_results_v1.0/Graphcore"),
                        str(corpus / "training_results_v1.1/Graphcore"), ("1.0.0", "1.1.0"))
    assert sorted({f.code for f in found}) == ["REV031", "REV035"]
    moved = [f for f in found if f.code == "REV035"]
    assert len({f.message.split(":")[0] for f in moved}) == 4  # four folders
    assert max(len(f.message) for f in moved) < 160  # a list of short lines (one line held up to 19 values)
