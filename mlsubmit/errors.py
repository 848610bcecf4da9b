"""Errors that end a command with a clear message instead of a traceback."""

from __future__ import annotations

from mlsubmit.checker.discover import UsageError

__all__ = ["FatalError", "UsageError"]


class FatalError(RuntimeError):
    """Input the command cannot work with (an unreadable config, a full disk): exit code 2, one-line message."""
