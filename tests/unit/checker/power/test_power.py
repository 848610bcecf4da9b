"""Power logs: the reference power checker's verdict from the listing (against mlperf-logging's own PowerChecker on
the same folders), and the power rules the logs show (one failing and one passing case each)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.powerfix import PowerSpec, power_for, render, render_switch, write
from fixtures.treefix import build_org, resnet_runs
from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts, extract
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.power import folder as power
from mlsubmit.checker.tree.folders import bench_folders

NAMES = ["result_0", "result_1", "result_2"]
Layout = dict[str, list[str] | str]  # run folder -> files in it (or "file": the entry is a file)

LAYOUTS: dict[str, Layout] = {
    "ok": {n: ["node_0.txt"] for n in NAMES},
    "ok_with_switches": {n: ["node_0.txt", "node_1.txt", "sw_0.txt"] for n in NAMES},
    "missing_run": {"result_0": ["node_0.txt"], "result_2": ["node_0.txt"]},
    "two_missing": {"result_0": ["node_0.txt"]},
    "index_out_of_range": {**{n: ["node_0.txt"] for n in NAMES}, "result_1": ["node_1.txt"]},
    "negative_index": {**{n: ["node_0.txt"] for n in NAMES}, "result_2": ["node_-1.txt"]},
    "duplicate_index_not_caught": {n: ["node_0.txt", "node_00.txt"] for n in NAMES},
    "uneven_nodes": {**{n: ["node_0.txt"] for n in NAMES}, "result_2": ["node_0.txt", "node_1.txt"]},
    "uneven_switches": {**{n: ["node_0.txt", "sw_0.txt"] for n in NAMES}, "result_1": ["node_0.txt"]},
    "tie_goes_to_first": {"result_0": ["node_0.txt"], "result_1": ["node_0.txt", "node_1.txt"]},
    "blame_shifts_after_missing": {"result_1": ["node_0.txt"], "result_2": ["node_0.txt", "node_1.txt"],
                                   "result_0": ["node_0.txt"], "missing:result_0": "x"},
    "stray_file": {**{n: ["node_0.txt"] for n in NAMES}, "result_0": ["node_0.txt", "notes.md"]},
    "non_integer_index": {**{n: ["node_0.txt"] for n in NAMES}, "result_1": ["node_a.txt"]},
    "backup_copy": {**{n: ["node_0.txt"] for n in NAMES}, "result_1": ["node_0.txt", "node_0.txt.bak"]},
    "no_run_folder": {},
    "run_folder_is_a_file": {**{n: ["node_0.txt"] for n in NAMES}, "result_1": "file"},
}


def make_power(root: Path, layout: Layout) -> Path:
    bench = root / "results" / "sys" / "bert"
    bench.mkdir(parents=True)
    for name in NAMES:
        (bench / f"{name}.txt").write_text("", encoding="utf-8")
    power_dir = bench / "power"
    power_dir.mkdir()
    for run, files in layout.items():
        if run.startswith("missing:"):
            continue
        if files == "file":
            (power_dir / run).write_text("", encoding="utf-8")
            continue
        if "missing:" + run in layout:
            continue
        (power_dir / run).mkdir()
        for f in files:
            (power_dir / run / f).write_text("", encoding="utf-8")
    return power_dir


def reference(power_dir: Path) -> tuple[set[str], bool]:
    from mlperf_logging.package_checker.power_checker import PowerChecker

    results = sorted(str(power_dir.parent / f"{n}.txt") for n in NAMES)
    logging.disable(logging.CRITICAL)
    try:
        _, errors = PowerChecker("5.0.0").check_power(str(power_dir), results)
    except (ValueError, OSError):
        return set(), True
    finally:
        logging.disable(logging.NOTSET)
    return set(errors), False


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_listing_verdict_equals_the_reference_power_checker(tmp_path: Path, name: str) -> None:
    power_dir = make_power(tmp_path, LAYOUTS[name])
    ours = power.reference_verdict(power_dir, "power", NAMES)
    want_failed, want_crash = reference(power_dir)
    assert (ours.crash is not None) == want_crash
    if not want_crash:  # a crash is the verdict; what was failed before it is never reported
        assert ours.failed == want_failed


def codes(found: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(f.code for f in found)


def test_listing_findings(tmp_path: Path) -> None:
    cases = {
        "ok": [], "ok_with_switches": [], "duplicate_index_not_caught": [], "missing_run": ["POW001"],
        "index_out_of_range": ["POW002"], "uneven_nodes": ["POW003"], "uneven_switches": ["POW003"],
        "stray_file": ["POW004"],
    }  # fmt: skip
    for name, want in cases.items():
        verdict = power.reference_verdict(make_power(tmp_path / name, LAYOUTS[name]), "power", NAMES)
        assert codes(verdict.findings) == want, name


def test_blame_follows_the_reference_index(tmp_path: Path) -> None:
    verdict = power.reference_verdict(make_power(tmp_path, LAYOUTS["blame_shifts_after_missing"]), "p", NAMES)
    assert verdict.failed == {"result_0", "result_1"}  # result_2 has two nodes; the reference names result_1
    pow003 = next(f for f in verdict.findings if f.code == "POW003")
    assert pow003.path == "p/result_2" and "result_1.txt" in pow003.message


# --- the power rules, on a real-looking org: resnet runs and power logs written with mllog --------------------


@pytest.fixture
def org(tmp_path: Path) -> Callable[..., tuple[OrgTree, list[LogFacts]]]:
    def make(nodes: int = 1, system: dict[str, object] | None = None, **changes: object) -> tuple:  # type: ignore[type-arg]
        specs = [replace(s, minutes=1.5) for s in resnet_runs([36, 37, 37, 38, 39])]
        root = build_org(tmp_path / "G", {("pod16", "resnet"): specs})
        if system:
            import json

            path = root / "systems" / "pod16.json"
            path.write_text(json.dumps({**json.loads(path.read_text("utf-8")), **system}), encoding="utf-8")
        logs = sorted((root / "results" / "pod16" / "resnet").glob("result_*.txt"))
        for log in logs:
            power_for(log, nodes=nodes, **changes)
        tree = OrgTree(root, "G")
        shown = [f"G/results/pod16/resnet/{p.name}" for p in logs]
        facts = [replace(extract(read_log(p, s)), path=s) for p, s in zip(logs, shown, strict=True)]
        return tree, facts

    return make


def rules(tree: OrgTree, facts: list[LogFacts]) -> list[str]:
    folder = next(f for f in bench_folders(tree) if f.name == "resnet")
    found, failed = power.check_folder(tree, folder, facts, as_reference=False)
    assert not failed
    return sorted({f.code for f in found})


def test_clean_power_logs_have_no_findings(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    assert rules(*org()) == []
    assert rules(*org(nodes=2, system={"number_of_nodes": "2"}, switches=1)) == []


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"omit": ("power_measurement_start",)}, "POW011"),
        ({"omit": ("power_measurement_stop",)}, "POW012"),
        ({"margin_ms": -5000}, "POW013"),  # starts 5 s after run_start, stops 5 s before run_stop
        ({"period_ms": 2000}, "POW014"),
        ({"efficiency": 1.2}, "POW017"),
        ({"efficiency": "high"}, "POW017"),
    ],
)
def test_each_rule_fails_its_case(org: Callable[..., tuple], changes: dict[str, object], code: str) -> None:  # type: ignore[type-arg]
    assert code in rules(*org(**changes))


def test_short_runs_need_sixty_readings(org: Callable[..., tuple], tmp_path: Path) -> None:  # type: ignore[type-arg]
    tree, facts = org()
    run = tree.root / "results" / "pod16" / "resnet" / "power" / "result_0" / "node_0.txt"
    start, stop = facts[0].run_start_ms, facts[0].run_stop.time_ms
    write(run, render(PowerSpec(start_ms=int(start) - 1000, stop_ms=int(start) + 50_000, period_ms=1000)))
    found = rules(tree, facts)
    assert "POW015" in found and "POW013" in found and stop > start  # 51 readings; it stopped before run_stop


def test_no_readings_at_all_is_an_error(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    tree, facts = org(readings=[])
    folder = next(f for f in bench_folders(tree) if f.name == "resnet")
    found, _ = power.check_folder(tree, folder, facts, as_reference=False)
    gaps = [f for f in found if f.code == "POW014"]
    assert len(gaps) == 5 and all(f.severity.value == "error" and "no power reading" in f.message for f in gaps)


def test_readings_must_be_watts(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    tree, facts = org()
    run = tree.root / "results" / "pod16" / "resnet" / "power" / "result_1" / "node_0.txt"
    start, stop = int(facts[1].run_start_ms) - 1000, int(facts[1].run_stop.time_ms) + 1000
    readings = [(t, "4500 W" if t == start + 5000 else 4500.0) for t in range(start + 1000, stop + 1, 1000)]
    write(run, render(PowerSpec(start_ms=start, stop_ms=stop, readings=readings)))
    assert rules(tree, facts) == ["POW016"]


def test_every_node_measured_and_interconnect_estimated(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    assert rules(*org(nodes=1, system={"number_of_nodes": "2"})) == ["POW018", "POW019"]
    assert rules(*org(nodes=2, system={"number_of_nodes": 2})) == ["POW019"]


def test_switch_log_needs_an_estimate(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    tree, facts = org()
    folder = tree.root / "results" / "pod16" / "resnet" / "power"
    for i in range(5):
        write(folder / f"result_{i}" / "sw_0.txt", render_switch(750.0, 0))
    assert rules(tree, facts) == []
    write(folder / "result_3" / "sw_0.txt", render_switch(None, 0))
    assert rules(tree, facts) == ["POW020"]


def test_names_the_reference_lets_through(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    tree, facts = org()
    folder = tree.root / "results" / "pod16" / "resnet" / "power"
    for i in range(5):  # every run alike, so the reference's count check passes too
        (folder / f"result_{i}" / "node_0.txt").rename(folder / f"result_{i}" / "node_00.txt")
    assert rules(tree, facts) == ["POW002"]


def test_unreadable_power_log(org: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    tree, facts = org()
    path = tree.root / "results" / "pod16" / "resnet" / "power" / "result_2" / "node_0.txt"
    path.write_bytes(path.read_bytes() + b':::MLLOG {"key": "power_reading", broken\n')
    assert "POW010" in rules(tree, facts)
