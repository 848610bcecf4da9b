"""A closed 6.1 packaging job as a team has it, for `make demo` and the official-flow tests.

Ten llama2_70b_lora runs on an IPU-POD64 as raw job output (mllog records, some behind launcher rank prefixes, with
framework lines between them), the system file, a git repository with the implementation (its config.yaml is the
file every run's `config_filename` names) and `package.toml`. `chair_commands` are the results chair's steps on
what `package --archive --encrypt` writes: those of mlperf-logging's `scripts/pack_submission.sh --unpack` and
`scripts/verify_for_v6.1_training.sh`, as shell lines anyone can run by hand.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.testing.demo import MODERN_POINTS, MODERN_SYSTEM, modern_system
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
    system = modern_system(systems)
    (dest / f"{MODERN_SYSTEM}.json").write_text(json.dumps(system, indent=2) + "\n", encoding="utf-8")


def write_job(root: Path, systems: Path, out: str = "build/submission") -> Job:
    """Everything `mlsubmit package` needs for a closed 6.1 submission; `out` relative to root."""
    from mlsubmit.testing.repo import commit_example

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
out = "{out}"

[[results]]
system = "{MODERN_SYSTEM}"
benchmark = "{BENCHMARK}"
logs = ["runs/*.out"]
implementation = {{ repo = "ipu-benchmarks", rev = "v6.1", path = "llama2_70b_lora/popart", name = "popart" }}
''', encoding="utf-8")
    return Job(root=root, config=config, passphrase=root / "passphrase.txt")


def chair_commands(archive_dir: Path, passphrase: Path, unpacked: Path) -> list[str]:
    """The chair's steps by hand, as shell lines run one after the other in one shell from the current folder:
    pack_submission.sh --unpack (sha1sum against the .sha1, openssl's default key derivation, tar), then
    verify_for_v6.1_training.sh's three steps, each line of the org's package_checker_params a `--<line>` flag."""
    q = shlex.quote
    tarball, sha1 = f"mlperf_submission_{ORG}.tar.gz", f"mlperf_submission_{ORG}.sha1"
    params = f"{ORG}/package_checker_params"
    return [
        f'(cd {q(str(archive_dir))} && [ "$(sha1sum {tarball})" = "$(cat {sha1})" ]) && echo "sha1sum matches."',
        f"mkdir -p {q(str(unpacked))}",
        f"openssl enc -d -aes256 -pass file:{q(str(passphrase))} -in {q(str(archive_dir / tarball))}"
        f" | tar -xzf - -C {q(str(unpacked))}",
        f"cd {q(str(unpacked))}",
        f'flags=""; if [ -f {params} ]; then while IFS= read -r line; do flags="$flags --$line"; done < {params}; fi',
        f"python -m mlperf_logging.package_checker {ORG} training {RULESET} $flags",
        f"python -m mlperf_logging.result_summarizer {ORG} training {RULESET}",
        f"python -m mlperf_logging.repo_checker {ORG} training {RULESET}",
    ]
