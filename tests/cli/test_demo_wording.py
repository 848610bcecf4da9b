"""The demo teaches what a user should do: no flag it does not need, and system notes that fit the system."""

from __future__ import annotations

import ast
from pathlib import Path

from fixtures.demo import modern_system, write_example

ROOT = Path(__file__).resolve().parents[2]


def _package_calls() -> list[list[str]]:
    tree = ast.parse((ROOT / "tools" / "demo.py").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "run_cli"]
    args = [[a.value for a in c.args if isinstance(a, ast.Constant)] for c in calls]
    return [a for a in args if a and a[0] == "package"]


def test_the_demo_packages_without_allow_findings_and_needs_none(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    calls = _package_calls()
    assert calls and not any("--allow-findings" in a for a in calls)  # a flag nobody needs is not taught
    example = write_example(tmp_path / "ex", systems=ROOT / "systems")  # the demo's inputs
    code, out, err = run_cli("package", example.config, "--archive", "--format", "json")
    assert code == 0, out[-2000:] + err  # 0 errors, so the tree is written without the flag
    assert (tmp_path / "ex" / "build" / "submission" / "Graphcore").is_dir()


def test_the_modern_demo_system_has_notes_of_its_own() -> None:
    system = modern_system(ROOT / "systems")
    notes = f"{system['hw_notes']} {system['sw_notes']}"
    assert "BERT" not in notes  # they were the 1.x BERT system's, and went into the chair's summary
    assert "Llama 2 70B" in system["sw_notes"] and "LoRA" in system["sw_notes"]
    assert system["status"] == "Available on-premise" and system["host_network_card_count"] == "8"
