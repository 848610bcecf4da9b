"""Performance per dollar across submitters: each priced result against a baseline system, per benchmark × division.

The measure is the number of time-to-train runs per hour per million of list price, `(60 / minutes) / (price / 1e6)`,
and the comparison is its ratio to the baseline's. Which minutes is a choice the output states: the unscaled olympic
mean (default) or the scored time, which includes the RCP scaling factor. Graphcore's MLPerf Training v1.0
announcement (IPU-POD16 against a DGX A100: 1.6x for ResNet-50, 1.3x for BERT) matches the unscaled olympic mean:
from the published logs it gives 1.550 and 1.258, where the scored time gives 1.557 and 1.235 (1.2x for BERT).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlsubmit.core.support.names import did_you_mean
from mlsubmit.report.inputs import Price, performance_per_price

if TYPE_CHECKING:
    from mlsubmit.report.data import ResultRow

TIME_BASES = {
    "olympic": "the unscaled olympic mean of the runs (no RCP scaling)",
    "scored": "the scored time to train: the olympic mean times the RCP scaling factor",
}


def minutes_for(row: ResultRow, time_basis: str) -> float | None:
    return row.score.olympic_minutes if time_basis == "olympic" else row.score.time_to_train_minutes


@dataclass(frozen=True)
class Entry:
    """One result in a comparison group: its per-dollar figure and its ratio to the baseline's, or why not."""

    system: str
    minutes: float | None
    price: Price | None
    per_dollar: float | None
    relative: float | None = None
    baseline: bool = False
    note: str = ""  # why there is no figure: no price, no score

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "minutes": self.minutes, "price": self.price.amount if self.price else None,
                "per_dollar": self.per_dollar, "relative_to_baseline": self.relative, "baseline": self.baseline,
                "note": self.note or None}  # fmt: skip


@dataclass(frozen=True)
class Group:
    division: str | None
    benchmark: str
    baseline: str | None  # the baseline system's id in this group
    entries: tuple[Entry, ...]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"division": self.division, "benchmark": self.benchmark, "baseline": self.baseline,
                "note": self.note or None, "systems": [e.to_dict() for e in self.entries]}  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    time_basis: str  # a key of TIME_BASES
    currency: str
    baseline_from: str  # "--baseline X", "baseline = true in prices.toml" or "" (no baseline)
    groups: tuple[Group, ...]

    def method(self) -> str:
        base = f"relative to the baseline ({self.baseline_from})" if self.baseline_from else "no baseline chosen"
        return (f"per dollar (perf_per_price_estimate) = time-to-train runs per hour per million {self.currency} "
                f"of price, (60 / minutes) / (price / 1,000,000); minutes = {TIME_BASES[self.time_basis]}; "
                f"price = the list price or estimate in prices.toml, times number_of_nodes for a per-node rule "
                f"(not a quote: no discounts, support, power or hosting); {base}.")  # fmt: skip

    def entry(self, system: str, benchmark: str, division: str | None) -> Entry | None:
        group = next((g for g in self.groups if g.benchmark == benchmark and g.division == division), None)
        return next((e for e in group.entries if e.system == system), None) if group else None

    def to_dict(self) -> dict[str, Any]:
        return {"time": self.time_basis, "currency": self.currency, "baseline_from": self.baseline_from or None,
                "method": self.method(), "groups": [g.to_dict() for g in self.groups]}  # fmt: skip


def _is_baseline(row: ResultRow, baseline: str | None) -> bool:
    if baseline is not None:
        name = row.system.get("system_name") if row.system and row.system.readable else ""
        return baseline.strip().lower() in (row.score.system.lower(), name.strip().lower())
    return row.price is not None and row.price.baseline


def _entry(row: ResultRow, time_basis: str) -> Entry:
    minutes = minutes_for(row, time_basis)
    per_dollar = performance_per_price(minutes, row.price)
    note = ""
    if row.price is None:
        note = row.no_price or "no price"
    elif per_dollar is None:
        note = "no score"
    return Entry(row.score.system, minutes, row.price, per_dollar, note=note)


def _group(rows: Sequence[ResultRow], time_basis: str, baseline: str | None) -> Group:
    entries = [_entry(r, time_basis) for r in rows]
    candidates = [e for r, e in zip(rows, entries, strict=True) if _is_baseline(r, baseline) and e.per_dollar]
    head = rows[0].score
    if not candidates:
        return Group(head.division, head.benchmark, None, tuple(entries), "no baseline result in this group")
    # Several baseline results (one system in two frameworks): compare with the best, the conservative choice.
    best = max(candidates, key=lambda e: e.per_dollar or 0.0)
    note = f"best of {len(candidates)} baseline results" if len(candidates) > 1 else ""
    base = best.per_dollar or 1.0
    out = tuple(
        Entry(e.system, e.minutes, e.price, e.per_dollar, e.per_dollar / base if e.per_dollar else None, e is best,
              e.note)
        for e in entries
    )
    return Group(head.division, head.benchmark, best.system, out, note)


def compare(rows: Sequence[ResultRow], *, time_basis: str, baseline: str | None, currency: str) -> Comparison:
    """One group per benchmark × division, in the report's row order."""
    groups: dict[tuple[str | None, str], list[ResultRow]] = {}
    for row in rows:
        groups.setdefault((row.score.division, row.score.benchmark), []).append(row)
    built = tuple(_group(g, time_basis, baseline) for g in groups.values())
    if baseline is not None:
        source = f"--baseline {baseline}"
    elif any(r.price is not None and r.price.baseline for r in rows):
        source = "baseline = true in prices.toml"
    else:
        source = ""
    return Comparison(time_basis, currency, source, built)


def unknown_baseline(rows: Sequence[ResultRow], baseline: str) -> str | None:
    """A --baseline that names no system of the report is a usage error, with the nearest names."""
    if any(_is_baseline(r, baseline) for r in rows):
        return None

    names = sorted({r.score.system for r in rows} | {r.system.get("system_name") for r in rows
                                                     if r.system and r.system.readable} - {""})  # fmt: skip
    return f"--baseline {baseline!r} names no system in the report{did_you_mean(baseline, names, cutoff=0.5)}"
