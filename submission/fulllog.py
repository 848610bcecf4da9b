"""A run's whole output as a 6.1 result file: every line kept, MLLOG lines byte for byte, the rest redacted on
request and cut only when the file would pass the rules' size limit.

TR6.1 "Result files" (training_policies PR #588): a result file holds the full framework log and all MLLOG lines;
internal paths and environment variables may be redacted; framework output may be truncated when the file is over
100 MiB (GitHub's file-size limit). So a line holding `:::MLLOG ` is never changed or dropped, and a cut keeps the
first framework lines, up to what fits beside all the MLLOG lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from mlsubmit.checker.logs.limits import output_pieces

from mlsubmit.core.findings import Finding

Opener = Callable[[], AbstractContextManager[BinaryIO]]  # opens the run's output afresh, as a binary stream

LIMIT = 100 << 20  # 100 MiB: the file size above which framework output may be cut
REDACTED = b"<redacted>"


@dataclass(frozen=True)
class Redaction:
    paths: tuple[str, ...] = ()  # literal path prefixes, replaced wherever they occur outside MLLOG lines
    env: tuple[str, ...] = ()  # environment variable names: the value after `NAME=` is replaced


@dataclass
class FullCopy:
    lines: int = 0
    records: int = 0
    redacted: dict[str, int] = field(default_factory=dict)  # rule ("path:/home/a", "env:TOKEN") -> lines changed
    cut_lines: int = 0
    cut_bytes: int = 0
    first_cut_line: int | None = None

    def manifest(self) -> dict[str, object]:
        cut = None
        if self.cut_lines:
            cut = {"lines": self.cut_lines, "bytes": self.cut_bytes, "from_line": self.first_cut_line}
        return {"kept": "full", "lines": self.lines,
                "redacted": [{"rule": rule, "lines": n} for rule, n in sorted(self.redacted.items())],
                "truncated": cut}


def _rules(redaction: Redaction) -> list[tuple[str, re.Pattern[bytes], bytes]]:
    rules = [(f"path:{p}", re.compile(re.escape(p.encode())), REDACTED) for p in redaction.paths if p]
    rules += [(f"env:{name}", re.compile(rb"(?<![A-Za-z0-9_])(" + re.escape(name.encode()) + rb"=)[^\s'\"]*"),
               rb"\1" + REDACTED) for name in redaction.env if name]
    return rules


def _sizes(open_stream: Opener) -> tuple[int, int]:
    """(all bytes, bytes of MLLOG lines) of the output, as copy_full will read it."""
    total = mllog = 0
    with open_stream() as stream:
        for is_record, piece in output_pieces(stream, "", []):
            total += len(piece)
            mllog += len(piece) if is_record else 0
    return total, mllog


def _lines(piece: bytes) -> list[bytes]:
    """The lines of `piece`, each with its newline (splitlines would also split at a CR)."""
    lines = [line + b"\n" for line in piece.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


class _Copy:
    """The framework lines between records, a run of them at a time: redacted line by line only where a rule
    matches the run, cut from the first line past the budget; bytes scans otherwise, so a newline bomb costs no
    Python step per line."""

    def __init__(self, out: BinaryIO, rules: list[tuple[str, re.Pattern[bytes], bytes]], budget: int | None) -> None:
        self.out, self.rules, self.budget = out, rules, budget
        self.done = FullCopy()
        self.kept = 0  # framework bytes written

    def record(self, line: bytes) -> None:  # a record's line: never redacted, never cut
        self.done.lines += 1
        self.done.records += 1
        self.out.write(line)

    def framework(self, piece: bytes) -> None:
        if any(pattern.search(piece) for _, pattern, _ in self.rules):
            piece = b"".join(map(self._redact, _lines(piece)))
        budget, first = self.budget, self.done.lines + 1
        lines = piece.count(b"\n") + (not piece.endswith(b"\n"))
        self.done.lines += lines
        if budget is None or self.kept + len(piece) <= budget:
            self.kept += len(piece)
            self.out.write(piece)
            return
        kept = b""
        if self.kept < budget:  # the lines that still fit, then the cut (once cut, every later line goes too)
            for line in _lines(piece):
                if self.kept + len(kept) + len(line) > budget:
                    break
                kept += line
        self.out.write(kept)
        self.kept += len(kept)
        done = self.done
        done.cut_lines += lines - kept.count(b"\n")
        done.cut_bytes += len(piece) - len(kept)
        done.first_cut_line = done.first_cut_line or first + kept.count(b"\n")
        self.budget = self.kept

    def _redact(self, line: bytes) -> bytes:
        for rule, pattern, repl in self.rules:
            line, n = pattern.subn(repl, line)
            if n:
                self.done.redacted[rule] = self.done.redacted.get(rule, 0) + 1
        return line


def copy_full(open_stream: Opener, dest: Path, redaction: Redaction, limit: int = LIMIT, *, display: str = "",
              cut: list[Finding] | None = None) -> FullCopy:
    """Write the output to `dest` as the round allows; `open_stream` opens it afresh (it is read twice). Read in
    chunks within `check`'s limits (limits.output_pieces): LOG012 into `cut` where it stops."""
    total, mllog = _sizes(open_stream)
    budget = None if total <= limit else max(limit - mllog, 0)  # framework bytes that fit beside every record
    with open_stream() as stream, open(dest, "wb") as out:
        copy = _Copy(out, _rules(redaction), budget)
        for is_record, piece in output_pieces(stream, display, cut if cut is not None else []):
            (copy.record if is_record else copy.framework)(piece)
    return copy.done
