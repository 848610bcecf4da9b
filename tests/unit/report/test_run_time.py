"""A run's time is finite, non-negative and ordered, or it is a finding (issue 26): never Infinity or -4 minutes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.logs.facts import extract
from mlsubmit.checker.logs.reader import read_log

from mlsubmit.report.scoring import run_result

TOKEN = ":::MLLOG "


def _with_time(path: Path, key: str, time_ms: object) -> int:
    """Set `time_ms` of the first `key` record to the raw JSON text `time_ms`; return its line."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for n, line in enumerate(lines):
        if f'"key": "{key}"' in line:
            obj = json.loads(line.split(TOKEN, 1)[1])
            body = json.dumps(obj).replace(json.dumps(obj["time_ms"]), str(time_ms), 1)
            lines[n] = line.split(TOKEN, 1)[0] + TOKEN + body + "\n"
            path.write_text("".join(lines), encoding="utf-8")
            return n + 1
    raise AssertionError(f"no {key} record")


def _codes(path: Path) -> list[tuple[str, int | None]]:
    return sorted((f.code, f.line) for f in read_log(path).findings)


@pytest.mark.parametrize("stamp", ["1e999", "-1e999", '"1e999"', '"nan"', '"-inf"'])
def test_a_time_out_of_range_is_a_finding(tmp_path: Path, stamp: str) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec())
    line = _with_time(log, "run_stop", stamp)
    assert ("LOG006", line) in _codes(log)
    assert "finite" in " ".join(f.message for f in read_log(log).findings)


def test_run_stop_before_run_start_is_a_finding(tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec())
    line = _with_time(log, "run_stop", 1)
    assert ("LOG011", line) in _codes(log)
    parsed = read_log(log)
    result = run_result(str(log), extract(parsed), parsed.findings, "bert", "1.0.0")
    assert result.minutes is None and result.reason


def test_an_ordinary_run_has_neither(tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec())
    assert not {c for c, _ in _codes(log)} & {"LOG006", "LOG011"}
    parsed = read_log(log)
    minutes = run_result(str(log), extract(parsed), parsed.findings, "bert", "1.0.0").minutes
    assert minutes is not None and minutes > 0


def test_a_throughput_past_a_floats_range_is_no_figure(tmp_path: Path) -> None:
    from mlsubmit.report.scoring import throughput

    log = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="resnet", hyperparameters={"global_batch_size": 3264}))
    facts = extract(read_log(log))
    facts.first["train_samples"] = facts.first["train_samples"]._replace(value=1e308)
    assert throughput(facts, "resnet", 40.0, 1e-10) is None
    assert throughput(facts, "resnet", 40.0, 10.0) is None  # 40 x 1e308 overflows too
