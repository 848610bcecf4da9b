"""Turn a result entry's raw job output into the runs to score, choosing them as the round's rules say.

Each matched file is one run. Its MLLOG records are copied byte for byte into a staging file (the future
`result_<i>.txt`), and read once to learn when the run started and whether it converged. Which runs are scored
follows rules-spec §4.4: TR1.0/TR1.1 §"Benchmark Results" fix N runs per benchmark; TR1.1 §Scoring also allows
M > N runs launched as one group, of which the N consecutive runs (by start time) whose olympic score is the
median are scored. Any run left out is reported with the reason; nothing is dropped silently.
"""

from __future__ import annotations

import errno
import glob
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker import LogFacts, median_window, read_log
from mlsubmit.checker.logs.facts import FactsBuilder
from mlsubmit.checker.logs.input import GZIP_ERRORS, open_log
from mlsubmit.checker.logs.limits import raw_records
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.window import olympic as window_olympic
from mlsubmit.submission.fulllog import Redaction, copy_full
from mlsubmit.submission.ledger_runs import ledger_runs
from mlsubmit.submission.package_config import SELECT_MEDIAN_WINDOW, PackageConfig, ResultEntry

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location
from mlsubmit.core.support.names import did_you_mean
from mlsubmit.core.support.safe_io import sha256_file

# Olympic scoring: how many of the fastest and slowest runs are dropped, which is also how many runs may fail to
# converge (TR1.0 L442-462, TR1.1 L443-476: one each; U-Net3D: four each).


@dataclass
class Run:
    source: Path
    display: str  # source path relative to the config file's folder, '/'-separated
    source_sha256: str
    staged: Path
    sha256: str = ""  # of the extracted records, i.e. of the result file
    size: int = 0
    records: int = 0
    facts: LogFacts | None = None
    output: dict[str, object] | None = None  # for a whole-output copy: what was kept, redacted or cut
    # line in `source` of each staged record, in order (a whole-output copy keeps the lines: none needed)
    raw_lines: list[int] = field(default_factory=list)

    def raw_line(self, staged_line: int | None) -> int | None:
        """The line of the raw output that holds the staged file's `staged_line` (both 1-based)."""
        if staged_line is None or not 1 <= staged_line <= len(self.raw_lines):
            return staged_line
        return self.raw_lines[staged_line - 1]

    @property
    def start_ms(self) -> float | None:
        return None if self.facts is None else self.facts.started_ms

    @property
    def converged(self) -> bool:
        return self.facts is not None and self.facts.converged

    @property
    def minutes(self) -> float:
        """Time to train, or infinity for a run that did not converge (TR1.1 §Scoring counts those as infinite)."""
        if self.facts is None or not self.converged or self.facts.minutes is None:
            return math.inf
        return self.facts.minutes


@dataclass
class Selection:
    entry: ResultEntry
    required: int | None
    candidates: list[Run] = field(default_factory=list)  # every usable run, in start order
    chosen: list[Run] = field(default_factory=list)  # the runs written as result_0..N-1, in start order
    excluded: list[tuple[Run, str]] = field(default_factory=list)  # runs not scored, with the reason
    score: float | None = None  # olympic mean of the chosen runs in minutes (inf: invalid result)
    findings: list[Finding] = field(default_factory=list)


def olympic(minutes: Sequence[float], benchmark: str) -> float:
    """Mean after dropping the fastest and slowest run(s); infinite when too many runs did not converge."""
    return window_olympic(minutes, benchmark)  # the one home of the scoring rule (checker/rounds/window.py)


