"""A closed 6.1 packaging job as a team has it, and the results chair's official steps on what `package` writes.

The job: ten llama2_70b_lora runs on an IPU-POD64 as raw job output (mllog records with launcher prefixes and
framework lines between them), the system file, a git repository with the implementation, and `package.toml`.
The chair's steps are those of mlperf-logging's `scripts/pack_submission.sh --unpack` (sha1sum against the `.sha1`,
`openssl enc -d -aes256`, tar) and `scripts/verify_for_v6.1_training.sh` (each line of
`<org>/package_checker_params` a `--<line>` flag; package checker, result summarizer, repo checker under
`set -e`), run here as commands, with the installed mlperf-logging.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.testing.demo import MODERN_POINTS, MODERN_SYSTEM
from mlsubmit.testing.repo import commit_example
from mlsubmit.testing.synth import RunSpec, render

ORG = "Graphcore"
RULESET = "6.1.0"
BENCHMARK = "llama2_70b_lora"
IMPLEMENTATION = {
    "llama2_70b_lora/popart/README.md": b"# Llama 2 70B LoRA on IPU-POD64\n\nRun `./run_and_time.sh`.\n",
    "llama2_70b_lora/popart/run_and_time.sh": b"#!/bin/bash\nset -e\npython finetune.py --config config.yaml\n",
    "llama2_70b_lora/popart/config.yaml": b"global_batch_size: 8\nmicro_batch_size: 1\n",
    "llama2_70b_lora/popart/finetune.py": b"print('finetune')\n",
}


@dataclass
class Job:
    root: Path
    config: Path
    passphrase: Path


def raw_output(spec: RunSpec) -> bytes:
    """What the job wrote: a launcher banner, records (some behind rank prefixes), framework lines between them."""
    spec.raw_output = True
    body = render(spec)
    return f"poprun: launching {spec.benchmark} on {spec.platform}\n{body}poprun: job finished\n".encode()


def write_system(dest: Path, systems: Path) -> None:
    """The repository's IPU-POD64 system file, with what rounds from 4.0 ask of it."""
    dest.mkdir(parents=True, exist_ok=True)
    system = json.loads((systems / f"{MODERN_SYSTEM}.json").read_text(encoding="utf-8"))
    system.update(status="Available on-premise", system_type="datacenter")
    (dest / f"{MODERN_SYSTEM}.json").write_text(json.dumps(system, indent=2) + "\n", encoding="utf-8")


def write_job(root: Path, systems: Path) -> Job:
    """Everything `mlsubmit package` needs for a closed 6.1 submission."""
    root.mkdir(parents=True, exist_ok=True)
    commit_example(root / "ipu-benchmarks", IMPLEMENTATION, "IPU benchmarks", tag="v6.1")
    write_system(root / "systems", systems)
    runs = root / "runs"
    runs.mkdir()
    for i, point in enumerate(MODERN_POINTS):
        spec = RunSpec(benchmark=BENCHMARK, ruleset=RULESET, platform="IPU-POD64", seed=3000 + i,
                       start_ms=1_790_000_000_000 + i * 86_400_000, minutes=11.0 + (i % 4) * 0.4, converge_at=point)
        (runs / f"job_{i:02d}.out").write_bytes(raw_output(spec))
    config = root / "package.toml"
    config.write_text(f'''org = "{ORG}"
ruleset = "{RULESET}"
out = "build/submission"

[[results]]
system = "{MODERN_SYSTEM}"
benchmark = "{BENCHMARK}"
logs = ["runs/*.out"]
implementation = {{ repo = "ipu-benchmarks", rev = "v6.1", path = "llama2_70b_lora/popart", name = "popart" }}
''', encoding="utf-8")
    passphrase = root / "passphrase.txt"
    return Job(root=root, config=config, passphrase=passphrase)


def unpack(archive_dir: Path, passphrase: Path, dest: Path) -> list[str]:
    """pack_submission.sh --unpack, step by step, into dest; returns its messages."""
    tarball, sha1_file = f"mlperf_submission_{ORG}.tar.gz", f"mlperf_submission_{ORG}.sha1"
    said = subprocess.run(["sha1sum", tarball], cwd=archive_dir, capture_output=True, text=True, check=True).stdout
    # The script compares `sha1sum` (one line, no newline after $(...)) with `cat` of the file, both stripped.
    if said.rstrip("\n") != (archive_dir / sha1_file).read_text(encoding="utf-8").rstrip("\n"):
        return [f"ERROR: sha1sum of {tarball} does not match contents of {sha1_file}"]
    dest.mkdir(parents=True, exist_ok=True)
    plain = subprocess.run(["openssl", "enc", "-d", "-aes256", "-pass", f"file:{passphrase}",
                            "-in", str(archive_dir / tarball)], capture_output=True, check=True).stdout
    subprocess.run(["tar", "--extract", "--gzip", "--file", "-"], input=plain, cwd=dest, check=True)
    return ["sha1sum matches."]


@dataclass
class Step:
    argv: list[str]
    code: int
    output: str


def verify_v61(org: Path) -> list[Step]:
    """verify_for_v6.1_training.sh on `org`, with the script's own reading of package_checker_params and its
    `set -e` (it stops at the first step that exits non-zero)."""
    flags: list[str] = []
    params = org / "package_checker_params"
    if params.is_file():  # `while IFS= read -r line`: every newline-ended line, nothing trimmed
        flags = [f"--{line}" for line in params.read_text(encoding="utf-8").split("\n")[:-1]]
    steps = [["mlperf_logging.package_checker", str(org), "training", RULESET, *flags],
             ["mlperf_logging.result_summarizer", str(org), "training", RULESET],
             ["mlperf_logging.repo_checker", str(org), "training", RULESET]]
    done: list[Step] = []
    for args in steps:
        proc = subprocess.run([sys.executable, "-m", *args], cwd=org.parent, capture_output=True, text=True,
                              timeout=300)
        done.append(Step(argv=args, code=proc.returncode, output=proc.stdout + proc.stderr))
        if proc.returncode != 0:
            break
    return done
