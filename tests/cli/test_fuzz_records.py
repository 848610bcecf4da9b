"""Packaging's chunked record reader (checker/logs/input.numbered_records) against the line-by-line reading it
replaced (issue 35: a newline bomb took minutes through readline): the same records, byte for byte, on the same
lines, whatever the bytes and wherever the chunks end."""

from __future__ import annotations

import io
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from mlsubmit.checker.logs import input as log_input
from mlsubmit.checker.logs.input import numbered_records

TOKEN = b":::MLLOG "


def examples(n: int) -> int:
    return max(1, int(n * float(os.environ.get("MLSUBMIT_FUZZ_SCALE", "1"))))


def by_lines(data: bytes, max_line: int) -> list[tuple[int, bytes]]:
    """The old reading: line by line (readline), the last token of each CR-separated piece, overlong lines out."""
    out = []
    stream = io.BytesIO(data)
    number, at_start = 0, True
    while line := stream.readline(max_line + 1):
        number += at_start
        at_start = line.endswith(b"\n")
        if len(line) > max_line and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(max_line + 1)
            at_start = True
            continue
        body = line[:-2] if line.endswith(b"\r\n") else line.rstrip(b"\n")
        for piece in body.split(b"\r"):
            at = piece.rfind(TOKEN)
            if at >= 0:
                out.append((number, piece[at:].rstrip()))
    return out


PIECES = st.sampled_from([b"\n", b"\r\n", b"\r", b" ", b"x", b"[1,0]<stdout>:", TOKEN, b'{"key": "a"}', b"\t",
                          b"\x00", b"\xff", b"\n" * 50])


@settings(deadline=None, database=None, max_examples=examples(400))
@given(st.lists(PIECES, max_size=200), st.integers(1, 64), st.integers(8, 400))
def test_chunked_reading_finds_what_line_by_line_reading_found(pieces: list[bytes], chunk: int,
                                                                 max_line: int) -> None:
    data = b"".join(pieces)
    saved = log_input.CHUNK, log_input.MAX_LINE
    log_input.CHUNK, log_input.MAX_LINE = chunk, max_line
    try:
        assert list(numbered_records(io.BytesIO(data))) == by_lines(data, max_line)
    finally:
        log_input.CHUNK, log_input.MAX_LINE = saved
