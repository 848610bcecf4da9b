"""`make bench`'s worst cases (issue 35), each beside `check` on the same bytes; MLSUBMIT_BENCH_HOSTILE=0 skips them.

- every record a finding: 10 M eval_accuracy records with string values (each one a RULE006), beside 10 M records
  of the same key with numeric values (no finding);
- 9.9 M records of distinct keys (every record a key of its own), beside the same 10 M compliant records;
- 10 M records of 2 kB values (20 GB decompressed; `check` reads its 4 GiB limit), through `advise`, which keeps
  records (within its byte budget), beside `check`;
- a 6 GiB newline bomb among a run's records (gzip), through `package`, beside `check`.
Inputs are written into a temporary folder under build/bench/ and removed at the end (about 200 MB): a block of
records is compressed once and written as many gzip members as needed (one gzip stream to every reader), so making
them takes seconds; only the distinct keys are compressed as they go (about 5 s). Each command runs once, in one
process, with its peak memory (ru_maxrss, children included), its wall and CPU seconds and its CPU time over the
CPU time of the `check` it is set beside: the VM is shared, and wall time on it is noise. Measured, never asserted;
the bounds are stated in SECURITY.md.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
EVAL = (b':::MLLOG {"namespace": "", "time_ms": 1620000264000, "event_type": "POINT_IN_TIME", "key": '
        b'"eval_accuracy", "value": %s, "metadata": {"file": "x.py", "lineno": 1, "epoch_num": 1}}\n')
KEYED = (b':::MLLOG {"namespace": "", "time_ms": 1620000264000, "event_type": "POINT_IN_TIME", "key": "k%%s%05d", '
         b'"value": 1, "metadata": {"file": "x.py", "lineno": 1}}\n')


def _fixtures() -> None:
    for folder in (ROOT, ROOT / "tests"):  # the test fixtures (tests/fixtures/)
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))


def _run_lines() -> list[bytes]:
    _fixtures()
    from fixtures.synth import RunSpec, render

    return render(RunSpec(benchmark="resnet", ruleset="1.1.0")).encode().splitlines(keepends=True)


def _write(path: Path, block: bytes, repeat: int) -> Path:
    """A run's records with `block` written `repeat` times before its last five records: the block compressed once,
    written as `repeat` gzip members."""
    lines = _run_lines()
    member = gzip.compress(block, compresslevel=9, mtime=0)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(b"".join(lines[:-5]), mtime=0))
        for _ in range(repeat):
            fh.write(member)
        fh.write(gzip.compress(b"".join(lines[-5:]), mtime=0))
    return path


def distinct_keys(path: Path, blocks: int = 99, per_block: int = 100_000) -> Path:
    """A run with `blocks` x `per_block` records of distinct keys (k<block><n>) before its last five."""
    lines = _run_lines()
    template = b"".join(KEYED % i for i in range(per_block))
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.writelines(lines[:-5])
        for block in range(blocks):
            fh.write(template.replace(b"k%s", b"k%04d" % block))
        fh.writelines(lines[-5:])
    return path


def inputs(folder: Path) -> dict[str, Path]:
    failing = b"".join(EVAL % b'"acc%d"' % (i % 97) for i in range(10_000))
    passing = b"".join(EVAL % b"0.%d" % (1000 + i % 97) for i in range(10_000))
    wide = b"".join(EVAL % (b'"v%07d' % i + b"x" * 1992 + b'"') for i in range(1000))
    return {
        "findings_10m": _write(folder / "findings-10m.txt.gz", failing, 1000),
        "compliant_10m": _write(folder / "compliant-10m.txt.gz", passing, 1000),
        "keys_9.9m": distinct_keys(folder / "keys-9.9m.txt.gz"),
        "wide_10m": _write(folder / "wide-10m.txt.gz", wide, 10_000),
    }


def newline_bomb(folder: Path, gib: int = 6) -> Path:
    """The packaging example with its first ResNet-50 run replaced by a gzip one holding `gib` GiB of newlines."""
    _fixtures()
    from fixtures.demo import write_example

    example = write_example(folder / "package", ROOT / "systems")
    run = example.resnet_runs[0]
    lines = run.read_bytes().splitlines(keepends=True)
    newlines = gzip.compress(b"\n" * (64 << 20), compresslevel=9, mtime=0)
    with open(run.with_name(run.name + ".gz"), "wb") as fh:
        fh.write(gzip.compress(b"".join(lines[: len(lines) // 2]), mtime=0))
        for _ in range(gib << 4):
            fh.write(newlines)
        fh.write(gzip.compress(b"".join(lines[len(lines) // 2 :]), mtime=0))
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


# case -> the case whose CPU time it is set beside (`check` on the same bytes, or on as many compliant records)
BESIDE = {
    "findings_10m check": "compliant_10m check",
    "keys_9.9m check": "compliant_10m check",
    "wide_10m advise": "wide_10m check",
    "newline_bomb package": "newline_bomb check",
}


def run(folder: Path) -> dict[str, dict[str, float | int]]:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix="hostile-") as tmp:
        paths = inputs(Path(tmp))
        config = newline_bomb(Path(tmp))
        bomb = next((config.parent / "runs" / "pod64-resnet").glob("*.gz"))
        check = ("check", "--jobs", "1", "--ruleset", "1.1.0", "--format", "json")
        cases = {
            "compliant_10m check": measured(*check, paths["compliant_10m"]),
            "findings_10m check": measured(*check, paths["findings_10m"]),
            "keys_9.9m check": measured(*check, paths["keys_9.9m"]),
            "wide_10m check": measured(*check, paths["wide_10m"]),
            "wide_10m advise": measured("advise", "--ruleset", "1.1.0", "--format", "json", paths["wide_10m"]),
            "newline_bomb check": measured(*check, bomb),
            "newline_bomb package": measured("package", config, "--allow-findings", "--jobs", "1"),
        }
    for name, figures in cases.items():
        beside = BESIDE.get(name)
        if beside is not None:
            figures["cpu_over_check"] = round(figures["cpu_s"] / max(cases[beside]["cpu_s"], 0.01), 2)
        ratio = f"  {figures['cpu_over_check']:4.2f} x the CPU of {beside}" if beside else ""
        print(f"  {name:22} peak {figures['peak_mb']:5d} MB  wall {figures['wall_s']:7.2f} s  "
              f"cpu {figures['cpu_s']:7.2f} s  exit {figures['exit']}{ratio}")
    return cases


if __name__ == "__main__":
    run(ROOT / "build" / "bench")
