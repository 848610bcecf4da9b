"""How a log's bytes are reached: a plain file, or raw job output that may be gzip-compressed, and the raw records
of a run for copying into a result file. `logs.read_log` reads through `open_log`; packaging copies with
`record_lines`; discovery tells raw job output from the files beside it with `holds_records`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from mlsubmit.support.safe_io import open_regular

TOKEN = ":::MLLOG "
_BTOKEN = TOKEN.encode("ascii")
_TOKEN_LEN = len(_BTOKEN)
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
            import gzip  # only when a compressed file is met

            source: Any = raw if hasher is None else _Tee(raw, hasher)
            with gzip.GzipFile(fileobj=source, mode="rb") as stream:
                yield stream  # type: ignore[misc]
                if hasher is not None:
                    hasher.update(raw.read())  # anything after the compressed data
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
                if _BTOKEN in tail + chunk[:_TOKEN_LEN] or _BTOKEN in chunk:
                    return True
                tail = chunk[-_TOKEN_LEN:]
                seen += len(chunk)
    except GZIP_ERRORS:
        return True
    return False


class SupportsReadline(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...



def record_lines(stream: SupportsReadline) -> Iterator[bytes]:
    """The raw bytes of each MLLOG record, as the reader above finds them, for copying a run into a result file.

    A record runs from the last `:::MLLOG ` token on its line (a bare CR also ends a line) to the last
    non-blank byte, so launcher prefixes (`[1,0]<stdout>:`) and line ends are dropped and the JSON is copied
    byte for byte. Records that do not decode are yielded too: leaving them out would hide a broken run.
    Lines over MAX_LINE are skipped, as the reader skips them. Memory stays bounded by MAX_LINE.
    """
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # drop the rest of the overlong line
                line = stream.readline(MAX_LINE + 1)
            continue
        if _BTOKEN not in line:
            continue
        body = line[:-2] if line.endswith(b"\r\n") else line.rstrip(b"\n")
        for piece in body.split(b"\r"):
            at = piece.rfind(_BTOKEN)
            if at >= 0:
                yield piece[at:].rstrip()
