"""`make bench`: our checker against mlperf-logging's on the same logs, in one run, with the floor beside them.

Measured, never asserted. For every corpus result log (v1.0 logs with ruleset 1.0.0, v1.1 with 1.1.0):
- us: `mlsubmit check LOG...` as one fresh process for both rounds (each log's ruleset from its round folder;
  process start included, both cores); beside it, one process per round with `--ruleset` given;
- reference: mlperf-logging's compliance checker over the same logs in ONE process, one checker per log, as its
  package checker runs it (tools/reference_batch.py; its heavier package_checker import is not counted);
- floor: one process that reads every file and JSON-decodes every record, nothing else.
Every corpus figure is the fastest of MLSUBMIT_BENCH_RUNS runs (default 3), the same for every tool, the tools
taking turns run by run so that a noisy spell on the VM slows them alike.
Then a synthetic 1 GB raw job log (noise with records, generated once into build/bench/) checked alone, with the
peak memory of that process. Then logs of many records (issue 26), generated once into build/bench/: 10 M short
records in 4 MB of gzip, and 1 GB and 2 GB of nothing but a real run's epoch, block and eval records, each checked
once in one process, its time and peak memory beside the floor's time (memory should not follow the records;
mlperf-logging's checker is not run on them: its parser holds every record, gigabytes).
MLSUBMIT_BENCH_RECORDS=0 skips them (about five minutes). Then issue 35's worst cases (tools/bench_hostile.py:
every record a finding, distinct keys, 2 kB values, a newline bomb through package; about ten minutes), each with
its peak memory, wall and CPU time and its CPU time over `check`'s on the same bytes; MLSUBMIT_BENCH_HOSTILE=0
skips them for a quick run. The last line is JSON with every figure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ROUNDS = {"training_results_v1.0": "1.0.0", "training_results_v1.1": "1.1.0"}
FLOOR = """
import json, sys
n = 0
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        for line in fh:
            if b":::MLLOG " in line:
                text = line.decode("latin-1")
                json.loads(text[text.rindex(":::MLLOG ") + 9:])
                n += 1
print(n)
"""
# The same floor with msgspec, the decoder mlsubmit uses for ASCII records (json stays the fallback): shown beside the
# floor so that the ratios, which are taken to the json floor as issue #2 defines it, can be read both ways.
FLOOR_MSGSPEC = FLOOR.replace("import json, sys", "import msgspec, sys").replace(
    "json.loads(text[", "msgspec.json.decode(text[")
# The floor on one log that may be gzip-compressed (the records inputs): read, decode, count.
FLOOR_GZ = FLOOR.replace("import json, sys", "import gzip, json, sys").replace(
    "with open(path,", "with (gzip.open if path.endswith('.gz') else open)(path,")
PEAK = """
import resource, sys
from mlsubmit.cli import console
code = console()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, code, file=sys.stderr)
"""


def corpus_logs(corpus: Path) -> dict[str, list[str]]:
    return {
        ruleset: [str(p) for p in sorted((corpus / d).glob("*/results/**/result_*.txt"))]
        for d, ruleset in ROUNDS.items()
    }


def timed(cmd: list[str], **kwargs: object) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - start, proc


def best(runs: int, cmd: list[str], **kwargs: object) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Fastest of `runs` runs: this machine is a VM whose neighbours add noise, never speed."""
    results = [timed(cmd, **kwargs) for _ in range(runs)]
    return min(results, key=lambda r: r[0])


Command = tuple[list[str], dict[str, object]]  # argv and subprocess.run options (input=...)


