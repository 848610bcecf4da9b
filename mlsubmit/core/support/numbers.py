"""Numbers from inputs, turned into Python numbers without an exception: integers of any size, non-finite values and
numeric strings are all things a hostile or careless file can hold.

Python raises where one least expects it: `float(10**400)` (OverflowError), `int("9" * 5000)` and `str(10**5000)`
(ValueError: its 4,300-digit limit on int/str conversion), `int(float("inf"))` (OverflowError). Code that reads a
number from a log, a system file or a report goes through these helpers, which answer None for what is no usable
number, so that the caller's finding or default applies.
"""

from __future__ import annotations

import math
from typing import Any

# Python's default limit on converting between int and str (sys.get_int_max_str_digits()); longer text never converts
MAX_DIGITS = 4300
# No count in a system description comes near this (nodes, processors, accelerators, cores); beyond it, products
# and their text grow without bound
MAX_COUNT = 10**9
_WRITABLE = 10**MAX_DIGITS


def finite(value: Any) -> float | None:
    """A JSON number as a finite float; None for a bool, a non-number, NaN, ±inf or an integer beyond a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def whole_number(value: Any, limit: int = MAX_COUNT) -> int | None:
    """A whole number from a JSON integer, an integral float or a string of ASCII digits, within 0..limit; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) and value.is_integer() and abs(value) <= limit else None
    elif isinstance(value, str):
        text = value.strip()
        # str.isdigit alone accepts "¹" and other digits int() refuses; the length test keeps int() in its limit
        digits = text.lstrip("0") or "0"
        value = int(digits) if text.isascii() and text.isdigit() and len(digits) <= len(str(limit)) else None
    if not isinstance(value, int):
        return None
    return value if 0 <= value <= limit else None


def too_large(value: Any, limit: int = MAX_COUNT) -> bool:
    """True for a whole number (integer or digit string) beyond `limit`: a count no system has."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > limit
    if isinstance(value, str):
        text = value.strip().lstrip("0")
        return text.isascii() and text.isdigit() and (len(text) > len(str(limit)) or int(text) > limit)
    return False


def nearly_equal(a: Any, b: Any, rel_tol: float = 1e-6, abs_tol: float = 1e-12) -> bool:
    """Two numbers equal within a tolerance; integers beyond a float's range compare exactly."""
    try:
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    except OverflowError:
        return bool(a == b)


def digits_text(value: int) -> str:
    """An integer as text, or "an integer of N digits" where it is too long to write out (or to convert)."""
    if abs(value) < _WRITABLE:
        return str(value)
    return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
