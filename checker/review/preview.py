"""Preview -> Available (submission_rules.adoc §"Preview Systems", L753-755): a Preview result of the last round
must be matched in this round by an Available result that is equal or better, allowing a 2 % degradation for
noise, at least at the smallest and the largest scale the Preview used for the benchmark. An Available system
larger than the Preview point must be faster in absolute time; a smaller one must be better in time-to-train x
chips. "For submissions accompanied by power measurements, 'equal or better' must use power-normalized performance
rather than absolute performance" (L753, its last sentence). Power-normalised performance is performance per watt,
1 / (time x average power) = 1 / energy to train, so where both results have power logs the measure is their
energy to train (power_measurement.adoc §4 "Scoring", unscaled, as the time is), at any scale (energy, like
time x chips, already counts every chip), with the same 2 %. A Preview measured with power against an Available
result without an energy figure is compared in time, and REV023 says why the power measure could not be used.

A Preview system's successor is the same system as its description tells it, whatever the folder or system_name
(review/identity.py: submitter, division and hardware; the closest when several are). A CPU system's chips are its
host processors. The round's own data decides what is compared (review/due.py): a benchmark retired by the round
is not (L753 asks only for the Compatible ones; L757 gives the route), a renamed one is under its new name, and a
round less than 140 days after the Preview's (L726) is not yet the one the result is due in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from mlsubmit.checker.power.energy import RunEnergy, entry_energy
from mlsubmit.checker.review.due import Rounds
from mlsubmit.checker.review.entries import Entry, entry_folders_all, read_entry
from mlsubmit.checker.review.identity import Chips, Hardware, Match, chips, closest, hardware
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.detect import round_name, ruleset_of_path, version
from mlsubmit.checker.systems.knowledge import knowledge, spelling_key

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Location

NOISE = 0.02  # SR §Preview Systems L753: "up to a 2% degradation in performance will be accepted"
_ULP = 1e-9  # relative: a result exactly 2 % slower is at the limit, though 10.0 x 1.02 < 10.2 in floats
CITE = "submission_rules.adoc §Preview Systems L753-755"


def status_of(entry: Entry) -> str:
    """"Preview", "Available" or another canonical status (systems knowledge), "" when unknown."""
    raw = entry.system_data.get("status")
    info = knowledge().status.get(spelling_key(raw)) if isinstance(raw, str) else None
    if info is None:
        return ""
    return "Available" if info.canonical.startswith("Available") else info.canonical


def hardware_of(entry: Entry) -> Hardware:
    """What the entry's system is (review/identity.py): a result counts against one of its own division only."""
    return hardware(entry.system_data, entry.system, division=entry.first.division, org=entry.org)


@dataclass(frozen=True)
class Point:
    entry: Entry
    chips: int
    minutes: float
    energy: RunEnergy | None = None  # None: no power/ folder
    hardware: Hardware | None = None
    host_chips: bool = False  # a CPU system: its chips are its host processors

    @property
    def chips_text(self) -> str:
        """Its chips as a message says them."""
        return Chips(self.chips, self.host_chips).say()

    @property
    def efficiency(self) -> float:
        return self.minutes * self.chips

    @property
    def megajoules(self) -> float | None:
        return None if self.energy is None or self.energy.joules is None else self.energy.joules / 1e6


@dataclass(frozen=True)
class Comparison:
    """One Preview point against one Available entry: the measure the rule names, and whether it held."""

    preview: Point
    available: Point
    measure: str  # "time", "time x chips" or "energy"
    allowed: float  # the Available value may be at most this
    got: float
    match: Match | None = None  # why the Available system is the Preview's

    @property
    def held(self) -> bool:
        return self.got <= self.allowed * (1 + _ULP)

    @property
    def unit(self) -> str:
        return {"time": "min", "time x chips": "min x chips"}.get(self.measure, "MJ")


def compare(preview: Point, available: Point) -> Comparison:
    before, now = preview.megajoules, available.megajoules
    if before is not None and now is not None:  # power-normalised: energy to train (L753)
        return Comparison(preview, available, "energy", before * (1 + NOISE), now)
    if available.chips >= preview.chips:
        return Comparison(preview, available, "time", preview.minutes * (1 + NOISE), available.minutes)
    return Comparison(preview, available, "time x chips", preview.efficiency * (1 + NOISE), available.efficiency)


Points = dict[tuple[Hardware, str], list["Point"]]


def points(trees: list[str], wanted: str) -> tuple[Points, list[Finding]]:
    """Entries of the given status with a scale and a score, by (system key, benchmark); REV024 for each entry
    left out because its system description, scale or score is unusable."""
    out: Points = {}
    left_out: list[Finding] = []
    for folder in entry_folders_all([Path(t) for t in trees]):
        entry = read_entry(folder)
        why = _left_out(entry, wanted)
        if why:
            left_out.append(finding("REV024", entry.first.path, f"{entry.system}/{entry.benchmark}: {why}; left "
                                    f"out of the Preview comparison ({CITE})"))
        count, minutes = chips(entry.system_data, entry.system), entry.minutes
        if why is not None or count.count is None or minutes is None:
            continue
        energy = entry_energy(entry.folder, entry.runs, entry.benchmark)
        hw = hardware_of(entry)
        group = hw if wanted != "Preview" else _group(hw)
        out.setdefault((group, entry.benchmark), []).append(
            Point(entry, count.count, minutes, energy, hw, count.host_processors))
    return out, left_out


