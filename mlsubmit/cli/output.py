"""Shared output options for commands that produce a Report: --format, --output, --color, --strict."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from mlsubmit.errors import FatalError
from mlsubmit.findings import Report
from mlsubmit.reporters import REPORTERS
from mlsubmit.reporters.causes import attach_causes
from mlsubmit.support import atomic
from mlsubmit.support.atomic import replacing


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=sorted(REPORTERS),
        default=None,
        help="output format (default: text; github when GITHUB_ACTIONS=true)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the text report: auto (when writing to a terminal and NO_COLOR is unset), always, never",
    )
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")


def chosen_format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if os.environ.get("GITHUB_ACTIONS") == "true" and "github" in REPORTERS:
        return "github"
    return "text"


def _use_color(args: argparse.Namespace, stream: TextIO) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def emit(report: Report, args: argparse.Namespace) -> int:
    """Write the report in the chosen format; return the exit code (0 clean, 1 findings)."""
    report.strict = bool(getattr(args, "strict", False))
    report = attach_causes(report)  # consequences name their root cause; every format shows it
    reporter = REPORTERS[chosen_format(args)]
    if args.output:
        try:
            with replacing(args.output) as stream:  # whole or not at all: a full disk leaves no 0-byte file
                reporter(report, stream, color=False)
        except OSError as exc:
            raise FatalError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    else:
        reporter(report, sys.stdout, color=_use_color(args, sys.stdout))
    return report.exit_code()


def write_text(path: str, text: str) -> None:
    """Write a page or table the user asked for (--html, -o); a path that cannot be written is exit 2."""
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise FatalError(f"cannot write {path}: {exc.strerror or exc}") from exc
