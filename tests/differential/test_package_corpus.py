"""Packaging the corpus's real Graphcore runs, dressed up as raw job output, gives back their records byte for byte."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import tree_digest
from fixtures.repo import commit_example
from mlsubmit.checker.engine.pipeline import CheckOptions, run_check

pytestmark = [pytest.mark.corpus, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]
Cli = Callable[..., tuple[int, str, str]]

CASES = {  # system -> benchmark, as published in training_results_v1.0/Graphcore
    "ipu-pod16-POPART-closed": "bert",
    "ipu-pod16-TF1": "resnet",
}


def dress_as_raw_output(original: bytes, k: int) -> bytes:
    """What a job's console gives: a banner, rank prefixes on some records, training chatter, CRLF on odd runs."""
    out = [b"poprun --num-instances 1 ... (job %d)\n" % k]
    for i, line in enumerate(original.splitlines(keepends=True)):
        if i % 4 == 1:
            out.append(b"[1,0]<stdout>:" + line)
        elif i % 4 == 2:
            out.append(b"0: " + line)
            out.append(b"Epoch 3 step 120: loss 1.9871 throughput 5123.4 samples/s\n")
        else:
            out.append(line)
    data = b"".join(out) + b"Job finished with exit code 0\n"
    return data.replace(b"\n", b"\r\n") if k % 2 else data


def records_of(original: bytes) -> bytes:
    """The expected result file: every record line of the published log, trailing blanks removed, nothing else."""
    return b"".join(line.rstrip() + b"\n" for line in original.splitlines() if line.startswith(b":::MLLOG "))


def write_raw_runs(org: Path, work: Path) -> tuple[dict[str, bytes], list[str]]:
    """The published runs of CASES as raw job output under work/runs (one gzipped); (the original of each raw file,
    the config's [[results]] entries)."""
    originals: dict[str, bytes] = {}
    entries = []
    for system, bench in CASES.items():
        raw = work / "runs" / system
        raw.mkdir(parents=True)
        logs = sorted((org / "results" / system / bench).glob("result_*.txt"))
        for k, log in enumerate(logs):
            data = dress_as_raw_output(log.read_bytes(), k)
            name = f"job{k}.out"
            if k == 2:
                (raw / f"{name}.gz").write_bytes(gzip.compress(data, mtime=0))
                name += ".gz"
            else:
                (raw / name).write_bytes(data)
            originals[f"runs/{system}/{name}"] = log.read_bytes()
        entries.append(
            f'[[results]]\nsystem = "{system}"\nbenchmark = "{bench}"\nlogs = ["runs/{system}/*"]\n'
            f'implementation = {{ repo = "code", rev = "v1.0", path = "{bench}", name = "{system}" }}\n'
        )
    return originals, entries


def test_corpus_runs_survive_packaging_byte_exact(corpus: Path, tmp_path: Path, run_cli: Cli) -> None:
    org = (corpus / "training_results_v1.0" / "Graphcore").resolve()  # the config is read from another folder
    if not org.is_dir():
        pytest.skip("training_results_v1.0/Graphcore is not in the corpus")
    before = tree_digest(org)
    work = tmp_path / "work"
    originals, entries = write_raw_runs(org, work)
    commit_example(work / "code", {"bert/README.md": b"bert\n", "resnet/README.md": b"resnet\n"}, "c", tag="v1.0")
    config = work / "package.toml"
    config.write_text(
        f'org = "Graphcore"\nruleset = "1.0.0"\nout = "out"\nsystems = "{org / "systems"}"\n\n' + "\n".join(entries)
    )
    code, out, err = run_cli("package", config, "--allow-findings", "--archive", "--format", "json")
    assert code in (0, 1), err
    report = json.loads(out)
    found = [f["code"] for f in report["findings"]] + [f["code"] for e in report["files"] for f in e["findings"]]
    assert not [c for c in found if c.startswith("PKG")]  # 10 + 5 converged runs, a clean packaging job
    assert tree_digest(org) == before  # the corpus is read, never written
    manifest = json.loads((work / "out" / "manifest.json").read_text())
    assert len(manifest["results"]) == len(originals) == 15
    for result in manifest["results"]:
        packaged = (work / "out" / result["path"]).read_bytes()
        assert packaged == records_of(originals[result["source"]]), result["source"]
    # Swap files committed next to the published system files never reach the package.
    assert not list((work / "out" / "Graphcore" / "systems").glob(".*"))

    # The packaged runs get the same log-level findings as the published files they came from.
    def codes(paths: list[str]) -> Counter[tuple[str, ...]]:
        run = run_check(paths, CheckOptions(ruleset="1.0.0", jobs=1))
        return Counter(tuple(sorted(f.code for f in fs)) for p, fs in run.report.files.items() if "result_" in p)

    published = [str(org / "results" / s / b) for s, b in CASES.items()]
    packaged = [str(work / "out" / "Graphcore" / "results" / s / b) for s, b in CASES.items()]
    assert codes(packaged) == codes(published)
    code, _out, err = run_cli("verify", work / "out" / "mlperf_submission_Graphcore.tar.gz", "--format", "json")
    matched = "checksums matched: mlperf_submission_Graphcore.tar.gz.sha256, mlperf_submission_Graphcore.sha1"
    assert code in (0, 1) and matched in err
