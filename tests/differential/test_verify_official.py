"""Issue 38: `verify --official` runs the results chair's flow (pack_submission.sh --unpack, then the round's verify
script through the installed mlperf-logging) on what `package` wrote for `make demo`'s 6.1 job, names every step
with its verdict and last lines, compares the chair's summary with ours, and writes nothing of the user's."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, tree_digest
from fixtures.flowfix import ORG, fast_tree, write_job
from mlsubmit.checker import mlperf_logging_version

from mlsubmit.core.support.schema_loader import load_schema, validator

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to export the implementation"),
]
Cli = Callable[..., tuple[int, str, str]]
STEPS = ["sha1 check", "decryption", "unpack", f"handover [{ORG}]", f"package checker [{ORG}]",
         f"result summarizer [{ORG}]", f"repo checker [{ORG}]", f"report --against [{ORG}]"]  # fmt: skip


def packaged(tmp_path: Path, run_cli: Cli, *extra: str) -> tuple[Path, Path]:
    """`make demo`'s 6.1 job (fixtures.modern.write_job) packaged into an encrypted archive."""
    job = write_job(tmp_path / "job", ROOT / "systems")
    code, out, err = run_cli("package", job.config, "--archive", "--encrypt", "--passphrase-file", job.passphrase,
                             "--generate-passphrase", "--color", "never", *extra)
    assert code == 0, out + err
    return job.root / "build" / "submission" / f"mlperf_submission_{ORG}.tar.gz", job.passphrase


def verdicts(err: str) -> dict[str, str]:
    """'  4. package checker [Graphcore]: PASS  (python -m ...)' -> {'package checker [Graphcore]': 'PASS'}."""
    out = {}
    for line in err.splitlines():
        head, sep, rest = line.strip().partition(". ")
        if sep and head.isdigit() and ": " in rest:
            name, _, verdict = rest.partition(": ")
            out[name] = verdict.split()[0]
    return out


