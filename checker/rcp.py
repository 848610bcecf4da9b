"""Reference convergence points (RCP): the check mlperf-logging's RCP checker makes, fed from LogFacts.

TR1.0/TR1.1 "Reference Convergence Points": the olympic mean of the runs' epochs to converge must not be faster
than the RCPs of the same batch size allow (one-sided t-test, p = 0.05); between two RCP batch sizes the RCP is
interpolated. The installed mlperf-logging also prunes RCPs and normalises faster-but-passing scores by
RCP mean / submission mean (rules-spec §5.4: both later-round rules, applied to 1.x by the verifier, which is the
source of truth).

We reuse the reference's RCP data files and its pure functions (statistics, pruning, lookup, interpolation) so the
pass/fail and the normalisation factor are the reference's own. We do not reuse its file reading (logs are read once,
by the pipeline), nor its evaluation step, which deletes and writes `scaling.json` in the results folder: the factor
is returned instead. Neither scipy nor, for what the check computes, numpy is imported (see `_reference`).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker.facts import LogFacts, Occurrence

from mlsubmit.datafiles import derived

NOT_CONVERGED = 1e9  # the reference's stand-in epoch count for a run that did not converge


@dataclass(frozen=True)
class RunConvergence:
    """What the reference reads from one log for the RCP check."""

    path: str
    batch_size: Any  # the last global_batch_size value; -1 when there is none (the reference's convention)
    benchmark: str | None
    converged: bool
    epochs: float
    problem: str | None = None  # a shape on which the reference's reader raises (no epoch_num, no status...)


@dataclass(frozen=True)
class RcpResult:
    """Outcome of the RCP check for one results folder.

    status: "pass", "fail", "bypassed" (failed but a bypass was asked for), "not_applicable" (open division,
    minigo), or "error" (the check cannot be made: no batch size, mixed batch sizes, no RCP data...).
    `reference` is the reference checker's own wording ("RCP found", "RCP Interpolation", ...); `crash` says why
    the reference itself would raise on this folder, when it would.
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


def _last(facts: LogFacts, key: str) -> Any:
    occ = facts.all(key)
    if occ:
        return occ[-1].value
    return facts.value(key)


def read_convergence(facts: LogFacts) -> RunConvergence:
    """Mirror of the reference's read_submission_file, on facts: last batch size, last benchmark, and the epoch of
    the last eval_accuracy before each run_stop (the last run_stop decides)."""
    bs = _last(facts, "global_batch_size")
    bs = -1 if bs is None else bs
    bench = _last(facts, "submission_benchmark")
    epoch: float | None = None
    converged, epochs, problem = False, NOT_CONVERGED, None
    stops = facts.all("run_stop")
    s = 0  # the next run_stop to take: a run_stop comes after the evals on lines before or on its own
    for occ in facts.all("eval_accuracy"):  # both lists are in line order
        while s < len(stops) and stops[s].line < occ.line:
            converged, epochs, problem = _at_stop(stops[s], epoch, problem)
            s += 1
        meta = occ.metadata
        if type(meta) is not dict or "epoch_num" not in meta:
            problem = problem or f"eval_accuracy on line {occ.line} has no epoch_num"
            continue
        value = meta["epoch_num"]
        if type(value) is float or type(value) is int:  # the common case, the reference's round() takes it
            epoch = round(float(value), 3)
            continue
        if not _is_number(value):  # the reference's round() raises on it
            problem = problem or f"eval_accuracy on line {occ.line} has a non-numeric epoch_num {value!r}"
        try:
            epoch = round(float(value), 3)
        except (TypeError, ValueError, OverflowError):
            pass
    for stop in stops[s:]:
        converged, epochs, problem = _at_stop(stop, epoch, problem)
    return RunConvergence(facts.path, bs, bench if isinstance(bench, str) else None, converged, epochs, problem)


def _at_stop(occ: Occurrence, epoch: float | None, problem: str | None) -> tuple[bool, float, str | None]:
    """(converged, epochs, problem) after a run_stop, given the epoch of the last eval_accuracy before it."""
    meta = occ.metadata if isinstance(occ.metadata, dict) else {}
    if "status" not in meta:
        return False, NOT_CONVERGED, problem or f"run_stop on line {occ.line} has no status"
    if meta["status"] != "success":
        return False, NOT_CONVERGED, problem
    if epoch is None:
        return False, NOT_CONVERGED, problem or f"run_stop on line {occ.line} comes before any eval_accuracy"
    return True, epoch, problem


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rcp_folder(ruleset: str) -> Path | None:
    spec = importlib.util.find_spec("mlperf_logging")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "rcp_checker" / f"training_{ruleset}"
    return folder if folder.is_dir() else None


