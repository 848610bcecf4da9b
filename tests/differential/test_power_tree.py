"""`mlsubmit check` on organisation trees with power logs (written with mllog), against mlperf-logging's package
checker on the same trees: power failures join the log failures in the olympic count, a listing the power checker
cannot judge is a crash, and the full profile adds the power rules."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, tree_digest
from fixtures.powerfix import power_for
from fixtures.treefix import build_org, resnet_runs

Cli = Callable[..., tuple[int, str, str]]
GOOD = [36, 37, 37, 38, 39]


def _bench(org: Path) -> Path:
    return org / "results" / "pod16" / "resnet"


def _variants(root: Path) -> dict[str, Path]:
    base = build_org(root / "base" / "Graphcore", {("pod16", "resnet"): resnet_runs(GOOD)})
    for log in sorted(_bench(base).glob("result_*.txt")):
        power_for(log)
    out = {}
    for name in ("clean", "one_run_unmeasured", "two_runs_unmeasured", "uneven_nodes", "unparseable_name"):
        org = root / name / "Graphcore"
        shutil.copytree(base, org)
        out[name] = org
    power = {name: _bench(org) / "power" for name, org in out.items()}
    shutil.rmtree(power["one_run_unmeasured"] / "result_3")
    shutil.rmtree(power["two_runs_unmeasured"] / "result_1")
    shutil.rmtree(power["two_runs_unmeasured"] / "result_3")
    shutil.copy(power["uneven_nodes"] / "result_2" / "node_0.txt", power["uneven_nodes"] / "result_2" / "node_1.txt")
    odd = power["unparseable_name"] / "result_0"
    shutil.copy(odd / "node_0.txt", odd / "node_x.txt")
    return out


# name -> (reference verdict: True pass / False fail / None crash, our POW and TREE codes under --profile reference)
EXPECTED = {
    "clean": (True, set()),
    "one_run_unmeasured": (True, {"POW001", "TREE008"}),
    "two_runs_unmeasured": (False, {"POW001", "TREE007"}),
    "uneven_nodes": (True, {"POW003", "TREE008"}),
    "unparseable_name": (None, {"TREE024"}),
}


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _variants(tmp_path_factory.mktemp("power-trees"))


def test_reference_profile_gives_the_package_checkers_verdict(variants: dict[str, Path], run_cli: Cli) -> None:
    jobs = "".join(f"1.0.0\t{org}\n" for org in variants.values())
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"],
                          input=jobs, capture_output=True, text=True, check=True, timeout=600)  # fmt: skip
    reference = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for (name, org), ref in zip(variants.items(), reference, strict=True):
        want_verdict, want_codes = EXPECTED[name]
        assert (None if ref["crash"] else ref["ok"]) == want_verdict, (name, ref)
        code, out, err = run_cli("check", "--ruleset", "1.0.0", "--profile", "reference", "--format", "json", org)
        findings = [f for e in json.loads(out)["files"] for f in e["findings"]] + json.loads(out)["findings"]
        got = {str(f["code"]) for f in findings if str(f["code"]).startswith(("POW", "TREE007", "TREE008", "TREE024"))}
        assert got == want_codes, name
        assert code == (0 if want_verdict else 1), (name, err)


def test_full_profile_checks_the_rules_and_writes_nothing(variants: dict[str, Path], run_cli: Cli) -> None:
    org = variants["clean"]
    before = tree_digest(org)
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", org)
    findings = [f for e in json.loads(out)["files"] for f in e["findings"]] + json.loads(out)["findings"]
    assert not [f for f in findings if str(f["code"]).startswith(("POW", "TREE024", "TREE029"))]
    assert code == 0 and tree_digest(org) == before
    late = _bench(variants["uneven_nodes"]) / "power" / "result_4" / "node_0.txt"
    late.write_text(late.read_text("utf-8").replace('"power_measurement_start"', '"power_measurement_begin"'))
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", variants["uneven_nodes"])
    findings = [f for e in json.loads(out)["files"] for f in e["findings"]] + json.loads(out)["findings"]
    assert {"POW003", "POW011"} <= {str(f["code"]) for f in findings} and code == 1


def test_hostile_power_logs_are_findings_not_tracebacks(tmp_path: Path, run_cli: Cli) -> None:
    import os

    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs(GOOD)})
    logs = sorted(_bench(org).glob("result_*.txt"))
    for log in logs:
        power_for(log)
    runs = [_bench(org) / "power" / log.stem for log in logs]
    (runs[0] / "node_0.txt").write_bytes(b"\x00\xff\xfe" * 1000 + b"\n:::MLLOG {\"key\": \n")
    text = (runs[1] / "node_0.txt").read_text("utf-8")
    (runs[1] / "node_0.txt").write_text(text.replace('"value": 5000.0', '"value": NaN', 3), encoding="utf-8")
    (runs[2] / "node_0.txt").unlink()
    os.mkfifo(runs[2] / "node_0.txt")
    (runs[3] / "node_0.txt").unlink()
    (runs[3] / "node_0.txt").symlink_to(runs[3] / "node_0.txt")  # a loop
    (runs[4] / "node_0.txt").write_text(':::MLLOG {"key": "power_reading", "value": ' + "[" * 5000 + "\n")
    before = tree_digest(org)
    for profile in ("full", "reference"):
        code, out, err = run_cli("check", "--ruleset", "1.0.0", "--profile", profile, "--format", "json", org)
        assert code in (0, 1) and "Traceback" not in err, err
    code, out, err = run_cli("report", "--ruleset", "1.0.0", "--format", "json", org)
    assert code in (0, 1) and "Traceback" not in err, err
    energy = json.loads(out)["results"][0]["energy"]
    assert energy["joules"] is None and energy["note"]
    assert tree_digest(org) == before


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_changed_power_log_rechecks_its_results_folder(tmp_path: Path, run_cli: Cli) -> None:
    repo = tmp_path / "repo"
    org = build_org(repo / "Graphcore", {("pod16", "resnet"): resnet_runs(GOOD)})
    for log in sorted(_bench(org).glob("result_*.txt")):
        power_for(log)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "runs"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    late = _bench(org) / "power" / "result_2" / "node_0.txt"
    late.write_text(late.read_text("utf-8").replace('"power_measurement_start"', '"power_measurement_begin"'))
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--changed-since", "HEAD", org)
    findings = [f for e in json.loads(out)["files"] for f in e["findings"]] + json.loads(out)["findings"]
    # the folder's runs are read again, so its counts, seeds and RCP see all of them (no false TREE020)
    assert {str(f["code"]) for f in findings if f["severity"] == "error"} == {"POW011"} and code == 1
