"""Stream `:::MLLOG` records out of a run log, as mlperf-logging's parser reads them, with real line numbers.

What mlperf-logging does (mlp_parser, training 1.0.0 to 6.1.0): read latin-1 text with universal newlines, keep the
lines holding `:::MLLOG `, drop everything before the *last* token, strip, JSON-decode the rest, number the kept
lines from 0. We do the same on bytes, a chunk at a time, handing each chunk's records on (limits.hand_records_on) so
memory does not grow with the file, and give each record the 1-based physical line (by `\\n`) it sits on (records
separated by a bare CR share it).
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
from mlsubmit.checker.logs.decode import (
    FAST,
    FAST_ERRORS,
    RecordError,
    clipped_quote,
    decode_record,
    duplicate_keys,
    scan_latin1,
    shallow_keys,
)
from mlsubmit.checker.logs.input import BTOKEN, CHUNK, GZIP_ERRORS, MAX_LINE, TOKEN, TOKEN_LEN, open_log
from mlsubmit.checker.logs.limits import Sink, hand_records_on, keep_rcp_lines, over_limit, records_limit
from mlsubmit.checker.logs.order import run_order
from mlsubmit.checker.logs.watchdog import note_read, watch_reads

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.repeats import Capped

# the codes the `read` check may emit (checker/engine/checks.py registers it): the whole LOG family, wherever in
# logs/ a code is written, so a new LOG code needs no line here
CODES = frozenset({"LOG"})

_SAMPLE = 1 << 12  # bytes of a chunk looked at to choose how to read it: a few dozen lines
_REPORT_EACH = 5  # line numbers a LOG002/LOG003 finding lists; the rest are counted


class Record(msgspec.Struct):
    """One MLLOG record, named as mlperf-logging's LogLine (rule files read it): `value` is {"value", "metadata"};
    `lineno` is its 0-based index among MLLOG lines, `line` the real 1-based line. A msgspec Struct: its constructor
    runs in C (5x faster than a dataclass). Mutable, as LogLine is; copy.copy and msgspec.structs.replace copy it.
    """

    key: str
    value: dict[str, Any]
    timestamp: float
    line: int
    lineno: int
    full_string: str = ""

    @property
    def payload(self) -> Any:
        return self.value["value"]

    @property
    def metadata(self) -> Any:
        return self.value["metadata"]


@dataclass
class ParsedLog:
    path: str
    records: list[Record] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    sha256: str = ""
    size: int = 0
    lines: int = 0
    parse_errors: int = 0  # MLLOG lines that did not give a record (mlperf-logging fails the log for these)
    readable: bool = True
    rcp_lines: list[bytes] = field(default_factory=list)  # what the reference's RCP reader acts on (logs/rcp_lines.py)
    record_count: int = 0  # records read (with a sink, `records` keeps none of them: limits.hand_records_on)
    last_line: int = 0
    rcp_bytes: int = 0  # of rcp_lines, bounded (limits.keep_rcp_lines)
    rcp_cut: bool = False
    marks: dict[str, Record] = field(default_factory=dict)  # first run_start and run_stop, for order.run_order
    kept_bytes: int = 0  # of the MLLOG lines of `records` kept without a sink (limits.MAX_KEPT_BYTES)

    def first(self, key: str) -> Record | None:
        return next((r for r in self.records if r.key == key), None)


def _open_end(data: bytes) -> int:  # 1 when `data` ends inside a line (a file's last line, no final newline)
    return 0 if data.endswith(b"\n") or not data else 1


class _Reader:
    def __init__(self, display: str) -> None:
        self.display = display
        self.log = ParsedLog(path=display)
        self.index = 0  # mlperf-logging's lineno: count of MLLOG lines
        self.nul_lines: list[int] = []
        self.bad_utf8: list[int] = []
        self.noted = Capped()  # a finding per bad record, within the log's cap (one per record would follow a log)

    def feed(self, data: bytes, first_line: int) -> int:
        """Read the complete lines in `data` (it ends just after a newline, or at EOF); return the lines seen.

        An ASCII chunk whose lines are mostly ordinary records is read whole (`_feed_plain`). Otherwise only the
        token's occurrences are visited (bytes.find), so text between records costs C-speed scans. A line with one
        well-formed record and no bare CR is decoded right here (msgspec when the chunk is ASCII, json's scanner on
        the latin-1 text otherwise); anything unusual (a bare CR, NaN, a possibly repeated key, bad JSON) goes
        through `_line` and `_record`, which redo the line with every check and message.
        """
        ascii_only = data.isascii()
        if b"\x00" in data or not ascii_only:
            self._scan_bytes(data, first_line)
        elif self._plain(data) and (lines := self._feed_plain(data, first_line)) is not None:
            return lines
        fast = FAST
        find, rfind, count = data.find, data.rfind, data.count
        records = self.log.records
        lineno = first_line
        counted_to = 0
        pos = find(BTOKEN)
        while pos >= 0:
            start = rfind(b"\n", 0, pos) + 1
            end = find(b"\n", pos)
            if end < 0:
                end = len(data)
            lineno += count(b"\n", counted_to, start)
            counted_to = start
            stop = end - 1 if end > start and data[end - 1] == 13 else end  # a CRLF line end
            at = rfind(BTOKEN, pos, stop)
            if at >= 0 and find(b"\r", start, stop) < 0:
                raw = data[at + TOKEN_LEN : stop]
                try:
                    # ASCII bytes as they are (latin-1 and UTF-8 agree on ASCII); others through json's scanner
                    obj, colons = (fast(raw), raw.count(b":")) if ascii_only else scan_latin1(raw)
                    if type(obj) is dict:
                        key = obj["key"]
                        ts = float(obj["time_ms"])
                        value, meta = obj["value"], obj["metadata"]
                        if type(key) is str and ts - ts == 0.0 and colons <= shallow_keys(obj):  # 0.0: finite
                            records.append(Record(key, {"value": value, "metadata": meta}, ts, lineno, self.index))
                            self.index += 1
                            pos = find(BTOKEN, end)
                            continue
                except FAST_ERRORS:
                    pass
            self._line(data[start:end], lineno)
            pos = find(BTOKEN, end)
        # the newlines counted so far plus the rest: one pass over the text between records, not two
        return lineno - first_line + count(b"\n", counted_to) + _open_end(data)

    @staticmethod
    def _plain(data: bytes) -> bool:
        """Worth reading whole: no bare CR, and records on at least a fifth of the lines (a header of job output
        before the records is common). Raw job output with a record now and then is faster to read by jumping from
        token to token (the loop in `feed`) than by splitting it into lines."""
        sample = data[:_SAMPLE]  # a guess is enough: either way gives the same records
        if sample.count(BTOKEN) * 5 < sample.count(b"\n"):
            return False
        return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")

    def _feed_plain(self, data: bytes, first_line: int) -> int | None:
        """The whole chunk at once, when it is ASCII with no NUL and no bare CR and every record in it is
        ordinary: each step is one C-level pass over all its records (split, find, decode, check, build), where
        the loop in `feed` runs a dozen Python steps per record. Returns the lines read, as `feed` does, or None,
        with nothing added, as soon as one record is not ordinary: `feed` then reads the chunk line by line, with
        every check and message."""
        fast = FAST
        lines = data.split(b"\n")
        read = len(lines) - 1 + _open_end(data)  # the newlines, counted by the split rather than a second pass
        # each line searched once, from the end: the last token on a line is the one that counts
        hits = [(n, line[at + TOKEN_LEN :])
                for n, line in enumerate(lines, first_line) if (at := line.rfind(BTOKEN)) >= 0]
        if not hits:
            return read
        raws = [raw for _, raw in hits]
        try:
            objs = list(map(fast, raws))  # a CRLF's CR is JSON whitespace, as it is line-end to mlperf-logging
            if not all(type(o) is dict for o in objs):
                return None
            keys = [o["key"] for o in objs]
            stamps = list(map(float, [o["time_ms"] for o in objs]))
            payloads = [o["value"] for o in objs]
            metadata = [o["metadata"] for o in objs]
        except FAST_ERRORS:
            return None
        if not all(type(k) is str for k in keys) or not math.isfinite(sum(stamps)):  # an inf or nan: line by line
            return None
        # shallow_keys for the whole chunk: each record has at least as many colons as keys, so equal totals mean
        # no record can repeat a key; otherwise the line-by-line path finds which one (and the exact repeats)
        keys_in_all = sum(map(len, objs)) + sum([len(x) for x in (*payloads, *metadata) if type(x) is dict])
        if sum(map(bytes.count, raws, repeat(b":"))) != keys_in_all:
            return None
        values = [{"value": v, "metadata": m} for v, m in zip(payloads, metadata, strict=True)]
        start = self.index
        self.index += len(objs)
        self.log.records.extend(map(Record, keys, values, stamps, [n for n, _ in hits], range(start, self.index)))
        return read

    def _scan_bytes(self, data: bytes, first_line: int) -> None:
        for offset, raw in enumerate(data.split(b"\n")):
            if b"\x00" in raw:
                self.nul_lines.append(first_line + offset)
            if not raw.isascii():
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    self.bad_utf8.append(first_line + offset)

    def _line(self, raw: bytes, lineno: int) -> None:
        body = raw[:-1] if raw.endswith(b"\r") else raw
        for piece in body.split(b"\r"):  # universal newlines: a bare CR ends a line for mlperf-logging's reader
            if BTOKEN in piece:
                self._record(piece.decode("latin-1"), lineno)

    def _record(self, text: str, lineno: int) -> None:
        text = text[text.rindex(TOKEN) :].strip()
        index = self.index
        self.index += 1
        body = text[len(TOKEN) :] if text.startswith(TOKEN) else None
        try:
            if body is None:
                raise RecordError("LOG004", "record is empty after the :::MLLOG token")
            key, value, ts, warnings = decode_record(body)
        except RecordError as err:
            self.log.parse_errors += 1
            self.noted.append(finding(err.code, self.display, err.message, line=lineno))
            return
        if warnings:
            self._warn(key, body, warnings, lineno)
        self.log.records.append(Record(key, value, ts, lineno, index))

    def _warn(self, key: str, body: str, warnings: list[str], lineno: int) -> None:
        if "LOG008" in warnings:
            self.noted.append(finding("LOG008", self.display, f"record '{clipped_quote(key)}' holds NaN or Infinity",
                                      line=lineno))
        dups = duplicate_keys(body) if "LOG007" in warnings else []
        if dups:
            self.noted.append(finding("LOG007", self.display, f"record '{clipped_quote(key)}' repeats key(s) "
                                      f"{clipped_quote(', '.join(dups))}; the last value is used", line=lineno))

    def finish(self, lines: int) -> ParsedLog:
        self.log.lines = lines
        self.log.findings += _last_record_marked(self.noted, self.log.last_line or 0)
        self.log.findings += run_order(list(self.log.marks.values()), self.display)
        self._summarise("LOG002", self.nul_lines, "NUL bytes (binary content)")  # a NUL line is not also LOG003
        self._summarise("LOG003", sorted(set(self.bad_utf8) - set(self.nul_lines)), "bytes that are not valid UTF-8")
        if not self.log.record_count and self.log.parse_errors == 0:
            self.log.findings.append(finding("LOG009", self.display, f"no :::MLLOG records in {lines} line(s)"))
        return self.log

    def _summarise(self, code: str, lines: list[int], what: str) -> None:  # one finding per kind, at the first line
        rest = f" and {len(lines) - _REPORT_EACH} more" if len(lines) > _REPORT_EACH else ""
        said = f"{len(lines)} lines hold {what}: lines {', '.join(map(str, lines[:_REPORT_EACH]))}{rest}"
        self.log.findings += [finding(code, self.display, said if lines[1:] else f"line holds {what}", line=lines[0])
                              ] if lines else []


LAST_RECORD = "last-record"  # the case of a LOG004 that is the log's last record: the log was likely cut off there


def _last_record_marked(found: Iterable[Finding], last_good: int) -> list[Finding]:
    """The reader's findings, the broken record after every good one (if any) marked LAST_RECORD: reports call
    the log truncated there, and only there (a record broken mid-file is not a cut-off log)."""
    noted = list(found)
    broken = [f for f in noted if f.code == "LOG004" and f.line is not None]
    last = max(broken, key=lambda f: f.line or 0) if broken else None
    if last is None or (last.line or 0) < last_good:
        return noted
    return [replace(f, case=LAST_RECORD) if f is last else f for f in noted]


def read_stream(stream: BinaryIO, display: str, *, digest: bool = True, rcp_lines: bool = True,
                sink: Sink | None = None) -> ParsedLog:
    """Read a log in 1 MiB chunks; whole lines go to the reader, a line over MAX_LINE is skipped (LOG010); each
    chunk's records go to `sink` (limits.hand_records_on). digest=False leaves `sha256` empty (hashing is ~7% of
    reading)."""
    reader = _Reader(display)
    kept: list[bytes] = []
    hasher = hashlib.sha256() if digest else None
    line = 1  # number of the line the next byte belongs to
    rest, overlong, size, limit = b"", False, 0, records_limit(sink)
    while not over_limit(reader.log, size, limit):  # LOG012 past the limits: the rest is not read
        chunk = stream.read(CHUNK)
        note_read()  # watchdog: this read returned
        if not chunk:
            break
        if hasher is not None:
            hasher.update(chunk)
        size += len(chunk)
        if overlong:  # drop bytes up to the end of the overlong line
            if (cut := chunk.find(b"\n")) < 0:
                continue
            chunk, overlong, line = chunk[cut + 1 :], False, line + 1
        if rest and (end := _ends_over_limit(rest, chunk)) >= 0:  # a line begun earlier, too long once whole
            reader.log.findings.append(_too_long(display, line))
            chunk, rest, line = chunk[end:], b"", line + 1
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            block = data[:cut]
            if rcp_lines:  # the lines the RCP check reads (logs/rcp_lines.py), where one follows
                keep_rcp_lines(reader.log, block, kept)
            line += reader.feed(_decodable(reader.log, block, line), line)
            hand_records_on(reader.log, sink, block)
        rest = data[cut:]
        if len(rest) > MAX_LINE:
            reader.log.findings.append(_too_long(display, line))
            rest, overlong = b"", True
    if rest and not over_limit(reader.log, size, limit):  # past a limit, `rest` is a line cut short
        if rcp_lines:
            keep_rcp_lines(reader.log, rest, kept)
        reader.feed(rest, line)
        hand_records_on(reader.log, sink, rest, cut=False)
    lines = line - 1 + (1 if rest or overlong else 0)
    log = reader.finish(lines)
    log.rcp_lines = kept
    log.sha256 = hasher.hexdigest() if hasher is not None else ""
    log.size = size
    return log


def _ends_over_limit(rest: bytes, chunk: bytes) -> int:
    """Where the line in progress (`rest`, at most MAX_LINE) ends in `chunk`, past its newline, when the whole line
    is longer than MAX_LINE; else -1. A line is judged whole, as package's reading (logs/input.py) judges it, not
    only while it is still unfinished at a chunk's end."""
    end = chunk.find(b"\n")
    return end + 1 if end >= 0 and len(rest) + end > MAX_LINE else -1


