"""Rulesets as people write them, and a tree that states its round once (`.mlsubmit-round`, `mlsubmit.toml`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mlsubmit.checker.engine.discover import UsageError
from mlsubmit.checker.rounds.detect import group_by_round, spelled_ruleset, stated_round

KNOWN = ("1.0.0", "1.1.0", "2.0.0")


@pytest.mark.parametrize("text", ["1.1", "v1.1", "1.1.0", "v1.1.0", "V1.1", " 1.1\n", "training_1.1.0", "01.1"])
def test_the_spellings_people_type(text: str) -> None:
    assert spelled_ruleset(text) == "1.1.0"


@pytest.mark.parametrize("text", ["", "1", "v", "1.1.0.0", "latest", "1.1-rc", "../1.1", "1.x"])
def test_what_is_not_a_ruleset(text: str) -> None:
    assert spelled_ruleset(text) is None


def _org(root: Path) -> Path:
    org = root / "Graphcore"
    (org / "results" / "sys" / "bert").mkdir(parents=True)
    (org / "results" / "sys" / "bert" / "result_0.txt").write_text("")
    return org


def test_a_round_file_at_the_org_root_serves_every_path_under_it(tmp_path: Path) -> None:
    org = _org(tmp_path)
    (org / ".mlsubmit-round").write_text("# the round we are preparing\nv1.1\n")
    log = org / "results" / "sys" / "bert" / "result_0.txt"
    why: dict[str, set[str]] = {}
    assert group_by_round([str(org), str(log)], KNOWN, why) == {"1.1.0": [str(org), str(log)]}
    assert why == {"1.1.0": {str(org / ".mlsubmit-round")}}


def test_mlsubmit_toml_states_the_round_for_its_folder(tmp_path: Path) -> None:
    org = _org(tmp_path / "team")
    (tmp_path / "team" / "mlsubmit.toml").write_text('[check]\nruleset = "1.0"\npaths = ["Graphcore"]\n')
    assert stated_round(org) == ("1.0.0", str(tmp_path / "team" / "mlsubmit.toml"))
    # a config without a ruleset says nothing; the search goes on upwards
    (org / "mlsubmit.toml").write_text("[check]\nstrict = true\n")
    assert stated_round(org / "results")[0] == "1.0.0"  # type: ignore[index]


def test_the_nearest_statement_wins_and_round_folders_come_first(tmp_path: Path) -> None:
    (tmp_path / ".mlsubmit-round").write_text("1.0\n")
    inner = _org(tmp_path / "inner")
    (inner / ".mlsubmit-round").write_text("2.0\n")
    assert group_by_round([str(inner)], KNOWN) == {"2.0.0": [str(inner)]}
    published = _org(tmp_path / "training_results_v1.1")
    assert group_by_round([str(published)], KNOWN) == {"1.1.0": [str(published)]}


@pytest.mark.parametrize("content, message", [
    ("latest\n", r"'latest' does not name a round"),
    ("", r"'' does not name a round"),
    ("9.9\n", r"round 9\.9 has no training ruleset"),
])
def test_a_bad_statement_is_a_usage_error(tmp_path: Path, content: str, message: str) -> None:
    org = _org(tmp_path)
    (org / ".mlsubmit-round").write_text(content)
    with pytest.raises(UsageError, match=message):
        group_by_round([str(org)], KNOWN)


def test_a_broken_config_is_a_usage_error(tmp_path: Path) -> None:
    org = _org(tmp_path)
    (org / "mlsubmit.toml").write_text("[check\n")
    with pytest.raises(UsageError, match=r"mlsubmit\.toml: cannot read it"):
        group_by_round([str(org)], KNOWN)
    (org / "mlsubmit.toml").write_text("[check]\nruleset = 11\n")
    with pytest.raises(UsageError, match="11 does not name a round"):
        group_by_round([str(org / "results")], KNOWN)


def test_without_any_statement_the_error_says_how_to_make_one(tmp_path: Path) -> None:
    org = _org(tmp_path)
    wanted = r"--ruleset X\.Y\.Z, or write the round \(e\.g\. 1\.1\) into \.mlsubmit-round"
    with pytest.raises(UsageError, match=wanted):
        group_by_round([str(org)], KNOWN)


def test_statements_are_read_bounded_and_never_from_a_fifo(tmp_path: Path) -> None:
    org = _org(tmp_path)
    (org / "mlsubmit.toml").write_text("# " + "x" * (1 << 20) + "\n[check]\nruleset = '1.1'\n")
    with pytest.raises(UsageError, match="larger than 1048576 bytes"):
        group_by_round([str(org)], KNOWN)
    (org / "mlsubmit.toml").unlink()
    os.mkfifo(org / ".mlsubmit-round")  # not a file: not read (reading could block), so no statement here
    (tmp_path / ".mlsubmit-round").write_text("1.0 # the folder above\n")
    assert group_by_round([str(org)], KNOWN) == {"1.0.0": [str(org)]}