def fastest_each(runs: int, commands: dict[str, Command]) -> dict[str, tuple[float, subprocess.CompletedProcess[str]]]:
    """The fastest of `runs` runs of every command, the commands taking turns (a b c, a b c, ...). A noisy spell
    on this VM then slows all of them alike, where back-to-back blocks of runs would put it on one command's
    figure and skew the ratios between them."""
    results: dict[str, list[tuple[float, subprocess.CompletedProcess[str]]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (cmd, kwargs) in commands.items():
            results[name].append(timed(cmd, **kwargs))
    return {name: min(rs, key=lambda r: r[0]) for name, rs in results.items()}


def bench_corpus(corpus: Path, runs: int) -> dict[str, float | int]:
    logs = corpus_logs(corpus)
    every = [p for paths in logs.values() for p in paths]
    jobs = "".join(f"{r}\t{p}\n" for r, paths in logs.items() for p in paths)
    reference = [PY, str(ROOT / "tools" / "reference_batch.py"), "--ruleset", "-", "--stdin"]
    commands: dict[str, Command] = {
        "floor": ([PY, "-c", FLOOR, *every], {}),
        "floor_msgspec": ([PY, "-c", FLOOR_MSGSPEC, *every], {}),
        # one invocation for every log: each log's ruleset comes from its training_results_vX.Y folder
        "ours": ([PY, "-m", "mlsubmit", "check", "--format", "json", *every], {}),
        # the fixed cost of one invocation (interpreter, imports, rule and table loading)
        "startup": ([PY, "-m", "mlsubmit", "check", "--format", "json", every[0]], {}),
        "reference": (reference, {"input": jobs}),
        "reference_pkg": ([*reference, "--package-checker-imports"], {"input": jobs}),
    }
    for ruleset, paths in logs.items():  # the same logs, one invocation per round with --ruleset given
        commands[f"round {ruleset}"] = ([PY, "-m", "mlsubmit", "check", "--ruleset", ruleset, "--format", "json",
                                         *paths], {})
    timings = fastest_each(runs, commands)
    (floor_t, floor), (floor_msgspec_t, _) = timings["floor"], timings["floor_msgspec"]
    ours_t, proc = timings["ours"]
    if proc.returncode not in (0, 1):
        raise SystemExit(f"mlsubmit failed: {proc.stderr[-2000:]}")
    rounds_t = sum(timings[f"round {ruleset}"][0] for ruleset in logs)
    startup_t, ref_t, ref_pkg_t = timings["startup"][0], timings["reference"][0], timings["reference_pkg"][0]
    steady = max(ours_t - startup_t, 1e-3)
    return {
        "logs": len(every),
        "records": int(floor.stdout.strip() or 0),
        "bytes": sum(os.path.getsize(p) for p in every),
        "runs": runs,
        "us_s": round(ours_t, 3),
        "us_one_invocation_per_round_s": round(rounds_t, 3),
        "reference_s": round(ref_t, 3),
        "reference_with_package_checker_imports_s": round(ref_pkg_t, 3),
        "reference_with_imports_over_us": round(ref_pkg_t / ours_t, 1),
        "floor_s": round(floor_t, 3),
        "floor_msgspec_s": round(floor_msgspec_t, 3),
        "us_over_floor_msgspec": round(ours_t / floor_msgspec_t, 2),
        "us_over_floor": round(ours_t / floor_t, 2),
        "reference_over_us": round(ref_t / ours_t, 1),
        "startup_s": round(startup_t, 3),
        "steady_us_over_floor": round(steady / floor_t, 2),
        "steady_reference_over_us": round(ref_t / steady, 1),
    }


def big_log(path: Path, size: int) -> Path:
    """Raw job output: ~1 KB of noise per MLLOG record, records from a real run written with mllog."""
    if path.exists() and path.stat().st_size >= size:
        return path
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures (tests/fixtures/)
    from fixtures.synth import RunSpec, render

    run = render(RunSpec(benchmark="bert", evals=40)).encode()
    records = run.splitlines(keepends=True)
    head, tail = records[:-1], records[-1:]  # run_stop last
    noise = b"".join(b"[1,%d]<stdout>: step %d loss=3.1416 lr=0.0004 throughput=12345.6 samples/s\n" % (i % 16, i)
                     for i in range(12))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as fh:
        written = 0
        for line in head:
            fh.write(line)
        while written < size:
            fh.write(noise)
            written += len(noise)
            if written % (len(noise) * 50) == 0:  # a repeated metric record now and then, as long runs log
                fh.write(b':::MLLOG {"namespace": "", "time_ms": 1620000300000, "event_type": "POINT_IN_TIME", '
                         b'"key": "tracked_stats", "value": {"throughput": 12345.6}, "metadata": {"step": 1}}\n')
        for line in tail:
            fh.write(line)
    os.replace(tmp, path)
    return path


def bench_big(size: int) -> dict[str, float | int]:
    path = big_log(ROOT / "build" / "bench" / "big-1g.txt", size)
    floor_t, _ = timed([PY, "-c", FLOOR, str(path)])
    t, proc = timed([PY, "-c", PEAK, "check", "--ruleset", "1.0.0", "--format", "json", str(path)])
    peak_mb, code = proc.stderr.strip().split()[-2:]
    return {
        "big_bytes": path.stat().st_size,
        "big_us_s": round(t, 2),
        "big_floor_s": round(floor_t, 2),
        "big_peak_mb": int(peak_mb),
        "big_exit": int(code),
    }


SHORT = b':::MLLOG {"key": "x", "value": 1, "time_ms": 1620000300000, "metadata": {}}\n'


def _run_records() -> tuple[list[bytes], list[bytes], list[bytes]]:
    """A real run's records, written with mllog: (those before its epochs, each epoch's, run_stop)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures (tests/fixtures/)
    from fixtures.synth import RunSpec, render

    records = render(RunSpec(benchmark="bert", evals=40)).encode().splitlines(keepends=True)
    body = [r for r in records[:-1] if any(k in r for k in (b'"block_', b'"epoch_', b'"eval_'))]
    return [r for r in records[:-1] if r not in body], body, records[-1:]


def short_gzip(path: Path, count: int = 10_000_000) -> Path:
    """4 MB of gzip holding `count` short records between a run's head and its run_stop (issue 26's input)."""
    if path.exists():
        return path
    import gzip

    head, _, tail = _run_records()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with gzip.open(tmp, "wb", compresslevel=9) as fh:
        fh.writelines(head)
        for _ in range(count // 10_000):
            fh.write(SHORT * 10_000)
        fh.writelines(tail)
    os.replace(tmp, path)
    return path


def block_log(path: Path, size: int) -> Path:
    """A log of nothing but records: a real run's epoch, block and eval records repeated to `size` bytes."""
    if path.exists() and path.stat().st_size >= size:
        return path
    head, body, tail = _run_records()
    chunk = b"".join(body) * 200
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as fh:
        fh.writelines(head)
        for _ in range(0, size, len(chunk)):
            fh.write(chunk)
        fh.writelines(tail)
    os.replace(tmp, path)
    return path


def bench_records(folder: Path) -> dict[str, dict[str, float | int]]:
    """The reader on logs of many records: time and peak memory of `check` (one run each), beside the floor
    (read + decode every record, nothing kept). Memory should not follow the number of records."""
    inputs = {
        "gzip_10m_short": short_gzip(folder / "short-10m.log.gz"),
        "records_1g": block_log(folder / "records-1g.txt", 1 << 30),
        "records_2g": block_log(folder / "records-2g.txt", 2 << 30),
    }
    out: dict[str, dict[str, float | int]] = {}
    for name, path in inputs.items():
        floor_t, _ = timed([PY, "-c", FLOOR_GZ, str(path)])
        t, proc = timed([PY, "-c", PEAK, "check", "--jobs", "1", "--ruleset", "1.0.0", "--format", "json", str(path)])
        peak_mb, code = proc.stderr.strip().split()[-2:]
        out[name] = {"bytes": path.stat().st_size, "us_s": round(t, 2), "peak_mb": int(peak_mb),
                     "exit": int(code), "floor_s": round(floor_t, 2)}
    return out


def main() -> int:
    corpus = Path(os.environ.get("MLSUBMIT_CORPUS", ROOT.parent / "shared" / "corpus"))
    figures: dict[str, float | int] = {}
    runs = int(os.environ.get("MLSUBMIT_BENCH_RUNS", "3"))
    if corpus.is_dir():
        figures.update(bench_corpus(corpus, runs))
        print(f"corpus: {figures['logs']} logs, {figures['records']} records, {figures['bytes'] / 1e6:.1f} MB; "
              f"each figure is the fastest of {runs} runs")
        print(f"  us        {figures['us_s']:8.3f} s  (mlsubmit check, one invocation, both cores, rulesets from "
              f"the round folders)")
        print(f"  us        {figures['us_one_invocation_per_round_s']:8.3f} s  (one invocation per round, "
              f"--ruleset given)")
        print(f"  reference {figures['reference_s']:8.3f} s  (mlperf-logging compliance checker, one process)")
        print(f"  reference {figures['reference_with_package_checker_imports_s']:8.3f} s  (the same, in a process that "
              f"first imports the package checker, as its own process does)")
        print(f"  floor     {figures['floor_s']:8.3f} s  (read + JSON-decode every record, one process)")
        print(f"  floor     {figures['floor_msgspec_s']:8.3f} s  (the same, decoding with msgspec as mlsubmit does for "
              f"ASCII records; us/this = {figures['us_over_floor_msgspec']})")
        print(f"  us/floor = {figures['us_over_floor']}   reference/us = {figures['reference_over_us']} "
              f"({figures['reference_with_imports_over_us']} with the package checker's imports)")
        print(f"  start-up of one invocation (one log): {figures['startup_s']} s; without it: "
              f"us/floor = {figures['steady_us_over_floor']}, reference/us = {figures['steady_reference_over_us']}")
    else:
        print(f"corpus not found at {corpus}: corpus figures skipped")
    size = int(os.environ.get("MLSUBMIT_BENCH_BYTES", str(1 << 30)))
    figures.update(bench_big(size))
    print(f"1 GB raw log: {figures['big_bytes'] / 2**30:.2f} GiB, us {figures['big_us_s']} s, "
          f"floor {figures['big_floor_s']} s, peak memory {figures['big_peak_mb']} MB")
    if os.environ.get("MLSUBMIT_BENCH_RECORDS", "1") != "0":  # about five minutes; 0 skips them
        records = bench_records(ROOT / "build" / "bench")
        print("logs of many records (mlsubmit check, one process; peak memory; the floor reads and decodes only):")
        for name, f in records.items():
            print(f"  {name:15} {f['bytes'] / 2**20:8.0f} MiB  us {f['us_s']:7.2f} s  peak {f['peak_mb']:5d} MB  "
                  f"exit {f['exit']}  floor {f['floor_s']:7.2f} s")
            figures.update({f"{name}_{k}": v for k, v in f.items()})
    if os.environ.get("MLSUBMIT_BENCH_HOSTILE", "1") != "0":  # issue 35's worst cases (about ten minutes)
        import bench_hostile  # beside this file: tools/ is the script's folder

        print("worst cases (issue 35; one process each; peak of mlsubmit and its workers; CPU time is the figure "
              "to compare on a shared machine):")
        hostile = bench_hostile.run(ROOT / "build" / "bench")
        figures.update({f"{name.replace(' ', '_')}_{k}": v for name, f in hostile.items() for k, v in f.items()})
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
