"""Run logs for the example files, written with mlperf-logging's own logger (mllog).

mllog stamps every record with its caller's file and line (`metadata.file`, `metadata.lineno`), which would make
the files depend on where this module sits and on every edit above the call. Each record passes both keys itself
(`PINNED`), and mllog keeps what the caller passes over what it found; the warning it logs about the override is
dropped by the handler's filter, which lets through only the INFO records that are the log's lines. `time_ms` is
given on every record, so the files are the same on every run and every machine.

Lines mllog cannot write (a record that is not JSON, NUL bytes, bytes that are not UTF-8) are given as bytes.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from typing import Any

from fixtures.synth import (
    COMMON_KEYS,
    HYPERPARAMETERS,
    LOWER_IS_BETTER,
    SAMPLES,
    SAMPLES_COUNTED,
    SECOND_TARGET,
    TARGETS,
    required_tensors,
)
from mlperf_logging.mllog.mllog import MLLogger

PINNED = {"file": "make_examples.py", "lineno": 1}
START_MS = 1_620_000_000_000
MINUTE = 60_000


@dataclass
class Record:
    kind: str  # the MLLogger method: event, start or end
    key: str
    value: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    t: int = START_MS


@dataclass
class Raw:
    """A line written as given: what a broken job, a bad copy or a hand edit leaves."""

    data: bytes


Entry = Record | Raw


class _Mllog:
    """One logger writing into a buffer; each call gives back the line mllog wrote."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        handler = logging.StreamHandler(self.buffer)
        handler.addFilter(lambda rec: rec.levelno == logging.INFO)
        logger = logging.getLogger(f"mlsubmit.examples.{id(self)}")
        logger.propagate = False
        logger.setLevel(logging.INFO)
        logger.handlers = [handler]
        self.mll = MLLogger(logger=logger, default_namespace="")

    def line(self, rec: Record) -> bytes:
        getattr(self.mll, rec.kind)(key=rec.key, value=rec.value, metadata={**PINNED, **rec.meta}, time_ms=rec.t)
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return text.encode("utf-8")


@dataclass
class Log:
    """A run log as a list of entries; `mark` is the entry an example is about (its line is the expected one)."""

    entries: list[Entry]
    mark: int | None = None

    def find(self, key: str) -> int:
        return next(i for i, e in enumerate(self.entries) if isinstance(e, Record) and e.key == key)

    def record(self, key: str) -> Record:
        rec = self.entries[self.find(key)]
        assert isinstance(rec, Record)
        return rec

    def set(self, key: str, value: Any) -> Log:
        """The first record of `key` logs `value` instead."""
        self.record(key).value = value
        self.mark = self.find(key)
        return self

    def put(self, index: int, entry: Entry) -> Log:
        self.entries[index] = entry
        self.mark = index
        return self

    def insert(self, index: int, entry: Entry) -> Log:
        self.entries.insert(index, entry)
        self.mark = index
        return self

    def after(self, key: str, entry: Entry) -> Log:
        return self.insert(self.find(key) + 1, entry)

    def drop(self, key: str) -> Log:
        del self.entries[self.find(key)]
        return self

    def line(self) -> int | None:
        return None if self.mark is None else self.mark + 1

    def render(self) -> bytes:
        writer = _Mllog()
        return b"".join(writer.line(e) if isinstance(e, Record) else e.data + b"\n" for e in self.entries)


def _quality(benchmark: str, margin: float) -> Any:
    """The logged quality `margin` past the target (short of it when negative), in the benchmark's terms: an
    error rate is lower when better, Mask R-CNN logs box and mask AP."""
    target = TARGETS.get(benchmark, 0.5)
    if benchmark in LOWER_IS_BETTER:
        return round(target - margin, 5)
    if benchmark in SECOND_TARGET:
        return {"BBOX": round(target + margin, 5), "SEGM": round(SECOND_TARGET[benchmark] + margin, 5)}
    return round(target + margin, 5)


def _position(benchmark: str, params: dict[str, Any]) -> dict[str, Any]:
    """The one evaluation's place: epoch 1, or for benchmarks counted in samples, four thirds of the training
    samples in whole batches (where fixtures.synth puts the last evaluation)."""
    if benchmark not in SAMPLES_COUNTED:
        return {"epoch_num": 1}
    batch = int(params.get("global_batch_size", 1))
    return {"samples_count": 4 * SAMPLES[benchmark][0] // 3 // batch * batch}


def closed_run(benchmark: str = "bert", ruleset: str = "1.0.0", *, converge: bool = True,
               hyperparameters: dict[str, Any] | None = None, status: str = "onprem",
               division: str = "closed", quality: Any = None) -> Log:
    """The smallest log the rules pass for a closed run: submission fields, hyperparameters, one epoch, one eval."""
    t = START_MS
    out: list[Entry] = [Record("event", "cache_clear", True, t=t), Record("start", "init_start", t=t)]
    for key, value in (("submission_org", "Graphcore"), ("submission_platform", "IPU-POD16"),
                       ("submission_division", division), ("submission_status", status),
                       ("submission_benchmark", benchmark), ("seed", 42)):
        out.append(Record("event", key, value, t=t))
    params = {**COMMON_KEYS.get(ruleset, {}), **HYPERPARAMETERS.get(benchmark, {}), **(hyperparameters or {})}
    out += [Record("event", key, value, t=t) for key, value in params.items()]
    train, evals = SAMPLES.get(benchmark, (1000, 100))
    out += [Record("event", "train_samples", train, t=t), Record("event", "eval_samples", evals, t=t)]
    out += [Record("event", "weights_initialization", None, {"tensor": name}, t=t)
            for name in required_tensors(ruleset, benchmark)]
    t += 4 * MINUTE
    out += [Record("end", "init_stop", t=t), Record("start", "run_start", t=t)]
    epoch = _position(benchmark, params)
    out += [Record("start", "block_start", None, {"first_epoch_num": 1, "epoch_count": 1}, t=t),
            Record("start", "epoch_start", None, epoch, t=t)]
    t += 20 * MINUTE
    accuracy = _quality(benchmark, 0.004 if converge else -0.05) if quality is None else quality
    out += [Record("end", "epoch_stop", None, epoch, t=t), Record("start", "eval_start", None, epoch, t=t),
            Record("event", "eval_accuracy", accuracy, epoch, t=t), Record("end", "eval_stop", None, epoch, t=t),
            Record("end", "block_stop", None, {"first_epoch_num": 1}, t=t),
            Record("end", "run_stop", None, {"status": "success" if converge else "aborted"}, t=t)]
    return Log(out)


@dataclass
class Example:
    """One finding code shown by a pair of files: `negative` has the fault at `line` (or `pointer`), `positive`
    is the nearest file without it. `argv` is the command before the file (`{file}` stands for it where it is not
    last); paths starting positive/ or negative/ name other example files."""

    code: str
    name: str
    shows: str
    argv: list[str]
    negative: bytes
    positive: bytes
    ext: str = "txt"
    line: int | None = None
    pointer: str | None = None
    result_file: bool = False  # the file must be named result_0.txt (a result file), in a folder named for the code
