"""A Constraint cell of the rules' hyperparameter table -> one of our constraint kinds (constraints.py), or None.

Only the plain shapes the tables use are read; anything else is left unread for a person (`mlsubmit rounds
draft` lists it), never guessed: a number (with `_` separators, `1e-8`, `10^-4`; a trailing "(disabled)"
allowed), "unconstrained" / "arbitrary constant" (kind any), "fixed to reference (X)", "integer >= N", ">= N" and
the other comparisons, "A or B" of numbers or quoted words, "boolean", a quoted word, True/False, "name * k",
"k * name", "k% of name" and "N - name".
"""

from __future__ import annotations

import re
from typing import Any

_NUMBER = r"[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NAME = r"[a-z][a-z0-9_]*"
_ANY = {"unconstrained", "arbitrary constant", "arbitrary"}
_FIXED_REF = re.compile(r"^fixed to refer[ae]nce \((.+)\)$", re.I)
_COMPARE = re.compile(rf"^(>=|<=|>|<)\s*({_NUMBER})$")
_OPS = {">=": "ge", "<=": "le", ">": "gt", "<": "lt"}
_INTEGER_MIN = re.compile(rf"^integer\s*>=\s*({_NUMBER})$", re.I)
_TIMES = re.compile(rf"^({_NAME})\s*\*\s*({_NUMBER})$|^({_NUMBER})\s*\*\s*({_NAME})$")
_PERCENT = re.compile(rf"^({_NUMBER})%\s+of\s+({_NAME})$")
_POWER = re.compile(r"^10\s*\^\s*(-?\d+)$")
_QUOTED = re.compile(r'^"([^"]+)"$')
_DISABLED = re.compile(r"\s*\((?:disabled|off)\)$", re.I)


def number(text: str) -> int | float | None:
    """A number as the tables write it (1_200_000, 1e-8, 0.9, 10^-4); None when `text` is not one."""
    text = _DISABLED.sub("", text.strip())
    power = _POWER.match(text)
    if power:
        return float(10.0 ** int(power.group(1)))
    if not re.fullmatch(_NUMBER, text):
        return None
    plain = text.replace("_", "")
    if re.fullmatch(r"[-+]?\d+", plain):
        return int(plain)
    return float(plain)


def _scalar(text: str) -> Any:
    """A value of "A or B": a number, a quoted word, or True/False; None when it is none of them."""
    text = text.strip()
    value = number(text)
    if value is not None:
        return value
    quoted = _QUOTED.match(text)
    if quoted:
        return quoted.group(1)
    return {"true": True, "false": False, "inf": float("inf")}.get(text.lower())


def read(text: str) -> dict[str, Any] | None:
    """The constraint a cell states, in our vocabulary; None when the cell is not one of the shapes read."""
    text = " ".join(text.split())
    if text.lower() in _ANY:
        return {"kind": "any"}
    fixed = _FIXED_REF.match(text)
    if fixed:
        value = _scalar(fixed.group(1))
        return None if value is None else {"kind": "fixed", "value": value}
    value = _scalar(text)
    if value is not None:
        return {"kind": "fixed", "value": value}
    if text.lower() == "boolean":
        return {"kind": "one_of", "values": [True, False]}
    return _relation(text) or _alternatives(text) or _formula(text)


def _relation(text: str) -> dict[str, Any] | None:
    at_least = _INTEGER_MIN.match(text)
    if at_least and isinstance(number(at_least.group(1)), int):
        return {"kind": "integer", "min": number(at_least.group(1))}
    compare = _COMPARE.match(text)
    if compare:
        return {"kind": "range", _OPS[compare.group(1)]: number(compare.group(2))}
    return None


def _alternatives(text: str) -> dict[str, Any] | None:
    parts = [p for p in re.split(r"\s+or\s+", text) if p]
    if len(parts) < 2:
        return None
    values = [_scalar(p) for p in parts]
    if any(v is None for v in values):
        return None
    return {"kind": "one_of", "values": values}


def _formula(text: str) -> dict[str, Any] | None:
    """A sum of terms ("A - B + C"): numbers, names, "name * k", "k% of name", "ceil(a * b / name)"."""
    percent = _PERCENT.match(text)
    if percent:
        share = number(percent.group(1))
        return None if share is None else {"kind": "formula", "terms": [{"name": percent.group(2),
                                                                          "factor": share / 100}]}
    terms = []
    for sign, part in _signed_parts(text):
        term = _term(part)
        if term is None:
            return None
        if sign < 0:
            term = {**term, "factor": -term.get("factor", 1)} if "constant" not in term else {
                "constant": term["constant"], "factor": -1}
        terms.append(term)
    return {"kind": "formula", "terms": terms} if terms and any("constant" not in t for t in terms) else None


def _signed_parts(text: str) -> list[tuple[int, str]]:
    """The terms of a sum outside parentheses, each with its sign."""
    parts: list[tuple[int, str]] = []
    depth, sign, start = 0, 1, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and ch in "+-" and i > 0 and text[i - 1] == " ":
            parts.append((sign, text[start:i].strip()))
            sign, start = (1 if ch == "+" else -1), i + 1
    parts.append((sign, text[start:].strip()))
    return parts


_ROUNDED = re.compile(rf"^(ceil|floor)\(\s*({_NUMBER})\s*\*\s*({_NUMBER})\s*/\s*({_NAME})\s*\)$")


def _term(text: str) -> dict[str, Any] | None:
    value = number(text)
    if value is not None:
        return {"constant": value}
    if re.fullmatch(_NAME, text):
        return {"name": text}
    times = _TIMES.match(text)
    if times:
        name, factor = (times.group(1), times.group(2)) if times.group(1) else (times.group(4), times.group(3))
        return {"name": name, "factor": number(factor)}
    rounded = _ROUNDED.match(text)
    if rounded:
        return {rounded.group(1): [number(rounded.group(2)), number(rounded.group(3))], "batch": rounded.group(4)}
    return None
