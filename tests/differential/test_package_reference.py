"""The reference package checker passes the tree `mlsubmit package` builds from the demo's example
(tests/cli/test_package.py: the command itself)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.demo import Example, repository_systems, write_example

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
Cli = Callable[..., tuple[int, str, str]]
OUT = "build/submission"


@pytest.fixture
def example(tmp_path: Path) -> Example:
    return write_example(tmp_path / "work", repository_systems())


@pytest.mark.slow
def test_reference_package_checker_runs_on_the_tree(example: Example, run_cli: Cli, tmp_path: Path) -> None:
    assert run_cli("package", example.config)[0] == 0
    copy = tmp_path / "copy" / "Graphcore"  # the reference writes scaling.json into the tree it checks
    shutil.copytree(example.root / OUT / "Graphcore", copy)
    done = subprocess.run([sys.executable, "-m", "mlperf_logging.package_checker", str(copy), "training", "1.1.0"],
                          capture_output=True, text=True, cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in output, output[-3000:]
    assert "PACKAGE CHECKER FOUND ERRORS" not in output, output[-3000:]
