"""The constraint vocabulary of the closed hyperparameter table: each kind of row, implemented once.

A constraint is data (a mapping with a `kind`, from `checker/tables/hyperparameters-<round>.yaml`); `check_value`
evaluates it against a logged value and returns an `Outcome` saying whether it holds, what is allowed, and a nearby
allowed value where one can be computed. `lookup` gives the values of other keys (for formulas of the global batch
size, shared multipliers, one key as a multiple of another, and the batch size -> learning rate side tables with
their in-between rules). Nothing in the data is executed: formulas are sums of constants, other keys and
a*b/batch terms (rounded up, down or not at all), stated as data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tolerance:
    """Two numbers are equal when |a - b| <= max(relative * max(|a|, |b|), absolute)."""

    relative: float = 1e-6
    absolute: float = 1e-12

    def close(self, a: float, b: float) -> bool:
        if a == b:
            return True
        if math.isinf(a) or math.isinf(b):
            return False
        return abs(a - b) <= max(self.relative * max(abs(a), abs(b)), self.absolute)

    def integral(self, q: float) -> bool:
        return math.isfinite(q) and abs(q - round(q)) <= self.relative * max(1.0, abs(q))


@dataclass(frozen=True)
class Outcome:
    ok: bool
    allowed: str
    detail: str = ""
    skipped: bool = False  # a value the constraint needs (the batch size) is missing: nothing can be said


Lookup = Callable[[str], Any]  # policy name -> first logged value, or None


def _num(value: Any) -> float | None:
    """A number from a log value; None for booleans, NaN, non-numbers and integers too big for a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        n = float(value)
    except OverflowError:  # JSON integers are unbounded
        return None
    return None if math.isnan(n) else n


