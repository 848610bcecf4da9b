"""mlperf-logging's RCP checker, run as it is, on logs the pipeline has already read.

The verdict of a results folder is the reference's `check_directory` itself (and each run's convergence its
`read_submission_file`), so our RCP check cannot drift from the reference's: there is no second copy of its logic.
It runs in a private copy of the reference's module whose outside world is ours:

- `open` serves each log from the lines kept while the pipeline read it (`lines.py`): no log is read twice, and a
  FIFO or a huge file is never opened here. Any other path (the RCP data files) goes to the real `open`.
- `glob` lists the logs the tree check listed, so the reference sees the same runs we report on.
- `logging` is silent: the reference logs warnings to the root logger, which would print on our stderr.
- `re.sub` answers the reader's one call, `re.sub(".*" + TOKEN, TOKEN, line)`, with string operations (`_sub`):
  the pattern backtracks over the rest of the line at every position after its last token (~25 us a log line,
  most of the reader's time); any other call goes to the real `re.sub`. tests/differential/test_rcp.py holds the two
  equal on generated lines.
- `scipy.stats` is our t-test (`tstat.py`, within 1e-11 of scipy's) and `numpy` our mean and interpolation in
  numpy's own floating-point order (`npstats.py`, bit for bit): importing scipy.stats costs about a second.
- `RCP_Checker` is the reference's class with its two file writes (`scaling.json` in the results folder, and a
  delete of `/scaling.json` when no folder is given) turned off, its statistics kept as data between runs (the
  t-test bisection costs more than checking a benchmark's logs), and each judged record noted for our messages.

The real module, with the real scipy and numpy, is left untouched; the differential tests run it. When the installed
module does not fit this adapter (rcp_fit.py: a release newer than the tested range, a call the stand-ins do not hold,
a renamed method), or an adapted run raises where the module itself does not, `module()` is the module as it is
(rcp_plain.py) and stderr says so once.
"""

from __future__ import annotations

import builtins
import copy
import fnmatch
import functools
import importlib.util
import io
import json
import os
import re
import sys
import threading
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.upstream import installed as _installed
from mlsubmit.checker.upstream import npstats, rcp_fit, rcp_plain, tstat

from mlsubmit.core.support.datafiles import derived_data

_STAT_FIELDS = ("RCP Mean", "RCP Stdev", "Max Speedup", "Min Epochs")


@dataclass(frozen=True)
class Judged:
    """One call of the reference's `_eval_submission_record`: the RCP record it used and its answer."""

    record: dict[str, Any]
    epochs: tuple[float, ...]
    passed: bool
    factor: float


