"""Borrowing's system side (training_rules.adoc §"Hyperparameter Borrowing", the paragraph after the group rule):
the same software, system and system configuration as the original; a change of scale only for the largest-scale
entry of the benchmark on that system, only to a larger scale or a faster result, and never past the largest scale
of an original entry (any benchmark) on that system this round."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.review.borrowing_rules import BorrowRules
from mlsubmit.checker.review.entries import Entry, system_doc
from mlsubmit.checker.systems.descriptions import summarize
from mlsubmit.checker.systems.jsonfile import escape

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location


def _compared(data: dict[str, Any], rules: BorrowRules) -> dict[str, Any]:
    skip = rules.ignored_fields | rules.scale_fields
    return {k: v for k, v in data.items() if k not in skip}


def system_findings(original: Entry, resubmitted: Entry, rules: BorrowRules) -> list[Finding]:
    """Each system description field (but names, notes and the node count) that differs from the original's."""
    doc = resubmitted.system_doc
    for entry in (resubmitted, original):
        problem = entry.system_problem
        if problem is not None:
            where = entry.system_doc.path if entry.system_doc is not None else entry.first.path
            return [finding("REV013", where, f"{problem}: the software, system and scale rules cannot be checked")]
    if doc is None or original.system_doc is None:  # said above; this narrows the types
        return []
    mine, theirs = _compared(resubmitted.system_data, rules), _compared(original.system_data, rules)
    out: list[Finding] = []
    for key in sorted(set(mine) | set(theirs)):
        if mine.get(key) == theirs.get(key):
            continue
        code = "REV005" if key in rules.software_fields else "REV006"
        pointer = "/" + escape(key)
        out.append(finding(code, doc.path, f"{key}: {mine.get(key)!r} in the resubmission's system, "
                           f"{theirs.get(key)!r} in the original's ({rules.cite(rules.system_line)})",
                           line=doc.line(pointer), pointer=pointer,
                           related=[Location(original.system_doc.path, original.system_doc.line(pointer), pointer)]))
    return out


@dataclass(frozen=True)
class Scales:
    """Scales (accelerators) of the original's system this round: of the benchmark's entries, and of any entry."""

    largest_for_benchmark: int | None
    largest_any: int | None


def same_system_scales(original: Entry, rules: BorrowRules) -> Scales:
    """The original tree's systems that are the original's system at another scale (every compared field equal)."""
    tree = original.tree
    if tree is None:
        return Scales(None, None)
    want = _compared(original.system_data, rules)
    for_bench: list[int] = []
    any_bench: list[int] = []
    for system in sorted(_listdir(tree / "results")):
        doc = system_doc(tree, system)
        if doc is None or not doc.is_object or _compared(doc.data, rules) != want:
            continue
        size = summarize(doc.data, system).accelerators
        benches = [b for b in _listdir(tree / "results" / system) if (tree / "results" / system / b).is_dir()]
        if size is None or not benches:
            continue
        any_bench.append(size)
        if original.benchmark in benches or original.folder.name in benches:
            for_bench.append(size)
    return Scales(max(for_bench, default=None), max(any_bench, default=None))


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def scale_findings(original: Entry, resubmitted: Entry, rules: BorrowRules) -> list[Finding]:
    was, now = original.accelerators, resubmitted.accelerators
    path = resubmitted.first.path
    if was is None or now is None:
        return [finding("REV013", path, f"the scale of the {'original' if was is None else 'resubmission'} is "
                        "unknown (number_of_nodes × accelerators_per_node of its system description)")]
    if was == now:
        return []
    cite = rules.cite(rules.system_line)
    scales = same_system_scales(original, rules)
    out: list[Finding] = []
    if scales.largest_for_benchmark is not None and was < scales.largest_for_benchmark:
        out.append(finding("REV007", path, f"scale changed {was} -> {now} accelerators, but the original is not the "
                           f"largest-scale {original.benchmark} entry on its system ({scales.largest_for_benchmark} "
                           f"accelerators) ({cite})"))
    t_was, t_now = original.minutes, resubmitted.minutes
    if now < was and not (t_was is not None and t_now is not None and t_now < t_was):
        out.append(finding("REV008", path, f"scale lowered {was} -> {now} accelerators without a faster result: "
                           f"{_minutes(t_now)} resubmitted against {_minutes(t_was)} original ({cite})"))
    if scales.largest_any is not None and now > scales.largest_any:
        out.append(finding("REV009", path, f"scale {now} accelerators is larger than the largest original entry on "
                           f"that system this round ({scales.largest_any} accelerators) ({cite})"))
    return out


def _minutes(value: float | None) -> str:
    return "no score" if value is None else f"{value:.3f} min"
