"""The shipped CI examples, pre-commit hooks and `make check` gate run for real on a synthetic submission repo.

The workflow files are parsed, their mlsubmit commands are extracted and run with bash (as the runners would)
in a temporary git repository whose last commit adds a failing log; the outputs are then read back.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import git
import jsonschema
import pytest
import yaml

from mlsubmit.testing.synth import RunSpec, write_run
from mlsubmit.testing.synth_org import system

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ci"
SARIF_SCHEMA = ROOT.parent / "shared" / "external" / "sarif-schema-2.1.0.json"
ORG = Path("closed") / "Graphcore"
SYSTEM = "ipu-pod16-POPART-closed"
LOGS = ORG / "results" / SYSTEM / "bert"
NEW_LOG = (LOGS / "result_5.txt").as_posix()
MISSED = (LOGS / "result_4.txt").as_posix()  # make_org(missed=True): the base's run that did not converge

SYSTEM_JSON = system()  # the shared IPU-POD16 description of mlsubmit.testing.synth_org


OTHER = ORG / "results" / "ipu-pod16-POPART-other" / "bert"  # untouched by the upload: --changed-since skips it


def make_org(root: Path, logs: int = 5, *, other: bool = False, missed: bool = False) -> None:
    (root / ORG / "systems").mkdir(parents=True, exist_ok=True)
    (root / ORG / "systems" / f"{SYSTEM}.json").write_text(json.dumps(SYSTEM_JSON, indent=2) + "\n")
    for i in range(logs):  # missed: the last did not converge (olympic scoring accepts one such run, TREE008)
        write_run(root / LOGS / f"result_{i}.txt", RunSpec(seed=100 + i, start_ms=1_620_000_000_000 + i * 3_600_000,
                                                            converge=not (missed and i == logs - 1)))
    if other:
        (root / ORG / "systems" / "ipu-pod16-POPART-other.json").write_text(json.dumps(SYSTEM_JSON, indent=2) + "\n")
        for i in range(2):
            write_run(root / OTHER / f"result_{i}.txt", RunSpec(seed=200 + i, converge=False))


@pytest.fixture
def upload_repo(tmp_path: Path) -> tuple[Path, str]:
    """A submission repo: a base commit with five runs, one of which did not converge, then an upload adding a second
    run that did not converge: its folder now fails (TREE007), judged at the folder, not at the run's log."""
    repo_dir = tmp_path / "repo"
    repo = git.Repo.init(repo_dir)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "ci test")
        cw.set_value("user", "email", "ci@example.invalid")
    make_org(repo_dir, other=True, missed=True)
    repo.git.add("--all")
    repo.index.commit("base")
    base = repo.head.commit.hexsha
    write_run(repo_dir / NEW_LOG, RunSpec(seed=7, converge=False))
    repo.git.add("--all")
    repo.index.commit("upload a run")
    return repo_dir, base


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    full.pop("GITHUB_ACTIONS", None)
    full.update({k: v for k, v in env.items() if k == "GITHUB_ACTIONS"})
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd, env=full, capture_output=True, text=True, timeout=300, check=False,
    )


def _sarif_validator() -> jsonschema.protocols.Validator | None:
    if not SARIF_SCHEMA.is_file():
        return None
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def _check_reports(repo: Path) -> None:
    sarif = json.loads((repo / "mlsubmit.sarif").read_text(encoding="utf-8"))
    validator = _sarif_validator()
    if validator is not None:
        assert list(validator.iter_errors(sarif)) == []
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
        for loc in r.get("locations", [])
    }
    assert NEW_LOG in uris
    cases = {c.get("name"): c for c in ET.parse(repo / "mlsubmit-junit.xml").getroot().iter("testcase")}
    # the run's own errors are warnings (in system-out): its folder fails, with too many non-compliant runs
    assert cases[NEW_LOG].find("failure") is None and cases[NEW_LOG].find("system-out") is not None
    assert cases[LOGS.as_posix()].find("failure") is not None
    # --changed-since: the folder that was not touched (and fails) is left out of the upload's reports
    assert not [n for n in cases if n and n.startswith(OTHER.as_posix())], sorted(cases)
    assert not [u for u in uris if u.startswith(OTHER.as_posix())]


