"""A temporary folder that never outlives the run, whatever ends it.

`verify` decrypts an archive and unpacks it into such a folder: plaintext that must not stay in $TMPDIR. The folder
is removed when the block ends, by return or exception, and SIGTERM, SIGHUP and SIGINT end the run as an exception
would (SIGTERM's and SIGHUP's default action ends the process on the spot, skipping every `finally`). From the first
signal on, and while the folder is removed, a further signal is only noted: a second SIGTERM used to interrupt the
removal itself and left 66,000 decrypted files behind. A signal noted during a removal that ends a block normally
is acted on once the folder is gone. SIGKILL cannot be caught; nothing can clean up after it.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

_ENDING = ("SIGTERM", "SIGHUP", "SIGINT")


def _exit_for(signum: int) -> BaseException:
    """What the signal raises: KeyboardInterrupt for SIGINT (exit 130), else the shell's status of a process ended
    by that signal (128 + its number)."""
    return KeyboardInterrupt() if signum == signal.SIGINT else SystemExit(128 + signum)


class _Ending:
    """The handler of the ending signals: the first raises, later ones (and any during a removal) are noted."""

    def __init__(self) -> None:
        self.quiet = False
        self.noted: int | None = None

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.quiet:
            self.noted = self.noted or signum
            return
        self.quiet = True  # the run is ending: nothing may interrupt its unwinding and the removal
        raise _exit_for(signum)


@contextmanager
def _signals_end_the_run() -> Iterator[_Ending]:
    ending = _Ending()
    if threading.current_thread() is not threading.main_thread():  # handlers can be set from the main thread only
        yield ending
        return
    caught = [getattr(signal, name) for name in _ENDING if hasattr(signal, name)]
    before = {s: signal.signal(s, ending) for s in caught}
    try:
        yield ending
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    if ending.noted is not None:  # a signal came while the folder was removed after a normal end: act on it now
        raise _exit_for(ending.noted)


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new private folder under $TMPDIR, removed with everything in it when the block ends, however it ends."""
    with _signals_end_the_run() as ending:
        ending.quiet = True  # a signal between making the folder and owning it is noted, then acted on
        work = Path(tempfile.mkdtemp(prefix=prefix))
        try:
            ending.quiet = False
            if ending.noted is not None:
                raise _exit_for(ending.noted)
            yield work
        finally:
            ending.quiet = True
            shutil.rmtree(work, ignore_errors=True)
