"""A tree against the same organisation's tree of the previous round: system descriptions carried unchanged or
changed, benchmarks gone, new or retired this round (rounds/benchmarks.yaml), hyperparameters that moved per
system and benchmark, and the closed hyperparameter table's rules that changed between the two rounds
(hyperparameters/table.py). Everything said is information for the review, never a verdict on its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.review.borrow import equal, hyperparameter_keys
from mlsubmit.checker.review.entries import entry_folders_all, json_type, read_entry
from mlsubmit.checker.review.rules import rules_for
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.detect import round_name
from mlsubmit.checker.systems.jsonfile import read_json
from mlsubmit.checker.tree.params import version

from mlsubmit.codes import finding
from mlsubmit.errors import UsageError
from mlsubmit.findings import Finding, Location


def _systems(tree: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder = tree / "systems"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        doc = read_json(path)
        if doc.decoded:  # else `check` reports the unreadable system file
            out[path.stem] = doc.data
    return out


def system_findings(before: Path, now: Path) -> Iterator[Finding]:
    old, new = _systems(before), _systems(now)
    for name in sorted(set(old) & set(new)):
        path = str(now / "systems" / f"{name}.json")
        if old[name] == new[name]:
            yield finding("REV030", path, f"systems/{name}.json is carried unchanged from the previous round",
                          related=[Location(str(before / "systems" / f"{name}.json"))])
            continue
        if not (isinstance(old[name], dict) and isinstance(new[name], dict)):
            kinds = " -> ".join(f"a JSON {json_type(d)}" for d in (old[name], new[name]))
            yield finding("REV031", path, f"systems/{name}.json changed since the previous round: {kinds}")
            continue
        a, b = old[name], new[name]
        changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        yield finding("REV031", path, f"systems/{name}.json changed since the previous round: {', '.join(changed)}")


def _entries(tree: Path) -> dict[tuple[str, str], Path]:
    return {(p.parent.name, p.name): p for p in entry_folders_all([tree])}


def benchmark_findings(before: Path, now: Path, ruleset: str) -> Iterator[Finding]:
    old = {b for _, b in _entries(before)}
    new = {b for _, b in _entries(now)}
    allowed = set(benchmarks.allowed(ruleset))
    for bench in sorted(old - new):
        if allowed and bench not in allowed:
            yield finding("REV034", str(now), f"{bench}: submitted last round, not a benchmark of {ruleset} "
                          "(retired)")
        else:
            yield finding("REV032", str(now), f"{bench}: submitted last round, not this round")
    for bench in sorted(new - old):
        yield finding("REV033", str(now), f"{bench}: new in this tree since the previous round")


def moved_findings(before: Path, now: Path, rulesets: tuple[str, str]) -> Iterator[Finding]:
    """Per results/<system>/<benchmark> in both trees, each hyperparameter whose first logged value changed: a
    finding each, so a folder where many moved is a list, not one long line."""
    old, new = _entries(before), _entries(now)
    for key in sorted(set(old) & set(new)):
        a, b = read_entry(old[key], limit=1), read_entry(new[key], limit=1)
        ra, rb = rules_for(rulesets[0]), rules_for(rulesets[1])
        if ra is None or rb is None:
            continue
        keys = hyperparameter_keys(a, ra, rulesets[0]) | hyperparameter_keys(b, rb, rulesets[1])
        for k in sorted(keys):
            va, vb = (e.value(k) for e in (a, b))
            if not equal(va.value if va else None, vb.value if vb else None):
                # one finding per hyperparameter: a folder's moves on one line reached 19 values and ~1,000 characters
                yield finding("REV035", b.first.path, f"{key[0]}/{key[1]}: {k} moved since the previous round: "
                              f"{va.value if va else 'not logged'!r} -> {vb.value if vb else 'not logged'!r}",
                              related=[Location(a.first.path)])


def rule_findings(now: Path, rulesets: tuple[str, str]) -> Iterator[Finding]:
    """The closed table's rows that differ between the rounds, for the benchmarks this tree submits."""
    ta, tb = table_for(rulesets[0]), table_for(rulesets[1])
    if ta is None or tb is None or ta.round == tb.round:
        return
    for bench in sorted({b for _, b in _entries(now)}):
        rows_a = {r.name: r for r in ta.benchmarks.get(ta.table_name(bench), ())}
        rows_b = {r.name: r for r in tb.benchmarks.get(tb.table_name(bench), ())}
        if not rows_a:
            continue  # a benchmark new to the round: REV033 says it, every row would be "added"
        said = [f"{n}: added" for n in sorted(set(rows_b) - set(rows_a))]
        said += [f"{n}: removed" for n in sorted(set(rows_a) - set(rows_b))]
        said += [f"{n}: {dict(rows_a[n].constraint)} -> {dict(rows_b[n].constraint)}" for n in sorted(
            set(rows_a) & set(rows_b)) if dict(rows_a[n].constraint) != dict(rows_b[n].constraint)]
        if said:
            yield finding("REV036", str(now), f"{bench}: closed hyperparameter rules changed between {ta.round} and "
                          f"{tb.round}: {'; '.join(said)}")


def since_counts(before: str, now: str) -> tuple[int, int, int]:
    """What `check_since` compares: system descriptions in both trees, entries in both, benchmarks in either."""
    a, b = Path(before), Path(now)
    entries_a, entries_b = _entries(a), _entries(b)
    benches = {bench for _, bench in entries_a} | {bench for _, bench in entries_b}
    return len(set(_systems(a)) & set(_systems(b))), len(set(entries_a) & set(entries_b)), len(benches)


def check_since(before: str, now: str, rulesets: tuple[str, str]) -> list[Finding]:
    """Everything that changed; a usage error when the previous tree is of a later round (swapped trees would call
    the newer round's benchmarks retired)."""
    if version(rulesets[0]) > version(rulesets[1]):
        raise UsageError(f"review since: --previous is of round {round_name(rulesets[0])}, later than --current's "
                         f"{round_name(rulesets[1])}; give last round's tree as --previous")
    a, b = Path(before), Path(now)
    return [*system_findings(a, b), *benchmark_findings(a, b, rulesets[1]), *moved_findings(a, b, rulesets),
            *rule_findings(b, rulesets)]
