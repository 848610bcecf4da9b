"""The secret scan of many files runs on the check's worker pool (base/pool.py), not a pool of its own (issue 28):
the same hits as one process, in the jobs' order, and a worker that dies fails the scan instead of losing files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mlsubmit.checker.base import pool
from mlsubmit.checker.hygiene import secrets
from mlsubmit.checker.hygiene.scan import SECRET_PLUGINS

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks")

KEY = "AKIA" + "Q" * 16  # shaped as an AWS access key id: AWSKeyDetector reports it


def _jobs(tmp_path: Path, count: int) -> list[secrets.Job]:
    jobs = []
    for i in range(count):
        path = tmp_path / f"m{i:02d}.py"
        body = f"x = {i}\n" * (i % 7) + (f'key = "{KEY}"\n' if i % 5 == 0 else "y = 1\n")
        path.write_text(body, encoding="utf-8")
        jobs.append(secrets.Job(str(path), f"digest{i}"))
    return jobs


def test_the_pool_finds_what_one_process_finds(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path, secrets._POOL_THRESHOLD + 8)
    alone = secrets.scan_files(jobs, SECRET_PLUGINS, workers=1)
    pooled = secrets.scan_files(jobs, SECRET_PLUGINS, workers=2)
    assert pooled == alone
    assert {Path(p).name for p, _, kind in alone if kind == "AWS Access Key"} == {
        f"m{i:02d}.py" for i in range(0, len(jobs), 5)}


def test_a_worker_that_dies_fails_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = _jobs(tmp_path, secrets._POOL_THRESHOLD + 8)
    parent = os.getpid()
    real = secrets.scan_file

    died = tmp_path / "died"

    def dies_in_a_worker(path: str, plugins: tuple[str, ...]) -> list[secrets.Hit]:
        if os.getpid() != parent:
            died.touch()
            os._exit(9)  # as a killed worker: no last message
        for _ in range(3000):  # this process waits for the worker to take a file (else it could take them all)
            if died.exists():
                break
            time.sleep(0.01)
        return real(path, plugins)

    monkeypatch.setattr(secrets, "scan_file", dies_in_a_worker)
    with pytest.raises(pool.WorkerError, match="ended without reporting"):
        secrets.scan_files(jobs, SECRET_PLUGINS, workers=2)
