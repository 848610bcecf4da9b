"""`make demo`: example IPU runs written with mllog, then check, advise, package and report them.

Everything lands under the folder given (build/demo): raw job output of 10 BERT runs on IPU-POD16 and 5 ResNet-50
runs on IPU-POD64 (rank prefixes, CRLF, noise, as real job logs have), one run with a record cut off mid-way, an
open-division BERT run, a small git repository standing in for the implementation code, a packaging config, the
submission tree and archive, and report.html; then the current round's official path (modern_round). The commands
run are printed before their output; the demo shows findings, it does not fail on them (the broken run is there to
be caught).
"""

from __future__ import annotations

import gzip
import os
import shlex
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures (tests/fixtures/)

from fixtures.demo import (  # noqa: E402
    EVALS,
    MODERN_SYSTEM,
    TAG,
    config_text,
    implementation_files,
    raw_run,
    write_systems,
)
from fixtures.modern import BENCHMARK, ORG, chair_commands, write_job  # noqa: E402
from fixtures.modern import RULESET as MODERN_RULESET  # noqa: E402
from fixtures.repo import commit_example  # noqa: E402
from fixtures.synth import RunSpec, write_run  # noqa: E402
from mlsubmit.submission import confine  # noqa: E402

from mlsubmit.cli import main as mlsubmit  # noqa: E402

RULESET = "1.1.0"
DAY = 86_400_000


def say(title: str) -> None:
    print(f"\n=== {title}", flush=True)


def run_cli(*argv: str, expected: str = "") -> int:
    """Run a command as a user would, and show its exit status; `expected` says why errors are wanted here."""
    print("$ mlsubmit " + " ".join(shlex.quote(a) for a in argv), flush=True)
    code = mlsubmit(list(argv))
    print(f"(exit {code}: {expected})" if code == 1 and expected else f"(exit {code})", flush=True)
    return code


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_runs(out: Path) -> dict[str, Path]:
    """Closed runs evaluate at realistic epochs (samples for BERT), so that they pass the RCP check."""
    runs = out / "runs"
    bert = runs / "pod16-bert"
    for i in range(10):
        spec = RunSpec(benchmark="bert", ruleset=RULESET, platform="ipu-pod16-POPART-closed", seed=1000 + i,
                       start_ms=1_633_000_000_000 + i * DAY, minutes=28.0 + (i % 5) * 0.7, raw_output=True,
                       crlf=i % 2 == 1)
        if i == 3:  # one job's output was archived compressed
            _write(bert / f"job-{i:02d}.out.gz", gzip.compress(raw_run(spec), mtime=0))
        else:
            _write(bert / f"job-{i:02d}.out", raw_run(spec))
    resnet = runs / "pod64-resnet"
    for i in range(5):
        spec = RunSpec(benchmark="resnet", ruleset=RULESET, platform="ipu-pod64-TF-closed", seed=2000 + i,
                       start_ms=1_633_500_000_000 + i * DAY, minutes=14.5 + i * 0.3, raw_output=True,
                       evals=EVALS["resnet"])
        _write(resnet / f"job-{i:02d}.out", raw_run(spec))
    broken = runs / "broken"
    path = write_run(broken / "job-00.out", RunSpec(ruleset=RULESET, platform="ipu-pod16-POPART-closed", seed=99))
    lines = path.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"eval_accuracy"' in line)
    # the job was killed while writing this record; cut inside its key, so the message is the same wherever the demo
    # runs (the record's metadata holds the path of the file that logged it)
    lines[cut] = lines[cut][: lines[cut].index(b'"eval_accuracy"') + 13] + b"\n"
    path.write_bytes(b"".join(lines))
    open_run = runs / "pod16-resnet-open"  # tuned beyond what the closed table allows
    tuned = {"lars_opt_momentum": 0.95, "lars_opt_weight_decay": 3e-5}
    write_run(open_run / "job-00.out", RunSpec(benchmark="resnet", ruleset=RULESET, division="open",
                                               platform="ipu-pod16-TF-open", seed=7, hyperparameters=tuned))
    return {"bert": bert, "resnet": resnet, "broken": broken, "open": open_run}






def run_set_loop(out: Path) -> None:
    """The team's daily loop before packaging: BERT runs land in three batches; each batch is checked into a run
    ledger ("k more runs needed", the RCP verdict so far, the risk of an RCP fail once all N are in (RUN009: job-05
    does not converge, so the second batch shows the chance that one more fails), the median window once M > N);
    the ledger is shown as a page; the set is packaged from the ledger (select = "median-window")."""
    loop = out / "loop"
    runs, ledger = loop / "runs", loop / "ledger.db"
    say("A run set as it lands: 14 BERT jobs in three batches, each checked into a run ledger")
    for first, count in ((0, 4), (4, 4), (8, 6)):
        for i in range(first, first + count):
            spec = RunSpec(benchmark="bert", ruleset=RULESET, platform="ipu-pod16-POPART-closed", seed=3000 + i,
                           start_ms=1_634_000_000_000 + i * DAY, minutes=27.0 + (i * 37 % 11) * 0.3, raw_output=True,
                           converge=i != 5)
            _write(runs / f"job-{i:02d}.out", raw_run(spec))
        print(f"  batch: job-{first:02d} .. job-{first + count - 1:02d}")
        run_cli("check", "--ruleset", RULESET, "--color", "never", "--ledger", str(ledger), str(runs),
                expected="job-05 did not converge (RULE004); RUN009 gives the risk that a second one fails the set")
    run_cli("runs", "show", "--ledger", str(ledger))
    run_cli("runs", "show", "--ledger", str(ledger), "--format", "html", "-o", str(loop / "runs.html"))
    config = loop / "package.toml"
    config.write_text(f'''org = "Graphcore"
ruleset = "{RULESET}"
out = "submission"
systems = "../systems"

[[results]]
system = "ipu-pod16-POPART-closed"
benchmark = "bert"
ledger = "ledger.db"
select = "median-window"
implementation = {{ repo = "../ipu-benchmarks", rev = "{TAG}", path = "bert/popart", name = "popart" }}
''', encoding="utf-8")
    run_cli("package", str(config), "--color", "never")


