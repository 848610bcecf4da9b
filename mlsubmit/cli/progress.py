"""A progress bar on the terminal for long checks, and nothing at all anywhere else.

The bar goes to stderr, and only when stderr is an interactive terminal: CI logs, pipes, files and tests see no
progress output, and stdout (where reports go) is never touched. It appears only once a run has taken
`DELAY` seconds, so quick checks do not flash a bar. `MLSUBMIT_PROGRESS=0` turns it off; `=1` keeps the TTY rule.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

DELAY = 2.0  # seconds before a bar is worth showing

Advance = Callable[[], None]


def progress_wanted(stream: TextIO) -> bool:
    if os.environ.get("MLSUBMIT_PROGRESS", "").strip() == "0" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


class _Bar:
    """Counts completed items at once; draws with rich only after the delay, from a timer thread."""

    def __init__(self, total: int, label: str, stream: TextIO) -> None:
        self.total = total
        self.label = label
        self.stream = stream
        self.done = 0
        self.lock = threading.Lock()
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.closed = False

    def show(self) -> None:
        # lazy: rich: ~160 ms to import; only a progress bar on a terminal needs it
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with self.lock:
            if self.closed or self.progress is not None:
                return
            console = Console(file=self.stream, stderr=True)
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,  # the bar disappears when done; only the report stays on screen
            )
            self.task = self.progress.add_task(self.label, total=self.total, completed=self.done)
            self.progress.start()

    def advance(self) -> None:
        with self.lock:
            self.done += 1
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, completed=self.done)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.progress is not None:
                self.progress.stop()


def _nothing() -> None:
    return None


@contextmanager
def tracker(total: int, label: str, *, stream: TextIO | None = None, delay: float = DELAY) -> Iterator[Advance]:
    """Yield a function to call once per finished item; it draws a bar only on a terminal, after `delay`."""
    out = stream if stream is not None else sys.stderr
    if total <= 0 or not progress_wanted(out):
        yield _nothing
        return
    bar = _Bar(total, label, out)
    timer = threading.Timer(delay, bar.show)
    timer.daemon = True
    timer.start()
    try:
        yield bar.advance
    finally:
        timer.cancel()
        bar.close()
