"""The wheel holds every module and data file of the four folders that install as `mlsubmit`, and nothing else:
product code only. The test fixtures live in tests/fixtures/ (issue 36), which no wheel holds.

Issue 23: a hand-written package list left out checker/rcp/, and only the editable install (which every test used)
could still import it. The build runs on a copy of the tracked files, so it writes nothing into the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# folder in the repository -> where its files land in the wheel (pyproject.toml's package-dir table)
INSTALLED_AS = {"mlsubmit": "mlsubmit", "checker": "mlsubmit/checker", "submission": "mlsubmit/submission",
                "schemas": "mlsubmit/schemas"}  # fmt: skip

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def expected_in_wheel(tracked: list[str]) -> set[str]:
    """Each tracked file of the four folders, under the name it installs as."""
    out = set()
    for name in tracked:
        folder, _, rest = name.partition("/")
        if folder in INSTALLED_AS and rest:
            out.add(f"{INSTALLED_AS[folder]}/{rest}")
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """sdist and wheel of the working tree's tracked files, built as a user would (`python -m build`)."""
    src = tmp_path_factory.mktemp("src")
    for name in tracked_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    # PYTHONDONTWRITEBYTECODE makes setuptools print "byte-compiling is disabled": a notice about this shell, not
    # about the project, so it is left out to hold the build free of warnings.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return dist, done.stdout + done.stderr


def test_the_wheel_holds_exactly_the_tracked_files_of_the_package_folders(built: tuple[Path, str]) -> None:
    dist, _ = built
    wheel = next(dist.glob("mlsubmit-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = {n for n in zf.namelist() if not n.startswith("mlsubmit-")}  # dist-info apart
    expected = expected_in_wheel(tracked_files())
    assert "mlsubmit/checker/rcp/__init__.py" in expected  # the folder issue 23 found missing
    assert "mlsubmit/checker/upstream/rcp_adapted.py" in expected
    assert not any(n.startswith(("mlsubmit/testing/", "fixtures/", "tests/")) for n in names), "fixtures shipped"
    assert {n.split("/")[0] for n in names} == {"mlsubmit"}, "the wheel installs one package, mlsubmit"
    assert names - expected == set(), "in the wheel but not in the tree"
    assert expected - names == set(), "in the tree but not in the wheel"


def test_the_sdist_builds_the_same_wheel_sources(built: tuple[Path, str]) -> None:
    dist, _ = built
    sdist = next(dist.glob("mlsubmit-*.tar.gz"))
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    wanted = {name for name in tracked_files() if name.split("/")[0] in INSTALLED_AS}
    assert wanted - names == set(), "the sdist lacks files the wheel is built from"
    assert {"setup.py", "pyproject.toml", "README.md"} <= names


def test_the_build_gives_no_warning(built: tuple[Path, str]) -> None:
    _, output = built
    assert [line for line in output.splitlines() if "warning" in line.lower()] == []
