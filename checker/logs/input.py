"""How a log's bytes are reached: a plain file, or raw job output that may be gzip-compressed, and the raw records
of a run for copying into a result file. `logs.read_log` reads through `open_log`; packaging copies with
`numbered_records` (within `check`'s limits: `limits.raw_records`); discovery tells raw job output from the files
beside it with `holds_records`.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from mlsubmit.core.support.safe_io import open_regular

TOKEN = ":::MLLOG "
BTOKEN = TOKEN.encode("ascii")
TOKEN_LEN = len(BTOKEN)
MAX_LINE = 16 * 1024 * 1024  # longer physical lines are skipped (LOG010) so memory stays bounded
CHUNK = 1 << 20


GZIP_MAGIC = b"\x1f\x8b"
# What a damaged or truncated gzip file raises while it is read (BadGzipFile is an OSError).
GZIP_ERRORS = (OSError, EOFError, zlib.error)


class _Tee:
    """A raw stream that hashes the bytes read through it: a compressed log's hash is of the file as stored."""

    def __init__(self, raw: BinaryIO, hasher: Any) -> None:
        self._raw = raw
        self._hasher = hasher

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._hasher.update(data)
        return data


def is_gzip(stream: BinaryIO) -> bool:
    """Whether the stream starts with gzip's magic bytes (peeked, nothing consumed)."""
    peek = getattr(stream, "peek", None)
    return peek is not None and peek(2)[:2] == GZIP_MAGIC


@contextmanager
def open_log(path: str | Path, *, unpack: bool = True, hasher: Any = None) -> Iterator[BinaryIO]:
    """A log's bytes: the file's own, or with `unpack` the content of a gzip-compressed file (told by its first
    bytes, not its name). Raw job output is often archived compressed; a result file in a submission tree is read
    as it is stored, as mlperf-logging reads it. `hasher`, when given, sees a compressed file's stored bytes."""
    with open_regular(path) as raw:
        if unpack and is_gzip(raw):
            source: Any = raw if hasher is None else _Tee(raw, hasher)
            with gzip.GzipFile(fileobj=source, mode="rb") as stream:
                yield stream  # type: ignore[misc]
                while hasher is not None and (rest := raw.read(CHUNK)):  # what was not read (a log cut at a limit)
                    hasher.update(rest)  # or follows the compressed data; in chunks: it may be gigabytes
        else:
            yield raw


def holds_records(path: str | Path, limit: int = 256 << 20) -> bool:
    """Whether a file (gzip-compressed or not) has a `:::MLLOG ` token in its first `limit` bytes: how a folder of
    raw job output is told from the scripts and notes beside it. An unreadable or damaged file counts as holding
    records, so that reading it reports the problem instead of leaving the file out silently."""
    tail = b""
    seen = 0
    try:
        with open_log(path) as stream:
            while seen < limit:
                chunk = stream.read(CHUNK)
                if not chunk:
                    return False
                if BTOKEN in tail + chunk[:TOKEN_LEN] or BTOKEN in chunk:
                    return True
                tail = chunk[-TOKEN_LEN:]
                seen += len(chunk)
    except GZIP_ERRORS:
        return True
    return False


def is_result_log(name: str) -> bool:
    """A result log by its name, as the package checker finds them in a benchmark folder (result_<i>.txt)."""
    return name.startswith("result_") and name.endswith(".txt")


def without_records(paths: list[str]) -> list[str]:
    """The PATHs that are files without MLLOG records, other than a result log or a .json description (those are
    what their names say, whatever they hold): what `check --skip-non-logs` passes over, as a folder of raw job
    output passes over the notes beside its runs."""
    def skipped(given: str) -> bool:
        path = Path(given)
        return (path.is_file() and path.suffix.lower() != ".json" and not is_result_log(path.name)
                and not holds_records(path))

    return [p for p in paths if skipped(p)]


class SupportsRead(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _block_records(block: bytes, line: int) -> Iterator[tuple[int, bytes]]:
    """The records of `block` (whole lines) with their line numbers, `line` being the block's first: the token is
    searched for and newlines counted by bytes methods, so text between records costs no Python step."""
    find, counted_to = block.find, 0
    pos = find(BTOKEN)
    while pos >= 0:
        start = block.rfind(b"\n", 0, pos) + 1
        end = find(b"\n", pos)
        end = len(block) if end < 0 else end
        line += block.count(b"\n", counted_to, start)
        counted_to = start
        body = block[start : end - 1] if block[end - 1 : end] == b"\r" else block[start:end]
        # a bare CR ends a line for mlperf-logging's reader; an overlong line is skipped whole, as readline skipped it
        for piece in body.split(b"\r") if end - start <= MAX_LINE else ():
            at = piece.rfind(BTOKEN)
            if at >= 0:
                yield line, piece[at:].rstrip()
        pos = find(BTOKEN, end)


@dataclass
class Reading:
    """How far `numbered_records` read: the bytes read (decompressed), and whether it stopped at `max_bytes` as the
    reader of `check` stops (limits.over_limit: after the chunk that passes the limit, the line cut there dropped)."""

    max_bytes: int | None = None
    size: int = 0
    stopped: bool = False

    def full(self) -> bool:
        self.stopped = self.max_bytes is not None and self.size > self.max_bytes
        return self.stopped


def numbered_records(stream: SupportsRead, reading: Reading | None = None) -> Iterator[tuple[int, bytes]]:
    """(line, raw bytes) of each MLLOG record, as the reader above finds them, for copying a run into a result file.

    A record runs from the last `:::MLLOG ` token on its line (a bare CR also ends a line) to the last
    non-blank byte, so launcher prefixes (`[1,0]<stdout>:`) and line ends are dropped and the JSON is copied
    byte for byte. Records that do not decode are yielded too: leaving them out would hide a broken run.
    Lines over MAX_LINE are skipped, as the reader skips them. Read in CHUNK pieces, as `check` reads: memory stays
    bounded by MAX_LINE, and a file of newlines costs C-level scans only. With `reading`, the bytes are counted
    there and reading stops past its `max_bytes`, at the same byte as `check`'s reader.
    """
    reading = reading if reading is not None else Reading()
    rest, line, overlong = b"", 1, False
    while not reading.full() and (chunk := stream.read(CHUNK)):
        reading.size += len(chunk)
        if overlong:  # drop bytes up to the end of the overlong line
            cut = chunk.find(b"\n")
            if cut < 0:
                continue
            chunk, overlong, line = chunk[cut + 1 :], False, line + 1
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            yield from _block_records(data[:cut], line)
            line += data.count(b"\n", 0, cut)
        rest = data[cut:]
        if len(rest) > MAX_LINE:
            rest, overlong = b"", True
    if rest and not overlong and not reading.full():
        yield from _block_records(rest, line)


def whole_lines(stream: SupportsRead, reading: Reading) -> Iterator[bytes]:
    """The stream as blocks of whole lines (the last may end without a newline), read in CHUNK pieces and stopping
    where `reading` says, as `check` stops; a line over MAX_LINE is handed on in MAX_LINE pieces, never held whole."""
    rest = b""
    while not reading.full() and (chunk := stream.read(CHUNK)):
        reading.size += len(chunk)
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            yield data[:cut]
        rest = data[cut:]
        while len(rest) > MAX_LINE:
            yield rest[:MAX_LINE]
            rest = rest[MAX_LINE:]
    if rest and not reading.full():
        yield rest


def record_lines(stream: SupportsRead) -> Iterator[bytes]:
    """The raw bytes of each MLLOG record (numbered_records without the line numbers)."""
    for _line, raw in numbered_records(stream):
        yield raw
