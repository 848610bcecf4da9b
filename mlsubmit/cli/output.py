"""Shared output options for commands that produce a Report: --format, --output, --color, --strict.

One run can write several reports: `--format` may be given more than once, each with its own destination, either
as `--format sarif:r.sarif` or paired in order with the `-o` options (`--format sarif -o r.sarif --format junit -o
r.xml`). `-` is standard output. Every file is written whole (support.atomic: a temporary file renamed over it), so a
CI step never reads half a report.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.findings import Report
from mlsubmit.core.support import atomic
from mlsubmit.core.support.atomic import replacing
from mlsubmit.core.support.names import did_you_mean
from mlsubmit.formats import REPORTERS, printable, summary_line
from mlsubmit.formats.causes import attach_causes

STDOUT = "-"


@dataclass(frozen=True)
class Output:
    """One report to write: its format and where (STDOUT or a file path)."""

    format: str
    path: str = STDOUT


def _format_name(name: str) -> str:
    if name not in REPORTERS:
        raise UsageError(f"--format {name}: not a format (choose from {', '.join(sorted(REPORTERS))})"
                         + did_you_mean(name, REPORTERS))  # fmt: skip
    return name


def default_format() -> str:
    if os.environ.get("GITHUB_ACTIONS") == "true" and "github" in REPORTERS:
        return "github"
    return "text"


def outputs(args: argparse.Namespace) -> list[Output]:
    """The reports asked for, in order; a format without a destination, or a destination without a format, is
    exit 2, as are two reports on one destination."""
    formats = list(getattr(args, "format", None) or [])
    paths = list(getattr(args, "output", None) or [])
    if not formats:
        if len(paths) > 1:
            raise UsageError(f"{len(paths)} --output options but no --format: give a --format for each")
        return [Output(default_format(), paths[0] if paths else STDOUT)]
    out = _paired(formats, paths)
    _no_shared_destination(out)
    return out


def _paired(formats: list[str], paths: list[str]) -> list[Output]:
    plain = [f for f in formats if ":" not in f]
    if len(plain) <= 1 and not paths:  # the one report without a FILE goes to stdout (docs/ci.md's CI example)
        plain_outputs = [STDOUT] * len(plain)
    elif len(plain) != len(paths):
        raise UsageError(
            f"{len(plain)} --format without a FILE but {len(paths)} --output: with several reports, give each "
            "--format its own -o FILE in order (- for stdout), or write --format FORMAT:FILE"
        )
    else:
        plain_outputs = paths
    pending = iter(plain_outputs)
    out = []
    for spec in formats:
        name, sep, path = spec.partition(":")
        if sep and not path:
            raise UsageError(f"--format {spec}: no FILE after the colon")
        out.append(Output(_format_name(name), path if sep else next(pending)))
    return out


def _no_shared_destination(out: list[Output]) -> None:
    seen: dict[str, str] = {}
    for o in out:
        key = o.path if o.path == STDOUT else os.path.realpath(o.path)
        if key in seen:
            where = "stdout" if o.path == STDOUT else o.path
            raise UsageError(f"--format {seen[key]} and --format {o.format} both write to {where}; give each its own")
        seen[key] = o.format


def chosen_format(args: argparse.Namespace) -> str:
    """The format of the first report asked for (commands that print one thing of their own read it)."""
    return outputs(args)[0].format


def _use_color(args: argparse.Namespace, stream: TextIO) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def emit(report: Report, args: argparse.Namespace) -> int:
    """Write the report in every format asked for; return the exit code (0 clean, 1 findings)."""
    wanted = outputs(args)  # before any writing: a usage error leaves no file behind
    report.strict = bool(getattr(args, "strict", False))
    report = attach_causes(report)  # consequences name their root cause; every format shows it
    for o in wanted:
        reporter = REPORTERS[o.format]
        if o.path == STDOUT:
            reporter(report, sys.stdout, color=_use_color(args, sys.stdout))
            continue
        try:
            with replacing(o.path) as stream:  # whole or not at all: a full disk leaves the old file, no 0-byte one
                reporter(report, stream, color=False)
        except OSError as exc:
            raise FatalError(f"cannot write {o.path}: {exc.strerror or exc}") from exc
    if all(o.path != STDOUT for o in wanted):  # every report went to a file: the terminal still gets the verdict
        sys.stdout.write(printable(f"{summary_line(report)} (written to {', '.join(o.path for o in wanted)})") + "\n")
    return report.exit_code()


def write_text(path: str, text: str) -> None:
    """Write a page or table the user asked for (--html, -o); a path that cannot be written is exit 2."""
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise FatalError(f"cannot write {path}: {exc.strerror or exc}") from exc
