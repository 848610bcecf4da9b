"""Shared fixtures: the CLI in-process, synthetic runs written with mllog, and the real corpus when present."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth import RunSpec, write_run
from hypothesis import settings

from mlsubmit.cli import main

ROOT = Path(__file__).resolve().parents[1]

# Property tests explore new inputs on every local run; in CI (CI=true) they replay a fixed sequence, so a
# submission's verdict never depends on the draw. A failure found locally is kept as a regression test.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def _data_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Validated copies of the shipped data go to a folder of this session, not the user's ~/.cache (the
    subprocess tests inherit it through the environment)."""
    os.environ["MLSUBMIT_DATA_CACHE"] = str(tmp_path_factory.mktemp("data-cache"))


def corpus_path() -> Path | None:
    # absolute, so that a test that changes its working folder still finds it (make test passes a relative path)
    path = Path(os.environ.get("MLSUBMIT_CORPUS", ROOT.parent / "shared" / "corpus")).absolute()
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def corpus() -> Path:
    path = corpus_path()
    if path is None:
        pytest.skip("real submissions not found: set MLSUBMIT_CORPUS or put them at ../shared/corpus")
    return path


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL server of this test process's own (tests/fixtures/pgserver.py), for the run ledger's
    PostgreSQL backend; skipped, saying why, without PostgreSQL's binaries or psycopg."""
    from fixtures.pgserver import running

    with running() as server:
        yield server


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """This test process's driver of the reference tools (tests/fixtures/summarizer_run.py), started at its first
    job; what it runs is kept once per session, for every worker (`package_check`, `summaries` there)."""
    from fixtures.summarizer_run import Reference

    driver = Reference(tmp_path_factory.mktemp("reference") / "driver.log")
    yield driver
    driver.close()


@pytest.fixture(scope="session")
def reference_summaries(corpus: Path, reference: Any, tmp_path_factory: pytest.TempPathFactory
                        ) -> dict[str, tuple[Path, dict[str, str]]]:
    """The reference summarizer's files for every corpus tree, per tree name: their folder and the package
    checker's and both summarizer passes' exit status."""
    from fixtures.summarizer_run import corpus_trees, summaries

    return {name: summaries(reference, tmp_path_factory, tree, ruleset) for name, tree, ruleset in corpus_trees(corpus)}


@pytest.fixture(scope="session")
def rcp_reference(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """mlperf-logging's RCP checker and reader over every corpus results folder and log, run once per session
    (tests/fixtures/rcp_reference.py): {"folders": {folder: outcome}, "logs": {"log\\truleset": outcome}}."""
    from fixtures.rcp_reference import shared

    return shared(tmp_path_factory, corpus)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Call main(argv) in-process; returns (exit code, stdout, stderr)."""

    def run(*argv: str | os.PathLike[str]) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    """Write a synthetic run with mllog: make_run("name.txt", benchmark="resnet", ...) -> path."""

    def make(name: str = "result_0.txt", spec: RunSpec | None = None, **changes: object) -> Path:
        return write_run(tmp_path / name, spec, **changes)

    return make


def tree_digest(root: Path) -> dict[str, str]:
    """Path -> sha256 (or link target) of everything under root, to prove a command changed nothing."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that reads the corpus carries the `corpus` marker, so `-m "not corpus"` really leaves the corpus out."""
    unmarked = [item.nodeid for item in items
                if "corpus" in getattr(item, "fixturenames", ()) and item.get_closest_marker("corpus") is None]
    if unmarked:
        raise pytest.UsageError("tests that use the corpus fixture need @pytest.mark.corpus: " + ", ".join(unmarked))


# --- no test writes into the repository ---------------------------------------------------------------------------
# What a run may leave beside the sources: the venv, build output, bytecode, setuptools' egg-info of the editable
# install, and hypothesis' example database (kept on purpose outside CI, see above).
_MAY_WRITE = (".venv/", "build/", "dist/", ".hypothesis/")
_MAY_END = ("__pycache__/", ".pyc", ".egg-info/")
_BEFORE = pytest.StashKey[set[str] | None]()


def _repo_entries() -> set[str] | None:
    """`git status` of the repository, ignored files included, less what a run may write; None without git."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return {line for line in done.stdout.splitlines()
            if not line[3:].startswith(_MAY_WRITE) and not line[3:].endswith(_MAY_END)}  # fmt: skip


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = _repo_entries()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test left a file in the repository (issue 23: compliance_checker.log was committed)."""
    before = session.config.stash.get(_BEFORE, None)
    after = _repo_entries()
    if before is None or after is None:
        return
    new = sorted(after - before)
    if new:
        print("\nthe tests wrote into the repository (give them a tmp_path or cwd=tmp_path):\n  " + "\n  ".join(new))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
