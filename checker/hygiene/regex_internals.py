"""CPython's private regular-expression parser and compiler (`re._parser`, `re._compiler`, `re._constants`): the one
module that reaches them.

The secret scan's pre-filter reads a plugin pattern's parsed tree for the literals a match needs (prefilter.py),
and the gate relaxes that tree for Hyperscan, asking re itself which characters one item matches (gate.py). These
modules are private to CPython (3.11 renamed them from sre_parse and sre_compile), so a Python release that moves
them again is met here alone.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# by name: type checkers' stubs do not know them
_compiler: Any = importlib.import_module("re._compiler")
_parser: Any = importlib.import_module("re._parser")
sre: Any = importlib.import_module("re._constants")

__all__ = ["compile_item", "parse", "sre"]


def parse(pattern: re.Pattern[str]) -> Any:
    """The pattern's parse tree (a SubPattern: `.data` its items, `.state` its groups)."""
    return _parser.parse(pattern.pattern, pattern.flags)


def compile_item(op: Any, av: Any, flags: int, state: Any) -> re.Pattern[str]:
    """One item of a parse tree compiled on its own, as re would compile it within its pattern."""
    compiled: re.Pattern[str] = _compiler.compile(_parser.SubPattern(state, [(op, av)]), flags)
    return compiled
