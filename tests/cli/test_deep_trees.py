"""Trees deeper than Python's recursion limit are walked, not crashed on (issue 26: ~1,000 nested folders)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures.treefix import build_org, resnet_runs

RunCLI = Callable[..., tuple[int, str, str]]
DEPTH = 1100  # over sys.getrecursionlimit()'s 1,000; 2 bytes a level keeps the path under PATH_MAX


def _nest(top: Path, depth: int) -> Path:
    """`depth` folders named `d` inside each other under top, made relative to stay short per call."""
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        Path("train.py").write_text("x = 1\n", encoding="utf-8")
    finally:
        os.chdir(here)
    return top


def unnest(top: Path) -> None:
    """Remove a chain of `d` folders from the bottom up: shutil.rmtree recurses (3.11), and pytest's own clean-up
    of old temporary folders would end in RecursionError on what this test leaves."""
    here = os.getcwd()
    os.chdir(top)
    try:
        depth = 0
        while os.path.isdir("d"):
            os.chdir("d")
            depth += 1
        for _ in range(depth):
            for name in os.listdir("."):
                os.unlink(name) if not os.path.isdir(name) else os.rmdir(name)
            os.chdir("..")
        os.rmdir("d") if os.path.isdir("d") else None
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def deep_org(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    org = build_org(tmp_path_factory.mktemp("deep") / "Org", {("s", "resnet"): resnet_runs([40, 41])})
    impl = org / "benchmarks" / "resnet" / "implementations" / "ipu"
    _nest(impl, DEPTH)
    yield org
    unnest(impl)


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_folder_nested_a_thousand_deep_is_walked(run_cli: RunCLI, deep_org: Path, command: str) -> None:
    code, _, err = run_cli(command, "--ruleset", "1.0.0", deep_org)
    assert code in (0, 1), err
    assert "internal error" not in err


def test_a_path_over_path_max_under_benchmarks_is_a_finding(run_cli: RunCLI, tmp_path: Path) -> None:
    org = build_org(tmp_path / "Org", {("s", "resnet"): resnet_runs([40, 41])})
    here = os.getcwd()
    os.chdir(org / "benchmarks" / "resnet" / "implementations" / "ipu")
    try:
        for _ in range(20):  # 20 x 251 bytes: over Linux's PATH_MAX of 4,096
            os.mkdir("x" * 250)
            os.chdir("x" * 250)
        Path("train.py").write_text("x = 1\n", encoding="utf-8")
    finally:
        os.chdir(here)
    code, out, err = run_cli("check", "--ruleset", "1.0.0", org)
    assert code == 1, err
    assert "TREE048" in out and "internal error" not in err
