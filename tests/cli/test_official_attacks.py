"""Issue 49: `verify --official` never lets the reference tools run what an archive plants or write outside.

Each attack of the issue's first kind, reduced: a log whose submission_division climbs to a rule file the tree holds
(mlperf-logging's compliance checker would execute its BEGIN block), a results folder that is a link out of the tree
(the package checker would delete scaling.json there), a package_checker_params line `log_output=/any/file` (the
package checker would append its log there), and a result file past what the tools are handed (400,000 records
took them 716 MB). None reaches the tools: the handover step says why, the finding is the report's, exit 1.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, tree_digest
from fixtures.flowfix import BENCHMARK, MODERN_SYSTEM, ORG, archived, fast_tree
from mlsubmit.submission import handover

Cli = Callable[..., tuple[int, str, str]]
RESULTS = Path("results") / MODERN_SYSTEM / BENCHMARK




def official(run_cli: Cli, target: Path, *extra: str | Path) -> tuple[int, str, str]:
    return run_cli("verify", target, "--official", "--ruleset", "6.1.0", "--color", "never", *extra)


def never_handed(code: int, out: str, err: str, reason: str) -> None:
    assert code == 1, out + err
    assert f"handover [{ORG}]: FAIL" in err and f"not handed to the reference tools: {reason}" in err, err
    assert "package checker [" not in err and "the chair's flow with mlperf-logging" in err


def test_a_log_value_climbing_to_a_planted_rule_file_is_never_handed_over(tmp_path: Path, run_cli: Cli,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker = tmp_path / "PWNED"
    impl = org / "benchmarks" / BENCHMARK / "implementations" / "ipu"
    (impl / "evil_common.yaml").write_text(f"- BEGIN:\n    CODE: \"open('{marker}', 'w').write('ran')\"\n", "utf-8")
    log = org / RESULTS / "result_0.txt"
    climb = "../" * 20 + f"proc/self/cwd/{ORG}/benchmarks/{BENCHMARK}/implementations/ipu/evil"
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace('"submission_division", "value": "closed"', f'"submission_division", "value": '
                                f'"{climb}"'), encoding="utf-8")  # fmt: skip
    archive, passphrase = archived(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = official(run_cli, archive, "--passphrase-file", passphrase)
    never_handed(code, out, err, "RULE010 x 1")
    assert f"{ORG}/{RESULTS.as_posix()}/result_0.txt:8: error RULE010" in out and not marker.exists()
    for profile in ("full", "reference"):  # check says so too, in every profile: no folder tolerance covers it
        code, out, _ = run_cli("check", org, "--ruleset", "6.1.0", "--profile", profile, "--format", "json")
        found = [f for e in json.loads(out)["files"] for f in e["findings"] if f["code"] == "RULE010"]
        assert code == 1 and [(f["severity"], f["line"]) for f in found] == [("error", 8)]


def test_a_results_folder_linked_out_of_the_tree_is_refused(tmp_path: Path, run_cli: Cli) -> None:
    org = fast_tree(tmp_path / "tree", "rcp-bypass\n", ROOT / "systems")
    outside = tmp_path / "elsewhere"
    shutil.move(org / "results" / MODERN_SYSTEM, outside)
    (outside / BENCHMARK / "scaling.json").write_text('{"scaling_factor": 1.0}\n', encoding="utf-8")
    os.symlink(outside, org / "results" / MODERN_SYSTEM)
    before = tree_digest(outside)
    code, out, err = official(run_cli, org)
    never_handed(code, out, err, "TREE044 x 1")
    assert f"results/{MODERN_SYSTEM}: error TREE044 symbolic link to '{outside}' leaves the tree" in out
    assert tree_digest(outside) == before  # scaling.json is still there


@pytest.mark.parametrize("line", ["log_output=VICTIM", "log_output VICTIM", "log=VICTIM", "log_output=../../x"])
def test_params_never_name_a_file_outside_the_private_copy(tmp_path: Path, run_cli: Cli, line: str) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("# mine\n", encoding="utf-8")
    fast_tree(tmp_path, f"rcp-bypass\n{line.replace('VICTIM', str(victim))}\n", ROOT / "systems")
    archive, passphrase = archived(tmp_path)
    code, out, err = official(run_cli, archive, "--passphrase-file", passphrase)
    never_handed(code, out, err, "PKG070 x 1")
    assert "error PKG070 --log" in out and "outside the private copy" in out
    assert victim.read_text(encoding="utf-8") == "# mine\n"


def test_a_result_file_past_the_bound_is_not_handed_over(tmp_path: Path, run_cli: Cli,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The bound is 50,000 records a result file; the fixture's logs hold 58, so the bound is lowered to 57."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    records = (org / RESULTS / "result_0.txt").read_bytes().count(b":::MLLOG")
    monkeypatch.setattr(handover, "MAX_RECORDS_PER_FILE", records - 1)
    code, out, err = official(run_cli, org)
    never_handed(code, out, err, "PKG071 x 10")
    assert f"error PKG071 {records} :::MLLOG lines, past the {records - 1} one result file may hold" in out


def test_an_organisation_named_as_an_option_is_not_handed_over(tmp_path: Path, run_cli: Cli) -> None:
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    os.rename(org, tmp_path / "--log_output=x")
    code, out, err = official(run_cli, tmp_path)
    assert code == 1 and "handover [--log_output=x]: FAIL" in err, out + err
    assert "error PKG072 organisation folder '--log_output=x' starts with '-'" in out