def _group(hw: Hardware) -> Hardware:
    """Preview points of one system at any scale and under any name: the smallest and the largest are judged."""
    return Hardware(hw.submitter, hw.division, hw.accelerator, hw.per_node, hw.host if hw.cpu_only else "",
                    hw.hosts_per_node if hw.cpu_only else None, "", "", "" if hw.submitter else hw.name, "", "")


def _left_out(entry: Entry, wanted: str) -> str | None:
    """Why an entry cannot be compared: "" when it is simply of another status, None when it can."""
    problem = entry.system_problem
    if problem is not None:
        return problem
    if status_of(entry) != wanted:
        return ""
    if chips(entry.system_data, entry.system).count is None:
        return ("no scale (number_of_nodes x accelerators_per_node of its system description, or x "
                "host_processors_per_node where accelerators_per_node is 0)")
    if entry.minutes is None or not math.isfinite(entry.minutes):
        return f"no score ({_why_no_score(entry)})"
    return None


def _why_no_score(entry: Entry) -> str:
    """Too many runs without a finite time, or too few runs at all, for the olympic mean."""
    drop = benchmarks.dropped(entry.benchmark)
    timed = sum(1 for f in entry.runs if f.converged and f.minutes is not None and math.isfinite(f.minutes))
    if len(entry.runs) - timed > drop:
        return "too many runs without a finite time to train for the olympic mean"
    return (f"{timed} run{'' if timed == 1 else 's'} with a finite time to train: too few for the olympic mean, "
            f"which drops {drop} at each end")


def _round(trees: list[str]) -> str | None:
    """The one round all the trees are in, when their training_results_vX.Y folders say it."""
    found = {ruleset_of_path(Path(t)) for t in trees}
    return found.pop() if len(found) == 1 else None


def time_text(value: float) -> str:
    """Three decimals, as the results tables give times; a huge value (a log's odd timestamps) in short form."""
    return f"{value:.3f}" if abs(value) < 1e9 else f"{value:.6g}"


def _numbers(c: Comparison) -> str:
    matched = f"; the same system by {c.match.say()}" if c.match is not None else ""
    return (f"Available {c.available.entry.system} ({c.available.chips_text}, {time_text(c.available.minutes)} min) "
            f"{c.measure} {time_text(c.got)} {c.unit} against at most {time_text(c.allowed)} "
            f"(Preview {c.preview.entry.system}, "
            f"{c.preview.chips_text}, {time_text(c.preview.minutes)} min, +2 %{matched})")


def best_comparison(preview: Point, available: list[Point], match: Match | None = None, rounds: Rounds | None = None,
          others: tuple[str, ...] = ()) -> tuple[Comparison | None, list[Finding]]:
    """The best comparison for one Preview point (held ones first, then the closest) and its finding. `others`:
    systems of the Preview's hardware this round with no result of the benchmark (for REV021's message)."""
    path, rounds = preview.entry.first.path, rounds or Rounds(None, None)
    said = (f"Preview {preview.entry.system} {preview.entry.benchmark} ({preview.chips_text}, "
            f"{time_text(preview.minutes)} min)")
    if not available:
        if rounds.early:
            return None, [finding("REV058", path, f"{said}: no Available result of the same system yet; "
                                  f"{rounds.not_due()}")]
        seen = f"; systems of that hardware this round, without it: {', '.join(others)}" if others else ""
        return None, [finding("REV021", path, f"{said}: no Available result of the same system and division this "
                              f"round (the same submitter, division and hardware: {_hardware(preview)}){seen} "
                              f"({CITE})")]
    tried = sorted((replace(compare(preview, a), match=match) for a in available),
                   key=lambda c: (not c.held, c.got / c.allowed, c.available.entry.system))
    best = tried[0]
    code = "REV020" if best.held else "REV058" if rounds.early else "REV022"
    tail = f"; {rounds.not_due()}" if code == "REV058" else f"{rounds.in_round()} ({CITE})"
    out = [finding(code, path, f"{preview.entry.benchmark}: {_numbers(best)}{_same_scale(best, tried)}{tail}",
                   related=[Location(best.available.entry.first.path)])]
    if _same_runs(preview, best.available):
        out.append(finding("REV056", path, f"{preview.entry.benchmark}: the Available result "
                           f"{best.available.entry.system} is the Preview's own runs (the same run_start times of "
                           f"{len(preview.entry.runs)} runs): it shows no new run of the Available system "
                           f"(submission_rules.adoc §Preview Systems L757: \"resubmission of old preview submission "
                           f"logs to prove performance validity is not permitted\")",
                           related=[Location(best.available.entry.first.path)]))
    if preview.energy is not None and best.measure != "energy":
        out.append(finding("REV023", path, f"{preview.entry.benchmark}: the Preview was measured with power but "
                           f"{_no_energy(preview, best.available)}; compared in {best.measure} instead ({CITE})"))
    return best, out


