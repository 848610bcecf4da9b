"""Exit codes hold when the environment fails: stdout on a full disk is exit 2, exhausted memory still exit 3."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.synth import RunSpec, write_run


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
cli.PARSERS["hog"] = "hogmod"  # the options module and the command module are one here
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


def test_jobs_beyond_the_file_limit_give_the_same_report(tmp_path: Path) -> None:
    """--jobs 64 under a limit of 40 open files: fewer workers, the same answers (it was EMFILE, exit 3)."""
    for i in range(40):
        write_run(tmp_path / "logs" / f"r{i}" / "result_0.txt", RunSpec(seed=i))
    base = [sys.executable, "-m", "mlsubmit", "check", "--ruleset", "1.0.0", str(tmp_path / "logs")]
    limited = "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40)); " \
              "sys.argv = sys.argv[1:]; runpy.run_module('mlsubmit', run_name='__main__')"
    tight = subprocess.run([sys.executable, "-c", limited, *base[2:], "--jobs", "64"], capture_output=True,
                           text=True, timeout=300, check=False)
    plain = subprocess.run([*base, "--jobs", "2"], capture_output=True, text=True, timeout=300, check=False)
    assert tight.returncode == plain.returncode == 0, tight.stderr
    assert tight.stdout == plain.stdout
