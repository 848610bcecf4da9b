"""What users install works: the wheel built from a clean clone, in a fresh venv, run from outside the repository.

Issue 23: every test used the editable install, so a wheel without checker/rcp/ went unnoticed (every command ended
in exit 3). Here the wheel is built from a `git clone` of HEAD, installed with pip into a venv of its own, and its
`mlsubmit` runs with the cwd in a temporary folder, so nothing can be imported from the source tree. The inputs are
the demo's (written by the clone's test fixtures, tests/fixtures/, over the installed package: the wheel holds no
fixtures) and, when present, the corpus. The pre-commit hook is installed by pre-commit itself from the clone, as a
user's `.pre-commit-config.yaml` would. One venv serves the whole module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]  # fmt: skip

# Leave out what would let the installed tool see the source tree or this test's venv.
_DROPPED = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "MLSUBMIT_CORPUS")


@dataclass(frozen=True)
class Installed:
    venv: Path
    clone: Path
    work: Path  # the cwd of every command: outside the repository

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *args: str | Path, cwd: Path | None = None, tool: str = "mlsubmit",
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        env = {**{k: v for k, v in os.environ.items() if k not in _DROPPED}, **(env or {})}
        return subprocess.run([self.bin(tool), *map(str, args)], cwd=cwd or self.work, env=env,
                              capture_output=True, text=True, timeout=900)  # fmt: skip


def _sh(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    top = tmp_path_factory.mktemp("installed")
    clone = top / "clone"
    _sh("git", "clone", "-q", "--no-hardlinks", ROOT, clone)
    _sh(sys.executable, "-m", "build", "--wheel", "--outdir", top / "dist", clone)
    wheel = next((top / "dist").glob("mlsubmit-*.whl"))
    venv = top / "venv"
    _sh(getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv)
    _sh(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, "pre-commit")
    (top / "work").mkdir()
    return Installed(venv, clone, top / "work")


def test_the_installed_package_is_the_wheels(installed: Installed) -> None:
    done = installed.run("-c", "import mlsubmit.checker.upstream.rcp as m; print(m.__file__)", tool="python")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(installed.venv)), done.stdout  # not the source tree


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


def test_the_pre_commit_hook_from_the_repository(installed: Installed, demo: Path) -> None:
    """A user's repository with the hook at the clone's HEAD: a good log passes, a broken one stops the commit."""
    repo = installed.work / "hook-user"
    shutil.copytree(demo / "hook", repo)
    rev = _sh("git", "rev-parse", "HEAD", cwd=installed.clone).strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {installed.clone}\n    rev: {rev}\n    hooks:\n"
        '      - id: mlsubmit-logs\n        args: [--ruleset, "1.1.0"]\n', encoding="utf-8")  # fmt: skip
    _sh("git", "init", "-q", cwd=repo)
    _sh("git", "add", ".", cwd=repo)
    good, broken = "results/pod16/bert/result_0.txt", "results/pod16/bert/result_1.txt"
    home = {"PRE_COMMIT_HOME": str(installed.work / "pre-commit-home")}  # its hook environments stay in tmp
    passed = installed.run("run", "--files", good, cwd=repo, tool="pre-commit", env=home)
    failed = installed.run("run", "--files", broken, cwd=repo, tool="pre-commit", env=home)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert failed.returncode == 1 and "LOG004" in failed.stdout, failed.stdout[-3000:]
