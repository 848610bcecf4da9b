"""Hostile inputs that cost memory, not time (issue 54, fourth round): each command runs in a process of its own, its
peak memory read back (ru_maxrss of its own children, in a fresh wrapper process), within 300 MB and bounded time,
writing nothing outside the session's data cache.

- case 8: one gzip raw log of 5,800 records whose values are objects of 1,500 keys (748 KB): `check -j 1` took
  661-783 MB and `advise` 852-900 MB; the budgets counted the values' JSON text, and decoded objects take ~10 times it.
- case 9: 40 gzip logs of 9,000 distinct keys with 1,000-character values (3.5 MB): 500-513 MB, each log's facts
  within budget but the first record of every key kept for every log.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import tree_digest
from fixtures.synth import RunSpec, render

pytestmark = pytest.mark.slow  # each makes its input and runs mlsubmit: 10-30 s

PEAK_KB = 300 << 10  # ru_maxrss is in KiB
RULESET = "1.1.0"
# runs `python -m mlsubmit ARGS` and prints its exit code and peak memory: the wrapper's only child, so
# RUSAGE_CHILDREN is that command's alone (`-j 1`: no worker processes)
_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run([sys.executable, '-m', 'mlsubmit', *sys.argv[1:]], capture_output=True, text=True)\n"
    "print(json.dumps({'code': done.returncode, 'out': done.stdout, 'err': done.stderr[-5000:],\n"
    "                  'peak': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
)


def _measured(cwd: Path, *argv: str | Path) -> tuple[int, str, str, int, float]:
    """(exit code, stdout, stderr, peak KiB, seconds) of `mlsubmit ARGV` run in `cwd`."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *map(str, argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    got = json.loads(done.stdout)
    return got["code"], got["out"], got["err"], got["peak"], time.monotonic() - started


def _run_lines(**changes: object) -> list[bytes]:
    """A compliant resnet run's MLLOG lines, written by mllog (fixtures.synth)."""
    return render(RunSpec(benchmark="resnet", ruleset=RULESET, **changes)).encode().splitlines(keepends=True)  # type: ignore[arg-type]


def _record(key: str, value: object) -> bytes:
    return (
        b":::MLLOG "
        + json.dumps(
            {
                "namespace": "",
                "time_ms": 1620000264000,
                "event_type": "POINT_IN_TIME",
                "key": key,
                "value": value,
                "metadata": {"file": "x.py", "lineno": 1},
            }
        ).encode()
    )


def _gzip_log(path: Path, lines: list[bytes], extra: list[bytes]) -> Path:
    """The run's lines with `extra` before its last five (run_stop among them), gzip-compressed."""
    with gzip.open(path, "wb", compresslevel=6) as stream:
        stream.writelines(lines[:-5])
        stream.write(b"\n".join(extra) + b"\n")
        stream.writelines(lines[-5:])
    return path


