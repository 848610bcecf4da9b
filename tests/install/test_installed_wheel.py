"""What users install works: the wheel built from a clean clone, in a fresh venv, run from outside the repository.

Issue 23: every test used the editable install, so a wheel without checker/rcp/ went unnoticed (every command ended
in exit 3). Here the wheel is built from a `git clone` of HEAD, installed with pip into a venv of its own, and its
`mlsubmit` runs with the cwd in a temporary folder, so nothing can be imported from the source tree. The inputs are
the demo's (written by the clone's test fixtures, tests/fixtures/, over the installed package: the wheel holds no
fixtures) and, when present, the corpus. The pre-commit hook is installed by pre-commit itself from the clone, as a
user's `.pre-commit-config.yaml` would. The clone and the venv are built once per session (tests/fixtures/
installed.py) and shared with test_installed_capture.py: the venv holds the capture extra too, which no test here
depends on being absent (tests/unit/project/test_declared_imports.py shows what the extra could hide).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.installed import add_pre_commit, clean_env, sh
from fixtures.installed import installed as shared_install

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]  # fmt: skip


@dataclass(frozen=True)
class Installed:
    venv: Path
    clone: Path
    work: Path  # the cwd of every command: outside the repository

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *args: str | Path, cwd: Path | None = None, tool: str = "mlsubmit",
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        return subprocess.run([self.bin(tool), *map(str, args)], cwd=cwd or self.work, env=clean_env(env),
                              capture_output=True, text=True, timeout=900)  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    top, _ = shared_install(tmp_path_factory)
    return Installed(top / "venv", top / "clone", tmp_path_factory.mktemp("installed-work"))


@pytest.fixture(scope="module")
def pre_commit(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> str:
    """pre-commit in the wheel's venv, for the hook tests only; they are skipped when it cannot be installed."""
    failed = add_pre_commit(tmp_path_factory, installed.venv)
    if failed:
        pytest.skip(f"pre-commit cannot be installed here: {failed}")
    return installed.bin("pre-commit")


def test_the_installed_package_is_the_wheels(installed: Installed) -> None:
    done = installed.run("-c", "import mlsubmit.checker.upstream.rcp_adapted as m; print(m.__file__)", tool="python")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(installed.venv)), done.stdout  # not the source tree


def test_the_wheel_says_the_version_its_metadata_and_the_changelog_say(installed: Installed) -> None:
    done = installed.run("-c", "import importlib.metadata as m; print(m.version('mlsubmit'))", tool="python")
    recorded = done.stdout.strip()
    newest = re.search(r"^## (\d+\.\d+\.\d+) ", (installed.clone / "CHANGELOG.md").read_text(encoding="utf-8"),
                       re.MULTILINE)
    assert newest is not None and recorded == newest.group(1), (recorded, newest)
    version = installed.run("--version")
    assert version.returncode == 0 and version.stdout.startswith(f"mlsubmit {recorded} (mlperf-logging "), version


WRITE_DEMO = """
import sys
from pathlib import Path
from fixtures.demo import write_example
from fixtures.synth import RunSpec, write_run
root = Path(sys.argv[1])
write_example(root)
write_run(root / "open" / "result_0.txt", RunSpec(benchmark="resnet", ruleset="1.0.0", division="open",
          platform="ipu-pod16-TF1-open", hyperparameters={"global_batch_size": 3264, "lars_opt_momentum": 0.95}))
good = write_run(root / "hook" / "results" / "pod16" / "bert" / "result_0.txt", RunSpec(ruleset="1.1.0"))
broken = good.with_name("result_1.txt")
text = good.read_text()
broken.write_text(text[: text.rindex(":::MLLOG") + 60])
"""


@pytest.fixture(scope="module")
def demo(installed: Installed) -> Path:
    """The demo's inputs, written by the clone's fixtures (tests/fixtures/, mllog underneath) with the installed
    package: the wheel holds no fixtures."""
    root = installed.work / "demo"
    done = installed.run("-c", WRITE_DEMO, root, tool="python", env={"PYTHONPATH": str(installed.clone / "tests")})
    assert done.returncode == 0, done.stderr
    return root


def codes(output: str) -> set[str]:
    data = json.loads(output)
    return {f["code"] for f in data["findings"] + [f for e in data["files"] for f in e["findings"]]}


def test_check_on_the_demos_runs(installed: Installed, demo: Path) -> None:
    clean = installed.run("check", "--ruleset", "1.1.0", "--format", "json", demo / "runs" / "pod16-bert")
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr
    assert json.loads(clean.stdout)["summary"]["files"] == 10
    broken = installed.run("check", "--ruleset", "1.1.0", "--format", "json", demo / "hook" / "results")
    assert broken.returncode == 1 and "LOG004" in codes(broken.stdout), broken.stdout[-2000:]


def test_advise_on_an_open_run(installed: Installed, demo: Path) -> None:
    done = installed.run("advise", "--ruleset", "1.0.0", "--format", "json", demo / "open" / "result_0.txt")
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr
    assert {"HP001"} <= codes(done.stdout)