def test_the_demo_archive_passes_every_step_of_the_chairs_flow(tmp_path: Path, run_cli: Cli,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    archive, passphrase = packaged(tmp_path, run_cli)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # the reference tools write their logs into the current folder: not here
    before = tree_digest(tmp_path / "job")
    code, out, err = run_cli("verify", archive, "--official", "--passphrase-file", passphrase, "--color", "never")
    assert code == 0, out + err
    assert verdicts(err) == dict.fromkeys(STEPS, "PASS"), err
    assert f"mlperf-logging {mlperf_logging_version()}" in err and "verify_for_v6.1_training.sh" in err
    assert "| INFO - PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !" in err
    assert "| INFO - ALL CHECKS PASSED." in err
    assert "| every result agrees with the chair's summary" in err
    assert "8 official step(s) compared, 0 failed" in out
    assert "| confined with bubblewrap" in err or "| confined with unshare" in err or "| NOT confined" in err
    assert tree_digest(tmp_path / "job") == before and list(cwd.iterdir()) == []


def test_the_json_report_names_the_steps_and_the_release(tmp_path: Path, run_cli: Cli) -> None:
    archive, passphrase = packaged(tmp_path, run_cli)
    code, out, err = run_cli("verify", archive, "--official", "--passphrase-file", passphrase, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    tool = data["tool"]
    assert tool["command"] == "verify --official" and tool["mlperf_logging"] == mlperf_logging_version()
    assert tool["script"] == "verify_for_v6.1_training.sh"
    assert tool["steps"].split("; ") == [f"{name}: pass" for name in STEPS]
    steps = data["summary"]["compared"]["steps"]  # each step with its last lines, as the text report prints them
    named = [s["step"] + (f" [{s['org']}]" if s["org"] else "") for s in steps]
    assert named == STEPS and all(s["passed"] for s in steps)
    last = {s["step"]: s["last_lines"] for s in steps}
    assert "INFO - PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !" in last["package checker"][-1]
    assert last["report --against"] == ["every result agrees with the chair's summary"]
    validator(load_schema("report.schema.json")).validate(data)


def test_a_sha1_that_does_not_match_stops_as_the_chairs_script_does(tmp_path: Path, run_cli: Cli) -> None:
    archive, passphrase = packaged(tmp_path, run_cli)
    sha1 = archive.with_name(f"mlperf_submission_{ORG}.sha1")
    sha1.write_text("0" * 40 + f"  {archive.name}\n", encoding="utf-8")
    code, out, err = run_cli("verify", archive, "--official", "--passphrase-file", passphrase, "--color", "never")
    assert code == 1
    assert verdicts(err) == {"sha1 check": "FAIL"}
    assert f"PKG060 ERROR: sha1sum of {archive.name} does not match contents of {sha1.name}" in out


def test_an_archive_the_chairs_openssl_cannot_open_fails_at_decryption(tmp_path: Path, run_cli: Cli) -> None:
    archive, passphrase = packaged(tmp_path, run_cli, "--key-derivation", "pbkdf2")
    code, out, err = run_cli("verify", archive, "--official", "--passphrase-file", passphrase, "--color", "never")
    assert code == 1
    assert verdicts(err) == {"sha1 check": "PASS", "decryption": "FAIL"}
    assert "PKG061 bad decrypt" in out and "pbkdf2 key derivation" in out


@pytest.mark.parametrize(("params", "passes"), [("rcp-bypass\n", True), (None, False)])
def test_a_tree_is_checked_on_a_copy_and_a_failing_step_quotes_itself(
    tmp_path: Path, run_cli: Cli, params: str | None, passes: bool
) -> None:
    org = fast_tree(tmp_path, params, ROOT / "systems")  # runs faster than the RCP allows
    before = tree_digest(org)
    code, out, err = run_cli("verify", org, "--official", "--ruleset", "6.1.0", "--color", "never")
    assert tree_digest(org) == before  # the package checker writes scaling.json: into the copy only
    got = verdicts(err)
    if passes:
        assert code == 0 and list(got.values()) == ["PASS"] * 5, out + err
        assert f"python -m mlperf_logging.package_checker {ORG} training 6.1.0 --rcp-bypass" in err
        return
    assert code == 1 and got == {f"handover [{ORG}]": "PASS", f"package checker [{ORG}]": "FAIL"}, out + err
    assert "PKG062 package checker failed" in out and "ERROR - RCP Test Failed" in out


def test_a_round_11_tree_runs_that_rounds_script(tmp_path: Path, run_cli: Cli) -> None:
    """verify_for_v1.1_training.sh reads no package_checker_params and has no repo checker."""
    from fixtures.synth import RunSpec
    from fixtures.treefix import build_org
    from mlsubmit.submission.official import round_steps, script_name

    assert round_steps("1.1.0") == round_steps("1.0.0") == ("package_checker", "result_summarizer")
    assert round_steps("2.0.0") == ("package_checker", "result_summarizer", "repo_checker")
    assert script_name("1.0.0") == "verify_for_v1.1_training.sh"  # 1.0 had none: its successor's steps
    specs = [RunSpec(benchmark="resnet", ruleset="1.1.0", seed=i + 1, start_ms=1_630_000_000_000 + i * 10_000_000)
             for i in range(5)]  # fmt: skip
    org = build_org(tmp_path / ORG, {("ipu-pod16-TF-closed", "resnet"): specs})
    (org / "package_checker_params").write_text("rcp-bypass\n", encoding="utf-8")
    code, out, err = run_cli("verify", org, "--official", "--ruleset", "1.1.0", "--color", "never")
    assert "verify_for_v1.1_training.sh" in err
    assert f"(python -m mlperf_logging.package_checker {ORG} training 1.1.0)" in err  # no --rcp-bypass
    assert code == 1 and "ERROR - RCP Test Failed" in out  # which the 1.1 flow never switched off


@pytest.mark.corpus
def test_a_published_tree_the_installed_release_passes(run_cli: Cli, corpus: Path) -> None:
    """training_results_v5.0/IBM+CoreWeave+NVIDIA: the v5.0 script's three steps pass, and the chair's summary is
    ours (its scaling factor 1.1538 included)."""
    tree = corpus / "training_results_v5.0" / "IBM+CoreWeave+NVIDIA"
    if not tree.is_dir():
        pytest.skip(f"{tree} is not in the corpus")
    code, out, err = run_cli("verify", tree, "--official", "--color", "never")
    assert code == 0, out + err
    org = tree.name
    assert verdicts(err) == {f"{s} [{org}]": "PASS" for s in ("handover", "package checker", "result summarizer",
                                                             "repo checker", "report --against")}  # fmt: skip
    assert "verify_for_v5.0_training.sh" in err and "| INFO - PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_a_tree_does_not_stall_the_copy(tmp_path: Path, run_cli: Cli) -> None:
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    os.mkfifo(org / "results" / "pipe")  # reading it would block forever; no archive can hold it
    code, out, err = run_cli("verify", org, "--official", "--ruleset", "6.1.0", "--color", "never")
    assert code == 0, out + err
    assert (org / "results" / "pipe").exists()


def test_the_old_spelling_is_refused_in_the_installed_releases_words(tmp_path: Path, run_cli: Cli) -> None:
    """Trees of 2.0-4.0 spell `rcp_bypass`; the verify script passes it on, and the installed package checker
    (which knows only `--rcp-bypass` since mlcommons/logging 24bed7e) stops there."""
    org = fast_tree(tmp_path, "rcp_bypass\n", ROOT / "systems")
    code, out, err = run_cli("verify", org, "--official", "--ruleset", "6.1.0", "--color", "never")
    assert code == 1 and f"package checker [{ORG}]: FAIL" in err
    assert "PKG062" in out and "error: unrecognized arguments: --rcp_bypass" in out
