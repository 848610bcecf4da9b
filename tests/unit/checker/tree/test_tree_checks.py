"""The full profile's tree checks, each switchable on its own (checker/engine/checks.py): on a tree that breaks one
rule of every check, the full profile reports each check's code; a profile without a check reports none of that
check's codes and every other finding as before (what one check needs of another, such as the runs the power
checker fails for the olympic tolerance, is a shared fact, not the other check); a clean tree passes each."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fixtures.powerfix import power_for
from fixtures.synth import RunSpec
from fixtures.treefix import build_org, resnet_runs
from mlsubmit.checker import CheckOptions, run_check
from mlsubmit.checker.engine import checks
from mlsubmit.checker.policy import profiles

from mlsubmit.core.findings import Severity

# check -> the code its broken rule gives in the broken tree (config-names: in the 6.1 tree)
BROKEN = {
    "layout": "TREE026",  # a folder that is not part of a submission
    "results-folders": "TREE004",  # a file that is not a result log in a results folder
    "power": "POW001",  # power logs for one run of five
    "init-time": "TREE023",  # 45 minutes of initialisation in 1.0 (30 allowed)
    "config-names": "TREE050",  # config_filename names no submitted file
    "seeds": "TREE015",  # two runs log the same seed
    "eval-cadence": "TREE051",  # a gap of 5 epochs between ResNet evaluations
    "convergence-rcp": "TREE018",  # converged faster than the RCPs allow
    "implementations": "TREE011",  # no README.md
    "hygiene": "TREE040",  # editor junk in the code
}
TREE_CHECKS = sorted(BROKEN)
Found = set[tuple[str, str, int | None, str]]


def _broken(root: Path) -> Path:
    runs = resnet_runs([3, 3, 3, 3, 3])
    runs[1] = replace(runs[1], init_minutes=45.0)
    runs[2].extra = [("eval_accuracy", 0.7, {"epoch_num": 8})]  # the runs evaluate up to epoch 3: 3 -> 8
    runs[3] = replace(runs[3], seed=runs[4].seed)
    org = build_org(root, {("pod16", "resnet"): runs}, code=())
    (org / "notes").mkdir()
    (org / "results" / "pod16" / "resnet" / "notes.txt").write_text("kept by hand\n", encoding="utf-8")
    code = org / "benchmarks" / "resnet" / "implementations" / "ipu"
    code.mkdir(parents=True)
    (code / "run_and_time.sh").write_text("#!/bin/bash\npython train.py\n", encoding="utf-8")
    (code / ".DS_Store").write_bytes(b"\0")
    power_for(org / "results" / "pod16" / "resnet" / "result_0.txt")
    return org


def _broken_6_1(root: Path) -> Path:
    spec = RunSpec(benchmark="llama31_8b", ruleset="6.1.0", raw_output=True)  # logs config_filename "config.yaml"
    return build_org(root, {("sys", "llama31_8b"): [spec]})


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    root = tmp_path_factory.mktemp("trees")
    clean = build_org(root / "Clean", {("pod16", "resnet"): resnet_runs([35, 36, 37, 35, 36])})
    return {"broken": (_broken(root / "Broken"), "1.0.0"), "broken-6.1": (_broken_6_1(root / "Broken61"), "6.1.0"),
            "clean": (clean, "1.0.0")}


def _tree_of(name: str) -> str:
    return "broken-6.1" if name == "config-names" else "broken"


@pytest.fixture
def without() -> Iterator[Any]:
    """Makes the full profile leave out one check at every stage (the profile file as read, less that name)."""
    shipped = profiles._file

    def leave_out(name: str) -> None:
        def read(profile: str) -> Any:
            data = copy.deepcopy(shipped(profile))
            if profile == "full":
                data["checks"] = {stage: [c for c in names if c != name] for stage, names in data["checks"].items()}
            return data

        profiles._file = read  # type: ignore[assignment]
        profiles.load.cache_clear()

    yield leave_out
    profiles._file = shipped  # type: ignore[assignment]
    profiles.load.cache_clear()


def _found(tree: tuple[Path, str]) -> Found:
    run = run_check([str(tree[0])], CheckOptions(ruleset=tree[1]))
    return {(f.code, f.path, f.line, f.message) for f in run.report.all_findings()}


def _codes(found: Found) -> set[str]:
    return {code for code, *_ in found}


@pytest.fixture(scope="module")
def full(trees: dict[str, tuple[Path, str]]) -> dict[str, Found]:
    return {name: _found(tree) for name, tree in trees.items()}


def test_every_tree_check_is_registered_with_its_codes_and_the_full_profile_runs_it() -> None:
    spec = checks.plan("full")
    assert set(TREE_CHECKS) <= set(spec.names("org"))
    for name in TREE_CHECKS:
        assert BROKEN[name] in checks.check(name, "org").codes


@pytest.mark.parametrize("name", TREE_CHECKS)
def test_the_full_profile_reports_each_checks_broken_rule(name: str, full: dict[str, Found]) -> None:
    assert BROKEN[name] in _codes(full[_tree_of(name)])


@pytest.mark.parametrize("name", TREE_CHECKS)
def test_a_profile_without_a_check_reports_none_of_its_codes_and_all_else(
    name: str, trees: dict[str, tuple[Path, str]], full: dict[str, Found], without: Any
) -> None:
    without(name)
    tree = _tree_of(name)
    found = _found(trees[tree])
    own = checks.check(name, "org").codes - checks.UNREADABLE
    assert _codes(found) & own == set()
    assert found == {f for f in full[tree] if f[0] not in own}  # the other checks' findings, unchanged


@pytest.mark.parametrize("name", TREE_CHECKS)
def test_a_clean_tree_passes_each_check(name: str, full: dict[str, Found]) -> None:
    own = checks.check(name, "org").codes
    assert _codes(full["clean"]) & own <= {"TREE019"}  # TREE019: the RCP check passed (info)


def test_the_olympic_tolerance_counts_the_power_failures_without_the_power_check(
    trees: dict[str, tuple[Path, str]], without: Any
) -> None:
    without("power")
    found = run_check([str(trees["broken"][0])], CheckOptions(ruleset="1.0.0")).report.all_findings()
    (olympic,) = [f for f in found if f.code == "TREE007"]
    # result_1's own error, and the four runs without power logs (its log errors alone would be one, accepted)
    assert olympic.severity is Severity.ERROR and olympic.message.startswith("4 runs do not comply")
    assert not any(f.code.startswith("POW") for f in found)


def test_a_profile_naming_an_unregistered_check_still_fails_its_plan(without: Any) -> None:
    shipped = profiles._file

    def read(profile: str) -> Any:
        data = copy.deepcopy(shipped(profile))
        data["checks"]["org"] = [*data["checks"]["org"], "tree"]  # the one tree check of before
        return data

    profiles._file = read  # type: ignore[assignment]
    profiles.load.cache_clear()
    with pytest.raises(KeyError):
        checks.plan("full")
