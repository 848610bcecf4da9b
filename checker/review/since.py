"""A tree against the same organisation's tree of the previous round: system descriptions carried unchanged or
changed, benchmarks gone, new or retired this round (rounds/benchmarks.yaml), hyperparameters that moved per
system and benchmark (a system renamed since is the same system, review/identity.py; a benchmark renamed since is
the same benchmark, rounds/history.py), and the closed hyperparameter table's rules that changed between the two rounds
(hyperparameters/table.py). Everything said is information for the review, never a verdict on its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.review.borrow import hyperparameter_keys, same_value
from mlsubmit.checker.review.borrowing_rules import rules_for
from mlsubmit.checker.review.entries import entry_folders_all, json_type, read_entry
from mlsubmit.checker.review.identity import closest, hardware
from mlsubmit.checker.rounds import benchmarks, history
from mlsubmit.checker.rounds.detect import round_name, version
from mlsubmit.checker.systems.descriptions import summarize
from mlsubmit.checker.systems.jsonfile import read_json
from mlsubmit.checker.systems.knowledge import spelling_key

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Location


def _systems(tree: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder = tree / "systems"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        doc = read_json(path)
        if doc.decoded:  # else `check` reports the unreadable system file
            out[path.stem] = doc.data
    return out


def renamed_systems(before: Path, now: Path) -> dict[str, tuple[str, str]]:
    """Last round's system files with no namesake this round, each to a file of this round with no namesake last
    round that is the same system (review/identity.py) at the same node count, the closest first and the same
    framework before another: old name -> (new name, the fields matched). One to one."""
    old, new = _systems(before), _systems(now)
    left_new = sorted(set(new) - set(old))
    out: dict[str, tuple[str, str]] = {}
    for name in sorted(set(old) - set(new)):
        nodes = summarize(old[name], name).nodes
        free = [n for n in left_new if summarize(new[n], n).nodes == nodes]
        found, match = closest(hardware(old[name], name, org=before.name),
                               [(hardware(new[n], n, org=now.name), n) for n in free])
        if not found or match is None:
            continue
        framework = _framework(old[name])
        pick = next((n for n in found if _framework(new[n]) == framework), found[0])
        out[name] = (pick, match.say())
        left_new.remove(pick)
    return out


def _framework(data: Any) -> str:
    value = data.get("framework") if isinstance(data, dict) else None
    return spelling_key(value.split()[0]) if isinstance(value, str) and value.split() else ""


def _changed(a: Any, b: Any) -> str:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return " -> ".join(f"a JSON {json_type(d)}" for d in (a, b))
    return ", ".join(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)))


def system_findings(before: Path, now: Path) -> Iterator[Finding]:
    old, new = _systems(before), _systems(now)
    for name in sorted(set(old) & set(new)):
        path = str(now / "systems" / f"{name}.json")
        if old[name] == new[name]:
            yield finding("REV030", path, f"systems/{name}.json is carried unchanged from the previous round",
                          related=[Location(str(before / "systems" / f"{name}.json"))])
            continue
        yield finding("REV031", path, f"systems/{name}.json changed since the previous round: "
                      f"{_changed(old[name], new[name])}")
    for name, (to, matched) in sorted(renamed_systems(before, now).items()):
        changed = _changed(old[name], new[to])
        yield finding("REV057", str(now / "systems" / f"{to}.json"), f"systems/{to}.json is last round's "
                      f"systems/{name}.json under another name (the same system by {matched}); changed: "
                      f"{changed or 'nothing else'}", related=[Location(str(before / "systems" / f"{name}.json"))])


def _entries(tree: Path) -> dict[tuple[str, str], Path]:
    return {(p.parent.name, p.name): p for p in entry_folders_all([tree])}


def _now_name(bench: str, rulesets: tuple[str, str] | None) -> str:
    """The benchmark's name in the current round (v4.1's ssd is v5.0's retinanet)."""
    return history.benchmark_fate(bench, *rulesets).name if rulesets is not None else bench


def benchmark_findings(before: Path, now: Path, ruleset: str,
                       rulesets: tuple[str, str] | None = None) -> Iterator[Finding]:
    old = {b for _, b in _entries(before)}
    new = {b for _, b in _entries(now)}
    allowed = set(benchmarks.allowed(ruleset))
    renamed = {b: _now_name(b, rulesets) for b in old}
    for bench in sorted(b for b in old if renamed[b] not in new):
        also = f" ({renamed[bench]} this round)" if renamed[bench] != bench else ""
        if allowed and renamed[bench] not in allowed:
            yield finding("REV034", str(now), f"{bench}: submitted last round, not a benchmark of {ruleset} "
                          "(retired)")
        else:
            yield finding("REV032", str(now), f"{bench}{also}: submitted last round, not this round")
    for bench in sorted(new - set(renamed.values())):
        yield finding("REV033", str(now), f"{bench}: new in this tree since the previous round")


def moved_findings(before: Path, now: Path, rulesets: tuple[str, str]) -> Iterator[Finding]:
    """Per results/<system>/<benchmark> in both trees, each hyperparameter whose first logged value changed: a
    finding each, so a folder where many moved is a list, not one long line."""
    old, new = _entries(before), _entries(now)
    systems = {name: to for name, (to, _) in renamed_systems(before, now).items()}
    for key in sorted(old):
        now_key = (systems.get(key[0], key[0]), _now_name(key[1], rulesets))
        if now_key not in new:
            continue
        a, b = read_entry(old[key], limit=1), read_entry(new[now_key], limit=1)
        ra, rb = rules_for(rulesets[0]), rules_for(rulesets[1])
        if ra is None or rb is None:
            continue
        keys = hyperparameter_keys(a, ra, rulesets[0]) | hyperparameter_keys(b, rb, rulesets[1])
        for k in sorted(keys):
            va, vb = (e.value(k) for e in (a, b))
            if not same_value(va.value if va else None, vb.value if vb else None):
                # one finding per hyperparameter: a folder's moves on one line reached 19 values and ~1,000 characters
                shown = "/".join(key) if now_key == key else f"{'/'.join(key)} -> {'/'.join(now_key)}"
                yield finding("REV035", b.first.path, f"{shown}: {k} moved since the previous round: "
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


def since_counts(before: str, now: str, rulesets: tuple[str, str] | None = None) -> tuple[int, int, int]:
    """What `check_since` compares: system descriptions in both trees (a renamed one too), entries in both (under
    a renamed system or benchmark too), benchmarks in either."""
    a, b = Path(before), Path(now)
    entries_a, entries_b = _entries(a), _entries(b)
    benches = {bench for _, bench in entries_a} | {bench for _, bench in entries_b}
    renamed = {name: to for name, (to, _) in renamed_systems(a, b).items()}
    systems = len(set(_systems(a)) & set(_systems(b))) + len(renamed)
    kept = {(renamed.get(s, s), _now_name(bench, rulesets)) for s, bench in entries_a}
    return systems, len(kept & set(entries_b)), len(benches)


def check_since(before: str, now: str, rulesets: tuple[str, str]) -> list[Finding]:
    """Everything that changed; a usage error when the previous tree is of a later round (swapped trees would call
    the newer round's benchmarks retired)."""
    if version(rulesets[0]) > version(rulesets[1]):
        raise UsageError(f"review since: --previous is of round {round_name(rulesets[0])}, later than --current's "
                         f"{round_name(rulesets[1])}; give last round's tree as --previous")
    a, b = Path(before), Path(now)
    return [*system_findings(a, b), *benchmark_findings(a, b, rulesets[1], rulesets), *moved_findings(a, b, rulesets),
            *rule_findings(b, rulesets)]
