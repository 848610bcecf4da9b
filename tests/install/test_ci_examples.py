"""The shipped CI examples, pre-commit hooks and `make check` gate run for real on a synthetic submission repo.

The workflow files are parsed and their run steps run with bash, as the runners would, in a temporary clone of a
submission repository whose last commit adds a failing log: first the examples' own install line, which installs
mlsubmit at the pinned commit from a fresh `git clone` of this repository into a fresh venv (the repository URL is
the one value the test sets, as a user does), then the check; the reports are then read back.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import git
import jsonschema
import pytest
import yaml
from fixtures.project_tools import load_tool
from fixtures.synth import RunSpec, write_run
from fixtures.synth_org import system

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ci"
SARIF_SCHEMA = ROOT.parent / "shared" / "external" / "sarif-schema-2.1.0.json"
ORG = Path("closed") / "Graphcore"
SYSTEM = "ipu-pod16-POPART-closed"
LOGS = ORG / "results" / SYSTEM / "bert"
NEW_LOG = (LOGS / "result_5.txt").as_posix()
MISSED = (LOGS / "result_4.txt").as_posix()  # make_org(missed=True): the base's run that did not converge

SYSTEM_JSON = system()  # the shared IPU-POD16 description of fixtures.synth_org


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
    """A submission repo cloned from its `origin` (branch main: five runs, one of which did not converge), with an
    upload on top adding a second run that did not converge: what a CI job checks out for a pull or merge request.
    Its folder now fails (TREE007), judged at the folder, not at the run's log."""
    origin_dir = tmp_path / "origin"
    origin = git.Repo.init(origin_dir, initial_branch="main")
    _identify(origin)
    make_org(origin_dir, other=True, missed=True)
    origin.git.add("--all")
    origin.index.commit("base")
    base = origin.head.commit.hexsha
    repo_dir = tmp_path / "repo"
    repo = git.Repo.clone_from(origin_dir, repo_dir)
    _identify(repo)
    write_run(repo_dir / NEW_LOG, RunSpec(seed=7, converge=False))
    repo.git.add("--all")
    repo.index.commit("upload a run")
    return repo_dir, base


def _identify(repo: git.Repo) -> None:
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "ci test")
        cw.set_value("user", "email", "ci@example.invalid")


def _bash(script: str, cwd: Path, env: dict[str, str], path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The script as a runner runs it: bash -e, the given variables, `path` (a venv's bin) first on PATH."""
    first = path or Path(sys.executable).parent
    full = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "VIRTUAL_ENV", "PYTHONPATH")}
    full.update(env)
    full["PATH"] = f"{first}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd, env=full, capture_output=True, text=True, timeout=900, check=False,
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


# --- the examples as files: their pinned commit, their install line, their commands ----------------------------------

REPO_TOKEN = "MLSUBMIT_REPO"  # the one value a user sets to where they get mlsubmit (docs/ci.md); the test's clone


def _github() -> dict[str, Any]:
    return cast(dict[str, Any], yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8")))


def _gitlab() -> dict[str, Any]:
    return cast(dict[str, Any], yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))["mlsubmit"])


def _docs_pin() -> str:
    found = re.search(r"repo: \S+ +# .*\n +rev: ([0-9a-f]+)", (ROOT / "docs" / "ci.md").read_text(encoding="utf-8"))
    assert found, "docs/ci.md has no pre-commit example pinned to a commit"
    return found.group(1)


def test_every_example_pins_one_commit_that_this_repository_has() -> None:
    pins = {_github()["env"]["MLSUBMIT_REV"], _gitlab()["variables"]["MLSUBMIT_REV"], _docs_pin()}
    assert len(pins) == 1, pins
    pin = pins.pop()
    assert re.fullmatch(r"[0-9a-f]{40}", pin), pin  # a full commit id: a tag or branch would move
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    repo = git.Repo(ROOT)
    assert repo.commit(pin).hexsha == pin
    assert repo.is_ancestor(pin, "HEAD"), "the pinned commit is not in this branch's history"
    for example in (EXAMPLES / "github-actions.yml", EXAMPLES / "gitlab-ci.yml"):
        assert 'python -m pip install "git+$MLSUBMIT_REPO@$MLSUBMIT_REV"' in example.read_text(encoding="utf-8")
    at_pin = repo.git.show(f"{pin}:.pre-commit-hooks.yaml")  # every hook docs/ci.md names is there at the pin
    named = re.findall(r"- id: (\S+)", (ROOT / "docs" / "ci.md").read_text(encoding="utf-8"))
    assert named and {h["id"] for h in yaml.safe_load(at_pin)} >= set(named), named


def _install_lines() -> dict[str, str]:
    github = next(s for s in _github()["jobs"]["check"]["steps"] if s.get("name") == "Install mlsubmit")["run"]
    return {"github": github, "gitlab": "\n".join(_gitlab()["before_script"][:2])}