class _World:
    """What the private module sees while one folder is judged: its logs' lines and the records it judges."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.answers: dict[str, list[Any]] = {}  # path -> the reader's answer already computed (in a worker)
        self.ruleset = ""
        self.judged: list[Judged] = []
        self.lock = threading.Lock()


_WORLD = _World()


def _open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    served = _WORLD.files.get(os.fspath(file)) if isinstance(file, (str, os.PathLike)) else None
    if served is not None:
        return io.StringIO(served)
    return builtins.open(file, mode, *args, **kwargs)


def _glob(pattern: str, recursive: bool = False) -> list[str]:
    return [path for path in _WORLD.files if fnmatch.fnmatchcase(path, pattern)]


def _silent(*args: Any, **kwargs: Any) -> None:
    return None


def _sub(token: str, pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    """re.sub, with `re.sub(".*" + token, token, text)` done without the regex engine: in each newline-free
    stretch of the text ("." stops at a newline) holding the token, the greedy match runs from the stretch's start
    to its last token, and after that nothing matches; a stretch without the token is left as it is."""
    plain = isinstance(string, str) and not set(token) & set(".^$*+?{}[]\\|()")  # the token matches itself
    if count or flags or pattern != ".*" + token or repl != token or not plain:
        return re.sub(pattern, repl, string, count=count, flags=flags)
    return "\n".join(token + part[part.rfind(token) + len(token):] if token in part else part
                     for part in string.split("\n"))


def _load() -> types.ModuleType:
    """A private copy of mlperf_logging.rcp_checker.rcp_checker with our stand-ins for scipy.stats and numpy."""
    origin = _installed.rcp_module_file()
    stats = types.ModuleType("scipy.stats")
    stats.ttest_ind_from_stats = tstat.ttest_ind_from_stats  # type: ignore[attr-defined]
    scipy = types.ModuleType("scipy")
    scipy.stats = stats  # type: ignore[attr-defined]
    private = importlib.util.spec_from_file_location("mlsubmit.checker.upstream._rcp_copy", origin)
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


@functools.cache
def installed() -> tuple[str, str]:
    """(version, source) of the installed mlperf-logging and its RCP module."""
    return _installed.version(), _installed.rcp_module_file().read_text(encoding="utf-8")


class _Fit:
    """Why the adapter is not used in this process (empty: it is); an adapted run that fails adds a reason."""

    reasons: list[str] | None = None
    said = False


def misfits() -> list[str]:
    """rcp_fit.misfits of the installed module, kept as data by the hash of its source (ast costs ~10 ms)."""
    if _Fit.reasons is None:
        version, source = installed()
        inputs = version.encode() + b"\0" + source.encode() + b"\0" + Path(rcp_fit.__file__).read_bytes()
        found = derived_data("rcp-fit", inputs, lambda: rcp_fit.misfits(source, version))
        _Fit.reasons = [str(r) for r in found] if isinstance(found, list) else rcp_fit.misfits(source, version)
    return _Fit.reasons


def _say_plain(reasons: list[str]) -> None:
    if not _Fit.said:
        _Fit.said = True
        version, _ = installed()
        why = "; ".join(reasons[:3])
        print(f"mlsubmit: the RCP check runs mlperf-logging {version}'s RCP checker as it is (its own numpy and "
              f"scipy, slower) because {why}", file=sys.stderr)  # fmt: skip


def module() -> Any:
    """The module the RCP check calls: the adapted copy, or upstream's as it is when the copy does not fit."""
    if reasons := misfits():
        _say_plain(reasons)
        return _plain()
    return adapted_module()


@functools.cache
def _plain() -> rcp_plain.Plain:
    return rcp_plain.Plain(rcp_plain.real_module(), lambda: _WORLD.files)


def judge(folder: str, ruleset: str, bypass: bool, *, train_samples: bool = False, rcps: str | None = None) -> Any:
    """check_directory on the served `folder`. If the adapted copy raises, upstream's module runs as it is: its
    raise is the reference's own verdict; if it does not raise, the adapter is at fault and is dropped.
    train_samples: the package checker's --rcp-bert-train-samples; rcps: an RCP file's text, given as the RCP
    checker's --custom_rcps gives it (an open file, read with json.load)."""
    options = {"rcp_pass": "pruned_rcps", "rcp_bypass": bypass, "set_scaling": False}
    mod = module()
    try:
        return mod.check_directory(folder, "training", ruleset, False, train_samples, **options, **_rcp_file(rcps))
    except Exception as exc:
        if isinstance(mod, rcp_plain.Plain) or not _adapter_kind(exc):
            raise  # the reference's own raise on these logs (a KeyError for a benchmark it has no run count for)
        answer = _plain().check_directory(folder, "training", ruleset, False, train_samples, **options,
                                          **_rcp_file(rcps))  # fmt: skip
        misfits().append(f"the adapted check raised {type(exc).__name__}: {exc}")
        return answer


def _rcp_file(rcps: str | None) -> dict[str, Any]:
    return {} if rcps is None else {"rcp_file": io.StringIO(rcps)}  # a fresh one each call: json.load reads it


def _adapter_kind(exc: BaseException) -> bool:
    """A raise the adaptation can cause: a name or attribute a stand-in lacks, a call shape it does not take, or
    anything raised inside the stand-ins. (Upstream's own raises on odd logs, such as a KeyError, are verdicts; its
    answer can even depend on the order its glob lists files, so a difference alone proves nothing.)"""
    if isinstance(exc, (AttributeError, NameError)):
        return True
    if isinstance(exc, TypeError) and "argument" in str(exc):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() in _adapter_files()


@functools.cache
def _adapter_files() -> frozenset[Path]:
    return frozenset(Path(f).resolve() for f in (__file__, npstats.__file__, tstat.__file__))