def _untracked(repo: Path) -> set[str]:
    out = git.Repo(repo).git.status("--porcelain", "--untracked-files=normal")
    return {line[3:].rstrip("/") for line in out.splitlines()}


def test_github_workflow_commands_run_on_an_upload(upload_repo: tuple[Path, str]) -> None:
    repo, base = upload_repo
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    env = {k: str(v) for k, v in workflow["env"].items() if "${{" not in str(v)}
    env["BASE"] = base  # what `origin/${{ github.base_ref }}` names on the runner
    steps = [s for s in workflow["jobs"]["check"]["steps"] if "mlsubmit check" in s.get("run", "")]
    assert [s["name"] for s in steps] == ["SARIF report", "JUnit report", "Check (annotations)"]
    uploads = [s for s in workflow["jobs"]["check"]["steps"] if "uses" in s and "upload" in s["uses"]]
    assert {s["with"].get("sarif_file") or s["with"].get("path") for s in uploads} == {
        "mlsubmit.sarif", "mlsubmit-junit.xml",
    }
    for step in steps[:2]:
        done = _bash(step["run"], repo, env)
        assert done.returncode == 0, (step["name"], done.stderr)
    _check_reports(repo)
    gate = _bash(steps[2]["run"], repo, {**env, "GITHUB_ACTIONS": "true"})
    assert gate.returncode == 1, gate.stderr  # the failing upload fails the job
    assert f"::error file={LOGS.as_posix()}" in gate.stdout and "TREE007" in gate.stdout
    assert "::warning " in gate.stdout and NEW_LOG in gate.stdout  # its own findings: warnings (grouped)
    assert "Traceback" not in gate.stderr
    # nothing written into the checked tree: only the reports and the cache are new
    assert _untracked(repo) <= {"mlsubmit.sarif", "mlsubmit-junit.xml", ".mlsubmit-cache"}


def test_gitlab_job_commands_run_on_an_upload(upload_repo: tuple[Path, str]) -> None:
    repo, base = upload_repo
    job = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))["mlsubmit"]
    env = {k: str(v) for k, v in job["variables"].items()}
    env["BASE"] = base  # before_script exports it from CI_MERGE_REQUEST_DIFF_BASE_SHA
    assert any("BASE=" in line for line in job["before_script"])
    script = [line for line in job["script"] if line.startswith("mlsubmit check")]
    assert len(script) == 3
    for line in script[:2]:
        done = _bash(line, repo, env)
        assert done.returncode == 0, (line, done.stderr)
    _check_reports(repo)
    gate = _bash(script[2], repo, env)
    assert gate.returncode == 1
    assert f"{NEW_LOG}: PASS" in gate.stdout and "TREE007" in gate.stdout  # judged at its folder
    assert job["artifacts"]["reports"]["junit"] == "mlsubmit-junit.xml"
    assert _untracked(repo) <= {"mlsubmit.sarif", "mlsubmit-junit.xml", ".mlsubmit-cache"}


# --- pre-commit hooks ----------------------------------------------------------------------------------------------


def _hooks() -> dict[str, dict[str, Any]]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {h["id"]: h for h in hooks}


def _hook_argv(hook: dict[str, Any], files: list[str]) -> list[str]:
    """What pre-commit runs: entry, then the user's args, then the staged files the `files` regex selects."""
    entry = hook["entry"].split()
    assert entry[0] == "mlsubmit"
    picked = [f for f in files if re.search(hook["files"], f)]
    return [*entry[1:], "--ruleset", "1.0.0", *picked]


