"""`make bench` with MLSUBMIT_BENCH_HOSTILE=1: the worst cases of issue 35, each beside `check` on the same bytes.

- every record a finding: 10 M eval_accuracy records with string values (each one a RULE006), against 10 M
  records of the same key with numeric values (no finding);
- 10 M records of 2 kB values (20 GB decompressed; `check` reads its 4 GiB limit), through `check` and through
  `advise`, which keeps records (within its byte budget);
- a 6 GiB newline bomb among a run's records (gzip), through `package` and through `check`.
Inputs are generated once into build/bench/hostile/ (about 60 MB of gzip). Each command runs once, in one
process, with its peak memory (ru_maxrss, children included) and its CPU time beside the wall time: the VM is
shared, and wall time on it is noise. Measured, never asserted; the bounds are stated in SECURITY.md.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
EVAL = (b':::MLLOG {"namespace": "", "time_ms": 1620000264000, "event_type": "POINT_IN_TIME", "key": '
        b'"eval_accuracy", "value": %s, "metadata": {"file": "x.py", "lineno": 1, "epoch_num": 1}}\n')


def _run_lines() -> list[bytes]:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures (tests/fixtures/)
    from fixtures.synth import RunSpec, render

    return render(RunSpec(benchmark="resnet", ruleset="1.1.0")).encode().splitlines(keepends=True)


def _write(path: Path, body: list[bytes], repeat: int, *, level: int = 6) -> Path:
    """A run's records with `body` (a block of lines) written `repeat` times before its last five records."""
    if path.exists():
        return path
    lines = _run_lines()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    block = b"".join(body)
    with gzip.open(tmp, "wb", compresslevel=level) as fh:
        fh.writelines(lines[:-5])
        for _ in range(repeat):
            fh.write(block)
        fh.writelines(lines[-5:])
    os.replace(tmp, path)
    return path


def inputs(folder: Path) -> dict[str, Path]:
    failing = [EVAL % b'"acc%d"' % (i % 97) for i in range(10_000)]
    passing = [EVAL % b"0.%d" % (1000 + i % 97) for i in range(10_000)]
    wide = [EVAL % (b'"v%07d' % i + b"x" * 1992 + b'"') for i in range(1000)]
    return {
        "findings_10m": _write(folder / "findings-10m.txt.gz", failing, 1000),
        "compliant_10m": _write(folder / "compliant-10m.txt.gz", passing, 1000),
        "wide_10m": _write(folder / "wide-10m.txt.gz", wide, 10_000, level=1),
    }


def newline_bomb(folder: Path, gib: int = 6) -> Path:
    """The packaging example with its first ResNet-50 run replaced by a gzip one holding `gib` GiB of newlines."""
    config = folder / "package" / "package.toml"
    if config.exists():
        return config
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures (tests/fixtures/)
    from fixtures.demo import write_example

    example = write_example(folder / "package", ROOT / "systems")
    run = example.resnet_runs[0]
    lines = run.read_bytes().splitlines(keepends=True)
    newlines = b"\n" * (1 << 20)
    with gzip.open(run.with_name(run.name + ".gz"), "wb", compresslevel=1) as fh:
        fh.writelines(lines[: len(lines) // 2])
        for _ in range(gib << 10):
            fh.write(newlines)
        fh.writelines(lines[len(lines) // 2 :])
    run.unlink()
    return example.config


# A fresh process per case, so that the peak of its children is this case's alone (ru_maxrss of RUSAGE_CHILDREN
# is the largest child ever waited for): mlsubmit and its workers, their CPU time and the largest resident size.
WRAP = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run([sys.executable, "-m", "mlsubmit", *sys.argv[1:]], capture_output=True).returncode
wall = time.perf_counter() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, r.ru_utime + r.ru_stime, r.ru_maxrss // 1024, code)
"""


def measured(*argv: str | Path) -> dict[str, float | int]:
    """One run of `mlsubmit ARGV`: wall and CPU seconds, peak memory in MB, exit code."""
    out = subprocess.run([PY, "-c", WRAP, *map(str, argv)], capture_output=True, text=True, check=True).stdout
    wall, cpu, peak, code = out.split()
    return {"wall_s": round(float(wall), 2), "cpu_s": round(float(cpu), 2), "peak_mb": int(peak), "exit": int(code)}


def run(folder: Path) -> dict[str, dict[str, float | int]]:
    paths = inputs(folder)
    config = newline_bomb(folder)
    bomb = next((config.parent / "runs" / "pod64-resnet").glob("*.gz"))
    check = ("check", "--jobs", "1", "--ruleset", "1.1.0", "--format", "json")
    cases = {
        "compliant_10m check": measured(*check, paths["compliant_10m"]),
        "findings_10m check": measured(*check, paths["findings_10m"]),
        "newline_bomb check": measured(*check, bomb),
        "newline_bomb package": measured("package", config, "--allow-findings", "--jobs", "1"),
        "wide_10m advise": measured("advise", "--ruleset", "1.1.0", "--format", "json", paths["wide_10m"]),
        "wide_10m check": measured(*check, paths["wide_10m"]),
    }
    for name, figures in cases.items():
        print(f"  {name:22} wall {figures['wall_s']:7.2f} s  cpu {figures['cpu_s']:7.2f} s  "
              f"peak {figures['peak_mb']:5d} MB  exit {figures['exit']}")
    return cases


if __name__ == "__main__":
    run(ROOT / "build" / "bench" / "hostile")