def rcp_file(ruleset: str, benchmark: str) -> Path | None:
    """The RCP data file of a benchmark, found by listing the ruleset's folder (a log value never becomes a path)."""
    folder = _rcp_folder(ruleset)
    if folder is None:
        return None
    wanted = f"rcps_{benchmark}.json"
    return next((p for p in folder.iterdir() if p.name == wanted), None)


def expected_runs(benchmark: str) -> int | None:
    from mlperf_logging.benchmark_meta import get_result_file_counts

    count = get_result_file_counts("training").get(benchmark)
    return int(count) if count is not None else None


@functools.cache
def _reference() -> Any:
    """mlperf-logging's RCP checker module, loaded as a private copy whose `scipy.stats` is checker/tstat.py and
    whose `numpy` is checker/npstats.py.

    The module imports scipy for a single t-test (`ttest_ind_from_stats`), and importing scipy.stats takes about a
    second: more than checking a corpus of logs. It uses numpy for means and a two-point interpolation, and
    importing numpy costs more than checking a results folder. The copy runs the reference's own code with our
    t-test (tests/unit/test_tstat.py holds it to scipy's within 1e-11) and numpy's mean and interp in numpy's own
    floating-point order (tests/unit/test_npstats.py: bit for bit); any other numpy name goes to numpy. The real
    module (which the differential tests run) is left as it is, with the real scipy and numpy.
    """
    import importlib.util
    import sys
    import types

    from mlsubmit.checker import npstats, tstat

    spec = importlib.util.find_spec("mlperf_logging.rcp_checker.rcp_checker")
    if spec is None or spec.origin is None:
        raise ImportError("mlperf-logging's rcp_checker is not installed")
    stats = types.ModuleType("scipy.stats")
    stats.ttest_ind_from_stats = tstat.ttest_ind_from_stats  # type: ignore[attr-defined]
    scipy = types.ModuleType("scipy")
    scipy.stats = stats  # type: ignore[attr-defined]
    private = importlib.util.spec_from_file_location("mlsubmit.checker._rcp_reference", spec.origin)
    assert private is not None and private.loader is not None
    module = importlib.util.module_from_spec(private)
    saved = {name: sys.modules.get(name) for name in ("scipy", "scipy.stats", "numpy")}
    sys.modules.update({"scipy": scipy, "scipy.stats": stats, "numpy": npstats.stand_in()})
    try:
        private.loader.exec_module(module)
    finally:  # only the private copy keeps the stand-ins; later imports of scipy and numpy get the real ones
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module


def reference_knows(benchmark: str) -> bool:
    """Whether the installed RCP checker has a run count for the benchmark (4.1.68 lost 'dlrm': KeyError)."""
    return benchmark in _reference().submission_runs["training"]


@functools.cache
def _checker(ruleset: str, benchmark: str) -> Any:
    """The reference's RCP_Checker with statistics and pruning computed, built from the shipped data file.

    Its constructor is bypassed only to take the run count from benchmark_meta (so dlrm works) and the file from
    our listing; everything it computes is its own code. The statistics depend on shipped files alone, so they are
    kept as data (`datafiles.derived`, keyed by the RCP file, the reference's module, our t-test and this module):
    the t-test's bisection costs more than checking a benchmark's logs.
    """
    rc = _reference()
    path = rcp_file(ruleset, benchmark)
    runs = expected_runs(benchmark)
    if path is None or runs is None:
        return None
    checker = rc.RCP_Checker.__new__(rc.RCP_Checker)
    checker.usage, checker.ruleset, checker.benchmark = "training", ruleset, benchmark
    checker.alpha, checker.tolerance, checker.verbose = 0.05, 0.0001, False
    checker.submission_runs = runs
    raw = path.read_bytes()
    code = b"".join(Path(f).read_bytes() for f in (rc.__file__, __file__, *_helper_files()))
    inputs = b"\0".join([ruleset.encode(), benchmark.encode(), str(runs).encode(), raw, code])
    stats = derived(f"rcp-{ruleset}-{benchmark}", inputs, lambda: _statistics(checker, raw))
    _restore(checker, stats)
    return checker


_STAT_FIELDS = ("RCP Mean", "RCP Stdev", "Max Speedup", "Min Epochs")


def _statistics(checker: Any, raw: bytes) -> dict[str, Any]:
    """The reference's own computation: processed records sorted by batch size, statistics, pruning. The
    statistics are plain floats (numpy's std is a float64 of the same value) so that a computed and a stored copy
    are alike."""
    import json

    processed = checker._process_raw_rcp_data(json.loads(raw.decode("utf-8")))
    checker.rcp_data = dict(sorted(processed.items(), key=lambda item: item[1]["BS"]))
    checker.compute_rcp_stats()
    for record in checker.rcp_data.values():
        for name in _STAT_FIELDS:
            if name in record:
                record[name] = float(record[name])
    return {"rcp_data": checker.rcp_data, "pruned": list(checker.pruned_rcp_data)}


