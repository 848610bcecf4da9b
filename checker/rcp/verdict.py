"""Reference convergence points (RCP): each run's convergence and each closed folder's RCP verdict.

TR1.0 §"Reference Convergence Points" and later rounds: the olympic mean of the runs' epochs (or samples) to
converge must not be faster than the RCPs of the same batch size allow; between two RCP batch sizes the RCP is
interpolated, and faster-but-passing results are normalised by RCP mean / submission mean. mlperf-logging's RCP
checker is the source of truth for all of it, so both the verdict and each run's convergence come from its own
code (`upstream/rcp_adapted.py` says how it runs on logs already read, without writing anything). This module turns its
answers into `RcpResult`, the one value the tree checks, the scorer, the report and the advisor read.
"""

from __future__ import annotations

import fnmatch
import math
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.base.cache import MISS, folder_key, load_entry, store_entry
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.division import is_closed as says_closed
from mlsubmit.checker.upstream.installed import rcp_data_folder
from mlsubmit.checker.upstream.npstats import mean as np_mean

if TYPE_CHECKING:  # facts imports the log reader, which imports logs.rcp_lines: no cycle at run time
    from mlsubmit.checker.logs.facts import LogFacts

NOT_CONVERGED = 1e9  # the reference's stand-in for the epochs of a run that did not converge
_FOLDER = "/rcp-folder"  # the folder name the reference is shown: its logs are served from memory, never opened


@dataclass(frozen=True)
class RunConvergence:
    """What the reference's reader takes from one log: its batch size, benchmark and point of convergence."""

    path: str
    batch_size: Any  # the last global_batch_size value; -1 when there is none (the reference's convention)
    benchmark: str | None
    converged: bool
    epochs: float  # epochs or samples to converge (the benchmark's unit); NOT_CONVERGED when it did not
    problem: str | None = None  # the reference's reader raises on this log (no samples_count, no status, ...)


@dataclass(frozen=True)
class RcpResult:
    """Outcome of the RCP check for one results folder.

    status: "pass", "fail", "bypassed" (failed but a bypass was asked for), "not_applicable" (open division,
    minigo), "not_checked" (the reference has no RCP check for the benchmark: it crashes for its own want of a
    run count, not for anything in the logs), or "error" (the check cannot be made: no batch size, too many
    runs that did not converge, no RCP, runs that disagree). `reference` is the reference checker's own message
    ("RCP found", "RCP Interpolation", ...); `crash` is the exception the reference raises on this folder.
    """

    status: str
    passed: bool
    scaling_factor: float
    message: str
    reference: str = ""
    batch_size: Any = None
    submission_mean: float | None = None
    rcp_mean: float | None = None
    min_epochs: float | None = None
    crash: str | None = None
    runs: tuple[RunConvergence, ...] = field(default=())


_SAMPLES = ("llama2_70b_lora", "flux1")  # benchmarks whose RCP records count samples, as the reference reads them


def runs_key(benchmark: object) -> str:
    """The key of an RCP record's runs to converge: the reference reads "samples to converge" for the benchmarks
    that count samples and "Epochs to converge" for every other (a record with the other key is a KeyError there)."""
    return "samples to converge" if benchmark in _SAMPLES else "Epochs to converge"


def reference_knows(benchmark: str) -> bool:
    """Whether the installed RCP checker has a run count for the benchmark (4.1.68 lost 'dlrm': KeyError)."""
    # mlperf-logging's RCP checker only when a set is judged (start-up)
    from mlsubmit.checker.upstream.rcp_adapted import module

    return benchmark in module().submission_runs["training"]


def rcp_file(ruleset: str, benchmark: str) -> Path | None:
    """The RCP data file of a benchmark, found by listing the ruleset's folder (a log value never becomes a path)."""
    folder = rcp_data_folder(ruleset)
    if folder is None:
        return None
    wanted = f"rcps_{benchmark}.json"
    return next((p for p in folder.iterdir() if p.name == wanted), None)


def _text(facts: LogFacts) -> str:
    """A run's kept lines as the file the reference's reader is shown."""
    return "\n".join(facts.rcp_lines) + "\n" if facts.rcp_lines else ""


