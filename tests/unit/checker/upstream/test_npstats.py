"""npstats against numpy, bit for bit: the RCP check's mean and interpolation must decide as the reference's."""

from __future__ import annotations

import math
import random
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlsubmit.checker.upstream import npstats

FINITE = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)
EPOCHS = st.one_of(st.floats(min_value=0, max_value=1e4, allow_nan=False), st.integers(0, 10**6))


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@settings(max_examples=500, deadline=None, database=None)
@given(st.lists(EPOCHS, min_size=1, max_size=300))
def test_mean_is_numpys(values: list[float]) -> None:
    assert same(npstats.mean(values), float(np.mean(values)))


def test_mean_over_every_block_shape() -> None:
    rng = random.Random(3)
    for n in range(1, 600):  # below 8, one block, several blocks, the recursive halves
        values = [rng.uniform(0, 100) * 10 ** rng.randint(-3, 6) for _ in range(n)]
        assert same(npstats.mean(values), float(np.mean(values))), n
    assert math.isnan(npstats.mean([]))


@settings(max_examples=1000, deadline=None, database=None)
@given(lo=FINITE, width=st.floats(min_value=1e-6, max_value=1e6), x=FINITE, f0=FINITE, f1=FINITE,
       at=st.sampled_from(["inside", "low", "high", "any"]))
def test_interp_is_numpys(lo: float, width: float, x: float, f0: float, f1: float, at: str) -> None:
    hi = lo + width
    x = {"inside": lo + width / 3, "low": lo, "high": hi, "any": x}[at]
    assert same(npstats.interp(x, [lo, hi], [f0, f1]), float(np.interp(x, [lo, hi], [f0, f1])))


def test_interp_on_batch_sizes_like_the_rcps() -> None:
    rng = random.Random(5)
    for _ in range(20000):
        lo = rng.choice([256, 512, 1024, 2048, 3264, 4096, 8192, 16384])
        hi = lo * rng.choice([2, 3, 4])
        x = rng.randint(lo - 10, hi + 10)
        f0, f1 = rng.uniform(1, 90), rng.uniform(1, 90)
        assert same(npstats.interp(x, [lo, hi], [f0, f1]), float(np.interp(x, [lo, hi], [f0, f1])))


@pytest.mark.parametrize(("a", "b"), [(1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (1.0, -0.0), (math.nan, 0.0), (3.0, 2.0)])
def test_divide_is_float64_division(a: float, b: float) -> None:
    with np.errstate(all="ignore"):
        assert same(npstats.divide(a, b), float(np.float64(a) / np.float64(b)))


def test_the_stand_in_takes_anything_else_from_numpy() -> None:
    module = npstats.stand_in()
    assert module.mean is npstats.mean and module.interp is npstats.interp
    assert module.std([1.0, 2.0]) == np.std([1.0, 2.0])


def test_a_warm_rcp_check_imports_no_numpy(tmp_path: object) -> None:
    import subprocess

    code = (
        "import sys, json\n"
        "from mlsubmit.checker.logs.facts import LogFacts\n"
        "from mlsubmit.checker.rcp.verdict import evaluate\n"
        "def line(k, v, **m):\n"
        "    return ':::MLLOG ' + json.dumps({'key': k, 'value': v, 'metadata': m})\n"
        "runs = [LogFacts(path=f'result_{i}.txt', rcp_lines=(line('submission_benchmark', 'resnet'),\n"
        "        line('global_batch_size', 3264), line('eval_accuracy', 0.76, epoch_num=40 + i),\n"
        "        line('run_stop', None, status='success'))) for i in range(5)]\n"
        "print(evaluate('resnet', '1.0.0', runs, closed=True).status, 'numpy' in sys.modules)\n"
    )
    for _ in range(2):  # the first run may build the statistics (with numpy's std); the second reads them
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["pass", "False"]
