"""A closed 6.1 packaging job as a team has it (tests/fixtures/modern.py), and the results chair's official steps
on what `package` writes.

The chair's steps are those of mlperf-logging's `scripts/pack_submission.sh --unpack` (sha1sum against the `.sha1`,
`openssl enc -d -aes256`, tar) and `scripts/verify_for_v6.1_training.sh` (each line of
`<org>/package_checker_params` a `--<line>` flag; package checker, result summarizer, repo checker under
`set -e`), run here as commands, with the installed mlperf-logging.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from fixtures.demo import MODERN_SYSTEM
from fixtures.modern import (  # the job itself, shared with `make demo`
    BENCHMARK,
    IMPLEMENTATION,
    ORG,
    RULESET,
    Job,
    raw_output,
    write_job,
    write_system,
)
from fixtures.synth import RunSpec
from treefix import build_org

__all__ = ["BENCHMARK", "IMPLEMENTATION", "MODERN_SYSTEM", "ORG", "RULESET", "Job", "raw_output", "write_job",
           "write_system"]


def fast_tree(root: Path, params: str | None, systems: Path) -> Path:
    """A closed 6.1 tree whose runs converge faster than the RCP allows (the reference's RCP check fails); each
    result file holds framework output (TREE049) and the config its runs name is submitted (TREE050)."""
    base = RunSpec(benchmark=BENCHMARK, ruleset=RULESET, platform="IPU-POD64", converge_at=2400, raw_output=True)
    specs = [replace(base, seed=700 + i, start_ms=1_790_000_000_000 + i * 10_000_000) for i in range(10)]
    org = build_org(root / ORG, {(MODERN_SYSTEM, BENCHMARK): specs}, systems={})
    write_system(org / "systems", systems)
    (org / "benchmarks" / BENCHMARK / "implementations" / "ipu" / "config.yaml").write_text("a: 1\n", "utf-8")
    if params is not None:
        (org / "package_checker_params").write_text(params, encoding="utf-8")
    return org

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


SECOND_SYSTEM = "ipu-pod64-POPART-closed-b"


def write_split_job(root: Path, systems: Path) -> Job:
    """The 6.1 job with a second system's ten runs, split into two uploads <org>_1 and <org>_2 (training#877)."""
    import json

    from fixtures.demo import MODERN_POINTS

    job = write_job(root, systems)
    desc = json.loads((root / "systems" / f"{MODERN_SYSTEM}.json").read_text(encoding="utf-8"))
    desc["system_name"] += " (second)"
    (root / "systems" / f"{SECOND_SYSTEM}.json").write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")
    (root / "runs2").mkdir()
    for i, point in enumerate(MODERN_POINTS):
        spec = RunSpec(benchmark=BENCHMARK, ruleset=RULESET, platform="IPU-POD64", seed=5000 + i,
                       start_ms=1_791_000_000_000 + i * 86_400_000, minutes=12.0 + (i % 4) * 0.4, converge_at=point)
        (root / "runs2" / f"job_{i:02d}.out").write_bytes(raw_output(spec))
    text = job.config.read_text(encoding="utf-8").replace("[[results]]", "uploads = 2\n\n[[results]]\nupload = 1", 1)
    impl = ('implementation = { repo = "ipu-benchmarks", rev = "v6.1", path = "llama2_70b_lora/popart", '
            'name = "popart" }')
    text += (f'\n[[results]]\nupload = 2\nsystem = "{SECOND_SYSTEM}"\nbenchmark = "{BENCHMARK}"\n'
             f'logs = ["runs2/*.out"]\n{impl}\n')
    job.config.write_text(text, encoding="utf-8")
    return job
