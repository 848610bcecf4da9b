"""Errors that end a command with a clear message instead of a traceback."""

from __future__ import annotations

__all__ = ["FatalError", "UsageError"]


class UsageError(Exception):
    """Bad command line or an unreadable PATH: exit code 2."""


class FatalError(RuntimeError):
    """Input the command cannot work with (an unreadable config, a full disk): exit code 2, one-line message."""
