"""Differential: every corpus results folder's logs, copied into a folder of raw job output (renamed job-NN.out),
get the same set-level verdicts (run count, TREE007/TREE008, the RCP codes) as the folder checked in its
organisation tree. One code path (tree/runset.py on tree/full.py) makes them agree; where they cannot, the reason
is one the raw folder cannot know (listed in `_explained`), never a silent difference."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures.differential import rounds
from mlsubmit.checker.engine.pipeline import CheckOptions, run_rounds
from mlsubmit.checker.logs.input import is_result_log
from mlsubmit.checker.tree.folders import bypass_flags, read_division

pytestmark = [pytest.mark.corpus]  # about 20 s on a loaded 2-core machine

RCP_CODES = {"TREE018", "TREE019", "TREE020", "TREE021", "TREE024"}
_COUNT = re.compile(r"^(\d+) result file\(s\) for \S+, the round asks for (\d+)$")


@dataclass(frozen=True)
class Verdict:
    count: str  # "exact", "fewer", "more"
    olympic: frozenset[str]
    rcp: frozenset[str]


def _verdict(codes: Iterable[tuple[str, str]]) -> Verdict:
    count = "exact"
    found = set()
    for code, message in codes:
        found.add(code)
        m = _COUNT.match(message)
        if code == "TREE003" and m:
            count = "fewer" if int(m.group(1)) < int(m.group(2)) else "more"
        elif code == "RUN001":
            count = "fewer"
        elif code == "RUN007":
            count = "more"
    return Verdict(count, frozenset(found & {"TREE007", "TREE008"}), frozenset(found & RCP_CODES))


def _folders(corpus: Path) -> dict[str, list[Path]]:
    """ruleset -> results/<system>/<benchmark> folders holding result logs."""
    out: dict[str, list[Path]] = {}
    for round_dir, ruleset in rounds(corpus).items():
        for folder in sorted((corpus / round_dir).glob("*/results/*/*")):
            if folder.is_dir() and any(is_result_log(p.name) for p in folder.iterdir()):
                out.setdefault(ruleset, []).append(folder)
    return out


def _raw_copy(folder: Path, dest: Path) -> None:
    dest.mkdir(parents=True)
    for k, log in enumerate(sorted(p for p in folder.iterdir() if is_result_log(p.name))):
        shutil.copyfile(log, dest / f"job-{k:02d}.out")


def _explained(folder: Path, raw_sets: int) -> str | None:
    """Why a raw copy cannot get the tree's verdict: what only the tree holds (bypass flags, the system file's
    division, power logs) or logs that do not make one set."""
    org = folder.parent.parent.parent
    written, sys_w = bypass_flags(folder)[1], bypass_flags(folder.parent)[1]
    org_params = (org / "package_checker_params").is_file()
    if written | sys_w or org_params:
        return "package_checker_params"
    if raw_sets != 1:
        return f"the logs make {raw_sets} run sets"
    if (folder / "power").is_dir():
        return "power logs"
    from mlsubmit.checker.base.targets import OrgTree

    division = read_division(OrgTree(org, str(org)), folder.parent.name)
    if division != "closed":
        return f"system file division {division!r}"
    return None


def _copies(folders: dict[str, list[Path]], tmp_path: Path) -> tuple[dict[str, list[str]], dict[str, Path]]:
    """Each folder's raw copy, and the copy one run short (`-short`), by ruleset; the folder of each copy."""
    raw: dict[str, list[str]] = {}
    where: dict[str, Path] = {}
    for ruleset, fs in folders.items():
        for i, folder in enumerate(fs):
            dest = tmp_path / ruleset / f"{i:03d}-{folder.parent.name}-{folder.name}"
            _raw_copy(folder, dest)
            raw.setdefault(ruleset, []).append(str(dest))
            where[str(dest)] = folder
            short = dest.with_name(dest.name + "-short")  # the set one run short of the tree's
            shutil.copytree(dest, short)
            max(short.iterdir()).unlink()
            if any(short.iterdir()):
                raw[ruleset].append(str(short))
    return raw, where


def test_raw_copies_get_the_trees_set_verdicts(corpus: Path, tmp_path: Path) -> None:
    folders = _folders(corpus)
    tree_paths = {r: sorted({str(f.parent.parent.parent) for f in fs}) for r, fs in folders.items()}
    raw, where = _copies(folders, tmp_path)
    base = CheckOptions(ruleset="1.0.0", jobs=0, run_select="all")
    trees = dict(zip(tree_paths, run_rounds(tree_paths, base), strict=True))
    copies = dict(zip(raw, run_rounds(raw, base), strict=True))
    same, explained, differ = 0, {}, {}
    seen: dict[str, int] = {}
    short_said = 0
    for ruleset, run in copies.items():
        for dest in (d for d in raw[ruleset] if d.endswith("-short")):
            said = [f.message for f in run.report.all_findings() if f.path == dest and f.code == "RUN001"]
            assert len(said) == 1 and said[0].endswith(" 1 more run needed"), (dest, said)
            short_said += 1
        tree_findings = [(f.path, f.code, f.message) for f in trees[ruleset].report.all_findings()]
        raw_findings = [(f.path, f.code, f.message) for f in run.report.all_findings()]
        for dest in (d for d in raw[ruleset] if not d.endswith("-short")):
            folder = where[dest]
            shown = str(folder)
            tree = _verdict((c, m) for p, c, m in tree_findings if p == shown)
            ours = [(c, m.split(": ", 1)[1]) for p, c, m in raw_findings if p == dest]
            sets = sum(1 for c, _ in ours if c in ("RUN006", "RUN004", "RUN005"))
            got = _verdict(ours)
            for part in (f"count {got.count}", *sorted(got.olympic), *sorted(got.rcp)):
                seen[part] = seen.get(part, 0) + 1
            if got == tree:
                same += 1
                continue
            why = _explained(folder, sets)
            (explained if why else differ)[str(folder.relative_to(corpus))] = (why, tree, got)
    summary = {"folders": sum(map(len, folders.values())), "same": same, "explained": len(explained),
               "differ": len(differ), "verdicts": dict(sorted(seen.items())), "one_short": short_said}
    print(json.dumps(summary))
    for name, (why, tree, got) in sorted({**explained, **differ}.items()):
        print(f"{name}: {why or 'UNEXPLAINED'}; tree {tree}; raw {got}")
    assert not differ, f"{len(differ)} folders differ without a reason: {sorted(differ)[:5]}"
    assert same >= 0.8 * summary["folders"]
    assert seen.get("TREE019", 0) > 30  # not vacuous: the RCP verdicts are compared
