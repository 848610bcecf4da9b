"""Tree figures for `make bench`: whole organisation trees, cache, and the CI-on-upload re-check. Measured, never
asserted; the last line is JSON with every figure.

- reference: mlperf-logging's package checker over every corpus tree in ONE process, each on a temporary copy
  (tools/reference_package_batch.py; it writes scaling.json into what it checks), with its verdicts;
- us: `mlsubmit check --profile reference` and the full profile over the same trees, one process for both rounds
  (each tree's ruleset from its round folder), fastest of MLSUBMIT_BENCH_RUNS runs (default 3), as the floor,
  the three taking turns run by run (bench.fastest_each);
- floor: one process that reads every corpus log and JSON-decodes every record, nothing else;
- cache: the full profile with a fresh --cache (cold), then again (warm);
- re-check: a synthetic 200-log tree in a git repository; one log changes; `--changed-since HEAD` with a warm cache;
- generated round (tools/gen_round.py, scale MLSUBMIT_BENCH_SCALE, default 1.0: ~13,000 implementation files,
  ~800 MB, ~800 logs): the JSON floor over its logs, the default profile cold (no cache), its peak memory (the
  largest of mlsubmit's processes), and the warm re-check after one implementation file changes (`--cache` and
  `--changed-since HEAD`; and `--cache` alone, which hashes every scanned file).

The targets of issue 14 are printed last, as ratios within this run (the machine is shared: figures are noisy).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools"))

from bench import FLOOR, best, fastest_each, timed  # noqa: E402 - the same floor and timing as tools/bench.py

PY = sys.executable
MLSUBMIT = [PY, "-m", "mlsubmit"]
ROUNDS = {"training_results_v1.0": "1.0.0", "training_results_v1.1": "1.1.0", "training_results_v4.0": "4.0.0",
          "training_results_v5.0": "5.0.0", "training_results_v5.1": "5.1.0"}  # v4.0 on: trees with their code


def corpus_trees(corpus: Path) -> dict[str, list[Path]]:
    return {rs: sorted(p for p in (corpus / rnd).iterdir() if p.is_dir()) for rnd, rs in ROUNDS.items()
            if (corpus / rnd).is_dir()}  # fmt: skip


RUNS = int(os.environ.get("MLSUBMIT_BENCH_RUNS", "3"))


def check_all(trees: dict[str, list[Path]], *extra: str, runs: int = RUNS) -> float:
    """Fastest of `runs` runs of one `mlsubmit check` over every tree (each tree's ruleset from its round folder)."""
    paths = [str(p) for ps in trees.values() for p in ps]
    took, proc = best(runs, [*MLSUBMIT, "check", "--format", "json", *extra, *paths])
    if proc.returncode not in (0, 1):
        raise SystemExit(f"mlsubmit failed: {proc.stderr}")
    return took


def check_cold(trees: dict[str, list[Path]]) -> float:
    """Fastest of RUNS runs, each with a fresh, empty --cache folder."""
    fastest = float("inf")
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory(prefix="mlsubmit-cache-") as cache:
            fastest = min(fastest, check_all(trees, "--cache", cache, runs=1))
    return fastest


def bench_corpus(corpus: Path) -> dict[str, object]:
    trees = corpus_trees(corpus)
    jobs = "".join(f"{rs}\t{p}\n" for rs, paths in trees.items() for p in paths)
    ref_t, ref = timed([PY, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"], input=jobs)
    verdicts = {}
    for line in ref.stdout.splitlines():
        d = json.loads(line)
        verdicts[os.path.relpath(d["tree"], corpus)] = "crash" if d["crash"] else ("pass" if d["ok"] else "fail")
    logs = [str(p) for paths in trees.values() for t in paths for p in t.glob("results/*/*/result_*.txt")]
    every = [str(p) for ps in trees.values() for p in ps]
    check = [*MLSUBMIT, "check", "--format", "json"]
    timings = fastest_each(RUNS, {"floor": ([PY, "-c", FLOOR, *logs], {}),
                                  "reference_profile": ([*check, "--profile", "reference", *every], {}),
                                  "full": ([*check, *every], {})})  # fmt: skip
    for name in ("reference_profile", "full"):
        if timings[name][1].returncode not in (0, 1):
            raise SystemExit(f"mlsubmit failed: {timings[name][1].stderr}")
    floor_t, reference_profile_t, full_t = (timings[n][0] for n in ("floor", "reference_profile", "full"))
    out: dict[str, object] = {
        "trees": sum(len(v) for v in trees.values()),
        "logs": len(logs),
        "runs": RUNS,
        "reference_package_s": round(ref_t, 2),
        "reference_verdicts": verdicts,
        "floor_s": round(floor_t, 3),
        "us_reference_profile_s": round(reference_profile_t, 3),
        "us_full_s": round(full_t, 3),
        "us_full_over_floor": round(full_t / floor_t, 2),
        "us_reference_profile_over_floor": round(reference_profile_t / floor_t, 2),
        "reference_package_over_us_reference_profile": round(ref_t / reference_profile_t, 1),
        "reference_package_over_us_full": round(ref_t / full_t, 1),
    }
    out["us_full_cold_cache_s"] = round(check_cold(trees), 3)
    with tempfile.TemporaryDirectory(prefix="mlsubmit-cache-") as cache:
        check_all(trees, "--cache", cache, runs=1)
        out["us_full_warm_cache_s"] = round(check_all(trees, "--cache", cache), 3)
    return out


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # fmt: skip
    # no automatic gc: after committing the generated round's 850 MB, git would pack it in a detached background
    # process (a core busy for about a minute) while the figures after it are measured
    quiet = ["-c", "gc.auto=0", "-c", "maintenance.auto=false"]
    subprocess.run(["git", "-C", str(repo), *quiet, *args], check=True, capture_output=True, env=env)


def bench_recheck(work: Path) -> dict[str, object]:
    """200 logs: 40 closed ResNet-50 folders of 5 runs; change one log, re-check with --changed-since."""
    from fixtures.treefix import build_org, resnet_runs  # tests/fixtures/, on sys.path above

    repo = work / "repo"
    runs = {(f"pod{i:02d}", "resnet"): resnet_runs([36, 37, 37, 38, 39]) for i in range(40)}
    org = build_org(repo / "Graphcore", runs)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "runs")
    cache = work / "cache"
    base = [*MLSUBMIT, "check", "--ruleset", "1.0.0", "--format", "json", "--cache", str(cache)]
    cold, _ = timed([*base, str(org)])
    warm, _ = timed([*base, str(org)])
    log = org / "results" / "pod07" / "resnet" / "result_3.txt"
    log.write_bytes(log.read_bytes() + b"job output after the run\n")
    recheck, proc = timed([*base, "--changed-since", "HEAD", str(org)])
    checked = len(json.loads(proc.stdout)["files"]) if proc.stdout else 0
    full_after, _ = timed([*base, str(org)])
    return {
        "recheck_logs": 200,
        "recheck_cold_s": round(cold, 2),
        "recheck_warm_s": round(warm, 2),
        "recheck_changed_since_s": round(recheck, 2),
        "recheck_changed_since_logs_reported": checked,
        "recheck_full_after_change_s": round(full_after, 2),
    }


PEAK = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, code)
"""


def peak_mb(cmd: list[str]) -> int:
    """The largest resident set of `cmd` and every process it started and waited for (its workers), in MB."""
    out = subprocess.run([PY, "-c", PEAK, *cmd], capture_output=True, text=True, check=True).stdout.split()
    return int(out[0])


def bench_generated(work: Path) -> dict[str, object]:
    from gen_round import write_round  # tools/, on sys.path above

    scale = float(os.environ.get("MLSUBMIT_BENCH_SCALE", "1.0"))
    tree = work / "round"
    summary = write_round(tree, scale=scale)
    orgs = sorted(str(p) for p in tree.iterdir())
    logs = [str(p) for p in sorted(tree.glob("*/results/*/*/result_*.txt"))]
    check = [*MLSUBMIT, "check", "--ruleset", "4.0.0", "--format", "json"]
    timings = fastest_each(RUNS, {"floor": ([PY, "-c", FLOOR, *logs], {}), "full": ([*check, *orgs], {})})
    floor_t, full_t = timings["floor"][0], timings["full"][0]
    out: dict[str, object] = {"gen_scale": scale, "gen_files": summary["files"], "gen_mb": summary["bytes"] >> 20,
                              "gen_logs": summary["logs"], "gen_floor_s": round(floor_t, 3),
                              "gen_full_s": round(full_t, 3), "gen_full_over_floor": round(full_t / floor_t, 2),
                              "gen_peak_mb": peak_mb([*check, *orgs])}  # fmt: skip
    _git(tree, "init", "-q")
    _git(tree, "-c", "core.compression=0", "-c", "core.looseCompression=0", "add", "-A")
    _git(tree, "commit", "-qm", "round")
    cache = work / "gen-cache"
    cached = [*check, "--cache", str(cache)]
    out["gen_cold_cache_s"] = round(timed([*cached, *orgs])[0], 3)
    out["gen_warm_cache_s"] = round(best(RUNS, [*cached, *orgs])[0], 3)
    changed = Path(summary["planted"][0][0])  # an implementation file; a new secret is added to it
    with open(tree / changed, "a", encoding="utf-8") as fh:
        fh.write('STRIPE = "sk_live_' + "Qz7" * 8 + '"\n')
    recheck, proc = timed([*cached, "--changed-since", "HEAD", str(tree / changed.parts[0])])
    out["gen_recheck_changed_since_s"] = round(recheck, 3)
    out["gen_recheck_found_the_change"] = "Stripe Access Key" in proc.stdout
    out["gen_recheck_full_warm_s"] = round(timed([*cached, *orgs])[0], 3)
    return out


def targets(f: dict[str, object]) -> list[str]:
    """Issue 14's targets, each as the figure, the target and whether this run met it."""
    rows = [("default profile vs reference package checker, corpus trees", f.get("reference_package_over_us_full"),
             ">= 20x", lambda v: v >= 20),
            ("default profile / JSON floor, all corpus trees", f.get("us_full_over_floor"), "<= 2x", lambda v: v <= 2),
            ("default profile / JSON floor, generated round", f.get("gen_full_over_floor"), "<= 2x", lambda v: v <= 2),
            ("warm re-check after one code change (s)", f.get("gen_recheck_changed_since_s"), "<= 1 s",
             lambda v: v <= 1),
            ("peak memory on the generated round (MB)", f.get("gen_peak_mb"), "<= 300 MB", lambda v: v <= 300)]
    return [f"{name:62} {value!s:>8}  target {want:8} {'met' if value is not None and ok(value) else 'NOT met'}"
            for name, value, want, ok in rows]


def main() -> int:
    corpus = Path(os.environ.get("MLSUBMIT_CORPUS", ROOT.parent / "shared" / "corpus"))
    figures: dict[str, object] = {}
    if corpus.is_dir():
        figures.update(bench_corpus(corpus))
    else:
        print(f"corpus not found at {corpus}: tree figures skipped", file=sys.stderr)
    if shutil.which("git"):
        with tempfile.TemporaryDirectory(prefix="mlsubmit-bench-") as tmp:
            figures.update(bench_recheck(Path(tmp)))
        with tempfile.TemporaryDirectory(prefix="mlsubmit-bench-round-") as tmp:
            figures.update(bench_generated(Path(tmp)))
    for key, value in figures.items():
        if key != "reference_verdicts":
            print(f"{key:40} {value}")
    print("issue 14 targets (ratios within this run; the machine is shared, so figures are noisy):")
    for row in targets(figures):
        print("  " + row)
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