def _display(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def expand_logs(cfg: PackageConfig, entry: ResultEntry) -> tuple[list[Path], list[Finding]]:
    """Files matched by the entry's patterns, in a stable order, each once."""
    found: list[Path] = []
    seen: set[Path] = set()
    findings: list[Finding] = []
    for j, pattern in enumerate(entry.logs):
        matches = sorted(glob.glob(str(cfg.base / pattern), recursive=True))
        candidates = [Path(m) for m in matches if Path(m).is_file()]
        findings += [_not_a_file(Path(m), cfg.base, pattern) for m in matches if _neither(Path(m))]
        files = [f for f in candidates if not _ours(f, cfg.out)]
        if not files:
            what = "only files of a previous build in `out`" if candidates else "no file"
            findings.append(
                finding("PKG001", str(cfg.path), f"{pattern!r} matches {what} (relative to {cfg.base})",
                        pointer=f"/results/{entry.index}/logs/{j}")
            )
        for f in files:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                found.append(f)
    recorded, problems = ledger_runs(cfg, entry)
    findings += problems
    for f in recorded:
        if f.resolve() not in seen and not _ours(f, cfg.out):
            seen.add(f.resolve())
            found.append(f)
    return found, findings


def _neither(path: Path) -> bool:
    """Matched, yet neither a regular file nor a folder: a FIFO, a device, a socket, a link to one of them, a
    dangling link or a link loop. None is read (a FIFO would block, /dev/zero never ends), and none is passed over
    without a word."""
    try:
        return not (path.is_file() or path.is_dir())
    except OSError:  # a link loop: stat fails with ELOOP
        return True


def _not_a_file(path: Path, base: Path, pattern: str) -> Finding:
    try:
        mode = path.stat().st_mode
        what = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    except OSError as exc:
        what = "a link loop" if exc.errno == errno.ELOOP else "a dangling link" if path.is_symlink() else \
            f"unreadable ({exc.strerror or exc})"
    return finding("PKG050", _display(path, base), f"matched by {pattern!r} but {what}: not read as a run")


def _ours(path: Path, out: Path) -> bool:
    """A file of a previous build or of the build folders beside `out`: a broad pattern must not pick them up."""
    out = out.resolve()
    for parent in path.resolve().parents:
        if parent == out or (parent.parent == out.parent and parent.name.startswith(f".{out.name}.")):
            return True
    return False



def _copy_records(source: Path, staged: Path, run: Run, cut: list[Finding]) -> int:
    """The run's records into `staged`, each record's raw line noted so findings can point back at it. Read in
    chunks, as `check` reads (checker.numbered_records): a newline bomb costs C-level scans, not a loop per line;
    and within `check`'s limits (limits.raw_records), so past 4 GiB or 10 M records both stop at the same place
    and say LOG012 (into `cut`)."""
    count = 0
    with open_log(source, unpack=True) as stream, open(staged, "wb") as out:  # the reader `check` uses
        for line, rec in raw_records(stream, run.display, cut):
            out.write(rec + b"\n")
            run.raw_lines.append(line)
            count += 1
    return count


def stage_run(source: Path, display: str, staged: Path,
              full: Redaction | None = None) -> tuple[Run | None, list[Finding]]:
    """Copy the run's records (with `full`: its whole output, redacted, line for line) into `staged`; None (with a
    finding) when the file is not a usable run."""
    cut: list[Finding] = []
    try:
        run = Run(source, display, sha256_file(source), staged)
        if full is None:
            count = _copy_records(source, staged, run, cut)
        else:
            copied = copy_full(lambda: open_log(source, unpack=True), staged, full, display=display, cut=cut)
            count, run.output = copied.records, copied.manifest()
    except GZIP_ERRORS as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return None, [finding("PKG002", display, f"cannot read the run's output: {reason}")]
    if count == 0:
        return None, [finding("PKG003", display, "no :::MLLOG records: this file is not the output of a run")]
    # packaging reads start, stop and status (not convergence): the facts, gathered as the staged records stream by
    builder = FactsBuilder()
    log = read_log(staged, display, rcp_lines=False, sink=builder.feed)
    run.records = count
    run.sha256 = log.sha256
    run.size = log.size
    run.facts = builder.facts(log)
    return run, cut


def _order_key(run: Run) -> tuple[float, str]:
    start = run.start_ms
    return (start if start is not None else math.inf, run.display)


def collect(cfg: PackageConfig, entry: ResultEntry, staging: Path) -> Selection:
    """Stage every matched run of the entry, then choose the scored ones."""
    sel = Selection(entry, benchmarks.runs(entry.benchmark))
    sources, sel.findings = expand_logs(cfg, entry)
    by_content: dict[str, Run] = {}
    for k, source in enumerate(sources):
        display = _display(source, cfg.base)
        run, problems = stage_run(source, display, staging / f"{entry.index}-{k}.txt",
                                  cfg.redaction if cfg.full_output else None)
        sel.findings.extend(problems)
        if run is None:
            continue
        twin = by_content.get(run.sha256)
        if twin is not None:
            sel.findings.append(
                finding("PKG010", display, f"holds the same records as {twin.display}: one run cannot count twice",
                        related=[Location(twin.display)])
            )
            sel.excluded.append((run, f"duplicate of {twin.display}"))
            continue
        by_content[run.sha256] = run
        sel.findings.extend(_run_findings(run, entry))
        sel.candidates.append(run)
    sel.candidates.sort(key=_order_key)
    _choose(cfg, sel)
    return sel


def _run_findings(run: Run, entry: ResultEntry) -> list[Finding]:
    out: list[Finding] = []
    facts = run.facts
    assert facts is not None
    bench = facts.benchmark
    if bench is not None and bench != entry.benchmark:
        out.append(
            finding("PKG009", run.display,
                    f"the run says submission_benchmark {bench!r}, but it is packaged as {entry.benchmark!r}",
                    line=run.raw_line(facts.line("submission_benchmark")))
        )
    if facts.run_start_ms is None:
        out.append(finding("PKG011", run.display, "no run_start record: the run is ordered by its first record's time"))
    return out


def _choose(cfg: PackageConfig, sel: Selection) -> None:
    entry, runs, n = sel.entry, sel.candidates, sel.required
    where = f"/results/{entry.index}"
    label = f"{entry.system}/{entry.benchmark}"
    sel.chosen = list(runs)
    if n is None:
        known = benchmarks.allowed(cfg.ruleset)
        said = (f"{entry.benchmark!r} is not a benchmark of ruleset {cfg.ruleset}"
                f"{did_you_mean(entry.benchmark, known)} (the training rules name no run count for it)"
                if entry.benchmark not in known else
                f"the training rules name no run count for benchmark {entry.benchmark!r}")  # fmt: skip
        sel.findings.append(finding("PKG013", str(cfg.path), f"{label}: {said}; every run is packaged", pointer=where))
        return
    if len(runs) < n:
        sel.findings.append(
            finding("PKG004", str(cfg.path), f"{label}: {len(runs)} usable run(s), the rules ask for {n}",
                    pointer=where)
        )
    elif len(runs) > n and entry.select != SELECT_MEDIAN_WINDOW:
        sel.findings.append(
            finding("PKG005", str(cfg.path), f"{label}: {len(runs)} runs found where the rules ask for {n}; "
                    "choosing some of them by hand would be cherry-picking, so all are packaged", pointer=where)
        )
    elif entry.select == SELECT_MEDIAN_WINDOW and len(runs) > n:
        if _version(cfg.ruleset) < (1, 1, 0):
            sel.findings.append(
                finding("PKG012", str(cfg.path), f"{label}: ruleset {cfg.ruleset} has no rule for choosing N of "
                        "M runs (it came with TR1.1 §Scoring); every run is packaged", pointer=where)
            )
        else:
            _median_window(cfg, sel, n)
    _convergence(cfg, sel)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _median_window(cfg: PackageConfig, sel: Selection, n: int) -> None:
    """TR1.1 §Scoring: olympic-score every window of N consecutive runs; score the median window (the checker's
    rule, `median_window`, which the run-set check of raw output uses too)."""
    runs = sel.candidates
    window = median_window([r.minutes for r in runs], n, sel.entry.benchmark)
    start = window.start
    sel.chosen = runs[start : start + n]
    for k, run in enumerate(runs):
        if start <= k < start + n:
            continue
        reason = f"outside the median window (runs {start}..{start + n - 1} of 0..{len(runs) - 1} by start time)"
        sel.excluded.append((run, reason))
        sel.findings.append(finding("PKG008", run.display, f"not scored: {reason}"))
    if not window.valid:
        sel.findings.append(
            finding("PKG007", str(cfg.path), f"{sel.entry.system}/{sel.entry.benchmark}: the median window of "
                    f"{n} runs has too many runs that did not converge, so the whole result is invalid "
                    "(TR1.1 §Scoring)", pointer=f"/results/{sel.entry.index}")
        )


def _convergence(cfg: PackageConfig, sel: Selection) -> None:
    bench = sel.entry.benchmark
    failed = [r for r in sel.chosen if not r.converged]
    for run in failed:
        facts = run.facts
        status = facts.status if facts is not None else None
        line = run.raw_line(facts.line("run_stop")) if facts is not None else None
        sel.findings.append(
            finding("PKG006", run.display, f"the run did not converge (run_stop status {status!r})", line=line)
        )
    allowed = benchmarks.dropped(bench)
    sel.score = olympic([r.minutes for r in sel.chosen], bench) if sel.chosen else None
    if len(failed) > allowed and not any(f.code == "PKG007" for f in sel.findings):
        sel.findings.append(
            finding("PKG007", str(cfg.path), f"{sel.entry.system}/{bench}: {len(failed)} scored runs did not "
                    f"converge; at most {allowed} may (TR1.0/TR1.1 §Benchmark Results)",
                    pointer=f"/results/{sel.entry.index}")
        )
