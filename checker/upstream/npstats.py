"""numpy's `mean` and `interp` in plain Python, with numpy's floating-point order, for the RCP check.

The RCP check needs numpy for an olympic mean and a two-point interpolation; importing numpy costs more than
checking a results folder. These give bit-for-bit numpy's results for the inputs the check makes (lists of
floats, a sorted `xp`): `mean` sums as numpy's pairwise summation does (eight accumulators in blocks of up to 128,
halves above that) and divides by the count; `interp` follows numpy's C loop (edges, exact hits, the slope form
and its NaN retry). tests/unit/checker/upstream/test_npstats.py holds both to numpy on random inputs. Anything else the
reference's module asks numpy for goes to numpy itself (`stand_in`).
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence
from typing import Any

_BLOCK = 128  # numpy's PW_BLOCKSIZE


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += a[i]
        return total
    if n <= _BLOCK:
        r = [a[lo + j] for j in range(8)]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[lo + i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            total += a[lo + k]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


class Float64(float):
    """A float that divides as numpy's float64 does (inf or NaN where Python raises): np.mean returns one, and the
    reference divides by it (`RCP Mean / mean`)."""

    def __truediv__(self, other: Any) -> float:
        return divide(float(self), float(other))

    def __rtruediv__(self, other: Any) -> float:
        return divide(float(other), float(self))


def mean(values: Sequence[Any]) -> Float64:
    """np.mean of a 1-D list of numbers; NaN (numpy also warns) for an empty one."""
    data = [float(v) for v in values]
    if not data:
        return Float64(math.nan)
    return Float64(_pairwise(data, 0, len(data)) / len(data))


def interp(x: Any, xp: Sequence[Any], fp: Sequence[Any]) -> float:
    """np.interp for a scalar x and increasing xp (the reference passes two points)."""
    xv, xs, fs = float(x), [float(v) for v in xp], [float(v) for v in fp]
    if len(xs) != len(fs) or not xs:
        raise ValueError("fp and xp are not of the same length, or are empty")
    if math.isnan(xv):
        return xv
    if len(xs) == 1:
        return fs[0]
    if xv > xs[-1]:
        return fs[-1]
    if xv < xs[0]:
        return fs[0]
    j = 0
    while j < len(xs) - 1 and xs[j + 1] <= xv:
        j += 1
    if j == len(xs) - 1 or xs[j] == xv:
        return fs[j]
    slope = (fs[j + 1] - fs[j]) / (xs[j + 1] - xs[j])
    result = slope * (xv - xs[j]) + fs[j]
    if math.isnan(result):  # numpy retries from the right-hand point, then takes a flat segment's value
        result = slope * (xv - xs[j + 1]) + fs[j + 1]
        if math.isnan(result) and fs[j] == fs[j + 1]:
            result = fs[j]
    return result


def divide(a: float, b: float) -> float:
    """a / b with numpy's float64 answer where Python would raise (b == 0)."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def stand_in() -> types.ModuleType:
    """A `numpy` for the reference's RCP module: mean and interp from here, anything else from numpy."""
    module = types.ModuleType("numpy")
    module.mean = mean  # type: ignore[attr-defined]
    module.interp = interp  # type: ignore[attr-defined]

    def __getattr__(name: str) -> Any:
        # lazy: numpy: ~260 ms to import; the stand-ins exist so that a check never pays it
        import numpy

        return getattr(numpy, name)

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module