# `,` `:` `[` `{` in one record line (limits.decoded_cost's elements, ~96 bytes each decoded): a line of more is
# skipped (LOG010) before it is decoded. One gzip line of 15 MiB of `[],` (17 KB compressed) took 467 MB to decode.
# Only a block longer than DENSE_BLOCK (a chunk and a long line) can hold such a line, and only that is counted.
MAX_ELEMENTS = 1_000_000
DENSE_BLOCK = CHUNK + (64 << 10)


def _elements(data: bytes) -> int:
    return data.count(b",") + data.count(b":") + data.count(b"[") + data.count(b"{")


def _decodable(log: ParsedLog, block: bytes, first_line: int) -> bytes:
    """`block` with each record line of more than MAX_ELEMENTS elements emptied (its newline kept), and a LOG010
    for each: decoded, such a line would take hundreds of MB at once."""
    if len(block) <= DENSE_BLOCK or _elements(block) <= MAX_ELEMENTS:
        return block
    lines = block.split(b"\n")
    for n, text in enumerate(lines):
        if len(text) > MAX_ELEMENTS and BTOKEN in text and (many := _elements(text)) > MAX_ELEMENTS:
            lines[n] = b""
            log.findings.append(finding("LOG010", log.path, f"record line holds {many:,} JSON elements, more than "
                                        f"{MAX_ELEMENTS:,} (hundreds of MB once decoded); skipped",
                                        line=first_line + n))
    return b"\n".join(lines)


def _too_long(display: str, line: int) -> Finding:
    return finding("LOG010", display, f"line is longer than {MAX_LINE} bytes; skipped", line=line)


def read_log(path: str | Path, display: str | None = None, *, digest: bool = True, unpack: bool = False,
             rcp_lines: bool = True, sink: Sink | None = None) -> ParsedLog:
    """Read one log file. Never raises for bad content or an unreadable file: both become findings. unpack: raw job
    output, maybe gzip-compressed (open_log), lines numbered in the content; rcp_lines: see read_stream."""
    display = display if display is not None else str(path)
    try:
        hasher = hashlib.sha256() if digest and unpack else None
        with watch_reads(display), open_log(path, unpack=unpack, hasher=hasher) as stream:
            compressed = not isinstance(stream, io.BufferedReader)
            log = read_stream(stream, display, digest=digest and not compressed, rcp_lines=rcp_lines, sink=sink)
        if compressed and hasher is not None:
            log.sha256 = hasher.hexdigest()
        return log
    except GZIP_ERRORS as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        log = ParsedLog(path=display, readable=False)
        log.findings.append(finding("LOG001", display, f"cannot read the log: {reason}"))
        return log