def test_pre_commit_log_hook_selects_logs_and_fails_a_bad_one(
    upload_repo: tuple[Path, str], run_cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _ = upload_repo
    hook = _hooks()["mlsubmit-logs"]
    assert hook["language"] == "python"
    monkeypatch.chdir(repo)
    files = git.Repo(repo).git.ls_files().splitlines()
    argv = _hook_argv(hook, files)
    assert sorted(a for a in argv if a.endswith(".txt")) == sorted(f for f in files if f.endswith(".txt"))
    assert not any(a.endswith(".json") for a in argv)
    code, out, err = run_cli(*argv)
    assert code == 1, err
    assert f"{NEW_LOG}: FAIL" in out
    good = [a for a in argv if a not in (NEW_LOG, MISSED) and not a.startswith(OTHER.as_posix())]
    code, out, err = run_cli(*good)
    assert code == 0, out + err


def test_pre_commit_system_hook_selects_system_files(upload_repo: tuple[Path, str]) -> None:
    repo, _ = upload_repo
    hook = _hooks()["mlsubmit-systems"]
    files = git.Repo(repo).git.ls_files().splitlines()
    argv = _hook_argv(hook, files)
    assert sorted(a for a in argv if a.endswith(".json")) == [
        (ORG / "systems" / name).as_posix() for name in ("ipu-pod16-POPART-closed.json", "ipu-pod16-POPART-other.json")
    ]
    assert not any(a.endswith(".txt") for a in argv)


def test_pre_commit_system_hook_checks_a_system_file_as_one(
    upload_repo: tuple[Path, str], run_cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _ = upload_repo
    monkeypatch.chdir(repo)
    path = ORG / "systems" / f"{SYSTEM}.json"
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", path)
    assert code in (0, 1), err
    codes = {f["code"] for entry in json.loads(out)["files"] for f in entry["findings"]}
    assert not {c for c in codes if c.startswith("LOG")}, "a system description was read as a run log"
    (repo / path).write_text('{"submitter": "Graphcore", "division": ')  # cut off mid-way
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", path)
    assert code == 1, err
    report = json.loads(out)
    found = [f for entry in report["files"] for f in entry["findings"]] + report["findings"]
    assert any(f["code"].startswith("SYS") for f in found)


# --- make check ----------------------------------------------------------------------------------------------------


def _gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mlsubmit_gate", ROOT / "tools" / "gate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_repository_gate_config_is_valid() -> None:
    gate = _gate()
    table = gate.load(ROOT / "mlsubmit.toml")
    assert table["ruleset"] in ("1.0.0", "1.1.0")
    assert "systems" in table["paths"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("ruleset = '1.0.0'\n", "no [check] table"),
        ("[check]\nruleset = '1.0.0'\nfolders = ['x']\n", "unknown key check.folders"),
        ("[check]\nruleset = 1\n", "check.ruleset must be a str"),
        ("[check]\nruleset = '1.0.0'\npaths = ['../outside']\n", "leaves the repository"),
        ("[check]\nruleset = '1.0.0'\npaths = ['/etc']\n", "is absolute"),
        ("[check\n", "cannot read the gate configuration"),
    ],
)
def test_gate_refuses_bad_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, message: str
) -> None:
    (tmp_path / "outside").mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "mlsubmit.toml").write_text(config)
    assert _gate().main(["--config", str(repo / "mlsubmit.toml")]) == 2
    assert message in capsys.readouterr().err


def test_gate_checks_systems_and_every_staged_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_org(repo / "staging" / "good", logs=1)
    make_org(repo / "staging" / "bad", logs=1)
    write_run(repo / "staging" / "bad" / LOGS / "result_1.txt", RunSpec(converge=False))
    (repo / "systems").mkdir()
    (repo / "mlsubmit.toml").write_text("[check]\nruleset = '1.0.0'\npaths = ['systems', 'staging/*', 'nope/*']\n")
    config = str(repo / "mlsubmit.toml")
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gate.py"), "--config", config, "--format", "json"],
        capture_output=True, text=True, check=False, timeout=300,
    )
    assert out.returncode == 1, out.stderr
    assert "'nope/*' matches nothing; skipped" in out.stderr
    report = json.loads(out.stdout)
    verdicts = {f["path"]: f["verdict"] for f in report["files"]}
    bad = f"staging/bad/{LOGS.as_posix()}/result_1.txt"
    assert verdicts[bad] == "fail"
    assert f"staging/good/{LOGS.as_posix()}/result_0.txt" in verdicts