@functools.cache
def adapted_module() -> types.ModuleType:
    """The private copy, its outside world replaced as the module docstring says."""
    mod = _load()
    mod.open = _open  # type: ignore[attr-defined]
    mod.glob = types.SimpleNamespace(glob=_glob)  # type: ignore[attr-defined]
    mod.logging = types.SimpleNamespace(info=_silent, warning=_silent, error=_silent)  # type: ignore[attr-defined]
    mod.re = types.SimpleNamespace(sub=functools.partial(_sub, mod.TOKEN))  # type: ignore[attr-defined]
    mod.RCP_Checker = _checker_class(mod.RCP_Checker)  # type: ignore[attr-defined]
    mod.read_submission_file = _answered(mod.read_submission_file)  # type: ignore[attr-defined]
    return mod


def _answered(read: Any) -> Any:
    """The reference's reader, giving the answer it already gave on the same lines where it has one: its regular
    expression costs ~30 us a line, and check_directory reads every run once more."""

    def read_submission_file(result_file: str, ruleset: str, use_train_samples: bool) -> Any:
        kept = _WORLD.answers.get(result_file)
        if kept is not None and ruleset == _WORLD.ruleset and not use_train_samples:
            return tuple(kept)
        return read(result_file, ruleset, use_train_samples)

    return read_submission_file


def _checker_class(base: Any) -> Any:
    class Checker(base):
        """The reference's RCP_Checker without file writes, with its statistics remembered."""

        rcp_data: dict[str, Any]
        pruned_rcp_data: dict[str, Any]

        def compute_rcp_stats(self) -> None:
            stats = _statistics(self.ruleset, self.benchmark, self.submission_runs, self.rcp_data,
                                lambda: _compute(self, base))  # fmt: skip
            records: dict[str, dict[str, Any]] = copy.deepcopy(stats["rcp_data"])  # the reference may edit them
            self.rcp_data = records
            self.pruned_rcp_data = {name: records[name] for name in stats["pruned"]}

        def _set_results_scaling(self, scale_factor: Any, results_dir: str) -> None:
            return None  # checking is read-only: the factor is returned instead

        def _reset_results_scaling(self, results_dir: str) -> None:
            return None

        def _eval_submission_record(self, rcp_record: Any, subm_epochs: Any, results_dir: str) -> Any:
            passed, factor = super()._eval_submission_record(rcp_record, subm_epochs, results_dir)
            _WORLD.judged.append(Judged(dict(rcp_record), tuple(subm_epochs), bool(passed), float(factor)))
            return passed, factor

    return Checker


def _compute(checker: Any, base: Any) -> dict[str, Any]:
    """The reference's own statistics and pruning, as plain floats so a computed and a kept copy are alike."""
    base.compute_rcp_stats(checker)
    for record in checker.rcp_data.values():
        for name in _STAT_FIELDS:
            if name in record:
                record[name] = float(record[name])
    return {"rcp_data": checker.rcp_data, "pruned": list(checker.pruned_rcp_data)}


_KEPT: dict[bytes, dict[str, Any]] = {}


def _statistics(ruleset: str, benchmark: str, runs: int, processed: dict[str, Any], build: Any) -> dict[str, Any]:
    """RCP statistics depend on shipped files alone: kept in this process and as data (`datafiles.derived_data`), keyed
    by the processed RCP data, the run count and the code that computes them (the reference's module, our
    t-test and mean, this file)."""
    raw = json.dumps(processed, sort_keys=True, default=repr).encode()
    key = f"{ruleset}\0{benchmark}\0{runs}\0".encode() + raw
    if (kept := _KEPT.get(key)) is not None:
        return kept
    code = b"".join(Path(f).read_bytes() for f in _code_files())
    stats: dict[str, Any] = derived_data(f"rcp-{ruleset}-{benchmark}", key + b"\0" + code, build)
    if not _valid_statistics(stats, processed):
        stats = build()
    _KEPT[key] = stats
    return stats


def _valid_statistics(stats: Any, processed: dict[str, Any]) -> bool:
    """A kept copy is used only if it has the shape we wrote and the records we asked for (caches cannot lie)."""
    if not isinstance(stats, dict) or set(stats) != {"rcp_data", "pruned"}:
        return False
    records, pruned = stats["rcp_data"], stats["pruned"]
    if not isinstance(records, dict) or list(records) != list(processed) or not isinstance(pruned, list):
        return False
    if not all(isinstance(name, str) and name in records for name in pruned):
        return False
    return all(
        isinstance(rec, dict) and all(isinstance(rec.get(f), float) for f in _STAT_FIELDS) for rec in records.values()
    )


