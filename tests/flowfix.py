"""A closed 6.1 packaging job as a team has it (mlsubmit/testing/modern.py), and the results chair's official steps
on what `package` writes.

The chair's steps are those of mlperf-logging's `scripts/pack_submission.sh --unpack` (sha1sum against the `.sha1`,
`openssl enc -d -aes256`, tar) and `scripts/verify_for_v6.1_training.sh` (each line of
`<org>/package_checker_params` a `--<line>` flag; package checker, result summarizer, repo checker under
`set -e`), run here as commands, with the installed mlperf-logging.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.testing.modern import (  # the job itself, shared with `make demo`
    BENCHMARK,
    IMPLEMENTATION,
    ORG,
    RULESET,
    Job,
    raw_output,
    write_job,
    write_system,
)

__all__ = ["BENCHMARK", "IMPLEMENTATION", "ORG", "RULESET", "Job", "raw_output", "write_job", "write_system"]

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
