"""Exit codes hold when the environment fails: stdout on a full disk is exit 2, exhausted memory still exit 3."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlsubmit.testing.synth import RunSpec, write_run


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_stdout_on_a_full_disk_is_exit_2(tmp_path: Path, fmt: str) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec())
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "mlsubmit", "check", "--ruleset", "1.0.0", "--format", fmt,
                               str(log)], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "cannot write the output" in done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_the_crash_handler_needs_no_import_after_a_failure() -> None:
    code = "import sys, mlsubmit.cli; print('traceback' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "True"


HOG = """
def add_parser(sub):
    sub.add_parser("hog")

def run(args):
    hog = []
    while True:
        hog.append(bytearray(64))
"""

DRIVE = """
import resource, sys
sys.path.insert(0, {here!r})
from mlsubmit import cli
cli.COMMANDS["hog"] = ("hogmod", "eats memory")
limit = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize() + (100 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.exit(cli.main(["hog"]))
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs Linux /proc")
def test_exhausted_memory_is_still_exit_3(tmp_path: Path) -> None:
    (tmp_path / "hogmod.py").write_text(textwrap.dedent(HOG))
    drive = tmp_path / "drive.py"
    drive.write_text(DRIVE.format(here=str(tmp_path)))
    done = subprocess.run([sys.executable, str(drive)], capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "internal error: MemoryError" in done.stderr
