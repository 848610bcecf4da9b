"""A log read that makes no progress ends the run with exit 2 and a message naming the file (issue 26: reads are
time-bounded where a filesystem can block). A stuck read is simulated by a stream whose read never returns."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

STUCK = textwrap.dedent("""
    import contextlib, os, sys, time
    from mlsubmit.checker.logs import reader, watchdog

    class Stuck:  # a read on a mount that stopped answering
        def read(self, size=-1):
            time.sleep(600)

    reader.open_log = lambda *a, **k: contextlib.nullcontext(Stuck())
    if sys.argv[1] == "worker":
        with watchdog.watch_reads("parent"):  # the parent has read before it forks, as check does
            pass
        if os.fork() == 0:
            reader.read_log("/mnt/hung/result_0.txt")
            os._exit(0)
        time.sleep(600)  # the parent waits for its worker: the worker's signal ends it
    else:
        reader.read_log("/mnt/hung/result_0.txt")
    print("not reached")
""")


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MLSUBMIT_READ_TIMEOUT": "0.3"}
    return subprocess.run([sys.executable, "-c", STUCK, mode], capture_output=True, text=True, env=env, timeout=120)


def test_a_stuck_read_ends_the_run_with_exit_2_and_names_the_file() -> None:
    proc = _run("main")
    assert proc.returncode == 2 and "not reached" not in proc.stdout
    assert "reading '/mnt/hung/result_0.txt' has made no progress" in proc.stderr
    assert "MLSUBMIT_READ_TIMEOUT" in proc.stderr


def test_a_stuck_read_in_a_worker_ends_the_parent_with_exit_2() -> None:
    proc = _run("worker")
    assert proc.returncode == 2
    assert "reading '/mnt/hung/result_0.txt' has made no progress" in proc.stderr
