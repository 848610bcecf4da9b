"""Read a small JSON document so that every defect becomes a finding with a line, never a traceback.

Python's json module keeps the last of two equal keys without a word, gives no positions for values and
accepts `NaN`. System descriptions are hand-written, so we want all three: the reader decodes strictly
(UTF-8, no NaN/Infinity), remembers the line and column of every value and key by JSON pointer, and reports
duplicate keys with both lines. The stdlib does the tokenising (scanstring, raw_decode); only the walk over
objects and arrays is ours, because no maintained library reports positions *and* duplicates.

Use `read_json(path, display)` for a file or `parse_json(data, display)` for bytes; both return a
`JsonDocument`. Callers from another finding family pass their own `JsonCodes`.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location, Severity
from mlsubmit.core.support.safe_io import open_regular

MAX_BYTES = 1024 * 1024  # a system description is a few KB; anything this big is not one
MAX_DEPTH = 64
_WS = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class JsonCodes:
    """Finding codes for each way a document can be bad (defaults: the SYS family)."""

    unreadable: str = "SYS001"
    encoding: str = "SYS002"
    invalid: str = "SYS003"
    not_object: str = "SYS004"
    duplicate: str = "SYS005"
    too_large: str = "SYS006"


@dataclass
class JsonDocument:
    """What was read: the data (None when it could not be decoded), findings, and positions by pointer."""

    path: str
    data: Any = None
    decoded: bool = False
    findings: list[Finding] = field(default_factory=list)
    value_pos: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer -> (line, column), 1-based
    key_pos: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer -> position of its key

    @property
    def is_object(self) -> bool:
        return self.decoded and isinstance(self.data, dict)

    def line(self, pointer: str) -> int | None:
        """Line of the key naming `pointer` (or of its value, or of the nearest ancestor that exists)."""
        while True:
            pos = self.key_pos.get(pointer) or self.value_pos.get(pointer)
            if pos is not None:
                return pos[0]
            if not pointer:
                return None
            pointer = pointer.rsplit("/", 1)[0]

    def location(self, pointer: str) -> Location:
        return Location(self.path, self.line(pointer), pointer or "/")


def escape(token: str) -> str:
    """RFC 6901 escaping of one reference token."""
    return token.replace("~", "~0").replace("/", "~1")


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, offset) - 1
        return i + 1, offset - self.starts[i] + 1


class _NonFinite(ValueError):
    """A value JSON's grammar allows that no Python number holds; `token` is its text, to find its line."""

    def __init__(self, message: str, token: str | None = None) -> None:
        super().__init__(message)
        self.token = token if token is not None else message


def _reject_constant(name: str) -> float:
    raise _NonFinite(name)


_MAX_DIGITS = 4300  # Python's own limit for int(): a longer integer raised ValueError from deep in the decoder


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise _NonFinite(f"an integer of {len(text.lstrip('-'))} digits", text)
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 is valid JSON grammar, yet no finite number
        raise _NonFinite(f"{text} (out of a float's range)", text)
    return value


_HOOKS: dict[str, Any] = {"parse_constant": _reject_constant, "parse_int": _bounded_int, "parse_float": _finite_float}
_DECODER = json.JSONDecoder(**_HOOKS)
_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009 - public in CPython, missing from typeshed