def _served(runs: Sequence[LogFacts]) -> dict[str, tuple[str, LogFacts]]:
    """The runs the reference's glob would list (result_*.txt), under the folder name it is shown."""
    out: dict[str, tuple[str, LogFacts]] = {}
    for facts in runs:
        name = posixpath.basename(facts.path.replace("\\", "/"))
        if fnmatch.fnmatchcase(name, "result_*.txt"):
            out[f"{_FOLDER}/{name}"] = (_text(facts), facts)
    return out


def _read_run(module: Any, served: str, facts: LogFacts, ruleset: str, train_samples: bool = False
              ) -> RunConvergence:
    try:
        failed, epochs, bs, bench = module.read_submission_file(served, ruleset, train_samples)
    except Exception as exc:  # the reference's reader raises: its package checker stops here
        return RunConvergence(facts.path, -1, facts.benchmark, False, NOT_CONVERGED, error_in_words(exc))
    return RunConvergence(facts.path, bs, bench if isinstance(bench, str) else None, not failed,
                          epochs if not failed else NOT_CONVERGED)  # fmt: skip


def answer_for(facts: LogFacts, ruleset: str) -> list[Any] | None:
    """[ruleset, the reference reader's answer] on this run's kept lines, or None when the reader raises (the RCP
    check then reads the run itself, to raise as the reference does)."""
    # mlperf-logging's RCP checker only when a set is judged (start-up)
    from mlsubmit.checker.upstream.rcp_adapted import as_logs_on_disk, misfits, module

    if misfits():  # upstream's module as it is reads files: the check reads the run then, in this process
        return None
    name = f"{_FOLDER}/result_0.txt"
    with as_logs_on_disk({name: _text(facts)}):
        try:
            return [ruleset, list(module().read_submission_file(name, ruleset, False))]
        except Exception:  # the check meets the same raise and names it
            return None


def _answers(served: dict[str, tuple[str, LogFacts]], ruleset: str) -> dict[str, list[Any]]:
    out = {}
    for name, (_, facts) in served.items():
        kept = facts.rcp_answer
        if kept is not None and len(kept) == 2 and kept[0] == ruleset and isinstance(kept[1], list):
            out[name] = kept[1]
    return out


def _convergence(mod: Any, served: dict[str, tuple[str, LogFacts]], ruleset: str) -> tuple[RunConvergence, ...]:
    return tuple(_read_run(mod, name, facts, ruleset) for name, (_, facts) in served.items())


def run_convergence(facts: LogFacts, ruleset: str, *, train_samples: bool = False) -> RunConvergence:
    """One run's convergence as the reference reads it (the report's per-run `to_converge`); `train_samples`: as
    the package checker's --rcp-bert-train-samples reads it (a tree's package_checker_params)."""
    # mlperf-logging's RCP checker only when a set is judged (start-up)
    from mlsubmit.checker.upstream.rcp_adapted import as_logs_on_disk, module

    served = _served([facts]) or {f"{_FOLDER}/result_0.txt": (_text(facts), facts)}
    name, (text, _) = next(iter(served.items()))
    with as_logs_on_disk({name: text}, _answers({name: (text, facts)}, ruleset), ruleset):
        return _read_run(module(), name, facts, ruleset, train_samples)


def evaluate(
    benchmark: str, ruleset: str, runs: list[LogFacts], *, bypass: bool = False, closed: bool | None = None,
    train_samples: bool = False, rcps: str | None = None,
) -> RcpResult:
    """RCP check of one results folder: `benchmark` is the folder's name, `runs` the facts of its logs.

    `closed` defaults to "some run's log says closed"; the package checker decides from the system file instead,
    so the tree check passes it explicitly. `train_samples` and `rcps`: see reference.judge.
    """
    if closed is None:
        closed = says_closed(None, runs)
    if not closed or not benchmarks.has_rcp(benchmark):
        why = "open division" if not closed else f"no RCP check for {benchmark} (TR1.x)"
        return RcpResult("not_applicable", True, 1.0, f"RCP check does not apply: {why}")
    # mlperf-logging's RCP checker only when a set is judged (start-up)
    from mlsubmit.checker.upstream.rcp_adapted import as_logs_on_disk, judge, module

    served = _served(runs)
    texts = {name: text for name, (text, _) in served.items()}
    with as_logs_on_disk(texts, _answers(served, ruleset), ruleset) as judged:
        try:
            passed, msg, norm = judge(_FOLDER, ruleset, bypass, train_samples=train_samples, rcps=rcps)
        except Exception as exc:  # the reference stops with a traceback: no verdict for this folder
            return _crashed(exc, _convergence(module(), served, ruleset))
        conv = _convergence(module(), served, ruleset)  # after judge: it may have set the adapter aside
    logged = conv[0].benchmark if conv else None  # the unit of the RCPs the reference chose, by the logs' benchmark
    unit = benchmarks.unit(logged or benchmark, ruleset)
    return _verdict(bool(passed), str(msg), float(norm), conv, judged[-1] if judged else None, unit)