def _findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every finding of a JSON report: each file's and the folders'."""
    return [*(f for file in report["files"] for f in file["findings"]), *report["findings"]]


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    """The input folder and an empty working folder to run in (both checked unchanged afterwards)."""
    inputs, cwd = tmp_path / "in", tmp_path / "cwd"
    inputs.mkdir()
    cwd.mkdir()
    return inputs, cwd


def test_records_of_wide_objects_are_kept_by_what_they_take_decoded(tmp_path: Path) -> None:
    """Case 8: every keeper of values (the rule engine's prefix, the log kept by advise) counts an element's
    memory, not its JSON text, so the same budgets hold in memory; advise's cut is a LOG012 naming it."""
    inputs, cwd = _folders(tmp_path)
    wide = {f"{i:x}": 0 for i in range(1500)}
    log = _gzip_log(inputs / "job.out.gz", _run_lines(), [_record(f"wide{r:05d}", wide) for r in range(5800)])
    before = tree_digest(tmp_path)
    code, out, err, peak, seconds = _measured(cwd, "check", "-j", "1", "--ruleset", RULESET, log)
    assert code == 0 and "PASS" in out and "Traceback" not in err, err
    assert peak < PEAK_KB and seconds < 300, (peak, seconds)
    code, out, err, peak, seconds = _measured(cwd, "advise", "--ruleset", RULESET, log)
    assert code == 1 and "LOG012 the log holds records past 96 MiB kept" in out and "Traceback" not in err, err
    assert peak < PEAK_KB and seconds < 300, (peak, seconds)
    assert tree_digest(tmp_path) == before  # nothing written beside the log or in the working folder


def test_many_logs_of_many_keys_keep_only_what_the_tree_checks_read(tmp_path: Path) -> None:
    """Case 9: each log's facts keep the first record of the keys the tree checks read (TREE_KEYS), not of its
    9,000 others; the run set is judged as before (all 40 runs read, seeds and times from the facts)."""
    inputs, cwd = _folders(tmp_path)
    for i in range(40):
        extra = [_record(f"x{i}_{k:05d}", f"{k:05d}" + "v" * 995) for k in range(9000)]
        _gzip_log(
            inputs / f"job-{i:02d}.out.gz", _run_lines(seed=i, start_ms=1_620_000_000_000 + i * 10_000_000), extra
        )
    before = tree_digest(tmp_path)
    code, out, err, peak, seconds = _measured(cwd, "check", "-j", "1", "--ruleset", RULESET, "--format", "json", inputs)
    assert code == 1 and "Traceback" not in err, err
    assert peak < PEAK_KB and seconds < 300, (peak, seconds)
    report = json.loads(out)
    assert len(report["files"]) == 40 and all(f["verdict"] == "pass" for f in report["files"])
    assert not [f for f in _findings(report) if f["code"] == "LOG012"]  # nothing a check reads was left out
    assert any("with 40 runs the median-window rule" in f["message"] for f in report["findings"])
    assert tree_digest(tmp_path) == before


def test_the_facts_of_all_logs_together_are_bounded(tmp_path: Path) -> None:
    """Case 9 through a series key: 40 logs of 20,000 1,000-character seeds, each log's facts within its 32 MiB,
    took 929 MB (20 logs, here: 470 MB). Past FACTS_TOTAL (160 MiB) in all, a log keeps the first record of each key
    only, with LOG012."""
    inputs, cwd = _folders(tmp_path)
    for i in range(20):
        extra = [_record("seed", f"{k:05d}" + "v" * 995) for k in range(20000)]
        _gzip_log(
            inputs / f"job-{i:02d}.out.gz", _run_lines(seed=i, start_ms=1_620_000_000_000 + i * 10_000_000), extra
        )
    before = tree_digest(tmp_path)
    code, out, err, peak, seconds = _measured(cwd, "check", "-j", "1", "--ruleset", RULESET, "--format", "json", inputs)
    assert code == 1 and "Traceback" not in err, err
    assert peak < PEAK_KB and seconds < 400, (peak, seconds)
    cuts = [f for f in _findings(json.loads(out)) if f["code"] == "LOG012" and "in all" in f["message"]]
    assert 0 < len(cuts) < 20 and "the tree checks read this log's first record of each key only" in cuts[0]["message"]
    assert tree_digest(tmp_path) == before


def test_a_line_of_millions_of_elements_is_skipped_before_it_is_decoded(tmp_path: Path) -> None:
    """One 15 MiB record line of `[],` (a 17 KB gzip log) took 467 MB to decode, under `check` and `advise` alike:
    a record line of more than MAX_ELEMENTS elements is now skipped unread, with LOG010 at its line."""
    inputs, cwd = _folders(tmp_path)
    lines = _run_lines()
    dense = _record("dense", []).replace(b'"value": []', b'"value": [' + b",".join([b"[]"] * (5 << 20)) + b"]")
    log = _gzip_log(inputs / "job.out.gz", lines, [dense])
    before = tree_digest(tmp_path)
    for command in ("check", "advise"):
        code, out, err, peak, seconds = _measured(cwd, command, "--ruleset", RULESET, "--format", "json", log)
        found = [f for f in _findings(json.loads(out)) if f["code"] == "LOG010"]
        assert code == 1 and [f["line"] for f in found] == [len(lines) - 4], (command, err)
        assert "holds 10,485,779 JSON elements" in found[0]["message"]  # 5 Mi lists, their commas, the record
        assert peak < PEAK_KB and seconds < 120, (command, peak, seconds)
    assert tree_digest(tmp_path) == before
