"""Command-line entry point: `mlsubmit <command> ...`; `main(argv) -> int` never raises (`entry.py`, with the
exit-code contract). This file only names what callers use.

Exit codes: 0 no errors, 1 errors found (warnings too with --strict), 2 usage error or unreadable input,
3 internal error (one line on stderr, the traceback in a log file), 130 interrupted.
"""

from __future__ import annotations

from mlsubmit.cli.commands import COMMANDS, PARSERS
from mlsubmit.cli.entry import HOOK_FILES, build_parser, console, hook_files, main

__all__ = ["COMMANDS", "HOOK_FILES", "PARSERS", "build_parser", "console", "hook_files", "main"]