def _restore(checker: Any, stats: dict[str, Any]) -> None:
    """Set the statistics as the reference holds them, pruned records being the same objects as the full ones."""
    records: dict[str, dict[str, Any]] = stats["rcp_data"]
    checker.rcp_data = records
    checker.pruned_rcp_data = {name: records[name] for name in stats["pruned"]}


def _helper_files() -> tuple[str, str]:
    from mlsubmit.checker import npstats, tstat

    return tstat.__file__, npstats.__file__


def prepare(ruleset: str, benchmarks: Iterable[str]) -> None:
    """Build the RCP statistics of these benchmarks now, before any log is read: they come from mlperf-logging's
    data alone, so the pipeline builds them beside the log checks instead of after them. A benchmark whose data
    cannot be used is left for `evaluate`, which reports it."""
    for benchmark in sorted(set(benchmarks)):
        if benchmark == "minigo" or not expected_runs(benchmark):
            continue
        try:
            _checker(ruleset, benchmark)
        except Exception:  # evaluate() meets the same error and turns it into a finding
            continue


def _judge(checker: Any, record: dict[str, Any], epochs: list[float]) -> tuple[bool, float, float]:
    """The reference's _eval_submission_record without its file writes: (passed, normalisation factor, mean).

    Its numpy float64 arithmetic is kept: the same mean (npstats.mean), and a division by zero gives inf or NaN
    (npstats.divide) where plain Python would raise.
    """
    from mlsubmit.checker.npstats import divide
    from mlsubmit.checker.npstats import mean as np_mean

    record = dict(record)
    if _reference().is_version_at_least(checker.ruleset, "5.0.0") and checker.benchmark == "llama31_405b":
        record["Max Speedup"] = divide(record["RCP Mean"], record["Min Epochs"] - 46080)
    ordered = sorted(epochs)
    rejected = 4 if record["Benchmark"] == "unet3d" else 1
    kept = ordered[rejected : len(ordered) - rejected]
    mean = np_mean(kept)  # too few runs: NaN, and the check fails, as in the reference
    norm = 1.0
    if kept:
        factor = divide(record["RCP Mean"], mean)  # the reference's _find_norm_factor, in float64 arithmetic
        norm = 1.0 if factor < 1 else float(factor)
    passed = bool(mean >= divide(record["RCP Mean"], record["Max Speedup"]))
    return passed, norm, mean


def _closed(runs: list[LogFacts]) -> bool:
    return any(r.division == "closed" for r in runs)


def evaluate(
    benchmark: str, ruleset: str, runs: list[LogFacts], *, bypass: bool = False, closed: bool | None = None
) -> RcpResult:
    """RCP check of one results folder: `benchmark` is the folder's benchmark, `runs` the facts of its logs.

    `closed` defaults to "some run's log says closed"; the package checker decides from the system file instead,
    so the tree check passes it explicitly.
    """
    if closed is None:
        closed = _closed(runs)
    if not closed or benchmark == "minigo":
        why = "open division" if not closed else "no RCP check for minigo (TR1.x)"
        return RcpResult("not_applicable", True, 1.0, f"RCP check does not apply: {why}")
    conv = [read_convergence(f) for f in runs]
    crash = next((f"{c.path}: {c.problem}" for c in conv if c.problem), None)
    sizes = {repr(c.batch_size) for c in conv}
    benches = {c.benchmark for c in conv}
    if len(sizes) > 1 or len(benches) > 1:
        what = "batch sizes " + ", ".join(sorted(sizes)) if len(sizes) > 1 else "benchmarks " + ", ".join(
            sorted(str(b) for b in benches)
        )
        return RcpResult("error", False, 1.0, f"runs disagree: {what}", "Batch sizes in files do not match",
                         crash="mixed batch sizes or benchmarks: the reference calls RCP_Checker(benchmark=None)",
                         runs=tuple(conv))  # fmt: skip
    log_bench = next(iter(benches)) if benches else None
    if log_bench is None:
        return RcpResult("error", False, 1.0, "no run logs submission_benchmark (or the folder is empty)",
                         crash="no benchmark in the logs: KeyError None in RCP_Checker", runs=tuple(conv))  # fmt: skip
    if not reference_knows(log_bench):
        crash = crash or f"the installed RCP checker has no run count for {log_bench!r} (KeyError)"
    checker = _checker(ruleset, log_bench) if expected_runs(log_bench) else None
    if checker is None:
        crash = crash or "no RCP file: FileNotFoundError"
        return RcpResult("error", False, 1.0, f"no RCP data for {log_bench!r} in ruleset {ruleset}",
                         "Cannot find any RCPs", crash=crash, runs=tuple(conv))  # fmt: skip
    bs = conv[0].batch_size
    if bs == -1:
        return RcpResult("error", False, 1.0, "no run logs global_batch_size", "Could not detect global_batch_size",
                         crash=crash, runs=tuple(conv))  # fmt: skip
    if not _is_number(bs) or bs != bs:  # a text, list or NaN batch size cannot be matched with the RCPs
        return RcpResult("error", False, 1.0, f"global_batch_size {bs!r} is not a number", "Cannot find any RCPs",
                         crash=crash or "a batch size that is not a number cannot be compared (TypeError)",
                         runs=tuple(conv))  # fmt: skip
    failed = sum(1 for c in conv if not c.converged)
    allowed = 4 if log_bench == "unet3d" else 1
    if failed > allowed:
        return RcpResult("error", False, 1.0, f"{failed} runs did not converge (at most {allowed} allowed)",
                         "Insufficient convergence", batch_size=bs, crash=crash, runs=tuple(conv))  # fmt: skip
    return _compare(checker, bs, [c.epochs for c in conv], bypass, crash, tuple(conv))


