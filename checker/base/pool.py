"""A pool of forked worker processes over pipes, for checking many logs at once.

This process and `processes - 1` forked workers take items from a shared counter (a pipe), so all finish within
about an item of each other; workers send each result back through their own pipe, received by a thread per
worker. A bare fork and pipes cost less than multiprocessing's machinery (see `_fork` and `_Counter`), and nothing
is pickled to start a worker: it inherits everything loaded here. It serves both the log checks (pipeline.py)
and the secret scan of many code files (hygiene/secrets.py).

Issue 28 measured the standard library's ProcessPoolExecutor (fork workers, chunks of items, this process only
collecting) in its place: `mlsubmit check --jobs 2`, best of 5, 2 cores under load: v1.0 +1 %, v4.0 +5 %, v5.0 +3 %
and +25 %, v5.1 +12 % (three times) slower, past the 10 % it was allowed, so this pool stays.
"""

from __future__ import annotations

import gc
import os
import pickle
import resource
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar

from mlsubmit.checker.base.options import Tracker

T = TypeVar("T")

_PIPE_BLOCK = 1 << 16  # a Linux pipe's capacity


class WorkerError(RuntimeError):
    """A worker process failed; the message carries its traceback."""


class _Counter:
    """The logs not yet taken, shared by every process: whoever is free takes the next one.

    This process takes from the front of the list and workers from the back, so each mostly meets one round's
    logs (and compiles one round's rule files), and all finish within about a log of each other. The pair
    (front, back) lives in a pipe. Taking reads its 16 bytes, which only one process can do at a time; writing the
    new pair back hands it on. So it needs no lock and no shared memory: multiprocessing's `Value` costs ~20 ms
    to set up (ctypes and a memory arena), a third of a typical run's serial start. Pipe reads and writes this
    small are atomic.
    """

    def __init__(self, count: int) -> None:
        self._read, self._write = os.pipe()
        self._put(0, count)

    def _put(self, front: int, back: int) -> None:
        os.write(self._write, front.to_bytes(8, "little") + back.to_bytes(8, "little"))

    def take(self, *, from_back: bool = False) -> int | None:
        """The index of a log to check, or None when none is left."""
        data = os.read(self._read, 16)
        front, back = int.from_bytes(data[:8], "little"), int.from_bytes(data[8:], "little")
        if front >= back:
            self._put(front, back)
            return None
        if from_back:
            back -= 1
            taken = back
        else:
            taken = front
            front += 1
        self._put(front, back)
        return taken

    def stop(self) -> None:
        """Make every later take() return None: a worker that died holding the pair would otherwise leave the
        others waiting for it forever."""
        try:
            self._put(0, 0)
        except OSError:  # closed: the run is already over
            pass

    def close(self) -> None:
        os.close(self._read)
        os.close(self._write)


def _worker(work: Callable[[int], object], counter: _Counter, out: BinaryIO) -> None:
    """In a worker process: check logs until none is left, sending each result as it is done, then None."""
    try:
        while (i := counter.take(from_back=True)) is not None:
            _send(out, (i, work(i)))
        _send(out, None)
    except BaseException:  # reported to the parent, which raises it; this process just ends
        import traceback  # only on a failure

        _send(out, ("error", traceback.format_exc()))


def _send(out: BinaryIO, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(data).to_bytes(8, "little") + data)


@dataclass
class _Process:
    """A forked worker: its pid and the read end of the pipe its results come through."""

    pid: int
    results: BinaryIO


def _fork(work: Callable[[int], object], counter: _Counter) -> _Process:
    """A worker made with a bare fork: it inherits the logs to check and every module and compiled rule file
    loaded here, and nothing has to be pickled to start it. (multiprocessing's machinery costs ~10 ms of
    imports, a sixth of the serial start of a run, for what this needs: a fork and a pipe.)"""
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        raise
    if pid == 0:  # the worker: never returns, never runs the parent's exit handlers or flushes its buffers
        code = 0
        try:
            os.close(read)
            # results leave in blocks of a pipe's size: one wake-up of the parent's receiver for dozens of them
            # (one per result cost a thread switch each, a tenth of the pool's CPU); the last block on closing
            with os.fdopen(write, "wb", buffering=_PIPE_BLOCK) as out:
                _worker(work, counter, out)
        except BaseException:  # the parent sees the pipe end without a last message
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    return _Process(pid, os.fdopen(read, "rb", buffering=1 << 20))


