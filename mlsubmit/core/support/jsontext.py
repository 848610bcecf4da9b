"""JSON from files mlsubmit did not write itself (system files, cache entries, reports, RCP files), decoded within
bounds: every problem is one exception, `JsonLimitError` (a ValueError, which callers already catch).

json.loads raises RecursionError on nesting a few thousand deep, accepts data a little less deep that later code
walking it recursively (str(), schema validation, a summary's cells) cannot, turns NaN, Infinity and 1e999 into
non-finite floats, and raises ValueError (Python's 4,300-digit limit) on long integers. Here nesting is bounded
before decoding, by a scan of the text that only runs when it holds more brackets than the bound (never for the
flat files that are the rule), and numbers are finite floats and integers Python can write back.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mlsubmit.core.support.numbers import MAX_DIGITS

MAX_DEPTH = 64  # objects and arrays within each other; system files use two, cache entries and reports six


class JsonLimitError(ValueError):
    """Not JSON, or JSON beyond the bounds (too deep, a number that is not finite, an integer too long)."""


# strings (whose brackets do not count) and the brackets themselves
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_OPEN = frozenset("[{")


_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


def _within(text: str, bound: int) -> bool:
    """True when `text` surely nests no deeper than `bound`: strings and all but brackets dropped, innermost pairs
    are removed `bound` times over, each pass in C; what is left is deeper nesting (or unbalanced brackets)."""
    brackets = _NOT_BRACKET.sub("", _STRINGS.sub("", text))
    for _ in range(bound):
        if not brackets:
            return True
        brackets = _PAIR.sub("", brackets)
    return not brackets


def nesting_depth(text: str, bound: int = MAX_DEPTH) -> int:
    """How deeply arrays and objects nest in `text`, counted up to just past `bound` (JSON syntax is not checked);
    at most `bound` where it is within it."""
    if text.count("[") + text.count("{") <= bound or _within(text, bound):
        return min(bound, text.count("[") + text.count("{"))
    level = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _OPEN:
            level += 1
            if level > deepest:
                deepest = level
                if deepest > bound:
                    break
        elif token in "]}":
            level -= 1
    return deepest


def _constant(name: str) -> Any:
    raise JsonLimitError(f"{name} is not a JSON number")


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise JsonLimitError(f"an integer of {len(text.lstrip('-'))} digits")
    return int(text)


def _real(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"{text[:40]} is out of a float's range")
    return value


_FINITE = json.JSONDecoder(parse_constant=_constant, parse_int=_integer, parse_float=_real)
_ANY_FLOAT = json.JSONDecoder(parse_int=_integer)  # NaN and Infinity as Python writes them (json.dumps)


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH, finite: bool = True) -> Any:
    """Decode JSON text (bytes as json.loads decodes them); JsonLimitError for invalid text or text beyond the
    bounds. `finite=False` accepts NaN and ±Infinity, as Python's own json.dumps writes them (our cache entries)."""
    try:
        # as json.loads decodes bytes: UTF-8 (with or without a BOM), UTF-16 or UTF-32
        text = data.decode(json.detect_encoding(data), "surrogatepass") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise JsonLimitError(f"not text: {exc.reason} at byte {exc.start}") from None
    if nesting_depth(text, max_depth) > max_depth:
        raise JsonLimitError(f"nested more than {max_depth} levels deep")
    try:
        return (_FINITE if finite else _ANY_FLOAT).decode(text)
    except JsonLimitError:
        raise
    except RecursionError:  # cannot happen within the bound, but the stack may already be deep
        raise JsonLimitError("nested too deeply to decode") from None
    except ValueError as exc:
        raise JsonLimitError(str(exc)) from None