class _Walker:
    """Re-walks text that json.loads accepted, recording positions and duplicate keys."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _Lines(text)
        self.value_pos: dict[str, tuple[int, int]] = {}
        self.key_pos: dict[str, tuple[int, int]] = {}
        self.duplicates: list[tuple[str, tuple[int, int], tuple[int, int], bool]] = []

    def skip(self, idx: int) -> int:
        match = _WS.match(self.text, idx)
        return match.end() if match else idx

    def value(self, idx: int, ptr: str, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise RecursionError
        idx = self.skip(idx)
        self.value_pos[ptr] = self.lines.at(idx)
        ch = self.text[idx]
        if ch == "{":
            return self.members(idx + 1, ptr, depth + 1)
        if ch == "[":
            return self.items(idx + 1, ptr, depth + 1)
        return _DECODER.raw_decode(self.text, idx)

    def members(self, idx: int, ptr: str, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        first: dict[str, tuple[int, int]] = {}
        idx = self.skip(idx)
        if self.text[idx] == "}":
            return out, idx + 1
        while True:
            idx = self.skip(idx)
            key_at = self.lines.at(idx)
            key, idx = _scanstring(self.text, idx + 1)
            idx = self.skip(idx) + 1  # the colon
            child = f"{ptr}/{escape(key)}"
            self.key_pos.setdefault(child, key_at)
            value, idx = self.value(idx, child, depth)
            if key in first:
                self.duplicates.append((child, first[key], key_at, out[key] == value))
            else:
                first[key] = key_at
            out[key] = value  # the last value wins, as in json.loads
            idx = self.skip(idx)
            if self.text[idx] == "}":
                return out, idx + 1
            idx += 1  # the comma

    def items(self, idx: int, ptr: str, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        idx = self.skip(idx)
        if self.text[idx] == "]":
            return out, idx + 1
        while True:
            item, idx = self.value(idx, f"{ptr}/{len(out)}", depth)
            out.append(item)
            idx = self.skip(idx)
            if self.text[idx] == "]":
                return out, idx + 1
            idx += 1


def _decode_text(raw: bytes, doc: JsonDocument, codes: JsonCodes) -> str | None:
    if raw.startswith(b"\xef\xbb\xbf"):
        doc.findings.append(finding(codes.encoding, doc.path, "the file starts with a UTF-8 byte-order mark",
                                    line=1, severity=Severity.WARNING,
                                    hint="Save the file as UTF-8 without a BOM; some JSON readers reject it."))
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        doc.findings.append(finding(codes.encoding, doc.path,
                                    f"byte 0x{raw[exc.start]:02x} at line {line}, column {column} is not UTF-8",
                                    line=line))
        return None


def _syntax_finding(text: str, doc: JsonDocument, codes: JsonCodes) -> bool:
    """Decode once with the stdlib for its precise messages; True when the text is valid JSON."""
    try:
        json.loads(text, **_HOOKS)
    except _NonFinite as exc:
        # the hooks are not told where the value is; the first bare occurrence is close enough
        match = re.search(rf"(?<![\w\"]){re.escape(exc.token)}", text)
        line = _Lines(text).at(match.start())[0] if match else None
        doc.findings.append(finding(codes.invalid, doc.path, f"{exc} is not a JSON value", line=line))
        return False
    except json.JSONDecodeError as exc:
        where = f"(line {exc.lineno}, column {exc.colno})"
        msg = f"invalid JSON: {exc.msg} {where}" if text.strip() else "the file is empty"
        doc.findings.append(finding(codes.invalid, doc.path, msg, line=exc.lineno))
        return False
    except RecursionError:
        doc.findings.append(finding(codes.invalid, doc.path, "the document is nested too deeply to decode"))
        return False
    return True


def parse_json(raw: bytes, display: str, *, codes: JsonCodes | None = None, require_object: bool = True,
               max_bytes: int = MAX_BYTES) -> JsonDocument:
    """Decode bytes; every problem is a finding on the returned document."""
    codes = codes or JsonCodes()
    doc = JsonDocument(display)
    if len(raw) > max_bytes:
        doc.findings.append(finding(codes.too_large, display, f"{len(raw)} bytes is larger than {max_bytes}"))
        return doc
    text = _decode_text(raw, doc, codes)
    if text is None or not _syntax_finding(text, doc, codes):
        return doc
    walker = _Walker(text)
    try:
        doc.data, _ = walker.value(0, "", 0)
    except RecursionError:  # json.loads (in C) nests deeper than Python frames allow
        doc.findings.append(finding(codes.invalid, doc.path, "the document is nested too deeply to decode"))
        return doc
    doc.decoded = True
    doc.value_pos, doc.key_pos = walker.value_pos, walker.key_pos
    for pointer, first, second, same in walker.duplicates:
        doc.findings.append(_duplicate(doc, codes, pointer, first, second, same))
    if require_object and not isinstance(doc.data, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        kind = kinds.get(type(doc.data), "a number")
        doc.findings.append(finding(codes.not_object, display, f"the top level is {kind}, not an object", line=1))
    return doc


def _duplicate(doc: JsonDocument, codes: JsonCodes, pointer: str, first: tuple[int, int],
               second: tuple[int, int], same: bool) -> Finding:
    """Equal values repeated are untidy (warning); different values silently lose one (catalogue severity)."""
    key = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
    what = "with the same value" if same else "with different values; JSON readers keep only the last"
    return finding(
        codes.duplicate,
        doc.path,
        f'key "{key}" appears twice (lines {first[0]} and {second[0]}) {what}',
        line=second[0],
        pointer=pointer,
        severity=Severity.WARNING if same else None,
        related=[Location(doc.path, first[0], pointer)],
    )


def read_json(path: str | Path, display: str | None = None, *, codes: JsonCodes | None = None,
              require_object: bool = True, max_bytes: int = MAX_BYTES) -> JsonDocument:
    """Read and decode one file. Never raises for bad content or an unreadable file."""
    display = display if display is not None else str(path)
    codes = codes or JsonCodes()
    try:
        with open_regular(path) as stream:
            raw = stream.read(max_bytes + 1)
    except OSError as exc:
        doc = JsonDocument(display)
        doc.findings.append(finding(codes.unreadable, display, f"cannot read the file: {exc.strerror or exc}"))
        return doc
    return parse_json(raw, display, codes=codes, require_object=require_object, max_bytes=max_bytes)
