"""Issue 54, hostile input, fourth round: each attack is a finding or exit 2, within 300 MB, in bounded time, with
nothing written outside and inert output. Memory is the peak of the command run in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures.synth import write_run

PEAK_LIMIT_MB = 300
# Runs the command and writes its peak resident size (kB on Linux) to the file named first.
_PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[2:]).returncode; "
         "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)")


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str
    peak_mb: float


def measured(*args: str | Path, cwd: Path, timeout: float = 300) -> Ran:
    """`mlsubmit ARGS` in a child process: exit code, output, and its peak memory."""
    peak = cwd / ".peak"
    done = subprocess.run([sys.executable, "-c", _PEAK, str(peak), sys.executable, "-m", "mlsubmit",
                           *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1"})
    kb = int(peak.read_text())
    peak.unlink()
    return Ran(done.returncode, done.stdout, done.stderr, kb / 1024)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return write_run(tmp_path / "result_0.txt")


def _dotted_keys(size: int) -> str:
    """`kN.a.a...a = 1` with 30 parts a key: within the parts bound, but each line builds 29 tables."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f"k{i}." + ".".join(["a"] * 29) + " = 1\n"
        lines.append(line)
        total, i = total + len(line), i + 1
    return "".join(lines)


def test_case6_a_prices_file_that_builds_too_much_is_refused(tmp_path: Path, log: Path) -> None:
    # 4 MiB, the prices file's own limit: 851-873 MB before the bound counted what tomllib builds
    prices = tmp_path / "prices.toml"
    prices.write_text(_dotted_keys((4 << 20) - 100))
    ran = measured("report", "--ruleset", "4.1.0", "--prices", prices, log, cwd=tmp_path)
    assert ran.code == 2, ran.err
    assert "cannot read prices: more tables, keys and values than allowed" in ran.err
    assert "weigh more than 1,200,000" in ran.err
    assert ran.peak_mb < PEAK_LIMIT_MB


def test_case7_a_waiver_file_that_builds_too_much_is_refused(tmp_path: Path, log: Path) -> None:
    # 6 MiB: 1.26 GB and 35 s before (32 MiB, the waiver file's limit: 5.9 GB)
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(_dotted_keys(6 << 20))
    ran = measured("check", "--ruleset", "4.1.0", "--waivers", waivers, log, cwd=tmp_path)
    assert ran.code == 2, ran.err
    assert "waivers.toml: not TOML: more tables, keys and values than allowed" in ran.err
    assert ran.peak_mb < PEAK_LIMIT_MB