@pytest.mark.parametrize("example", ["github", "gitlab"])
@pytest.mark.parametrize("given", ["path", "relative path", "file URL", "https URL"])
def test_the_install_line_takes_a_path_or_a_url(tmp_path: Path, example: str, given: str) -> None:
    """The install step as copied, with `python` standing in to show what pip would be given: pip takes a git
    repository only as a URL (`git+/path@rev` is "Invalid requirement"), so a local clone becomes a file:// URL."""
    clone = tmp_path / "mlsubmit clone"  # a space in it, as a home folder may have
    clone.mkdir()
    (tmp_path / "bin").mkdir()
    stub = tmp_path / "bin" / "python"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n', encoding="utf-8")
    stub.chmod(0o755)
    value, wanted = {
        "path": (str(clone), f"git+file://{clone}@REV"),
        "relative path": ("mlsubmit clone", f"git+file://{clone}@REV"),
        "file URL": (f"file://{clone}", f"git+file://{clone}@REV"),
        "https URL": ("https://example.invalid/mlsubmit.git", "git+https://example.invalid/mlsubmit.git@REV"),
    }[given]
    done = _bash(_install_lines()[example], tmp_path, {REPO_TOKEN: value, "MLSUBMIT_REV": "REV"}, tmp_path / "bin")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["-m", "pip", "install", wanted]


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    clone = tmp_path_factory.mktemp("mlsubmit") / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=300)
    return clone


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv that has no mlsubmit: the examples' install lines put it there."""
    where = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(where)], check=True,
                   timeout=300)  # fmt: skip
    return where / "bin"


def _installed_from_the_venv(repo: Path, env: dict[str, str], path: Path) -> None:
    done = _bash("command -v mlsubmit; mlsubmit --version", repo, env, path)
    assert done.returncode == 0 and done.stdout.startswith(str(path)), done.stdout + done.stderr


@pytest.mark.slow
def test_github_workflow_runs_as_copied(upload_repo: tuple[Path, str], fresh_clone: Path, venv: Path,
                                        tmp_path: Path) -> None:  # fmt: skip
    repo, _ = upload_repo
    workflow = _github()
    # the runner's part: the expression it fills in, HOME; ours: the repository URL, pointing at the fresh clone
    env = {k: str(v).replace("${{ github.base_ref }}", "main") for k, v in workflow["env"].items()}
    env[REPO_TOKEN] = str(fresh_clone)  # a local path (the GitLab job below is given a file:// URL)
    env["HOME"] = str(tmp_path / "home")
    steps = [s for s in workflow["jobs"]["check"]["steps"] if "run" in s]
    assert [s["name"] for s in steps] == ["Install mlsubmit", "Check"]
    install = _bash(steps[0]["run"], repo, env, venv)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    _installed_from_the_venv(repo, env, venv)
    check = _bash(steps[1]["run"], repo, {**env, "GITHUB_ACTIONS": "true"}, venv)
    assert check.returncode == 1, check.stderr  # the failing upload fails the job, once every report is written
    assert "Traceback" not in check.stderr
    assert f"::error file={LOGS.as_posix()}" in check.stdout and "TREE007" in check.stdout
    assert "::warning " in check.stdout and NEW_LOG in check.stdout  # its own findings: warnings (grouped)
    _check_reports(repo)
    cache = [s for s in workflow["jobs"]["check"]["steps"] if s.get("uses", "").startswith("actions/cache")]
    assert cache[0]["with"]["path"] == "~/.cache/mlsubmit"
    assert any((tmp_path / "home" / ".cache" / "mlsubmit").iterdir())
    uploads = [s for s in workflow["jobs"]["check"]["steps"] if "uses" in s and "upload" in s["uses"]]
    assert {s["with"].get("sarif_file") or s["with"].get("path") for s in uploads} == {
        "mlsubmit.sarif", "mlsubmit-junit.xml",
    }
    # nothing written into the checked tree: only the reports are new (the cache is outside the checkout)
    assert _untracked(repo) == {"mlsubmit.sarif", "mlsubmit-junit.xml"}


@pytest.mark.slow
def test_gitlab_job_runs_as_copied(upload_repo: tuple[Path, str], fresh_clone: Path, venv: Path) -> None:
    repo, base = upload_repo
    job = _gitlab()
    env = {k: str(v) for k, v in job["variables"].items()}
    env[REPO_TOKEN] = f"file://{fresh_clone}"
    # what GitLab sets for a merge request
    env.update({"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_DIFF_BASE_SHA": base})
    script = "\n".join([*job["before_script"], *job["script"]])  # one shell, as the runner runs them
    done = _bash(script, repo, env, venv)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    _installed_from_the_venv(repo, env, venv)
    assert f"{NEW_LOG}: PASS" in done.stdout and "TREE007" in done.stdout  # judged at its folder
    _check_reports(repo)
    assert job["artifacts"]["reports"]["junit"] == "mlsubmit-junit.xml"
    assert job["cache"]["paths"] == [".mlsubmit-cache/"] and (repo / ".mlsubmit-cache" / ".gitignore").is_file()
    assert _untracked(repo) == {"mlsubmit.sarif", "mlsubmit-junit.xml"}  # the cache folder ignores itself


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
    return load_tool("gate", "mlsubmit_gate")


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