class _Receiver(threading.Thread):
    """Collects one worker's results as they come, so the worker never waits on a full pipe. The buffered
    reader takes everything waiting in the pipe with one read, and frames are unpickled in a row while this
    thread holds the GIL: a busy main thread gives it up only every few ms."""

    def __init__(self, proc: _Process, results: list[Any], counter: _Counter, keep: Callable[[int, Any], Any]
                 ) -> None:
        super().__init__(name=f"mlsubmit-results-{proc.pid}", daemon=True)
        self.proc = proc
        self.results = results
        self.keep = keep
        self.counter = counter
        self.failure: str | None = None

    def run(self) -> None:
        try:
            self._receive()
        except Exception:  # a frame that does not unpickle: the run cannot be trusted
            import traceback  # only on a failure

            self._fail(traceback.format_exc())

    def _receive(self) -> None:
        stream = self.proc.results
        while True:
            head = stream.read(8)
            data = stream.read(int.from_bytes(head, "little")) if len(head) == 8 else b""
            if not data:
                self._fail("a worker process ended without reporting (killed?)")
                return
            message: Any = pickle.loads(data)
            if message is None:
                return
            if message[0] == "error":
                self._fail(str(message[1]))
                return
            self.results[message[0]] = self.keep(message[0], message[1])

    def _fail(self, why: str) -> None:
        self.failure = why
        self.counter.stop()  # the others stop after their current log


def _try_fork(work: Callable[[int], object], counter: _Counter) -> _Process | None:
    try:
        return _fork(work, counter)
    except OSError:  # no file descriptor or process left (--jobs beyond the limits): fewer workers, same answers
        return None


_FD_HEADROOM = 32  # descriptors kept free for what this process opens after forking (logs, caches, output)


def _fd_room() -> int:
    """How many more workers the file-descriptor limit allows (each keeps one pipe end open here)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 20
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc: assume the usual three and what imports opened
        used = 16
    return max(0, soft - used - _FD_HEADROOM)


def _fork_up_to(count: int, work: Callable[[int], object], counter: _Counter) -> list[_Process]:
    """Up to `count` workers, as many as the descriptor and process limits allow."""
    count = min(count, _fd_room())
    procs: list[_Process] = []
    while len(procs) < count and (proc := _try_fork(work, counter)) is not None:
        procs.append(proc)
    return procs


def run_shared(count: int, work: Callable[[int], T], processes: int, prepare: Callable[[], None],
               progress: Tracker, label: str, keep: Callable[[int, T], T] = lambda _, result: result) -> list[T]:
    """`work(i)` for every i below `count`, in order. `processes - 1` worker processes and this one take items
    one at a time from a shared counter, so all finish within about one item of each other, and this process's
    share is never pickled. Workers send each result as it is done; a thread per worker receives them. This
    process first does `prepare` (tree work that needs no log), then shows `progress` over its own share. Rule
    files are compiled where they are needed, after the fork, so that is done in parallel too. `keep(i, result)`
    is what this process keeps of each result as it arrives (from any thread)."""
    counter = _Counter(count)
    results: list[Any] = [None] * count
    gc.freeze()  # a forked worker's collector then never walks (and so copies) the pages it shares with us
    try:
        procs = _fork_up_to(processes - 1, work, counter)
    finally:
        gc.unfreeze()  # here, in the parent, everything is collectable again
    receivers = [_Receiver(proc, results, counter, keep) for proc in procs]
    for receiver in receivers:
        receiver.start()
    try:
        prepare()
        with progress(count, label) as advance:
            while (i := counter.take()) is not None:
                results[i] = keep(i, work(i))
                advance()
            for receiver in receivers:
                receiver.join()
    except BaseException:  # an error here or an interrupt: the workers' remaining logs are not wanted
        for proc in procs:
            _kill(proc.pid)
        raise
    finally:
        for proc in procs:
            os.waitpid(proc.pid, 0)
            proc.results.close()
        counter.close()
    failure = next((r.failure for r in receivers if r.failure is not None), None)
    if failure is not None:
        raise WorkerError(f"a worker process failed:\n{failure}")
    assert all(r is not None for r in results)
    return results


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:  # already gone
        pass
