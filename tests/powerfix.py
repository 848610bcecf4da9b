"""Power logs for tests, written with mlperf_logging.mllog as its examples/power/power_measurement.py writes them:
power_measurement_start, conversion_eff (metadata measurement_type), one power_reading a second (metadata host),
power_measurement_stop; switch logs carry interconnect_power_est."""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlperf_logging.mllog import constants as c
from mlperf_logging.mllog.mllog import MLLogger


@dataclass
class PowerSpec:
    start_ms: int
    stop_ms: int
    watts: float = 5000.0
    period_ms: int = 1000
    efficiency: Any = 0.94
    host: str = "node_0"
    omit: tuple[str, ...] = ()
    readings: Sequence[tuple[int, Any]] | None = None  # (time_ms, value) instead of the regular ones
    extra: list[tuple[str, Any, int]] = field(default_factory=list)  # (key, value, time_ms) at the end


def _logger() -> tuple[MLLogger, io.StringIO, logging.Logger]:
    buffer = io.StringIO()
    logger = logging.getLogger(f"tests.powerfix.{id(buffer)}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.handlers = [logging.StreamHandler(buffer)]
    return MLLogger(logger=logger, default_namespace=""), buffer, logger


def render(spec: PowerSpec) -> str:
    mll, buffer, logger = _logger()
    if c.POWER_MEASUREMENT_START not in spec.omit:
        mll.start(key=c.POWER_MEASUREMENT_START, time_ms=spec.start_ms)
    if c.CONVERTION_EFF not in spec.omit:
        mll.event(key=c.CONVERTION_EFF, value=spec.efficiency, metadata={"measurement_type": "AC"},
                  time_ms=spec.start_ms)  # fmt: skip
    readings = spec.readings
    if readings is None:
        readings = [(t, spec.watts) for t in range(spec.start_ms + spec.period_ms, spec.stop_ms + 1, spec.period_ms)]
    for t, value in readings:
        mll.event(key=c.POWER_READING, value=value, metadata={"host": spec.host}, time_ms=t)
    for key, value, t in spec.extra:
        mll.event(key=key, value=value, time_ms=t)
    if c.POWER_MEASUREMENT_STOP not in spec.omit:
        mll.end(key=c.POWER_MEASUREMENT_STOP, time_ms=spec.stop_ms)
    logger.handlers = []
    return buffer.getvalue()


def render_switch(watts: Any, time_ms: int, efficiency: Any = 1.0) -> str:
    mll, buffer, logger = _logger()
    mll.event(key=c.CONVERTION_EFF, value=efficiency, time_ms=time_ms)
    mll.event(key=c.INTERCONNECT_POWER_EST, value=watts, metadata={"host": "sw_0"}, time_ms=time_ms)
    logger.handlers = []
    return buffer.getvalue()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_window(result_log: Path) -> tuple[int, int]:
    """(run_start, run_stop) time_ms of a result log written by fixtures.synth."""
    import json

    times = {}
    for line in result_log.read_text("utf-8").splitlines():
        if ":::MLLOG " in line:
            record = json.loads(line.split(":::MLLOG ", 1)[1])
            if record["key"] in ("run_start", "run_stop"):
                times.setdefault(record["key"], int(record["time_ms"]))
    return times["run_start"], times["run_stop"]


def power_for(result_log: Path, *, nodes: int = 1, switches: int = 0, margin_ms: int = 2000, **changes: Any) -> Path:
    """power/<result name>/node_<j>.txt (and sw_<k>.txt) beside a result log, covering its run."""
    start, stop = run_window(result_log)
    folder = result_log.parent / "power" / result_log.stem
    for j in range(nodes):
        spec = PowerSpec(start_ms=start - margin_ms, stop_ms=stop + margin_ms, host=f"node_{j}")
        for key, value in changes.items():
            setattr(spec, key, value)
        write(folder / f"node_{j}.txt", render(spec))
    for k in range(switches):
        write(folder / f"sw_{k}.txt", render_switch(800.0, start))
    return folder
