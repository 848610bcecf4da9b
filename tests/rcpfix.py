"""Records as mllog writes them, for the RCP tests: whole runs as lines, or as the lines a LogFacts keeps for the
RCP reader (`rcp_lines`), so a test can judge convergence without writing a file."""

from __future__ import annotations

import json
from typing import Any


def line(key: str, value: Any, **metadata: Any) -> str:
    """One record as mllog writes it."""
    record = {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": key, "value": value,
              "metadata": {"file": "train.py", "lineno": 1, **metadata}}  # fmt: skip
    return ":::MLLOG " + json.dumps(record)


def run_lines(epoch: Any, *, bs: Any = 3264, status: str | None = "success", bench: str = "resnet",
              unit: str = "epoch_num") -> list[str]:  # fmt: skip
    """A closed run converging at `epoch` (None: no eval), its last eval before run_stop."""
    out = [line("submission_benchmark", bench), line("submission_division", "closed")]
    if bs is not None:
        out.append(line("global_batch_size", bs))
    if epoch is not None:
        out += [line("eval_accuracy", 0.5, **{unit: 1}), line("eval_accuracy", 0.76, **{unit: epoch})]
    out.append(line("run_stop", None, **({} if status is None else {"status": status})))
    return out
