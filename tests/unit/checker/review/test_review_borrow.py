"""mlsubmit review borrow: every REV code of the borrowing check, failing and passing, on trees written with
mlperf_logging.mllog (testing.synth_org)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.reviewfix import OURS, THEIRS
from fixtures.reviewfix import org_tree as _org
from fixtures.reviewfix import trees as _trees
from fixtures.synth_org import system
from mlsubmit.checker.review.borrow import check_borrowing
from mlsubmit.checker.review.borrowing_rules import rules_for
from mlsubmit.checker.review.entries import read_entry

from mlsubmit.cli import main


def _codes(paths: dict[str, Path], ruleset: str = "1.0.0") -> list[str]:
    rules = rules_for(ruleset)
    assert rules is not None
    got = check_borrowing(*(read_entry(paths[k]) for k in ("original", "resubmitted", "donor")), rules, ruleset)
    return sorted(f.code for f in got.findings)


def test_valid_borrowing_with_a_new_batch_size(tmp_path: Path) -> None:
    codes = _codes(_trees(tmp_path, {**THEIRS, "global_batch_size": 300}))
    assert codes == ["REV004", "REV010"]


def test_exact_borrowing_is_valid(tmp_path: Path) -> None:
    assert _codes(_trees(tmp_path, THEIRS)) == ["REV010"]


def test_a_kept_value_breaks_the_group(tmp_path: Path) -> None:
    codes = _codes(_trees(tmp_path, {**THEIRS, "opt_lamb_beta_1": 0.9}))
    assert codes == ["REV002", "REV017"]


def test_a_value_of_neither_needs_evidence(tmp_path: Path) -> None:
    assert _codes(_trees(tmp_path, {**THEIRS, "opt_lamb_beta_1": 0.7})) == ["REV003", "REV010"]


def test_nothing_borrowed(tmp_path: Path) -> None:
    codes = _codes(_trees(tmp_path, OURS))
    assert codes == ["REV002", "REV002", "REV004", "REV016", "REV017"]


def test_software_and_system_against_the_original(tmp_path: Path) -> None:
    changed = system(framework="PopART Poplar SDK 9.9", accelerator_model_name="Graphcore IPU GC300")
    paths = _trees(tmp_path, THEIRS, resub_system=changed)
    assert _codes(paths) == ["REV005", "REV006", "REV017"]


def test_scale_past_the_largest_original_entry(tmp_path: Path) -> None:
    # pod64's folder holds no result: 16 accelerators (pod16's bert) is the largest original entry on the system.
    assert _codes(_trees(tmp_path, THEIRS, nodes="2")) == ["REV009", "REV017"]


def test_scale_up_within_the_largest_original_scale(tmp_path: Path) -> None:
    paths = _trees(tmp_path, THEIRS, nodes="2")
    _org(tmp_path / "ours", "Graphcore", {"pod64": system(number_of_nodes="4")}, {"pod64": OURS}, "resnet")
    assert _codes(paths) == ["REV010"]


def test_scale_change_only_for_the_largest_entry(tmp_path: Path) -> None:
    paths = _trees(tmp_path, THEIRS, nodes="2")
    _org(tmp_path / "ours", "Graphcore", {"pod64": system(number_of_nodes="4")}, {"pod64": OURS})
    assert _codes(paths) == ["REV007", "REV017"]


def test_smaller_scale_must_be_faster(tmp_path: Path) -> None:
    orig = tmp_path / "ours/results/pod64/bert"
    _org(tmp_path / "ours", "Graphcore", {"pod64": system(number_of_nodes="4")}, {"pod64": OURS})
    slow = _trees(tmp_path / "slow", THEIRS, nodes="2", minutes=30.0)
    assert _codes({**slow, "original": orig}) == ["REV008", "REV017"]
    fast = _trees(tmp_path / "fast", THEIRS, nodes="2", minutes=10.0)
    assert _codes({**fast, "original": orig}) == ["REV010"]


def test_refused_benchmark(tmp_path: Path) -> None:
    hps = {"opt_base_learning_rate": 8e-5}
    paths = _trees(tmp_path, hps, benchmark="llama31_405b", ruleset="5.0.0")
    assert "REV001" in _codes(paths, "5.0.0")
    assert "REV001" not in _codes(_trees(tmp_path / "b", THEIRS), "1.0.0")


def test_refusals_follow_the_rounds() -> None:
    assert "gpt3" not in rules_for("2.1.0").refused  # type: ignore[union-attr]
    assert rules_for("3.0.0").refused == {"gpt3": 418}  # type: ignore[union-attr]
    assert rules_for("5.0.0").refused["llama31_405b"] == 380  # type: ignore[union-attr]
    assert rules_for("6.1.0").refused["llama31_405b"] == 433  # type: ignore[union-attr]
    assert not rules_for("4.1.0").kept and rules_for("6.0.0").kept  # type: ignore[union-attr]


def test_parallelism_is_not_borrowed(tmp_path: Path) -> None:
    paths = _trees(tmp_path, {**THEIRS, "tensor_parallelism": 2}, ruleset="6.1.0")
    assert _codes(paths, "6.1.0") == ["REV010", "REV012"]


def test_donor_of_the_same_organisation(tmp_path: Path) -> None:
    paths = _trees(tmp_path, THEIRS)
    _org(tmp_path / "mine2", "Graphcore", {"sys": system()}, {"sys": THEIRS})
    assert _codes({**paths, "donor": tmp_path / "mine2/results/sys/bert"}) == ["REV011", "REV017"]


def test_no_system_description(tmp_path: Path) -> None:
    paths = _trees(tmp_path, THEIRS)
    (tmp_path / "resub/systems/pod16.json").unlink()
    assert _codes(paths) == ["REV010", "REV013", "REV013"]


def test_cli_finds_the_donor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _trees(tmp_path, THEIRS)
    _org(tmp_path / "third", "Third", {"x": system(submitter="Third")}, {"x": {**OURS, "opt_lamb_beta_1": 0.5}})
    html = tmp_path / "b.html"
    rc = main(["review", "borrow", "--ruleset", "1.0.0", "--original", str(paths["original"]), "--resubmitted",
               str(paths["resubmitted"]), "--round-trees", str(tmp_path / "other"), str(tmp_path / "third"),
               "--format", "json", "--html", str(html)])
    out = capsys.readouterr().out
    assert rc == 0 and '"REV015"' in out and '"REV010"' in out and "other/results/sys/bert" in out
    assert "opt_lamb_beta_1" in html.read_text(encoding="utf-8")


def test_cli_no_donor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _trees(tmp_path, THEIRS)
    rc = main(["review", "borrow", "--ruleset", "1.0.0", "--original", str(paths["original"]), "--resubmitted",
               str(paths["resubmitted"]), "--round-trees", str(tmp_path / "ours")])
    assert rc == 1 and "REV014" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github"])
def test_every_format(tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _trees(tmp_path, {**THEIRS, "opt_lamb_beta_1": 0.9})
    rc = main(["review", "borrow", "--ruleset", "1.0.0", "--format", fmt,
               *(x for k in ("original", "resubmitted", "donor") for x in (f"--{k}", str(paths[k])))])
    assert rc == 1 and "REV002" in capsys.readouterr().out


def test_empty_folder_is_a_usage_error(tmp_path: Path) -> None:
    paths = _trees(tmp_path, THEIRS)
    (tmp_path / "empty").mkdir()
    assert main(["review", "borrow", "--ruleset", "1.0.0", "--original", str(tmp_path / "empty"),
                 "--resubmitted", str(paths["resubmitted"]), "--donor", str(paths["donor"])]) == 2


def test_batchnorm_span_may_change(tmp_path: Path) -> None:
    # model_bn_span is the batchnorm span of the text (TR1.0 L382), named so in the resnet table (L318) and logs.
    paths = _trees(tmp_path, {**THEIRS, "model_bn_span": 64}, benchmark="resnet")
    rules = rules_for("1.0.0")
    assert rules is not None
    got = check_borrowing(*(read_entry(paths[k]) for k in ("original", "resubmitted", "donor")), rules, "1.0.0")
    assert sorted(f.code for f in got.findings) == ["REV004", "REV010"]
    assert [r.verdict for r in got.rows if r.key == "model_bn_span"] == ["batch size (may change)"]


def test_another_resnet_value_still_needs_evidence(tmp_path: Path) -> None:
    assert _codes(_trees(tmp_path, {**THEIRS, "lars_opt_momentum": 0.8}, benchmark="resnet")) == ["REV003",
                                                                                                    "REV010"]


def test_a_value_not_logged_is_said_so_on_every_side(tmp_path: Path) -> None:
    """A key only the resubmission logs: the donor's and the original's sides say 'not logged', not 'None'."""
    paths = _trees(tmp_path, {**THEIRS, "opt_custom_knob": 3})
    rules = rules_for("1.0.0")
    assert rules is not None
    got = check_borrowing(*(read_entry(paths[k]) for k in ("original", "resubmitted", "donor")), rules, "1.0.0")
    said = next(f.message for f in got.findings if f.message.startswith("opt_custom_knob:"))
    assert said.startswith("opt_custom_knob: resubmitted 3, donor not logged, original not logged"), said


def test_a_donor_of_another_round_cannot_be_borrowed_from(tmp_path: Path) -> None:
    """Borrowing happens in a round's review period, from that round's entries: a donor published in another
    round is REV011; the same donor in the original's round is valid."""
    paths = _trees(tmp_path / "training_results_v1.0", THEIRS)
    assert _codes(paths) == ["REV010"]
    moved = tmp_path / "training_results_v1.1" / "other"
    moved.parent.mkdir()
    (tmp_path / "training_results_v1.0" / "other").rename(moved)
    codes = _codes({**paths, "donor": moved / "results" / "sys" / "bert"})
    assert codes == ["REV011", "REV017"]
