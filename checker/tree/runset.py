"""A folder of raw job output as run sets: the runs of one system, benchmark and division, judged by the set-level
checks of a results folder before anything is packaged (what the team asks daily: how many more runs, which N the
rules take, will the set pass its RCP, what will it score).

Runs are grouped as `package` places them: by the system (`--system NAME`, else a `package.toml` entry whose `logs`
match the file, else the log's `submission_platform`), the log's `submission_benchmark` and `submission_division`;
within a set they are ordered by start time (`LogFacts.started_ms`, packaging's order). The set is then shown to the
tree check as a results folder held in memory (`as_results_folder`: its runs as result_0..N-1, in that order), so the
olympic tolerance (TREE007/TREE008), seeds and the RCP verdict are the tree checks' own code (`tree/convergence.py`,
`tree/folders.py`), and the window of N out of M is packaging's rule (`rounds/window.py`). No second copy of any.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mlsubmit.checker.base.ledger import Entry, utc_now_text
from mlsubmit.checker.base.targets import BenchFolder, LogRef, RawFolder
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rcp.custom import for_benchmark
from mlsubmit.checker.rcp.planning import risk_finding, runs_of, window_effect, window_for
from mlsubmit.checker.rcp.verdict import NOT_CONVERGED, rcp_verdict, run_convergence
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds import division as division_of
from mlsubmit.checker.rounds import window as rule
from mlsubmit.checker.tree.convergence import closed_set_checks
from mlsubmit.checker.tree.folders import check_olympic
from mlsubmit.checker.tree.init_time import check_init

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.base.targets import Targets
    from mlsubmit.checker.rcp.verdict import RcpResult


# the codes the `run-sets` check may emit (checker/engine/checks.py registers it): its own, and those of the
# results-folder checks it judges a run set with
CODES = frozenset({"POW001", "POW002", "POW003", "POW004", "RUN001", "RUN002", "RUN003", "RUN004", "RUN005",
                   "RUN006", "RUN007", "RUN009", "TREE003", "TREE007", "TREE008", "TREE014", "TREE015", "TREE016",
                   "TREE017", "TREE018", "TREE019", "TREE020", "TREE021", "TREE023", "TREE024", "TREE051"})


class _LogRead(Protocol):
    """What the ledger needs of a log's result in a finished check run (engine/pipeline.py's LogResult)."""

    @property
    def facts(self) -> LogFacts: ...


class CheckRun(Protocol):
    """What the ledger needs of a finished check run (engine/pipeline.py's CheckRun, above this layer)."""

    @property
    def targets(self) -> Targets: ...

    @property
    def results(self) -> Mapping[str, _LogRead]: ...


SELECT_ALL = "all"
SELECT_MEDIAN_WINDOW = "median-window"


@dataclass(frozen=True, order=True)
class SetKey:
    system: str
    benchmark: str
    division: str

    @property
    def label(self) -> str:
        return f"{self.system}/{self.benchmark} ({self.division})"


UNNAMED = "?"  # a part of the key no log (and no option) names


@dataclass
class RunSet:
    key: SetKey
    where: str  # the raw folder, as given
    runs: list[tuple[str, LogFacts]]  # (display path, facts), in start order
    note: str = ""  # how the set's system was decided, when some runs' logs name a placeholder platform

    @property
    def facts(self) -> list[LogFacts]:
        return [f for _, f in self.runs]


def system_of(ref: LogRef, facts: LogFacts, options: CheckOptions) -> str:
    """The results folder a run goes to: --system, the package.toml entry that would package it, else the tree's
    folder or the log's platform."""
    if options.run_system:
        return options.run_system
    if options.run_systems:
        named = dict(options.run_systems).get(str(ref.path.resolve()))
        if named is not None:
            return named
    if ref.system:
        return ref.system
    platform = facts.value("submission_platform")
    return platform if isinstance(platform, str) and platform else UNNAMED


def order_key(display: str, facts: LogFacts) -> tuple[float, str]:
    """Runs by start time, ties by name: package's order (TR1.1 §Scoring, "objective and deterministic")."""
    start = facts.started_ms
    return (start if start is not None else math.inf, display)


_PLACEHOLDERS = ("", "n/a", "na", "none", "null", "todo", "tbd", "unknown", UNNAMED)


def is_placeholder(system: str) -> bool:
    """Whether a platform a log names is a placeholder, not a system: `<N>xSUBMISSION_PLATFORM_PLACEHOLDER` (the
    reference implementations' default, in thousands of published logs), N/A, TODO, TBD, empty."""
    plain = system.strip().lower()
    return "placeholder" in plain or plain in _PLACEHOLDERS


def group(folder: RawFolder, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[RunSet]:
    """The folder's runs with records, by (system, benchmark, division), each set in start order. Runs whose logs
    name a placeholder platform join the folder's set of the same benchmark and division: one set per folder
    whatever a placeholder says (the system the folder's other runs name decides, the set's note says so)."""
    sets: dict[SetKey, list[tuple[str, LogFacts]]] = {}
    for ref in folder.logs:
        found = facts.get(ref.display)
        if found is None or not found.record_count:
            continue
        key = SetKey(system_of(ref, found, options), found.benchmark or UNNAMED, found.division or UNNAMED)
        sets.setdefault(key, []).append((ref.display, found))
    notes: dict[SetKey, str] = {}
    for key in [k for k in sets if is_placeholder(k.system)]:
        named = sorted((k for k in sets if not is_placeholder(k.system) and (k.benchmark, k.division) ==
                        (key.benchmark, key.division)), key=lambda k: (-len(sets[k]), k))
        placeholders = sorted(k for k in sets if is_placeholder(k.system) and (k.benchmark, k.division) ==
                              (key.benchmark, key.division))
        into = named[0] if named else placeholders[0]
        if into == key:
            continue
        moved = sets.pop(key)
        sets[into] += moved
        what = f"{len(moved)} run(s) log platform {key.system!r}, a placeholder"
        whose = "the system the folder's other runs name" if named else "the first placeholder, by name"
        notes[into] = "; ".join(x for x in (notes.get(into, ""), f"{what}: counted with {into.system} ({whose})")
                                if x)
    return [RunSet(k, folder.display, sorted(v, key=lambda r: order_key(*r)), notes.get(k, ""))
            for k, v in sorted(sets.items())]


def judged_runs(folder: RawFolder, facts: dict[str, LogFacts], options: CheckOptions) -> set[str]:
    """The runs of the folder's sets that are judged as a results folder (a benchmark of the round): their own
    errors count through the set's olympic tolerance (TREE007/TREE008), as a tree's runs do in theirs."""
    allowed = benchmarks.allowed(options.ruleset)
    return {shown for rs in group(folder, facts, options) if rs.key.benchmark in allowed for shown, _ in rs.runs}


def as_results_folder(rs: RunSet, runs: list[tuple[str, LogFacts]]
                      ) -> tuple[BenchFolder, list[LogFacts], dict[str, str]]:
    """The runs as a results folder in memory: result_<i>.txt in start order (the names the reference's RCP checker
    lists), with the map back to the raw files."""
    folder = BenchFolder(rs.key.system, rs.key.benchmark, Path(rs.where), rs.where)
    renamed = [replace(f, path=os.path.join(rs.where, f"result_{i}.txt")) for i, (_, f) in enumerate(runs)]
    folder.logs = [f.path for f in renamed]
    return folder, renamed, {f.path: shown for f, (shown, _) in zip(renamed, runs, strict=True)}


def check_raw_folder(folder: RawFolder, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    """Every set-level check of an organisation tree on each run set of a folder of raw job output."""
    out: list[Finding] = []
    for rs in group(folder, facts, options):
        out += [_labelled(f, rs) for f in check_set(rs, options)]
    return out


def check_set(rs: RunSet, options: CheckOptions) -> list[Finding]:
    bench = rs.key.benchmark
    shown = [os.path.relpath(d, rs.where) for d, _ in rs.runs]
    names = ", ".join(shown[:10]) + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")
    if bench == UNNAMED:
        return [finding("RUN004", rs.where, f"{len(rs.runs)} run(s) log no submission_benchmark ({names}): "
                        "they belong to no run set")]
    if bench not in benchmarks.allowed(options.ruleset):
        return [finding("RUN005", rs.where, f"{bench!r} is not a benchmark of ruleset {options.ruleset} ({names})")]
    out, scored = _count(rs, options)
    folder, renamed, back = as_results_folder(rs, scored)
    out += check_olympic(folder, [f for _, f in scored])
    out += check_init([f for _, f in scored], options.ruleset)
    result = None
    if division_of.is_closed(None, [f for _, f in scored]):
        found, result = closed_set_checks(folder, renamed, options, frozenset(), judge_rcp=_enough(rs, scored))
        out += [_raw_names(f, back) for f in found]
        out += _risk(rs, scored, options)
    return [*out, _projection(rs, scored, result)]


def _risk(rs: RunSet, scored: list[tuple[str, LogFacts]], options: CheckOptions) -> list[Finding]:
    """RUN009: the set's chance of an RCP fail once its N runs are in, and with more runs than N what the
    median-window rule does to the score (rcp/planning.py)."""
    n = benchmarks.runs(rs.key.benchmark)
    note = window_effect([_minutes(f) for _, f in rs.runs], n, rs.key.benchmark) if n and scored != rs.runs else ""
    found = risk_finding(rs.where, rs.key.benchmark, options.ruleset, [f for _, f in scored],
                         limit=options.rcp_risk_limit, rcps=for_benchmark(options.custom_rcps, rs.key.benchmark),
                         window_note=note)
    return [found] if found is not None else []


def _enough(rs: RunSet, scored: list[tuple[str, LogFacts]]) -> bool:
    """Whether an olympic mean can be taken yet: more runs than it drops at both ends. Before that the RCP check
    has no mean to judge and would fail any set, so the verdict waits (RUN006 says so)."""
    return len(scored) > 2 * benchmarks.dropped(rs.key.benchmark)


def _count(rs: RunSet, options: CheckOptions) -> tuple[list[Finding], list[tuple[str, LogFacts]]]:
    """The run count against the round's N, and the runs the rules would score: all of them, or with M > N the
    median window (TR1.1 §Scoring) unless --run-select all."""
    n, have = benchmarks.runs(rs.key.benchmark), len(rs.runs)
    if n is None or have == n:
        return [], rs.runs
    if have < n:
        more = n - have
        return [finding("RUN001", rs.where, f"{have} of {n} runs: {more} more run{'s' if more > 1 else ''} "
                        "needed")], rs.runs
    if options.run_select != SELECT_MEDIAN_WINDOW or not rule.window_applies(options.ruleset):
        why = ("ruleset 1.0.0 has no rule for choosing N of M runs" if not rule.window_applies(options.ruleset)
               else "with select = \"all\" every run is scored")
        return [finding("RUN007", rs.where, f"{have} runs where the rules ask for {n}: {why}")], rs.runs
    window = rule.median_window([_minutes(f) for _, f in rs.runs], n, rs.key.benchmark)
    chosen = rs.runs[window.start : window.stop]
    left = [Location(d) for i, (d, _) in enumerate(rs.runs) if not window.start <= i < window.stop]
    first, last = (os.path.relpath(chosen[k][0], rs.where) for k in (0, -1))
    out = [finding("RUN002", rs.where, f"{have} runs, N = {n}: the rules take {window.why(have)}; first {first}, "
                   f"last {last}", related=left)]
    if not window.valid:
        out.append(finding("RUN003", rs.where, f"the median window of {n} runs (runs {window.start}.."
                           f"{window.stop - 1}) has too many runs that did not converge: the whole result is "
                           "invalid (TR1.1 §Scoring)"))
    return out, chosen


def _minutes(facts: LogFacts) -> float:
    """Time to train, infinity for a run that did not converge (TR1.1 §Scoring), as packaging counts it."""
    return rule.scored_minutes(facts.minutes, facts.converged)


def _projection(rs: RunSet, scored: list[tuple[str, LogFacts]], result: RcpResult | None) -> Finding:
    """The score the scored runs would get: their olympic mean and, in the closed division, the RCP's factor."""
    bench = rs.key.benchmark
    mean = rule.olympic([_minutes(f) for _, f in scored], bench)
    shown = "no valid score (too many runs did not converge)" if math.isinf(mean) else f"olympic mean {mean:.2f} min"
    if not _enough(rs, scored):
        mean = math.inf
        shown = f"no olympic mean yet (it drops {benchmarks.dropped(bench)} run(s) at each end)"
    if result is None and rs.key.division == "closed" and benchmarks.has_rcp(bench) and not _enough(rs, scored):
        rcp = "the RCP verdict waits for an olympic mean"
    elif result is None:
        rcp = "no RCP check" if rs.key.division == "closed" else f"{rs.key.division} division: no RCP check"
    elif result.status in ("pass", "bypassed"):
        rcp = f"RCP {result.status}, normalisation factor {result.scaling_factor:.6f}"
    else:
        rcp = f"RCP {result.status}"
    score = ""
    if math.isfinite(mean) and result is not None and result.passed:
        score = f"; projected score {mean * result.scaling_factor:.2f} min"
    n = benchmarks.runs(bench)
    so_far = f" so far ({len(scored)} of {n} runs)" if n and len(scored) < n else ""
    note = f"; {rs.note}" if rs.note else ""
    return finding("RUN006", rs.where, f"{shown} over {len(scored)} scored run(s){so_far}; {rcp}{score}{note}")


def _raw_names(found: Finding, back: dict[str, str]) -> Finding:
    """A finding of the in-memory results folder, naming the raw file instead of its result_<i>.txt."""
    message = found.message
    for shown, raw in back.items():
        message = message.replace(shown, raw)
    return replace(found, path=back.get(found.path, found.path), message=message)


def _labelled(found: Finding, rs: RunSet) -> Finding:
    return replace(found, message=f"run set {rs.key.label}: {found.message}")


# --- what a check tells the run ledger (base/ledger.py) ----------------------------------------------------------


def ledger_entries(run: CheckRun, options: CheckOptions) -> list[Entry]:
    """One ledger entry per log the check read (with records and a digest): its set, verdict and convergence."""
    seen = utc_now_text()
    keys: dict[str, tuple[SetKey, tuple[float | None, float | None]]] = {}
    for raw in run.targets.raw_folders:
        for rs in group(raw, {r.display: run.results[r.display].facts for r in raw.logs}, options):
            numbers = _rcp_numbers(rs.key.benchmark, as_results_folder(rs, _count(rs, options)[1])[1], options)
            keys.update({shown: (rs.key, numbers) for shown, _ in rs.runs})
    keys.update(_tree_keys(run, options))
    out = []
    for ref in run.targets.all_logs():
        facts = run.results[ref.display].facts
        if not facts.sha256 or not facts.record_count:
            continue
        key, (mean, fastest) = keys.get(ref.display) or (SetKey(
            system_of(ref, facts, options), ref.benchmark or facts.benchmark or UNNAMED,
            facts.division or UNNAMED), (None, None))
        seeds = [occ.value for occ in facts.all("seed") if type(occ.value) is int]
        out.append(Entry(
            facts.sha256, str(ref.path.resolve()), ref.display, key.system, key.benchmark, key.division,
            options.ruleset, facts.started_ms, seeds[0] if seeds and abs(seeds[0]) < 1 << 63 else None,
            "fail" if facts.error_codes else "pass", _finite(facts.minutes), facts.converged,
            _to_converge(facts, options.ruleset), benchmarks.unit(key.benchmark, options.ruleset), mean, fastest,
            seen))  # fmt: skip
    return out


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _to_converge(facts: LogFacts, ruleset: str) -> float | None:
    """The epochs or samples to converge the reference's RCP reader gives a converged run (None otherwise)."""
    if not facts.converged or not facts.rcp_lines:
        return None

    conv = run_convergence(facts, ruleset)
    value = conv.epochs
    if not conv.converged or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return _finite(float(value)) if value != NOT_CONVERGED else None


def _tree_keys(run: CheckRun, options: CheckOptions) -> dict[str, tuple[SetKey, tuple[float | None, float | None]]]:
    """The sets of organisation trees: their results folders, each with its RCP numbers."""
    keys = {}
    for org in run.targets.orgs:
        folders: dict[tuple[str, str], list[LogRef]] = {}
        for ref in org.logs:
            folders.setdefault((ref.system or UNNAMED, ref.benchmark or UNNAMED), []).append(ref)
        for (system, bench), refs in folders.items():
            facts = [run.results[r.display].facts for r in refs]
            key = SetKey(system, bench, division_of.scored_division(None, facts) or UNNAMED)
            numbers = _rcp_numbers(bench, facts, options)
            keys.update({r.display: (key, numbers) for r in refs})
    return keys


def _rcp_numbers(bench: str, runs: list[LogFacts], options: CheckOptions) -> tuple[float | None, float | None]:
    """A set's RCP mean and fastest allowed mean, from the verdict the check gave it in this process (judged
    again when the check's bypass flags made it another question)."""
    if bench not in benchmarks.allowed(options.ruleset) or not benchmarks.has_rcp(bench):
        return None, None
    if not division_of.is_closed(None, runs):
        return None, None
    if len(runs) <= 2 * benchmarks.dropped(bench):  # no verdict yet: the window the check will use (run planning)

        win = window_for(options.ruleset, bench, runs_of(runs, options.ruleset)[1],
                         for_benchmark(options.custom_rcps, bench))
        return (None, None) if win is None or win.kind == "above" else (_finite(win.rcp_mean), _finite(win.fastest))

    result = rcp_verdict(bench, options.ruleset, runs, closed=True, rcps=for_benchmark(options.custom_rcps, bench))
    return _finite(result.rcp_mean), _finite(result.min_epochs)
