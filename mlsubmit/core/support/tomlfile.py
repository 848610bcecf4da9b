"""TOML from users and trees (mlsubmit.toml, prices.toml, the package config), parsed within bounds.

tomllib recurses once per level of nesting: a file of a few thousand `[` raises RecursionError, and data a little
less deep makes schema validation recurse out later. Both are a TOMLDecodeError here, which every caller already
turns into a finding or a usage error.
"""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

TOMLDecodeError = tomllib.TOMLDecodeError
MAX_DEPTH = 32  # tables and arrays within each other; real configs use three or four


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
    """tomllib.loads, with nesting over MAX_DEPTH (or deep enough to exhaust the stack) a TOMLDecodeError."""
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