def show_value(value: Any) -> str:
    """A value as the message shows it: JSON, with integral floats of our own arithmetic written as integers."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, list) and len(value) <= 8 and all(isinstance(v, (int, float)) for v in value):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _same(expected: Any, value: Any, tol: Tolerance) -> bool:
    """Equality for table values: booleans and strings exactly, numbers within the tolerance, lists per item."""
    if isinstance(expected, (bool, str)):
        return type(value) is type(expected) and value == expected
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(
            _same(e, v, tol) for e, v in zip(expected, value, strict=True)
        )
    n = _num(value)
    return n is not None and tol.close(n, float(expected))


# --- the constraint vocabulary: kind -> (spec, value, lookup, tolerance) -> Outcome -------------------------


def _any(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    return Outcome(True, "any value")


def _fixed(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    return Outcome(_same(spec["value"], value, tol), show_value(spec["value"]))


def _one_of(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    ok = any(_same(v, value, tol) for v in spec["values"])
    return Outcome(ok, "one of " + ", ".join(show_value(v) for v in spec["values"]))


def _integer(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    low = spec.get("min")
    n = _num(value)
    # A float with an integral value (37.0) is accepted: frameworks log integers through float variables.
    ok = n is not None and math.isfinite(n) and n.is_integer() and (low is None or n >= low)
    return Outcome(ok, "an integer" + (f" >= {low}" if low is not None else ""))


_BOUNDS = {"gt": (">", float.__gt__), "ge": (">=", float.__ge__), "lt": ("<", float.__lt__), "le": ("<=", float.__le__)}


def _range(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    n = _num(value)
    parts = [(sym, test, float(spec[k])) for k, (sym, test) in _BOUNDS.items() if k in spec]
    ok = n is not None and all(test(n, bound) for _, test, bound in parts)
    return Outcome(ok, " and ".join(f"{sym} {show_value(bound)}" for sym, _, bound in parts))


def _multiple_of(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base = float(spec["base"])
    n = _num(value)
    ok = n is not None and math.isfinite(n) and tol.integral(n / base)
    return Outcome(ok, f"{show_value(base)}*k for an integer k")


def _power_of_two_multiple(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base = float(spec["base"])
    n = _num(value)
    exponent = math.log2(n / base) if n is not None and n > 0 and math.isfinite(n / base) else None
    allowed = f"{show_value(base)}*2^N for an integer N"
    if exponent is None:
        return Outcome(False, allowed)
    if tol.integral(exponent):
        return Outcome(True, allowed)
    near = round(exponent)
    return Outcome(False, allowed, f"; nearest: {show_value(base * 2.0**near)} (N={near})")


def _shape(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    dims = list(spec["dims"])
    trailing = bool(spec.get("trailing_ones"))
    allowed = show_value(dims) + (" (a trailing channel dimension of 1 may follow)" if trailing else "")
    if not isinstance(value, list) or len(value) < len(dims):
        return Outcome(False, allowed)
    head, tail = value[: len(dims)], value[len(dims) :]
    ok = _same(dims, head, tol) and (not tail or (trailing and all(_same(1, t, tol) for t in tail)))
    return Outcome(ok, allowed)


def _terms(spec: Mapping[str, Any], value: Any, lookup: Lookup) -> list[float] | None:
    """The numbers a multiplier rule ties together: elements of this value or values of other keys."""
    out: list[float] = []
    for term in spec["terms"]:
        v = lookup(term["name"]) if "name" in term else value
        if "index" in term:
            v = v[term["index"]] if isinstance(v, list) and len(v) > term["index"] else None
        n = _num(v)
        if n is None or not math.isfinite(n):
            return None
        out.append(n)
    return out


def _multiplier(spec: Mapping[str, Any], value: Any, lookup: Lookup, scale: float,
                slack: Callable[[float], float], allowed: str) -> Outcome:
    """Is there one integer k with value_i == base_i * scale * (1 + k/d) for every term (within `slack`)?"""
    if "length" in spec and not (isinstance(value, list) and len(value) == spec["length"]):
        return Outcome(False, allowed, f"; a list of {spec['length']} numbers is needed")
    values = _terms(spec, value, lookup)
    if values is None:
        return Outcome(False, allowed)
    d = int(spec["denominator"])
    bases = [float(t["base"]) * scale for t in spec["terms"]]
    raw = [d * (v / b - 1) for v, b in zip(values, bases, strict=True)]
    if not all(math.isfinite(k) for k in raw):
        return Outcome(False, allowed)
    candidates = {f(k) for k in raw for f in (math.floor, math.ceil)}

    def fits(k: int) -> bool:
        return all(abs(v - b * (1 + k / d)) <= slack(b * (1 + k / d)) for v, b in zip(values, bases, strict=True))

    if any(fits(k) for k in candidates):
        return Outcome(True, allowed)
    k = round(raw[0])
    nearest = [round(b * (1 + k / d), 6) for b in bases]
    return Outcome(False, allowed, f"; with k={k} that is {show_value(nearest)}")


def _shared_multiplier(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    bases = [t["base"] for t in spec["terms"]]
    allowed = f"{show_value(bases)}*(1 + k/{spec['denominator']}) with one integer k"
    return _multiplier(spec, value, lookup, 1.0, lambda x: max(tol.relative * abs(x), tol.absolute), allowed)


def _batch_formula(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    bases = [t["base"] for t in spec["terms"]]
    ref, name = spec["reference_batch"], spec["batch"]
    allowed = (f"{show_value(bases)}*(1 + K/{spec['denominator']})*{show_value(ref)}/{name} with one integer K "
               f"(each within {show_value(spec['rounding'])} of the exact value)")
    batch = _num(lookup(name))
    if batch is None or batch <= 0 or not math.isfinite(batch):
        return Outcome(True, allowed, skipped=True)
    rounding = float(spec["rounding"]) + 1e-9
    out = _multiplier(spec, value, lookup, float(ref) / batch, lambda x: rounding, allowed)
    return Outcome(out.ok, allowed, f"; {name} is {show_value(batch)}{out.detail}")


def _per_chip_multiple(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base, also, name = int(spec["base"]), list(spec.get("also", [])), spec["batch"]
    allowed = (" or ".join(show_value(a) for a in also) + " or " if also else "") + (
        f"{base}*m where m (the batch per chip) divides {name}")
    n = _num(value)
    if n is None:
        return Outcome(False, allowed)
    if any(tol.close(n, float(a)) for a in also):
        return Outcome(True, allowed)
    m = n / base
    if not (tol.integral(m) and round(m) >= 1):
        return Outcome(False, allowed)
    batch = _num(lookup(name))
    if batch is None or not batch.is_integer() or batch <= 0:
        return Outcome(True, allowed, skipped=True)
    ok = int(batch) % round(m) == 0
    return Outcome(ok, allowed, "" if ok else f"; {name} is {show_value(batch)}, which {round(m)} does not divide")


def _fraction_of(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    base = float(spec["base"])
    n = _num(value)
    ok = n is not None and n > 0 and math.isfinite(n) and tol.integral(base / n) and round(base / n) >= 1
    return Outcome(ok, f"{show_value(base)}/k for an integer k")


def _any_of(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    outs = [KINDS[c["kind"]](c, value, lookup, tol) for c in spec["of"]]
    return Outcome(any(o.ok for o in outs), " or ".join(o.allowed for o in outs))


# --- formulas of other keys and of the global batch size (TR3.0+ GPT-3, TR5.0+ Llama 3.1, TR6.0 DeepSeek) ----


# A batch size term a*b/batch: rounded up as the tables write it, down as some reference code computes it, or
# left unrounded as some accepted runs log it (the readings of a row, `readings` in the table files).
_ROUNDINGS = ("ceil", "floor", "ratio")


def _batch_term(term: Mapping[str, Any]) -> tuple[str, float, float] | None:
    how = next((r for r in _ROUNDINGS if r in term), None)
    if how is None:
        return None
    a, b = term[how]
    return how, a, b


def _term_text(term: Mapping[str, Any]) -> str:
    if "constant" in term:
        return show_value(term["constant"])
    batch_term = _batch_term(term)
    if batch_term is not None:
        how, a, b = batch_term
        body = f"{show_value(a)}*{show_value(b)}/{term['batch']}"
        return body if how == "ratio" else f"{how}({body})"
    return term["name"]


def _formula_text(spec: Mapping[str, Any]) -> str:
    text = ""
    for term in spec["terms"]:
        factor = float(term.get("factor", 1))
        body = _term_text(term)
        if abs(factor) != 1:
            body = f"{body} * {show_value(abs(factor))}"
        text += (" - " if factor < 0 else " + ") + body if text else ("-" if factor < 0 else "") + body
    return text


def _term_value(term: Mapping[str, Any], lookup: Lookup) -> float | None:
    if "constant" in term:
        return float(term["constant"])
    batch_term = _batch_term(term)
    if batch_term is not None:
        batch = _num(lookup(term["batch"]))
        if batch is None or batch <= 0 or not batch.is_integer():
            return None
        how, a, b = batch_term
        top = a * b
        if how == "ratio":
            return top / batch
        # Integers divide exactly (8000*1152/960 is 9600, not 9600.000000001 rounded up to 9601).
        if float(top).is_integer():
            quotient = int(top) // int(batch) if how == "floor" else -(-int(top) // int(batch))
            return float(quotient)
        return float(math.floor(top / batch) if how == "floor" else math.ceil(top / batch))
    return _num(lookup(term["name"]))


def _formula(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    allowed = _formula_text(spec)
    parts = [_term_value(t, lookup) for t in spec["terms"]]
    if any(p is None or not math.isfinite(p) for p in parts):
        return Outcome(True, allowed, skipped=True)  # a key the formula reads is missing: nothing to say
    expected = sum(float(t.get("factor", 1)) * float(p or 0) for t, p in zip(spec["terms"], parts, strict=True))
    n = _num(value)
    ok = n is not None and tol.close(n, expected)
    inputs = sorted({t.get("batch") or t.get("name") for t in spec["terms"] if "constant" not in t})
    given = ", ".join(f"{k} {show_value(lookup(k))}" for k in inputs if k)
    return Outcome(ok, allowed, "" if ok else f"; that is {show_value(round(expected, 12))} with {given}")


def _in_band(band: Mapping[str, Any], x: float) -> bool:
    return all(test(x, float(band[k])) for k, (_, test) in _BOUNDS.items() if k in band)


def _band_text(band: Mapping[str, Any]) -> str:
    return " and ".join(f"{sym} {show_value(band[k])}" for k, (sym, _) in _BOUNDS.items() if k in band)


def _band_outcome(band: Mapping[str, Any], n: float | None, batch: float, tol: Tolerance) -> tuple[bool, str]:
    """Does the value fit the band's rule: one of its listed values, or its scaling rule rounded as it says?"""
    if "values" in band:
        return (n is not None and any(tol.close(n, float(v)) for v in band["values"]),
                " or ".join(show_value(v) for v in band["values"]))
    ratio = batch / float(band["reference_batch"])
    exact = float(band["base"]) * (math.sqrt(ratio) if band["scale"] == "sqrt" else ratio)
    how = "sqrt" if band["scale"] == "sqrt" else ""
    scaled = f"{show_value(band['base'])} * {how}({band['batch_name']}/{show_value(band['reference_batch'])})"
    if "decimals" not in band:  # a reading that scales without rounding (as a reference's code computes it)
        return n is not None and tol.close(n, exact), f"{scaled} = {show_value(exact)}"
    digits = int(band["decimals"])
    rounded = round(exact, digits)
    # "rounded to the Nth decimal place": the value itself, or anything that rounds to it.
    ok = n is not None and (tol.close(n, rounded) or abs(n - exact) <= 0.5 * 10.0**-digits * (1 + 1e-9))
    return ok, f"{scaled} rounded to {digits} decimals = {show_value(rounded)}"


