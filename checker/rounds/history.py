"""Between training rounds, from checker/tables/round-history.yaml: the benchmarks that changed name (v4.1's ssd
and gnn are v5.0's retinanet and rgat), a benchmark's fate in a later round (the same, renamed or retired: the
rulesets' own lists, rounds.benchmarks), and the Preview clause's 140 days between two rounds' dates
(submission_rules.adoc §Results categories L726, §Preview Systems L753)."""

from __future__ import annotations

import datetime
import functools
import importlib.resources
from dataclasses import dataclass
from typing import Any

from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.detect import round_name, version

from mlsubmit.core.support.datafiles import load_validated

PREVIEW_DAYS = 140  # SR L726, L753: "in the next submission after 140 days ..., whichever is longer"


@functools.cache
def _data() -> dict[str, Any]:
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/round-history.yaml")
    data: dict[str, Any] = load_validated(entry, "round-history.schema.json", what="tables/round-history.yaml")
    return data


@dataclass(frozen=True)
class Fate:
    """What became of a benchmark of one ruleset in a later one."""

    kind: str  # "same", "renamed", "retired" or "unknown" (the later ruleset's list is not known)
    name: str  # its name in the later ruleset (the old name when retired or unknown)
    source: str = ""  # for a rename: where the data says so

    @property
    def compatible(self) -> bool:
        """Compared in the later round: the same benchmark under its name or another (SR L753 "Compatible")."""
        return self.kind != "retired"


def _renamed(benchmark: str, before: str, after: str) -> tuple[str, str]:
    """The benchmark's name in ruleset `after`, following every rename between the two; and the sources."""
    name, sources = benchmark, []
    for rename in sorted(_data()["renames"], key=lambda r: version(r["in"])):
        if rename["from"] == name and version(before) < version(rename["in"]) <= version(after):
            name = rename["to"]
            sources.append(f"{rename['from']} -> {rename['to']} in {round_name(rename['in'])}: {rename['source']}")
    return name, "; ".join(sources)


def benchmark_fate(benchmark: str, before: str, after: str) -> Fate:
    """The fate in ruleset `after` of a benchmark of ruleset `before`."""
    name, source = _renamed(benchmark, before, after)
    listed = benchmarks.allowed(after)
    if not listed:
        return Fate("unknown", benchmark)
    if name not in listed:
        return Fate("retired", benchmark)
    return Fate("renamed" if name != benchmark else "same", name, source)


def former_names(benchmark: str) -> set[str]:
    """Every name the benchmark had before (retinanet -> {ssd})."""
    found: set[str] = set()
    frontier = {benchmark}
    while frontier:
        frontier = {r["from"] for r in _data()["renames"] if r["to"] in frontier} - found
        found |= frontier
    return found


@dataclass(frozen=True)
class RoundDate:
    round: str
    day: datetime.date
    kind: str  # "submitted" or "published"


def _date(round_: str, kind: str) -> RoundDate | None:
    row = _data()["rounds"].get(round_name(round_))
    text = row.get(kind) if row else None
    return RoundDate(round_name(round_), datetime.date.fromisoformat(text), kind) if text else None


def known_rounds() -> list[str]:
    """The rounds the data holds, oldest first ("2.1", "3.0", ...)."""
    return sorted(_data()["rounds"], key=version)


def next_round(round_: str) -> str | None:
    later = [r for r in known_rounds() if version(r) > version(round_name(round_))]
    return later[0] if later else None


@dataclass(frozen=True)
class Due:
    """The round in which an Available result of a Preview of `preview_round` is due, and why."""

    preview_round: str
    round: str
    days: int | None  # from the Preview round to the next one; None when the dates are not known
    kind: str  # which dates were compared: "submitted" or "published"

    @property
    def postponed(self) -> bool:
        """The next round came less than 140 days later, so the result is due a round after it."""
        return self.days is not None and self.days < PREVIEW_DAYS

    def explain(self) -> str:
        if self.days is None:
            return f"no dates for round {self.preview_round} and the next one in the data"
        words = "submission deadlines" if self.kind == "submitted" else "publication dates (as the deadlines)"
        nxt = next_round(self.preview_round)
        return (f"round {nxt} came {self.days} days after round {self.preview_round} by their {words}, "
                f"{'less than' if self.postponed else 'at least'} {PREVIEW_DAYS} days")


def due_round(preview_round: str) -> Due | None:
    """SR L726: Available "in time for the next submission or in the next submission after 140 days, whichever
    is longer". None when the data knows no round after `preview_round`."""
    this = round_name(preview_round)
    nxt = next_round(this)
    if nxt is None:
        return None
    for kind in ("submitted", "published"):
        a, b = _date(this, kind), _date(nxt, kind)
        if a is not None and b is not None:
            days = (b.day - a.day).days
            later = next_round(nxt) if days < PREVIEW_DAYS else nxt
            return Due(this, later or nxt, days, kind)
    return Due(this, nxt, None, "")