def test_package_verify_report_and_explain(installed: Installed, demo: Path) -> None:
    built = installed.run("package", "package.toml", "--archive", cwd=demo)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    archive = demo / "build" / "submission" / "mlperf_submission_Graphcore.tar.gz"
    verified = installed.run("verify", archive)
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    official = installed.run("verify", demo / "build" / "submission" / "Graphcore", "--official", "--ruleset", "1.1.0")
    assert official.returncode == 0, official.stdout[-2000:] + official.stderr[-2000:]  # the installed reference ran
    assert "| INFO - PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !" in official.stderr
    page = installed.work / "report.html"
    report = installed.run("report", "--ruleset", "1.1.0", "--html", page, demo / "build" / "submission" / "Graphcore")
    assert report.returncode == 0, report.stdout[-2000:] + report.stderr[-2000:]
    assert page.stat().st_size > 10_000 and "bert" in report.stdout
    explained = installed.run("explain", "LOG004")
    assert explained.returncode == 0 and "LOG004" in explained.stdout
    assert installed.run("explain", "NOPE999").returncode == 2


@pytest.mark.corpus
def test_check_report_and_advise_on_the_corpus(installed: Installed, corpus: Path) -> None:
    """Every corpus tree in one run (a folder of round folders): the wheel's findings are the source tree's."""
    corpus = corpus.resolve()  # the commands run from another folder
    done = installed.run("check", "--format", "json", corpus)
    assert done.returncode == 1, done.stderr[-2000:]  # the published trees have findings (README: verdicts)
    ours = subprocess.run([sys.executable, "-m", "mlsubmit", "check", "--format", "json", str(corpus)],
                          cwd=installed.work, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert codes(done.stdout) == codes(ours.stdout) and done.returncode == ours.returncode
    graphcore = corpus / "training_results_v1.0" / "Graphcore"
    if not graphcore.is_dir():
        return
    page = installed.work / "corpus.html"
    report = installed.run("report", "--html", page, graphcore)
    assert report.returncode in (0, 1) and page.is_file(), report.stderr[-2000:]
    advice = installed.run("advise", "--format", "json", graphcore / "results" / "ipu-pod64-POPART-closed" / "bert")
    assert {"HP006", "HP008"} <= codes(advice.stdout), advice.stdout[-2000:]


def _docs_pre_commit_config(repo: str) -> str:
    """docs/ci.md's .pre-commit-config.yaml as a team copies it, with `repo:` set to where they get mlsubmit."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    block = text[text.index("# .pre-commit-config.yaml in a submission repository"):]
    block = block[: block.index("```")]
    copied, count = re.subn(r"(?m)^(  - repo: )\S+", lambda m: m.group(1) + repo, block)
    assert count == 1, block
    return copied


def _hook_user(installed: Installed, demo: Path, name: str, repo: str) -> Path:
    """A team's repository: a tree (result logs, a system description) and raw job output with a note beside it,
    all staged, with the documented hooks from `repo`."""
    user = installed.work / name
    shutil.copytree(demo / "hook", user)
    (user / "systems").mkdir()
    shutil.copy(ROOT / "systems" / "ipu-pod16-POPART-closed.json", user / "systems")
    (user / "pod16-bert").mkdir()
    shutil.copy(user / "results" / "pod16" / "bert" / "result_0.txt", user / "pod16-bert" / "job-00.out")
    shutil.copy(user / "results" / "pod16" / "bert" / "result_1.txt", user / "pod16-bert" / "job-10.out")  # killed
    (user / "pod16-bert" / "notes.txt").write_text("job 10 was killed by the scheduler\n", encoding="utf-8")
    (user / ".pre-commit-config.yaml").write_text(_docs_pre_commit_config(repo), encoding="utf-8")
    sh("git", "init", "-q", cwd=user)
    sh("git", "add", ".", cwd=user)
    return user


def test_the_documented_pre_commit_config_as_copied(installed: Installed, demo: Path, pre_commit: str) -> None:
    """docs/ci.md's configuration with `repo:` a clone's file:// URL: pre-commit installs the hooks at the pinned
    commit; good files pass, a broken result log and a run killed mid-record stop the commit, a note is passed
    over. (A local path is cloned by pre-commit the same way; installing the hooks twice cost about a minute.)"""
    repo = _hook_user(installed, demo, "hook-user", f"file://{installed.clone}")
    home = {"PRE_COMMIT_HOME": str(installed.work / "pre-commit-home")}  # its hook environments stay in tmp

    def commit_check(*files: str) -> subprocess.CompletedProcess[str]:
        return installed.run("run", "--files", *files, cwd=repo, tool="pre-commit", env=home)

    passed = commit_check("results/pod16/bert/result_0.txt", "systems/ipu-pod16-POPART-closed.json",
                          "pod16-bert/job-00.out", "pod16-bert/notes.txt")  # fmt: skip
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert "mlsubmit check (raw job output)" in passed.stdout and "Passed" in passed.stdout
    broken = commit_check("results/pod16/bert/result_1.txt")
    assert broken.returncode == 1 and "LOG004" in broken.stdout, broken.stdout[-3000:]
    killed = commit_check("pod16-bert/job-10.out", "pod16-bert/notes.txt")  # before: "(no files to check) Skipped"
    assert killed.returncode == 1 and "pod16-bert/job-10.out" in killed.stdout and "LOG004" in killed.stdout
    assert "passed over 1 file(s) without :::MLLOG records: pod16-bert/notes.txt" in killed.stdout