def modern_round(root: Path) -> None:
    """The official 6.1 path: raw job output with framework lines, `package` into an encrypted archive the chair's
    pack_submission.sh --unpack opens, the passphrase in a 0600 file, and the chair's steps to repeat by hand."""
    say(f"A current round, the official {MODERN_RULESET} path: ten closed Llama 2 70B LoRA jobs on an IPU-POD64")
    job = write_job(root, ROOT / "systems", out="submission")
    print(f"  raw job output (framework lines, launcher prefixes) in {job.root / 'runs'}; config {job.config}")
    run_cli("package", str(job.config), "--archive", "--encrypt", "--passphrase-file", str(job.passphrase),
            "--generate-passphrase", "--color", "never")
    built = job.root / "submission"
    org = built / ORG
    run_cli("check", "--ruleset", MODERN_RULESET, "--color", "never", str(org))
    run_cli("advise", "--ruleset", MODERN_RULESET, "--color", "never", str(org / "results" / MODERN_SYSTEM / BENCHMARK))
    run_cli("report", "--ruleset", MODERN_RULESET, str(org), "--html", str(root.parent / "modern-report.html"))
    say("The results chair's own flow on the archive, in one command: pack_submission.sh --unpack's sha1 check and "
        f"decryption, verify_for_v{MODERN_RULESET[:3]}_training.sh's steps with the installed mlperf-logging, then "
        "report --against the summary they produced")
    confined = confine.available_confinement()
    if confined.kind == "none":  # the demo's own archive, written above: trusted, so it may run unconfined
        print(f"  bubblewrap cannot confine the tools here ({confined.why}): this demo passes --unconfined, which "
              "`verify --official` requires then (install bubblewrap: `make install-machine`)")
    run_cli("verify", str(built / f"mlperf_submission_{ORG}.tar.gz"), "--official", "--passphrase-file",
            str(job.passphrase), "--color", "never", *(["--unconfined"] if confined.kind == "none" else []))
    say("The same steps, to repeat by hand (pack_submission.sh --unpack, then "
        f"verify_for_v{MODERN_RULESET[:3]}_training.sh), in one shell with mlperf-logging installed")
    for line in chair_commands(built, job.passphrase, job.root / "unpacked"):
        print(f"  {line}")


def main(argv: list[str]) -> int:
    # paths as a user types them (relative to the working directory), so the output reads like the README
    out = Path(os.path.relpath(Path(argv[0] if argv else "build/demo").resolve()))
    here = Path(os.path.relpath(ROOT))
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    say(f"Writing example IPU runs with mlperf_logging.mllog into {out / 'runs'}")
    runs = write_runs(out)
    for name, folder in runs.items():
        print(f"  {name:7} {len(list(folder.iterdir())):2d} run(s) in {folder.relative_to(out)}")

    say("Checking the raw runs (the broken one must fail)")
    run_cli("check", "--ruleset", RULESET, "--color", "never", *(str(p) for p in sorted(runs["broken"].iterdir())),
            str(runs["bert"] / "job-00.out"), expected="as expected: the broken run is caught")

    say("What the open ResNet-50 run would need to qualify for the closed division")
    run_cli("advise", "--ruleset", RULESET, "--color", "never", str(runs["open"] / "job-00.out"),
            expected="as expected: the run breaks the closed table")

    say("Checking this organisation's system descriptions")
    run_cli("check", "--ruleset", RULESET, "--color", "never", str(here / "systems"))

    say(f"Packaging the good runs with the implementation code at tag {TAG}")
    # the implementation repository, systems and config of the packaging example (tests/fixtures/demo.py)
    commit_example(out / "ipu-benchmarks", implementation_files(), "IPU benchmarks for MLPerf Training", tag=TAG)
    write_systems(out / "systems", ROOT / "systems")
    config = out / "package.toml"
    config.write_text(config_text(out="submission", ruleset=RULESET), encoding="utf-8")
    run_cli("package", str(config), "--archive")  # no findings that are errors: nothing to allow

    say("Verifying the archive as the results chair would: checksums, a refusing unpack, manifest, check")
    run_cli("verify", str(out / "submission" / "mlperf_submission_Graphcore.tar.gz"), "--color", "never")

    org = out / "submission" / "Graphcore"
    say("Scoring the submission and writing the HTML report")
    run_cli("report", "--ruleset", RULESET, str(org), "--html", str(out / "report.html"),
            "--prices", str(here / "prices.toml"))

    run_set_loop(out)
    modern_round(out / "modern")
    print(f"\nDone. Open {out / 'report.html'}, {out / 'loop' / 'runs.html'} and {out / 'modern-report.html'} in a "
          "browser.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
