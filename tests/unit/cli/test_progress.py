"""Progress: a bar on an interactive stderr only, never in pipes, files, CI logs or tests."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from mlsubmit.cli import progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_bar_when_the_stream_is_not_a_terminal() -> None:
    stream = io.StringIO()
    with progress.tracker(5, "checking logs", stream=stream, delay=0) as advance:
        for _ in range(5):
            advance()
    assert advance is progress._nothing
    assert stream.getvalue() == ""


def test_progress_can_be_switched_off_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLSUBMIT_PROGRESS", "0")
    assert not progress.progress_wanted(FakeTTY())
    monkeypatch.setenv("MLSUBMIT_PROGRESS", "1")
    monkeypatch.setenv("TERM", "xterm")
    assert progress.progress_wanted(FakeTTY())
    monkeypatch.setenv("TERM", "dumb")
    assert not progress.progress_wanted(FakeTTY())


def test_a_terminal_gets_a_transient_bar_with_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLSUBMIT_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    stream = FakeTTY()
    bar = progress._Bar(4, "checking logs", stream)
    bar.advance()
    bar.show()  # what the timer does once the delay has passed
    bar.advance()
    bar.close()
    bar.show()  # a timer firing after close draws nothing more
    text = stream.getvalue()
    assert "checking logs" in text
    assert "1/4" in text or "2/4" in text


def test_quick_runs_draw_nothing_before_the_delay() -> None:
    stream = FakeTTY()
    with progress.tracker(2, "checking logs", stream=stream, delay=3600) as advance:
        advance()
        advance()
    assert stream.getvalue() == ""


def test_check_writes_no_progress_to_a_captured_stderr(
    run_cli: Callable[..., tuple[int, str, str]], make_run: Callable[..., Path]
) -> None:
    log = make_run("result_0.txt")
    code, _, err = run_cli("check", "--ruleset", "1.0.0", log)
    assert (code, err) == (0, "")
