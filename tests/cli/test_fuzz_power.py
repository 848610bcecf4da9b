"""Property-based tests: power logs under hostile content. Whatever the records (values of any JSON type, NaN,
huge numbers, times out of order or equal, records missing, bytes that are not MLLOG), the power rules and the
energy score never raise, every finding has a catalogued code, the file's path and a line inside the file, and
an energy is either a finite number or None with a reason."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.power.energy import node_energy, switch_energy
from mlsubmit.checker.power.measurement import check_node_log, check_switch_log
from mlsubmit.checker.power.power_log import read_power_log

from mlsubmit.core.codes import catalogue

FUZZ = settings(deadline=None, database=None, max_examples=150,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
KEYS = ["power_measurement_start", "power_measurement_stop", "power_reading", "conversion_eff",
        "interconnect_power_est", "run_start"]  # fmt: skip
VALUES = st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=True) | st.text(max_size=5) \
    | st.lists(st.integers(), max_size=2)  # fmt: skip
TIMES = st.integers(0, 10_000) | st.floats(0, 10_000, allow_nan=False)


@st.composite
def power_log(draw: Any) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 30))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.binary(max_size=40)))
            continue
        record = {"namespace": "", "time_ms": draw(TIMES), "event_type": "POINT_IN_TIME",
                  "key": draw(st.sampled_from(KEYS)), "value": draw(VALUES), "metadata": {}}
        lines.append(b":::MLLOG " + json.dumps(record).encode())
    return b"\n".join(lines) + b"\n"


def _facts() -> LogFacts:
    return LogFacts(path="result_0.txt", first={"run_start": Occurrence(None, {}, 1000.0, 1)},
                    series={"run_stop": [Occurrence(None, {"status": "success"}, 5000.0, 9)]})  # fmt: skip


@FUZZ
@given(data=power_log(), ttt=st.floats(0, 1e7, allow_nan=False))
def test_power_rules_and_energy_never_raise(data: bytes, ttt: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "node_0.txt"
        path.write_bytes(data)
        log = read_power_log(path, "power/result_0/node_0.txt")
    lines = data.count(b"\n") + 1
    codes = catalogue()
    for facts in (_facts(), None):
        for f in check_node_log(log, facts) + check_switch_log(log, facts):
            assert f.code in codes and f.path == "power/result_0/node_0.txt" and f.message, f
            assert f.line is None or 1 <= f.line <= lines, (f, lines)
    for energy in (node_energy(log, ttt), switch_energy(log, ttt)):
        assert (energy.joules is None) == (energy.reason is not None), energy