@functools.cache
def _code_files() -> tuple[str, ...]:
    try:
        origin = str(_installed.rcp_module_file())
    except ImportError:
        origin = __file__
    return origin, __file__, tstat.__file__, npstats.__file__


@contextmanager
def as_logs_on_disk(files: Mapping[str, str], answers: Mapping[str, list[Any]] | None = None, ruleset: str = ""
            ) -> Iterator[list[Judged]]:
    """While open: the private module sees exactly `files` (path -> text) as the logs on disk, and its reader
    gives `answers` (path -> its own answer on the same text, for `ruleset`) without reading again. Yields the list
    the judged records are appended to."""
    with _WORLD.lock:
        _WORLD.files, _WORLD.judged = dict(files), []
        _WORLD.answers, _WORLD.ruleset = dict(answers or {}), ruleset
        try:
            yield _WORLD.judged
        finally:
            _WORLD.files, _WORLD.judged, _WORLD.answers, _WORLD.ruleset = {}, [], {}, ""


@dataclass(frozen=True)
class Window:
    """The RCP record the check measures a batch size against, with the reference runs behind it (for run
    planning, rcp/risk.py). kind: "found", "interpolation", "below" (the smallest RCP, as the check falls back to)
    or "above" (no RCP: the check asks for one). `references`: each underlying record's name and runs to converge
    (an interpolated record has none of its own: its two neighbours'). `fastest`: the smallest olympic mean that
    passes (RCP Mean / Max Speedup, with the check's own llama31_405b adjustment); `min_epochs`: the record's."""

    kind: str
    rcp_mean: float
    fastest: float
    min_epochs: float
    runs: int  # the round's N for the benchmark, as the RCP checker counts it
    references: tuple[tuple[str, tuple[float, ...]], ...]


def checker(ruleset: str, benchmark: str, rcps: str | None = None) -> Any:
    """The reference's RCP_Checker for a benchmark (its statistics and pruning computed, or kept), read-only: the
    adapted class writes no file; when the adapter does not fit, the real class (its constructor writes none)."""
    mod = rcp_plain.real_module() if misfits() else adapted_module()
    return mod.RCP_Checker("training", ruleset, benchmark, False, io.StringIO(rcps) if rcps is not None else None)


def window(ruleset: str, benchmark: str, batch_size: float, rcps: str | None = None) -> Window | None:
    """The record check_directory would judge a set of this batch size against (its pruned pass, its order of
    questions); None when there is no RCP data at all."""
    check = checker(ruleset, benchmark, rcps)
    names = {id(rec): name for name, rec in check.rcp_data.items()}

    def own(*records: Any) -> tuple[tuple[str, tuple[float, ...]], ...]:
        return tuple((names.get(id(r), "?"), tuple(float(e) for e in r["Epochs to converge"])) for r in records)

    record = check._find_rcp(batch_size, "pruned_rcps")
    low, high = check._find_top_min_rcp(batch_size, "pruned_rcps"), check._find_bottom_max_rcp(batch_size,
                                                                                               "pruned_rcps")
    if record is not None:
        kind, refs = "found", own(record)
    elif low is not None and high is not None:
        kind, refs = "interpolation", own(low, high)
        record = check._create_interp_rcp(batch_size, low, high)[1]
    elif high is not None:
        record = check._find_min_rcp("pruned_rcps")
        kind, refs = "below", own(record)
    elif low is not None:
        kind, refs, record = "above", own(low), low
    else:
        return None
    mean, least = float(record["RCP Mean"]), float(record["Min Epochs"])
    fastest = mean / float(record["Max Speedup"])
    if benchmark == "llama31_405b" and tuple(int(p) for p in ruleset.split(".")) >= (5, 0, 0):
        fastest = least - 46080  # _eval_submission_record's own adjustment of this benchmark's Max Speedup
    return Window(kind, mean, fastest, least, int(check.submission_runs), refs)