def _crashed(exc: Exception, conv: tuple[RunConvergence, ...]) -> RcpResult:
    crash = f"{type(exc).__name__}: {exc}"
    sizes = {repr(c.batch_size) for c in conv}
    benches = {c.benchmark for c in conv}
    problem = next((f"{c.path}: {c.problem}" for c in conv if c.problem), None)
    if problem:
        return RcpResult("error", False, 1.0, f"the reference's RCP reader fails on {problem}", crash=crash, runs=conv)
    if len(sizes) > 1 or len(benches) > 1:
        what = "batch sizes " + ", ".join(sorted(sizes)) if len(sizes) > 1 else "benchmarks " + ", ".join(
            sorted(str(b) for b in benches)
        )
        return RcpResult("error", False, 1.0, f"runs disagree: {what}", "Batch sizes in files do not match",
                         crash=crash, runs=conv)  # fmt: skip
    bench = next(iter(benches), None)
    if bench is None:
        return RcpResult("error", False, 1.0, "no run logs submission_benchmark (or the folder is empty)",
                         crash=crash, runs=conv)  # fmt: skip
    if benchmarks.runs(bench) and not reference_knows(bench):
        return RcpResult("not_checked", True, 1.0, f"the installed RCP checker has no run count for {bench!r}",
                         crash=crash, runs=conv)  # fmt: skip
    return RcpResult("error", False, 1.0, f"the reference's RCP check stops: {error_in_words(exc)}", crash=crash,
                     runs=conv)


def error_in_words(exc: Exception) -> str:
    """The reference's exception in words: a KeyError is a value it looks up and does not find (`KeyError: None`
    says nothing to a submitter); other errors keep their own text. The raw exception stays in RcpResult.crash."""
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else None
        if key is None:
            return "it looks up a value that no run gives (an empty folder, or logs it cannot read)"
        return f"it looks for {key!r} and does not find it"
    return f"{type(exc).__name__}: {exc}"


_PASSED = ("RCP found", "RCP Interpolation", "RCP not found but slower convergence on smaller batch size")


def _verdict(passed: bool, msg: str, norm: float, conv: tuple[RunConvergence, ...], judged: Any, unit: str
             ) -> RcpResult:
    bs = conv[0].batch_size if conv else None
    mean = rcp_mean = low = None
    if judged is not None:
        record = judged.record
        rejected = benchmarks.dropped(str(record.get("Benchmark")))
        kept = sorted(judged.epochs)[rejected : len(judged.epochs) - rejected]
        mean = float(np_mean(kept))
        rcp_mean = float(record["RCP Mean"])
        low = float(record["RCP Mean"] / record["Max Speedup"])
    if passed:
        status = "bypassed" if msg.endswith("passed using rcp_bypass") else "pass"
    else:
        status = "fail" if msg in ("RCP found", "RCP Interpolation") else "error"
    if msg.startswith("Missing RCP") and not passed:
        status = "error"
    text = _describe(msg, bs, (mean, rcp_mean, low), norm if passed else 1.0, conv, unit)
    return RcpResult(status, passed, norm, text, msg, bs, mean, rcp_mean, low, None, conv)


