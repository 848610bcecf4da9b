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

Opener = Callable[[], AbstractContextManager[BinaryIO]]  # opens the run's output afresh, as a binary stream

LIMIT = 100 << 20  # 100 MiB: the file size above which framework output may be cut
REDACTED = b"<redacted>"
_TOKEN = b":::MLLOG "
_CHUNK = 1 << 20  # lines are read in pieces of at most this, so memory stays bounded


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
    """(all bytes, bytes of MLLOG lines) of the output."""
    total = mllog = 0
    with open_stream() as stream:
        while piece := stream.readline(_CHUNK):
            total += len(piece)
            if _TOKEN in piece:
                mllog += len(piece)
    return total, mllog


def copy_full(open_stream: Opener, dest: Path, redaction: Redaction,
              limit: int = LIMIT) -> FullCopy:
    """Write the output to `dest` as the round allows; `open_stream` opens it afresh (it is read twice)."""
    total, mllog = _sizes(open_stream)
    budget = None if total <= limit else max(limit - mllog, 0)  # framework bytes that fit beside every record
    rules, done = _rules(redaction), FullCopy()
    kept_framework = 0
    with open_stream() as stream, open(dest, "wb") as out:
        while piece := stream.readline(_CHUNK):
            done.lines += 1
            if _TOKEN in piece:  # a record's line: never redacted, never cut
                done.records += 1
                out.write(piece)
                continue
            for rule, pattern, repl in rules:
                piece, n = pattern.subn(repl, piece)
                if n:
                    done.redacted[rule] = done.redacted.get(rule, 0) + 1
            if budget is not None and kept_framework + len(piece) > budget:
                done.cut_lines += 1
                done.cut_bytes += len(piece)
                done.first_cut_line = done.first_cut_line or done.lines
                budget = kept_framework  # once cut, every later framework line goes too: no holes in between
                continue
            kept_framework += len(piece)
            out.write(piece)
    return done
