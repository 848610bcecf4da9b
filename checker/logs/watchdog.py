"""A read that makes no progress for READ_TIMEOUT seconds ends the run with exit 2 and a message naming the file.

FIFOs, devices, /proc and /sys are refused when a file is opened (support.safe_io.open_regular), so what is left to
block is a regular file on a filesystem that stops answering (a hung NFS or FUSE mount). A read stuck in the kernel
cannot be interrupted from Python, so a thread watches instead: the reader stamps each chunk it gets (`note_read`), and
when the stamp is older than the limit the thread writes the message and ends the process with os._exit(2). In a
pool worker it first signals the parent (SIGUSR2), whose handler exits 2 too. The kernel completes the exit once
the stuck call can be killed: NFS waits can be (TASK_KILLABLE); a driver that waits uninterruptibly holds the
process until its read returns. Only log reads are watch_reads (the bulk of a run's I/O), not every stat or small read.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

READ_TIMEOUT = float(os.environ.get("MLSUBMIT_READ_TIMEOUT", "300") or 300)  # seconds without a byte read


class _Slot:
    path: str | None = None  # the file being read in this process, if any
    since = 0.0  # time.monotonic() of the last progress
    pid = 0  # the process whose thread watches (a forked worker starts its own)
    parent = 0  # the process that first watch_reads: a worker signals it


_SLOT = _Slot()


@contextmanager
def watch_reads(path: str) -> Iterator[None]:
    """Watch the reads of `path` inside the block; call `note_read` whenever one returns."""
    _start()
    _SLOT.path, _SLOT.since = path, time.monotonic()
    try:
        yield
    finally:
        _SLOT.path = None


def note_read() -> None:
    _SLOT.since = time.monotonic()


def _start() -> None:
    pid = os.getpid()
    if _SLOT.pid == pid:
        return
    if not _SLOT.parent:  # the first process to read: a worker's signal ends it with exit 2 too
        _SLOT.parent = pid
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGUSR2, lambda *_: os._exit(2))
    _SLOT.pid = pid
    threading.Thread(target=_watch, name="mlsubmit-read-watchdog", daemon=True).start()


def _watch() -> None:
    step = max(0.05, min(5.0, READ_TIMEOUT / 4))
    while True:
        time.sleep(step)
        path = _SLOT.path
        if path is not None and time.monotonic() - _SLOT.since > READ_TIMEOUT:
            _give_up(path)


def _give_up(path: str) -> None:
    message = (f"mlsubmit: reading {path!r} has made no progress for {READ_TIMEOUT:.0f} s (a filesystem that "
               f"stopped answering?); stopping. MLSUBMIT_READ_TIMEOUT=<seconds> waits longer.\n")
    os.write(2, message.encode("utf-8", "backslashreplace"))
    if _SLOT.parent and _SLOT.parent != os.getpid():
        os.kill(_SLOT.parent, signal.SIGUSR2)
    os._exit(2)
