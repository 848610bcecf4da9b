"""Power logs of a results folder: `results/<system>/<benchmark>/power/result_<i>/node_<j>.txt`, `sw_<k>.txt`.

Two layers. `reference_verdict` is what mlperf-logging's package checker (4.1.68, package_checker/power_checker.py)
decides from the file listing alone, quirks included: every result log needs a power/<result name>/ folder; in
it, names starting with "node" and "sw" are node and switch logs whose index (the text after the last "_", less
the extension) must lie in 0..count-1 (duplicates are not caught); every run should have as many node logs and as
many switch logs as the most common count (ties go to the first count seen). The runs it fails join the log
compliance failures in the olympic count of the folder. It raises (a traceback, not a verdict) when an index is
not an integer or when no run has a power folder.

`check_rules` (the default profile) reads the logs and checks what they can show of power_measurement.adoc:
the window covers the timed run, one reading per second, 60 readings, readings and efficiency that are numbers,
every node measured, interconnects estimated. Nothing here writes to the tree.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import system_field
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.power.measurement import check_node_log, check_switch_log
from mlsubmit.checker.power.power_log import PowerLog, read_power_log

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity

if TYPE_CHECKING:
    from mlsubmit.checker.base.targets import BenchFolder, OrgTree


@dataclass
class RunListing:
    """One power/<result name>/ folder as the reference lists it."""

    name: str
    nodes: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)


@dataclass
class ReferenceVerdict:
    failed: set[str] = field(default_factory=set)  # result names (result_<i>) the power checker fails
    crash: str | None = None  # why the power checker raises instead of judging
    findings: list[Finding] = field(default_factory=list)
    listings: list[RunListing] = field(default_factory=list)


def _index(name: str) -> int | None:
    """The reference's `int(splitext(name)[0].split('_')[-1])`, None where that raises."""
    try:
        return int(os.path.splitext(name)[0].split("_")[-1])
    except ValueError:
        return None


def _in_range(indexes: list[int], count: int) -> bool:
    return all(0 <= i <= count - 1 for i in indexes)


def _odd_ones(counts: list[int]) -> list[int]:
    """Positions whose count is not the most common one (the first of equally common counts wins)."""
    tally = Counter(counts)
    common = max(tally, key=lambda c: tally[c])
    return [i for i, c in enumerate(counts) if c != common]


def _list_run(power: Path, shown: str, name: str, verdict: ReferenceVerdict) -> RunListing | None:
    folder = power / name
    if not os.path.exists(folder):
        verdict.failed.add(name)
        verdict.findings.append(finding("POW001", shown, f"{name}.txt has no power/{name}/ folder"))
        return None
    try:
        entries = sorted(os.listdir(folder))
    except OSError as exc:
        verdict.crash = f"listing power/{name} fails ({type(exc).__name__})"
        return None
    run = RunListing(name)
    for entry in entries:
        group = run.nodes if entry.startswith("node") else run.switches if entry.startswith("sw") else run.others
        group.append(entry)
    for kind, names in (("node", run.nodes), ("sw", run.switches)):
        indexes = [_index(n) for n in names]
        if any(i is None for i in indexes):
            bad = next(n for n, i in zip(names, indexes, strict=True) if i is None)
            verdict.crash = f"power/{name}/{bad}: the index after the last '_' is not an integer (ValueError)"
            return None
        if not _in_range([i for i in indexes if i is not None], len(names)):
            verdict.failed.add(name)
            why = f"{kind} logs {', '.join(names)} are not numbered {kind}_0 .. {kind}_{len(names) - 1}"
            verdict.findings.append(finding("POW002", os.path.join(shown, name), why))
    if run.others:
        why = f"{len(run.others)} file(s) that are neither node_<j> nor sw_<k> logs: {', '.join(run.others)}"
        verdict.findings.append(finding("POW004", os.path.join(shown, name), why))
    return run


def _count_findings(verdict: ReferenceVerdict, names: list[str], shown: str) -> None:
    runs = verdict.listings
    for kind, counts in (("node", [len(r.nodes) for r in runs]), ("sw", [len(r.switches) for r in runs])):
        common = Counter(counts).most_common(1)[0][0]
        for i in _odd_ones(counts):
            blamed = names[i]  # the reference indexes result names with the position among listed runs
            verdict.failed.add(blamed)
            why = f"{counts[i]} {kind} log(s); the other runs mostly have {common}"
            if blamed != runs[i].name:
                why += f" (the reference's power checker counts this against {blamed}.txt)"
            verdict.findings.append(finding("POW003", os.path.join(shown, runs[i].name), why))


def reference_verdict(power: Path, shown: str, result_names: list[str]) -> ReferenceVerdict:
    """The power checker's verdict on one benchmark folder's power/ (result names in sorted-path order)."""
    verdict = ReferenceVerdict()
    for name in result_names:
        run = _list_run(power, shown, name, verdict)
        if verdict.crash:
            return verdict
        if run is not None:
            verdict.listings.append(run)
    if not verdict.listings:
        verdict.crash = "no result log has a power folder (ValueError: max() of an empty sequence)"
        return verdict
    _count_findings(verdict, result_names, shown)
    return verdict