def _same_scale(best: Comparison, tried: list[Comparison]) -> str:
    """For a point held at another scale: the Preview's own scale did not hold, which the review may want to see."""
    if not best.held or best.available.chips == best.preview.chips:
        return ""
    same = [c for c in tried if c.available.chips == c.preview.chips]
    if not same or any(c.held for c in same):
        return ""
    c = same[0]
    return (f"; at the Preview's own scale {c.available.entry.system} ({time_text(c.available.minutes)} min, at most "
            f"{time_text(c.allowed)}) does not hold")


def _same_runs(preview: Point, available: Point) -> bool:
    """The Available entry's runs are the Preview's: every run starts at the same time_ms."""
    starts = [sorted(f.run_start_ms or 0.0 for f in p.entry.runs) for p in (preview, available)]
    return bool(starts[0]) and 0.0 not in starts[0] and starts[0] == starts[1]


def _hardware(point: Point) -> str:
    hw = point.hardware
    if hw is None:
        return "unknown"
    if hw.cpu_only:
        return f"host processor {hw.said_host or 'not given'} x {hw.hosts_per_node} per node, no accelerator"
    return f"{hw.said_accelerator} x {hw.per_node} per node"


def _no_energy(preview: Point, available: Point) -> str:
    """Why the power-normalised measure could not be used for this pair."""
    for side, point in (("Preview", preview), ("Available", available)):
        if point.energy is None:
            return f"the {side} result {point.entry.system} has no power logs"
        if point.energy.joules is None:
            return f"the {side} result {point.entry.system} has no energy figure ({point.energy.reason})"
    return "no energy figure"


def _by_round(trees: list[str]) -> list[tuple[str | None, list[str]]]:
    """The trees by the round their training_results_vX.Y folder names, oldest first (None: not named)."""
    groups: dict[str | None, list[str]] = {}
    for tree in trees:
        groups.setdefault(ruleset_of_path(Path(tree)), []).append(tree)
    if None in groups and len(groups) > 1:  # a tree of no named round cannot be placed among the others
        return [(None, list(trees))]
    return sorted(groups.items(), key=lambda g: version(g[0] or ""))


def check_preview(previous: list[str], current: list[str]) -> tuple[list[Comparison], list[Finding]]:
    """Every Preview (system, benchmark) of `previous` at its smallest and largest scale against `current`; a usage
    error when both sides name their round (training_results_vX.Y) and `previous` is not the earlier one.
    `current` may hold the rounds from the next one to the one the result is due in (140 days, SR L726): a point
    that held in any of them held; otherwise the latest round's verdict stands."""
    before_round = _round(previous)
    groups = _by_round(current)
    for now_round, _ in groups:
        if before_round and now_round and version(before_round) >= version(now_round):
            raise UsageError(f"review preview: --previous is of round {round_name(before_round)}, not earlier than "
                             f"--current's {round_name(now_round)}; give last round's trees as --previous")
    before, left_before = points(previous, "Preview")
    found: list[Finding] = list(left_before)
    rounds: list[tuple[Rounds, list[Point]]] = []
    for now_round, trees in groups:
        now, left_now = points(trees, "Available")
        found.extend(left_now)
        rounds.append((Rounds(before_round, now_round), [p for entries in now.values() for p in entries]))
    comparisons: list[Comparison] = []
    for key in sorted(before, key=lambda k: (repr(k[0]), k[1])):
        ranked = sorted(before[key], key=lambda p: (p.chips, p.entry.system))
        for point in {id(p): p for p in (ranked[0], ranked[-1])}.values():
            tried = [_judge_point(point, available, r) for r, available in rounds]
            best, said = next((t for t in tried if any(f.code == "REV020" for f in t[1])), tried[-1])
            found.extend(said)
            if best is not None:
                comparisons.append(best)
    return comparisons, found


def _judge_point(point: Point, available: list[Point], rounds: Rounds) -> tuple[Comparison | None, list[Finding]]:
    """One Preview point: retired (REV059), or judged against its successor's entries of the benchmark's name in
    the round under review."""
    fate = rounds.benchmark_fate(point.entry.benchmark)
    if not fate.compatible:
        return None, [finding("REV059", point.entry.first.path, f"Preview {point.entry.system} "
                              f"{point.entry.benchmark} ({point.chips_text}, {time_text(point.minutes)} min): "
                              f"{rounds.retired(point.entry.benchmark)}")]
    target = point.hardware or hardware_of(point.entry)
    pairs = [(p.hardware or hardware_of(p.entry), p) for p in available]
    entries, match = closest(target, [(hw, p) for hw, p in pairs if p.entry.benchmark == fate.name])
    others: tuple[str, ...] = ()
    if not entries:  # say which systems of that hardware there are, for the hand check
        others = tuple(sorted({p.entry.system for p in closest(target, pairs)[0]}))[:5]
    return best_comparison(point, entries, match, rounds, others)
