"""A typo in package.toml reads as one cause with one suggestion, not a dozen errors suggesting different names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.demo import RESNET_SYSTEM, write_example


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_example(tmp_path / "ex").config


def _package(run_cli, config: Path, old: str, new: str) -> dict:  # type: ignore[no-untyped-def]
    config.write_text(config.read_text().replace(old, new, 1))
    code, out, err = run_cli("package", "--format", "json", config)
    assert code == 1, err
    return json.loads(out)


def _all(report: dict) -> list[dict]:  # type: ignore[type-arg]
    return [f for entry in report["files"] for f in entry["findings"]] + report["findings"]


def test_a_benchmark_typo_is_one_cause(run_cli, config: Path) -> None:  # type: ignore[no-untyped-def]
    found = _all(_package(run_cli, config, 'benchmark = "resnet"', 'benchmark = "resnet50"'))
    errors = [f for f in found if f["severity"] == "error"]
    (root,) = [f for f in errors if "cause" not in f]
    assert root["code"] == "PKG013"
    assert '\'resnet50\' is not a benchmark of ruleset 1.1.0; did you mean "resnet"?' in root["message"]
    label = f"PKG013 {root['path']}#{root['pointer']}"
    assert {f["cause"] for f in errors if f is not root} == {label}
    assert {f["code"] for f in errors if f is not root} == {"PKG009", "SYS046", "TREE002"}
    assert sum("did you mean" in f["message"] for f in found) == 1  # one suggestion for one typo


def test_a_system_typo_gets_one_suggestion(run_cli, config: Path) -> None:  # type: ignore[no-untyped-def]
    typo = RESNET_SYSTEM.replace("closed", "closd")
    found = _all(_package(run_cli, config, f'system = "{RESNET_SYSTEM}"', f'system = "{typo}"'))
    suggestions = [f for f in found if "did you mean" in f["message"]]
    assert [f["code"] for f in suggestions] == ["PKG020"]  # SYS040 suggested another system (of the built tree)
    assert f'did you mean "{RESNET_SYSTEM}"?' in suggestions[0]["message"]
    sys040 = [f for f in found if f["code"] == "SYS040"]
    assert sys040 and all(f.get("cause", "").startswith("PKG020 ") for f in sys040)
    assert not [f for f in found if f["severity"] == "info" and "cause" in f]  # a fact is no consequence


def test_a_glob_typo_shows_no_upstream_exception(run_cli, config: Path) -> None:  # type: ignore[no-untyped-def]
    found = _all(_package(run_cli, config, "runs/pod64-resnet/*", "runs/pod64-resnt/*"))
    assert not [f for f in found if "KeyError" in f["message"] or "Error:" in f["message"]], found
    tree024 = [f for f in found if f["code"] == "TREE024"]
    assert tree024 and all("no run logs submission_benchmark (or the folder is empty)" in f["message"] for f in tree024)
