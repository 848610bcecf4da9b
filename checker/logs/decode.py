"""One record's JSON, decoded as mlperf-logging's json.loads reads it, with what it warns about (LOG004-LOG008).

The reader (reader.py) takes a fast path for ordinary records (msgspec, or json's scanner) and comes here for the
rest: `decode_record` with every check and message, `duplicate_keys` for the exact repeats.
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec


class RecordError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dups = sorted({k for k, _ in pairs if k in seen or seen.add(k)})  # type: ignore[func-returns-value]
        raise _DuplicateKeys(out, dups)
    return out


class _DuplicateKeys(Exception):
    def __init__(self, obj: dict[str, Any], keys: list[str]) -> None:
        super().__init__(keys)
        self.keys = keys


def _nonfinite(name: str) -> float:
    _NONFINITE_SEEN[0] = True
    return float(name.replace("Infinity", "inf"))


_NONFINITE_SEEN = [False]
_DECODER = json.JSONDecoder(parse_constant=_nonfinite)
_DECODE = _DECODER.decode
# json's C scanner, without decode()'s two regex passes (the fast path only); typeshed does not declare it
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]
# msgspec decodes an ASCII record ~6x faster than json and gives the same value whenever it succeeds: big ints stay
# exact, and it refuses what json would take differently (NaN, overflowing floats, lone surrogates, deep nesting),
# so those lines fall back to the json path and its findings (tests/unit/checker/logs/test_logs_fast.py checks this).
FAST = msgspec.json.Decoder().decode
# msgspec.DecodeError is a ValueError
FAST_ERRORS = (StopIteration, ValueError, RecursionError, KeyError, TypeError, OverflowError)


def clipped_quote(text: str, limit: int = 200) -> str:
    """Log content quoted in a finding's message, at most `limit` characters: a record may hold 16 MiB, and a
    message is kept (up to the log's cap) and written in every report format."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode_record(text: str) -> tuple[str, dict[str, Any], float, list[str]]:
    """Decode the JSON after the token; return key, LogLine-style value, time and warnings, or raise."""
    _NONFINITE_SEEN[0] = False
    warnings: list[str] = []
    try:
        obj = _DECODE(text)
    except RecursionError:
        raise RecordError("LOG004", "record is nested too deeply to decode") from None
    except ValueError as exc:
        raise RecordError("LOG004", f"record is not valid JSON: {exc}") from None
    if _NONFINITE_SEEN[0]:
        warnings.append("LOG008")
    if not isinstance(obj, dict):
        raise RecordError("LOG005", f"record is a JSON {type(obj).__name__}, not an object")
    missing = [k for k in ("time_ms", "key", "value", "metadata") if k not in obj]
    if missing:
        raise RecordError("LOG005", "record has no " + ", ".join(f"'{k}'" for k in missing))
    try:
        ts = float(obj["time_ms"])
    except (TypeError, ValueError, OverflowError):
        raise RecordError("LOG006", f"time_ms {clipped_quote(repr(obj['time_ms']))} is not a number") from None
    if not math.isfinite(ts):  # 1e999 decodes to inf: a run time from it would be infinite or negative
        raise RecordError("LOG006", f"time_ms {json.dumps(obj['time_ms'])} is not a finite number")
    key = obj["key"]
    if not isinstance(key, str):
        raise RecordError("LOG005", f"record key {clipped_quote(repr(key))} is not a string")
    if text.count(":") > shallow_keys(obj):
        warnings.append("LOG007")
    return key, {"value": obj["value"], "metadata": obj["metadata"]}, ts, warnings


def shallow_keys(obj: dict[str, Any]) -> int:
    """Keys in the record, its value and its metadata.

    Every key in JSON text is followed by a colon, so the record's text holds at least this many colons, and
    more exactly when it repeats a key (at any depth), nests a deeper object or has a colon inside a string. Only
    then is the slower, exact duplicate scan run, so ordinary records pay one count of colons for the check.
    """
    n = len(obj)
    for part in (obj["value"], obj["metadata"]):
        if isinstance(part, dict):
            n += len(part)
    return n


def duplicate_keys(text: str) -> list[str]:
    """Second, slower decode only for records that might repeat a key: collect the repeated names."""
    try:
        json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKeys as dup:
        return dup.keys
    except (ValueError, RecursionError):
        pass
    return []


def scan_latin1(raw: bytes) -> tuple[Any, int]:
    """The fast path for a record with bytes past ASCII: json's scanner on the latin-1 text, and the text's colons.
    The value is None unless the text is one JSON value with only whitespace after it and no NaN or Infinity;
    json's errors pass to the caller, which then reads the line with every check and message."""
    body = raw.decode("latin-1")
    _NONFINITE_SEEN[0] = False
    obj, used = _SCAN(body, 0)
    if _NONFINITE_SEEN[0] or not (used == len(body) or body[used:].isspace()):
        obj = None
    return obj, body.count(":")
