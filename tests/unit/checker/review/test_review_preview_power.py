"""review preview, power-normalised (submission_rules.adoc §Preview Systems L753, last sentence): where both results
have power logs, "equal or better" is energy to train with the same 2 %; a Preview with power against an Available
result without an energy figure is compared in time and REV023 says why. Trees and power logs written with mllog."""

from __future__ import annotations

from pathlib import Path

from fixtures.powerfix import power_for
from fixtures.synth_org import ROUND_MS, runs, system, write_org
from mlsubmit.checker.review.preview import check_preview

from mlsubmit.core.findings import Finding


def _first_ms(status: str) -> int:
    """The Available runs are of the next round: not the Preview's own runs (REV056)."""
    return 1_620_000_000_000 + (0 if "preview" in status.lower() else ROUND_MS)


def _tree(root: Path, status: str, minutes: float, watts: float | None) -> str:
    """An IPU-POD16 bert entry of 5 runs of `minutes`; power logs at a steady `watts` (one node, a reading every
    4 s, efficiency 1, so a run's energy is watts x time to train) unless None."""
    write_org(root, {"pod16": system(status=status, system_name="IPU-POD16", number_of_nodes="1")},
              {("pod16", "bert"): runs([minutes] * 5, first_ms=_first_ms(status))})
    if watts is not None:
        for log in sorted((root / "results" / "pod16" / "bert").glob("result_*.txt")):
            power_for(log, watts=watts, period_ms=4000, efficiency=1.0)
    return str(root)


def _check(tmp: Path, before: tuple[float, float | None], now: tuple[float, float | None]) -> list[Finding]:
    _, found = check_preview([_tree(tmp / "a", "preview", *before)], [_tree(tmp / "b", "onprem", *now)])
    return found


def test_faster_but_hungrier_fails_in_energy(tmp_path: Path) -> None:
    # 19 min at 6 kW = 6.84 MJ against 20 min at 5 kW = 6.0 MJ (+2 % = 6.12): time would hold, energy does not.
    found = _check(tmp_path, (20.0, 5000.0), (19.0, 6000.0))
    assert [f.code for f in found] == ["REV022"]
    assert "energy 6.840 MJ against at most 6.120" in found[0].message


def test_slower_but_frugal_holds_in_energy(tmp_path: Path) -> None:
    # 21 min would miss 20.4 min, but 21 min at 4 kW = 5.04 MJ <= 6.12 MJ.
    found = _check(tmp_path, (20.0, 5000.0), (21.0, 4000.0))
    assert [f.code for f in found] == ["REV020"]
    assert "energy 5.040 MJ" in found[0].message


def test_available_without_power_is_compared_in_time_with_rev023(tmp_path: Path) -> None:
    found = _check(tmp_path, (20.0, 5000.0), (20.2, None))
    assert [f.code for f in found] == ["REV020", "REV023"]
    assert "time 20.200 min" in found[0].message
    assert "the Available result pod16 has no power logs" in found[1].message


def test_broken_power_log_gives_no_energy_and_says_why(tmp_path: Path) -> None:
    before = _tree(tmp_path / "a", "preview", 20.0, 5000.0)
    now = _tree(tmp_path / "b", "onprem", 20.2, 5000.0)
    broken = Path(now) / "results" / "pod16" / "bert" / "power" / "result_2" / "node_0.txt"
    broken.write_text("not a power log\n", encoding="utf-8")
    _, found = check_preview([before], [now])
    assert [f.code for f in found] == ["REV020", "REV023"]
    assert "no power_measurement_start" in found[1].message


def test_power_only_on_the_available_side_is_compared_in_time(tmp_path: Path) -> None:
    # The Preview submission was not accompanied by power: absolute performance, no REV023.
    found = _check(tmp_path, (20.0, None), (20.3, 9000.0))
    assert [f.code for f in found] == ["REV020"]
    assert "time 20.300 min" in found[0].message


def test_entry_energy_keeps_the_runs_of_the_olympic_time_mean(tmp_path: Path) -> None:
    from mlsubmit.checker.power.energy import entry_energy
    from mlsubmit.checker.review.entries import read_entry

    write_org(tmp_path, {"pod16": system()}, {("pod16", "bert"): runs([10.0, 20.0, 30.0, 40.0, 50.0])})
    folder = tmp_path / "results" / "pod16" / "bert"
    for log in sorted(folder.glob("result_*.txt")):
        power_for(log, watts=1000.0, period_ms=4000, efficiency=1.0)
    entry = read_entry(folder)
    energy = entry_energy(folder, entry.runs, "bert")
    assert energy is not None and energy.joules == 1000.0 * 30 * 60  # 20, 30 and 40 min kept
    assert entry_energy(tmp_path, entry.runs, "bert") is None  # no power/ folder