def _describe(msg: str, bs: Any, means: tuple[float | None, float | None, float | None], norm: float,
              conv: tuple[RunConvergence, ...], unit: str) -> str:
    """The reference's message, with the numbers behind it in the unit its RCPs count (epochs, samples, ...)."""
    mean, rcp_mean, low = means
    if msg == "Insufficient convergence":
        failed = sum(1 for c in conv if not c.converged)
        allowed = max((benchmarks.dropped(str(c.benchmark)) for c in conv), default=1)
        return f"{failed} runs did not converge (at most {allowed} allowed)"
    if msg == "Could not detect global_batch_size":
        return "no run logs global_batch_size"
    parts = [f"{msg} (global batch size {bs})"]
    if mean is not None and rcp_mean is not None and low is not None:
        shown = f"{mean:.4f} {unit}" if math.isfinite(mean) else "not computed (too few converged runs)"
        parts.append(f"submission olympic mean {shown}, RCP mean {rcp_mean:.4f} {unit}, "
                     f"fastest allowed {low:.4f} {unit}")
    if norm > 1.0:  # given for a pass only: a failing result is not scored, and a factor beside a fail reads as one
        parts.append(f"score normalisation factor {norm:.6f}")
    return "; ".join(parts)


def prepare(ruleset: str, names: Iterable[str]) -> None:
    """Load the reference's module (and with it the RCP statistics' code) before the logs are read, so the tree
    checks do not wait for it; the statistics themselves are kept as data (upstream/rcp_adapted.py)."""
    if any(benchmarks.has_rcp(b) and benchmarks.runs(b) for b in names):
        # mlperf-logging's RCP checker only when a set is judged (start-up)
        from mlsubmit.checker.upstream.rcp_adapted import module

        try:
            module()
        except Exception:  # evaluate() meets the same error and turns it into a finding
            return


# Verdicts given in this process, by everything that decides them (the --cache key): `report` takes the check's
# instead of judging the same folder again. Runs in another order are another key, as the reference's answer can
# depend on the order it lists them.
_JUDGED: dict[str, RcpResult] = {}


def _key(benchmark: str, ruleset: str, runs: list[LogFacts], bypass: bool, closed: bool, train_samples: bool,
         rcps: str | None) -> str:
    inputs = [[f.path, list(f.rcp_lines), f.division] for f in runs]
    return folder_key("rcp", benchmark, ruleset, bypass, closed, inputs, train_samples, rcps)


def rcp_verdict(benchmark: str, ruleset: str, runs: list[LogFacts], *, bypass: bool = False, closed: bool = True,
           train_samples: bool = False, rcps: str | None = None) -> RcpResult:
    """The verdict the check gave in this process on exactly these runs, else evaluate()'s."""
    kept = _JUDGED.get(_key(benchmark, ruleset, runs, bypass, closed, train_samples, rcps))
    if kept is not None:
        return kept
    return evaluate(benchmark, ruleset, runs, bypass=bypass, closed=closed, train_samples=train_samples, rcps=rcps)


def evaluate_cached(
    benchmark: str, ruleset: str, runs: list[LogFacts], *, bypass: bool, closed: bool, cache_dir: Path | None,
    train_samples: bool = False, rcps: str | None = None,
) -> RcpResult:
    """evaluate(), remembered in the --cache folder under everything that decides it (each run's name and kept
    lines, the ruleset, bypass, division, the bert flag and the RCPs given), so an unchanged folder is not judged
    again; and in this process, for `rcp_verdict`."""
    key = _key(benchmark, ruleset, runs, bypass, closed, train_samples, rcps)
    result = _JUDGED[key] = _stored(key, benchmark, ruleset, runs, bypass=bypass, closed=closed,
                                    cache_dir=cache_dir, train_samples=train_samples, rcps=rcps)
    return result


def _stored(key: str, benchmark: str, ruleset: str, runs: list[LogFacts], *, bypass: bool, closed: bool,
            cache_dir: Path | None, train_samples: bool, rcps: str | None) -> RcpResult:
    if cache_dir is None:
        return evaluate(benchmark, ruleset, runs, bypass=bypass, closed=closed, train_samples=train_samples, rcps=rcps)

    root = Path(cache_dir)
    entry = root / "rcp" / f"{key}.json"
    data = load_entry(root, entry, f"rcp/{key}", lambda body: isinstance(body, dict))
    if data is not MISS:
        try:
            data["runs"] = tuple(RunConvergence(**r) for r in data["runs"])
            return RcpResult(**data)
        except (KeyError, TypeError, ValueError):  # valid entry of another shape: a miss, written again below
            pass
    result = evaluate(benchmark, ruleset, runs, bypass=bypass, closed=closed, train_samples=train_samples, rcps=rcps)
    store_entry(root, entry, f"rcp/{key}", asdict(result))
    return result