def number_of_nodes(org: OrgTree, system: str) -> int | None:
    """The system file's number_of_nodes as an integer (written as text or a number), else None."""
    value = system_field(org, system, "number_of_nodes")
    try:
        return int(str(value).strip()) if value is not None and not isinstance(value, bool) else None
    except ValueError:  # not a number, or too many digits for int()
        return None


def _canonical_names(run: RunListing, shown: str) -> list[Finding]:
    """Names the reference lets through: duplicate numbers (node_0, node_00) or no .txt (which the energy score
    then never reads)."""
    out = []
    for kind, names in (("node", run.nodes), ("sw", run.switches)):
        want = {f"{kind}_{i}.txt" for i in range(len(names))}
        if set(names) != want:
            why = f"{kind} logs {', '.join(names)} are not {kind}_0.txt .. {kind}_{len(names) - 1}.txt"
            out.append(finding("POW002", shown, why))
    return out


def _node_count_findings(run: RunListing, shown: str, nodes: int | None) -> list[Finding]:
    out = []
    if nodes is not None and len(run.nodes) < nodes:
        why = f"{len(run.nodes)} node power log(s) for a system of {nodes} nodes: every node must be measured"
        out.append(finding("POW018", shown, why))
    if nodes is not None and nodes > 1 and not run.switches:
        out.append(finding("POW019", shown, f"{nodes} nodes and no sw_<k>.txt interconnect power log"))
    return out


def check_rules(org: OrgTree, folder: BenchFolder, verdict: ReferenceVerdict, runs: list[LogFacts]) -> list[Finding]:
    """What the power logs show of power_measurement.adoc, for every run folder the listing found."""
    by_name = {os.path.splitext(os.path.basename(f.path))[0]: f for f in runs}
    nodes = number_of_nodes(org, folder.system)
    named = {f.path for f in verdict.findings if f.code == "POW002"}
    out: list[Finding] = []
    for run in verdict.listings:
        base = folder.path / "power" / run.name
        shown = os.path.join(folder.shown, "power", run.name)
        out += [*(_canonical_names(run, shown) if shown not in named else []), *_node_count_findings(run, shown, nodes)]
        facts = by_name.get(run.name)
        for name in run.nodes + run.switches:
            if (base / name).is_file():
                log = _power_log(org, base / name, os.path.join(shown, name))
                check = check_node_log if name in run.nodes else check_switch_log
                out += check(log, facts)
    return out


def _result_names(folder: BenchFolder) -> dict[str, str]:
    """result_<i> -> its log, in the folder's order (the reference indexes runs by this order)."""
    return {os.path.splitext(os.path.basename(p))[0]: p for p in folder.logs}


def prepare_folder(org: OrgTree, folder: BenchFolder) -> None:
    """The reference's verdict and the power logs `check_rules` will read, beside the log checks
    (tree.prepare_org): they need no result log."""
    power = folder.path / "power"
    if not os.path.isdir(power):
        return
    shown = os.path.join(folder.shown, "power")
    verdict = reference_verdict(power, shown, list(_result_names(folder)))
    org.prepared.power_verdicts[power] = verdict
    kept = org.prepared.power_logs
    for run in verdict.listings:
        for name in run.nodes + run.switches:
            path = power / run.name / name
            if path.is_file():
                kept[path] = read_power_log(path, os.path.join(shown, run.name, name))


def _prepared_verdict(org: OrgTree, power: Path) -> ReferenceVerdict | None:
    """The verdict prepare_folder reached (taken: a second check judges afresh), else None."""
    return org.prepared.power_verdicts.pop(power, None)


def _power_log(org: OrgTree, path: Path, shown: str) -> PowerLog:
    """The log as prepare_folder read it (taken: a second check reads afresh), else read now."""
    log = org.prepared.power_logs.pop(path, None)
    return log if log is not None and log.path == shown else read_power_log(path, shown)


def check_folder(
    org: OrgTree, folder: BenchFolder, runs: list[LogFacts], *, as_reference: bool
) -> tuple[list[Finding], set[str]]:
    """Findings on a benchmark folder's power/ and the result logs (display paths) its power checks fail.
    as_reference: judged as the reference package checker judges it (the reference profile's tree check)."""
    power = folder.path / "power"
    if not os.path.exists(power):
        return [], set()
    shown = os.path.join(folder.shown, "power")
    by_name = _result_names(folder)
    verdict = _prepared_verdict(org, power) or reference_verdict(power, shown, list(by_name))
    # the runs the power checker fails count through the olympic tolerance (TREE007), as run errors do, in both
    # profiles: the folder judges them
    out = [replace(f, severity=Severity.WARNING) if f.severity is Severity.ERROR else f for f in verdict.findings]
    if verdict.crash:
        severity = Severity.ERROR if as_reference else Severity.WARNING
        out.append(finding("TREE024", shown, f"power checker: {verdict.crash}", severity=severity))
    elif not as_reference:
        out += check_rules(org, folder, verdict, runs)
    return out, {by_name[n] for n in verdict.failed if n in by_name}