def _compare(
    checker: Any, bs: Any, epochs: list[float], bypass: bool, crash: str | None, conv: tuple[RunConvergence, ...]
) -> RcpResult:
    """The reference's check_directory decision tree, from the RCP lookup on."""
    p = "pruned_rcps"
    norm = 1.0
    record = checker._find_rcp(bs, p)
    mean = None
    if record is not None:
        msg = "RCP found"
        ok, norm, mean = _judge(checker, record, epochs)
    else:
        low, high = checker._find_top_min_rcp(bs, p), checker._find_bottom_max_rcp(bs, p)
        if low is not None and high is not None:
            msg = "RCP Interpolation"
            _, record = checker._create_interp_rcp(bs, low, high)
            ok, norm, mean = _judge(checker, record, epochs)
        elif low is not None:
            msg, ok = f"Missing RCP, please submit RCP with BS = {bs}", False
        elif high is not None:
            record = checker._find_min_rcp(p)
            ok, norm, mean = _judge(checker, record, epochs)
            msg = "RCP not found but slower convergence on smaller batch size" if ok else (
                f"Missing RCP, please submit RCP with BS = {bs}"
            )
        else:
            msg, ok = "Cannot find any RCPs", False
    rcp_mean = float(record["RCP Mean"]) if record is not None else None
    min_epochs = float(record["RCP Mean"] / record["Max Speedup"]) if record is not None else None
    status = "pass" if ok else "fail"
    if not ok and bypass and (msg in ("RCP found", "RCP Interpolation") or msg.startswith("Missing RCP")):
        status, ok, msg = "bypassed", True, msg + " passed using rcp_bypass"
    if msg.startswith("Missing RCP") or msg == "Cannot find any RCPs":
        status = "bypassed" if ok else "error"
    return RcpResult(status, ok, norm, _describe(msg, bs, mean, rcp_mean, min_epochs, norm), msg, bs, mean, rcp_mean,
                     min_epochs, crash, conv)  # fmt: skip


def _describe(msg: str, bs: Any, mean: float | None, rcp_mean: float | None, low: float | None, norm: float) -> str:
    parts = [f"{msg} (global batch size {bs})"]
    if mean is not None and rcp_mean is not None and low is not None:
        parts.append(f"submission olympic mean {mean:.4f} epochs, RCP mean {rcp_mean:.4f}, fastest allowed {low:.4f}")
    if norm > 1.0:
        parts.append(f"score normalisation factor {norm:.6f}")
    return "; ".join(parts)


def evaluate_cached(
    benchmark: str, ruleset: str, runs: list[LogFacts], *, bypass: bool, closed: bool, cache_dir: Path | None
) -> RcpResult:
    """evaluate(), remembered in the --cache folder under the inputs that decide it (each run's batch size,
    benchmark and convergence), so an unchanged folder never imports scipy again."""
    if cache_dir is None:
        return evaluate(benchmark, ruleset, runs, bypass=bypass, closed=closed)
    from mlsubmit.checker.cache import MISS, folder_key, load_entry, store_entry

    inputs = [asdict(read_convergence(f)) for f in runs]
    key = folder_key("rcp", benchmark, ruleset, bypass, closed, inputs)
    root = Path(cache_dir)
    entry = root / "rcp" / f"{key}.json"
    data = load_entry(root, entry, f"rcp/{key}", lambda body: isinstance(body, dict))
    if data is not MISS:
        try:
            data["runs"] = tuple(RunConvergence(**r) for r in data["runs"])
            return RcpResult(**data)
        except (KeyError, TypeError, ValueError):  # valid entry of another shape: a miss, written again below
            pass
    result = evaluate(benchmark, ruleset, runs, bypass=bypass, closed=closed)
    store_entry(root, entry, f"rcp/{key}", asdict(result))
    return result
