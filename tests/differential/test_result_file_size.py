"""Issue 38: the 6.1 file-size rule end to end (TR6.1 "Result files", training_policies PR #588). A run whose
output is 70 MiB is packaged whole and is no error (TREE061 warns that mlperf-logging's repo checker still reports
files over 50 MiB); one of 120 MiB has its framework output cut by `package` to 100 MiB, every MLLOG line kept, and
the tree passes. The big outputs are made in tmp with a few large writes; the tests are slow."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.flowfix import BENCHMARK, MODERN_SYSTEM, ORG, write_job

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to export the implementation"),
]
Cli = Callable[..., tuple[int, str, str]]
MIB = 1 << 20
CHATTER = b"[1,0]<stdout>: step 000000 loss=1.234567 lr=0.0001 tokens/s=123456.7 " + b"." * 950 + b"\n"  # 1 KiB


def padded(run: Path, size: int) -> None:
    """The run's own output with framework chatter after its first half of lines, up to `size` bytes."""
    lines = run.read_bytes().splitlines(keepends=True)
    head, tail = b"".join(lines[: len(lines) // 2]), b"".join(lines[len(lines) // 2 :])
    fill = size - len(head) - len(tail)
    block = CHATTER * (MIB // len(CHATTER))
    with open(run, "wb") as fh:
        fh.write(head)
        for _ in range(fill // len(block)):
            fh.write(block)
        rest = fill % len(block)
        fh.write(CHATTER * (rest // len(CHATTER)) + b"#" * (rest % len(CHATTER) - 1) + b"\n" if rest else b"")
        fh.write(tail)


def package(tmp_path: Path, run_cli: Cli, size: int) -> tuple[int, str, Path, Path]:
    job = write_job(tmp_path / "job", ROOT / "systems")
    raw = job.root / "runs" / "job_03.out"
    padded(raw, size)
    code, out, err = run_cli("package", job.config, "--color", "never")
    result = job.root / "build" / "submission" / ORG / "results" / MODERN_SYSTEM / BENCHMARK / "result_3.txt"
    return code, out + err, raw, result


def records(data: bytes) -> list[bytes]:
    return [line for line in data.splitlines() if b":::MLLOG " in line]


def test_a_70_mib_61_result_file_is_no_error(tmp_path: Path, run_cli: Cli) -> None:
    code, said, raw, result = package(tmp_path, run_cli, 70 * MIB)
    assert raw.stat().st_size == 70 * MIB
    assert code == 0, said[-3000:]
    assert result.read_bytes() == raw.read_bytes()  # whole: no cut under 100 MiB
    assert "TREE042" not in said
    assert "warning TREE061 result file is 70.0 MiB: allowed in round 6.1" in said
    # what TREE061 warns of: the chair's repo checker (mlperf-logging 4.1.68) still reports the file
    code, out, err = run_cli("verify", result.parents[3], "--official", "--ruleset", "6.1.0", "--color", "never")
    assert code == 1 and f"4. repo checker [{ORG}]: FAIL" in err  # handed over: 70 MiB is within the bounds
    assert "ERROR - Files > 50MB" in out and "result_3.txt" in out


def test_a_120_mib_output_is_cut_by_package_to_the_61_limit(tmp_path: Path, run_cli: Cli) -> None:
    code, said, raw, result = package(tmp_path, run_cli, 120 * MIB)
    assert code == 0, said[-3000:]
    size = result.stat().st_size
    assert 99 * MIB < size <= 100 * MIB and "TREE042" not in said
    assert records(result.read_bytes()) == records(raw.read_bytes())  # no MLLOG line is ever cut
    manifest = json.loads((result.parents[4] / "manifest.json").read_text(encoding="utf-8"))
    entry = next(r for r in manifest["results"] if r["path"].endswith("/result_3.txt"))
    assert entry["output"]["truncated"]["bytes"] == raw.stat().st_size - size
