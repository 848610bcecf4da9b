"""Shared pieces of the differential tests: corpus logs, mutated copies, and the reference run in one process."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rounds(corpus: Path) -> dict[str, str]:
    """Every round folder of the corpus and its ruleset (training_results_vX.Y -> X.Y.0): a round added later is
    tested too."""
    return {p.name: p.name.split("_v", 1)[1] + ".0" for p in sorted(corpus.glob("training_results_v*")) if p.is_dir()}


def corpus_logs(corpus: Path) -> list[tuple[str, Path]]:
    """(ruleset, path) for every result log under results/ of every organisation, nested ones included."""
    return [
        (ruleset, path)
        for round_dir, ruleset in rounds(corpus).items()
        for path in sorted((corpus / round_dir).glob("*/results/**/result_*.txt"))
    ]


def reference_verdicts(jobs: list[tuple[str, Path]]) -> dict[str, dict[str, object]]:
    """mlperf-logging's compliance checker over all jobs in ONE interpreter (as its package checker runs it)."""
    stdin = "".join(f"{ruleset}\t{path}\n" for ruleset, path in jobs)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "reference_batch.py"), "--ruleset", "-", "--stdin"],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )
    return {d["path"]: d for d in map(json.loads, proc.stdout.splitlines())}


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _record_indexes(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if b":::MLLOG " in line]


def drop_record(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    del lines[rng.choice(_record_indexes(lines))]
    return b"".join(lines)


def duplicate_record(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.choice(_record_indexes(lines))
    lines.insert(i, lines[i])
    return b"".join(lines)


def reorder_records(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    idx = _record_indexes(lines)
    a, b = rng.sample(idx, 2)
    lines[a], lines[b] = lines[b], lines[a]
    return b"".join(lines)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) // 4, len(data))]


def break_json(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.choice(_record_indexes(lines))
    lines[i] = lines[i].replace(b"{", b"{,", 1)
    return b"".join(lines)


_WRONG = {
    b'"submission_division"': (b'"value": "closed"', b'"value": "banana"'),
    b'"global_batch_size"': (b'"value": ', b'"value": -'),
    b'"eval_accuracy"': (b'"value": ', b'"value": 0.0001 + 0 * '),
    b'"run_stop"': (b'"status": "success"', b'"state": "success"'),
    b'"opt_name"': (b'"value": "', b'"value": "adamw'),
}


def wrong_value(data: bytes, rng: random.Random) -> bytes:
    """Change one value the rules look at (division, batch size, accuracy, run_stop status, optimizer)."""
    lines = _lines(data)
    candidates = [
        (i, key) for i, line in enumerate(lines) for key in _WRONG if key in line and _WRONG[key][0] in line
    ]
    if not candidates:
        return drop_record(data, rng)
    i, key = rng.choice(candidates)
    if key == b'"eval_accuracy"':  # every evaluation far below the target: the run never converges
        for j, line in enumerate(lines):
            if key in line:
                head, _, tail = line.partition(b'"value": ')
                _number, sep, rest = tail.partition(b",")
                lines[j] = head + b'"value": 0.0001' + sep + rest
        return b"".join(lines)
    old, new = _WRONG[key]
    lines[i] = lines[i].replace(old, new, 1)
    return b"".join(lines)


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "drop": drop_record,
    "duplicate": duplicate_record,
    "reorder": reorder_records,
    "truncate": truncate,
    "break_json": break_json,
    "wrong_value": wrong_value,
}


def make_mutants(logs: list[tuple[str, Path]], out: Path, *, every: int, seed: int = 2) -> list[tuple[str, Path, str]]:
    """Mutated copies of every `every`-th log, one per mutation kind: (ruleset, path, mutation)."""
    rng = random.Random(seed)
    made = []
    for n, (ruleset, path) in enumerate(logs[::every]):
        data = path.read_bytes()
        if len(_record_indexes(_lines(data))) < 2:
            continue
        for name, mutate in MUTATIONS.items():
            target = out / f"{n:04d}-{name}-{path.name}"
            target.write_bytes(mutate(data, rng))
            made.append((ruleset, target, name))
    return made


def our_kinds(findings: list[dict[str, object]]) -> dict[str, int]:
    """Per failing folder (or system file), what failed: the same grouping as the reference's ERROR lines."""
    errors = [f for f in findings if f["severity"] == "error"]

    def places(*codes: str, folder: bool = False) -> int:
        paths = {str(f["path"]) for f in errors if f["code"] in codes}
        return len({p.rsplit("/", 1)[0] if folder and p.endswith(".txt") else p for p in paths})

    return {
        "system_file": places("TREE027"),
        "count": places("TREE003"),
        "olympic": places("TREE007"),
        "seeds": places("TREE014", "TREE015", "TREE016", folder=True),
        "rcp": places("TREE018", "TREE020", "TREE021"),
    }
