"""TOML from users and trees (mlsubmit.toml, prices.toml, the package config, waiver files), parsed within bounds.

tomllib recurses once per level of nesting: a file of a few thousand `[` raises RecursionError, and data a little
less deep makes schema validation recurse out later. It also spends time and memory on the square of a dotted key's
parts (`a.a.a...`: 20,000 parts in 40 KB took 1.6 GB), and up to 900 bytes on each table it builds (4 MiB of
30-part dotted keys took 821 MB). So the text is measured before tomllib sees it (size, the parts of each key, how
deeply arrays and inline tables nest, the weight of what it builds: `_scan`), and the data's depth after. Every
refusal is a TOMLDecodeError naming the limit, which every caller already turns into a finding or a usage error.
"""

from __future__ import annotations

import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

TOMLDecodeError = tomllib.TOMLDecodeError
MAX_DEPTH = 32  # tables and arrays within each other; real configs use three or four
MAX_KEY_PARTS = MAX_DEPTH - 1  # each part of a dotted key is a table level below the document's own
MAX_CHARS = 32 << 20  # the largest file any reader takes (a written waiver file); the readers' own limits are lower
# What tomllib builds, weighed before it builds it: a table costs it 430 to 900 bytes (its flags too), an array or an
# element of an array of tables about 150, a key with its value about 180. A table (a header's, an inline one, each part
# of a dotted key but the last) weighs TABLE, an array or an array of tables' element 2, a key or a value 1. A written
# waiver file of 50,000 waivers (MAX_WAIVERS) weighs 800,000; at the bound, the heaviest shapes measured take 200 MB.
TABLE = 8
MAX_BUILT = 1_200_000

# The pieces of TOML's grammar the scan steps over whole: strings (a key's quoted part too), bare keys, values.
_BLANK = re.compile(r"[ \t\r]*")
_STRING = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*""""{0,2}'  # multi-line basic: escapes, and up to 2 closing extras
                     r"|'''(?:[^']|'(?!''))*''''{0,2}"  # multi-line literal
                     r'|"(?:[^"\\\n]|\\.)*"'  # basic
                     r"|'[^'\n]*'", re.DOTALL)  # literal
_BARE = re.compile(r"[A-Za-z0-9_-]*")
_SCALAR = re.compile(r"[^ \t\r\n,\]}#]*")  # a number, date or boolean; spaces inside a date end it early (harmless)


class _Scan:
    """One pass over the text that counts what tomllib would build from it, without building it."""

    def __init__(self, text: str) -> None:
        self.text, self.at, self.nest = text, 0, ""  # nest: the open arrays "[" and inline tables "{"
        self.want_key = True  # at a line's start or after "{" or "," in an inline table
        self.built = 0  # what tomllib would build, weighed as MAX_BUILT says

    def build(self, weight: int) -> None:
        self.built += weight
        if self.built > MAX_BUILT:
            raise TOMLDecodeError(f"more tables, keys and values than allowed (they weigh more than {MAX_BUILT:,}: "
                                  f"a table {TABLE}, an array 2, a key or a value 1; at line {self.line()})")

    def line(self) -> int:
        return self.text.count("\n", 0, self.at) + 1

    def key(self, last: int) -> None:
        """Steps over one (dotted) key whose last part weighs `last`; more than MAX_KEY_PARTS parts is refused."""
        text, parts = self.text, 0
        while True:
            self.at = _BLANK.match(text, self.at).end()  # type: ignore[union-attr]
            part = _STRING.match(text, self.at) if text.startswith(("'", '"'), self.at) else None
            self.at = part.end() if part else _BARE.match(text, self.at).end()  # type: ignore[union-attr]
            parts += 1
            if parts > MAX_KEY_PARTS:
                raise TOMLDecodeError(f"a key of more than {MAX_KEY_PARTS} dotted parts (at line {self.line()})")
            self.at = _BLANK.match(text, self.at).end()  # type: ignore[union-attr]
            if not text.startswith(".", self.at):
                self.build(last)
                return
            self.build(TABLE)
            self.at += 1

    def open(self, bracket: str) -> None:
        self.build(TABLE if bracket == "{" else 2)
        self.nest += bracket
        if len(self.nest) + 1 > MAX_DEPTH:  # the document's own table is the first level
            raise TOMLDecodeError(f"tables or arrays nested too deeply (more than {MAX_DEPTH} levels)")
        self.want_key = bracket == "{"

    def step(self) -> bool:
        """Steps over one token; False at the end, or where the text stops being TOML (tomllib says why)."""
        text, at = self.text, self.at
        char = text[at]
        if char in " \t\r":
            self.at = _BLANK.match(text, at).end()  # type: ignore[union-attr]
        elif char == "\n":
            self.at, self.want_key = at + 1, self.want_key or not self.nest
        elif char == "#":
            end = text.find("\n", at)
            self.at = len(text) if end < 0 else end
        elif self.want_key and char != "}":
            last = 1  # a key's
            if char == "[" and not self.nest:  # a table header: [a.b] or [[a.b]]
                last = 2 if text.startswith("[[", at) else TABLE
                self.at = at + (2 if last == 2 else 1)
            self.key(last)
            self.want_key = False
        elif char in "[{":
            self.at = at + 1
            self.open(char)
        elif char in "]}":
            self.at, self.nest, self.want_key = at + 1, self.nest[:-1], False
        elif char in ",=":
            self.at, self.want_key = at + 1, char == "," and self.nest.endswith("{")
        else:
            found = _STRING.match(text, at) if char in "'\"" else _SCALAR.match(text, at)
            if found is None or found.end() == at:
                return False
            self.at = found.end()
            self.build(1)
        return self.at < len(text)


def _scan(text: str) -> None:
    """TOMLDecodeError when the text is larger, or holds a key of more parts or values nested deeper, than allowed."""
    if len(text) > MAX_CHARS:
        raise TOMLDecodeError(f"more than {MAX_CHARS} characters; not read as TOML")
    scan = _Scan(text)
    while scan.at < len(text) and scan.step():
        pass


def _depth(data: Any) -> int:
    """How deeply tables and arrays nest, counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def loads(text: str) -> dict[str, Any]:
    """tomllib.loads within bounds: a text over MAX_CHARS, a key over MAX_KEY_PARTS parts, or nesting over MAX_DEPTH
    (or deep enough to exhaust the stack) is a TOMLDecodeError."""
    _scan(text)
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise TOMLDecodeError(f"tables or arrays nested too deeply (more than {MAX_DEPTH} levels)") from None
    except TOMLDecodeError:
        raise
    except ValueError as exc:  # an integer of more than 4,300 digits: Python's own limit for int()
        raise TOMLDecodeError(f"a value Python cannot hold: {exc}") from None
    if _depth(data) > MAX_DEPTH:
        raise TOMLDecodeError(f"tables or arrays nested too deeply (more than {MAX_DEPTH} levels)")
    return data
