"""Energy to train: per node and switch log against mlperf-logging's summarizer functions on the same files, the
olympic mean over the runs the score keeps, and the energy column in every report format."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.powerfix import PowerSpec, power_for, render, render_switch, write
from fixtures.treefix import build_org, resnet_runs
from mlsubmit.checker.power.energy import RunEnergy, node_energy, switch_energy
from mlsubmit.checker.power.power_log import read_power_log

from mlsubmit.core.support.schema_loader import load_schema, validator
from mlsubmit.report.scored_energy import olympic_energy
from mlsubmit.report.scoring import RunResult

Cli = Callable[..., tuple[int, str, str]]
TTT = 6000.0  # ms

NODE_CASES: dict[str, PowerSpec] = {
    "regular": PowerSpec(start_ms=0, stop_ms=3000, readings=[(1000, 100.0), (2000, 200.0), (3000, 300.0)],
                         efficiency=0.5),
    "readings_outside_the_window": PowerSpec(start_ms=1000, stop_ms=3000, efficiency=1.0,
                                             readings=[(500, 9e9), (2000, 100.0), (3000, 300), (4000, 9e9)]),
    "no_stop": PowerSpec(start_ms=0, stop_ms=0, readings=[(1000, 100.0), (2500, 200.0)],
                         omit=("power_measurement_stop",)),
    "out_of_order": PowerSpec(start_ms=0, stop_ms=3000, readings=[(3000, 300.0), (1000, 100.0), (2000, 200)]),
    "no_efficiency": PowerSpec(start_ms=0, stop_ms=4000, readings=[(1000, 50.0), (4000, 150.0)],
                               omit=("conversion_eff",)),
    "many": PowerSpec(start_ms=10_000, stop_ms=400_000, watts=7321.5, period_ms=997),
}  # fmt: skip


def reference_node(path: Path, ttt: float) -> float:
    from mlperf_logging.compliance_checker.mlp_parser import parse_file
    from mlperf_logging.result_summarizer.result_summarizer import _compute_power_node

    loglines, _ = parse_file(str(path), "5.0.0")
    return float(_compute_power_node(loglines, ttt))


@pytest.mark.parametrize("name", sorted(NODE_CASES))
def test_node_energy_equals_the_summarizer(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / "node_0.txt", render(NODE_CASES[name]))
    ours = node_energy(read_power_log(path, "node_0.txt"), TTT)
    assert ours.joules == pytest.approx(reference_node(path, TTT), rel=1e-12)


def test_node_energy_by_hand(tmp_path: Path) -> None:
    path = write(tmp_path / "n.txt", render(NODE_CASES["regular"]))
    # (100 + 200 + 300) W x 1 s over a 3 s window = 200 W, over a 6 s run = 1200 J, at 50 % efficiency
    assert node_energy(read_power_log(path, "n"), TTT) == RunEnergy(600.0)


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (PowerSpec(start_ms=0, stop_ms=3000, omit=("power_measurement_start",)), "no power_measurement_start"),
        (PowerSpec(start_ms=0, stop_ms=0, readings=[]), "zero length"),
        (PowerSpec(start_ms=0, stop_ms=2000, readings=[(1000, "900 W")]), "is not a number"),
    ],
)
def test_no_energy_where_the_summarizer_stops(tmp_path: Path, spec: PowerSpec, reason: str) -> None:
    got = node_energy(read_power_log(write(tmp_path / "n.txt", render(spec)), "n"), TTT)
    assert got.joules is None and reason in (got.reason or "")


def test_switch_energy_equals_the_summarizer(tmp_path: Path) -> None:
    from mlperf_logging.compliance_checker.mlp_parser import parse_file
    from mlperf_logging.result_summarizer.result_summarizer import _compute_power_sw

    path = write(tmp_path / "sw_0.txt", render_switch(812.5, 0, efficiency=0.9))
    want = _compute_power_sw(parse_file(str(path), "5.0.0")[0], TTT)
    assert switch_energy(read_power_log(path, "sw"), TTT).joules == pytest.approx(want) == 0.9 * 812.5 * 6


def _run(i: int, minutes: float, counted: bool = True) -> RunResult:
    return RunResult(path=f"r{i}", minutes=minutes, status="success", converged=True, compliant=counted,
                     reason=None if counted else "fails")  # fmt: skip


def test_olympic_energy_follows_time_to_train() -> None:
    runs = [_run(0, 10), _run(1, 8), _run(2, 12), _run(3, 9), _run(4, 11)]
    energy = {f"r{i}": RunEnergy(float(e)) for i, e in enumerate([100, 500, 300, 200, 400])}
    # dropped: r1 (fastest, 500 J) and r2 (slowest, 300 J); kept r0, r3, r4
    assert olympic_energy(runs, energy, "resnet") == pytest.approx((100 + 200 + 400) / 3)
    runs[2] = _run(2, 12, counted=False)  # a run that does not count stands in for the slowest
    assert olympic_energy(runs, energy, "resnet") == pytest.approx((100 + 200 + 400) / 3)
    runs[4] = _run(4, 11, counted=False)
    assert olympic_energy(runs, energy, "resnet") is None
    assert olympic_energy(runs[:2] + runs[3:4], {**energy, "r3": RunEnergy(None, "x")}, "resnet") is None


# --- the report, in every format ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def powered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    org = build_org(tmp_path_factory.mktemp("energy") / "Graphcore", {("pod16", "resnet"): resnet_runs(
        [36, 37, 37, 38, 39])})  # fmt: skip
    for i, log in enumerate(sorted((org / "results" / "pod16" / "resnet").glob("result_*.txt"))):
        power_for(log, nodes=2, watts=4000.0 + 100 * i)
    return org


def test_report_formats_carry_the_energy(powered: Path, run_cli: Cli, tmp_path: Path) -> None:
    code, out, err = run_cli("report", "--ruleset", "1.0.0", "--format", "json", powered)
    assert code == 0, err
    data = json.loads(out)
    validator(load_schema("report-results.schema.json")).validate(data)
    result = data["results"][0]
    joules = result["energy"]["joules"]
    kept = [r["energy_joules"] for r in result["runs"] if not r["olympic_dropped"]]
    assert joules == pytest.approx(sum(kept) / len(kept)) and result["energy"]["unit"] == "J"
    _, text, _ = run_cli("report", "--ruleset", "1.0.0", powered)
    assert "energy_kwh" in text.splitlines()[0] and f"{joules / 3.6e6:,.2f}" in text  # a reader's unit
    _, table, _ = run_cli("report", "--ruleset", "1.0.0", "--format", "csv", powered)
    rows = list(csv.DictReader(io.StringIO(table)))
    assert float(rows[0]["energy_joules"]) == pytest.approx(joules, abs=1e-4)
    _, md, _ = run_cli("report", "--ruleset", "1.0.0", "--format", "markdown", powered)
    assert "energy_joules" in md.splitlines()[0] and f"{joules:.2f}" in md
    page = tmp_path / "r.html"
    run_cli("report", "--ruleset", "1.0.0", "--html", page, powered)
    assert "<th>energy (kWh)</th>" in page.read_text("utf-8") and f"{joules / 3.6e6:,.2f}" in page.read_text("utf-8")


def test_no_power_no_energy_column(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs([36, 37, 37, 38, 39])})
    _, text, _ = run_cli("report", "--ruleset", "1.0.0", org)
    _, out, _ = run_cli("report", "--ruleset", "1.0.0", "--format", "json", org)
    assert "energy" not in text and "energy" not in json.loads(out)["results"][0]


def test_an_energy_past_a_floats_range_is_no_figure(tmp_path: Path) -> None:
    """Finite readings whose product overflows: no Infinity in a report (issue 26)."""
    from mlsubmit.checker.power.energy import run_energy

    folder = tmp_path / "power" / "result_0"
    folder.mkdir(parents=True)
    spec = PowerSpec(start_ms=0, stop_ms=1, readings=[(1, 1.5e308)], efficiency=1.0)
    write(folder / "node_0.txt", render(spec))
    found = run_energy(folder, "power/result_0", 1e300)
    assert found.joules is None and "range" in (found.reason or "")