def _batch_table(spec: Mapping[str, Any], value: Any, lookup: Lookup, tol: Tolerance) -> Outcome:
    name = spec["batch"]
    batch = _num(lookup(name))
    listed = ", ".join(f"{show_value(b)}: {show_value(v)}" for b, v in spec.get("rows", ()))
    if batch is None or not math.isfinite(batch) or batch <= 0:
        return Outcome(True, f"the table's value for the {name} ({listed})", skipped=True)
    n = _num(value)
    for b, v in spec.get("rows", ()):
        if tol.close(batch, float(b)):
            return Outcome(n is not None and tol.close(n, float(v)), show_value(v), f" ({name} {show_value(batch)}, "
                           "a row of the table)")
    for band in spec.get("bands", ()):
        if _in_band(band, batch):
            ok, allowed = _band_outcome({**band, "batch_name": name}, n, batch, tol)
            return Outcome(ok, allowed, f" ({name} {show_value(batch)} is {_band_text(band)})")
    return Outcome(False, f"a {name} the table covers ({listed})",
                   f"; {name} {show_value(batch)} is outside it: {spec.get('outside', 'not allowed')}")


KINDS: dict[str, Callable[[Mapping[str, Any], Any, Lookup, Tolerance], Outcome]] = {
    "any": _any,
    "fixed": _fixed,
    "one_of": _one_of,
    "integer": _integer,
    "range": _range,
    "multiple_of": _multiple_of,
    "power_of_two_multiple": _power_of_two_multiple,
    "shape": _shape,
    "shared_multiplier": _shared_multiplier,
    "batch_formula": _batch_formula,
    "per_chip_multiple": _per_chip_multiple,
    "fraction_of": _fraction_of,
    "any_of": _any_of,
    "formula": _formula,
    "batch_table": _batch_table,
}


def check_value(constraint: Mapping[str, Any], value: Any, lookup: Lookup | None = None,
                tolerance: Tolerance | None = None) -> Outcome:
    """Evaluate one constraint of the vocabulary (`lookup` gives other keys' values by name)."""
    return KINDS[constraint["kind"]](constraint, value, lookup or (lambda name: None), tolerance or Tolerance())
