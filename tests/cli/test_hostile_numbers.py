"""Numbers, depth and encoding from a hostile tree (issue 35, items 4-6): every command gives a finding or exit 2,
never exit 3, and no temporary file is left beside an output.

Each tree is a small organisation (five ResNet-50 runs on one system) with one field made hostile: a count of
thousands of digits (as a string and as a JSON integer), Infinity, a 400-digit global_batch_size in the logs,
arrays 100,000 deep, a lone surrogate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.synth_org import runs, system, write_org

RULESET = "1.1.0"


def _raw(field: str, literal: str) -> str:
    return json.dumps(system()).replace(f'"{field}": "{system()[field]}"', f'"{field}": {literal}')


# name -> (system fields, hyperparameters, raw system file text)
TREES: dict[str, tuple[dict[str, str], dict[str, int], str | None]] = {
    "accelerators-4000-digit-string": ({"accelerators_per_node": "7" * 4000}, {}, None),
    "nodes-5000-digit-string": ({"number_of_nodes": "3" * 5000}, {}, None),
    "accelerators-4000-digit-integer": ({}, {}, _raw("accelerators_per_node", "9" * 4000)),
    "nodes-and-accelerators-4000-digits": ({"accelerators_per_node": "7" * 4000, "number_of_nodes": "3" * 4000},
                                           {}, None),
    "accelerators-infinity": ({}, {}, _raw("accelerators_per_node", "Infinity")),
    "nodes-1e999": ({}, {}, _raw("number_of_nodes", "1e999")),
    "count-400-digits": ({"accelerators_per_node": "9" * 400}, {}, None),
    "global-batch-400-digits": ({}, {"global_batch_size": int("9" * 400)}, None),
    "array-100000-deep": ({}, {}, json.dumps(system())[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    "lone-surrogate": ({"sw_notes": "\ud800", "framework": "a\udcffb"}, {}, None),
}


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hostile-numbers")
    out = {}
    for name, (fields, hp, raw) in TREES.items():
        root = write_org(base / name / "Graphcore", {"pod16": system(**fields)},
                         {("pod16", "resnet"): runs([14.0, 14.5, 15.0, 14.25, 14.75], ruleset=RULESET, evals=35,
                                                    hyperparameters={"global_batch_size": 3264, **hp})})
        if raw is not None:
            (root / "systems" / "pod16.json").write_text(raw, encoding="utf-8")
        out[name] = root
    return out


def _commands(org: Path, out: Path) -> dict[str, list[str | Path]]:
    entry = org / "results" / "pod16" / "resnet"
    return {
        "check": ["check", "--ruleset", RULESET, org],
        "report": ["report", "--ruleset", RULESET, org],
        "report-csv": ["report", "--ruleset", RULESET, "--format", "csv", "-o", out / "table.csv", org],
        "summary-csv": ["report", "--ruleset", RULESET, "--summary-csv", out / "summary.csv", org],
        "summary-xlsx": ["report", "--ruleset", RULESET, "--summary-xlsx", out / "summary.xlsx", org],
        "html": ["report", "--ruleset", RULESET, "--html", out / "page.html", org],
        "preview": ["review", "preview", "--previous", org, "--current", org],
        "borrow": ["review", "borrow", "--ruleset", RULESET, "--original", entry, "--resubmitted", entry,
                   "--donor", entry],
        "since": ["review", "since", "--previous-ruleset", RULESET, "--ruleset", RULESET, "--previous", org,
                  "--current", org],
    }


def _findings(out: str) -> list[dict[str, object]]:
    data = json.loads(out)
    return [*data["findings"], *(f for entry in data["files"] for f in entry["findings"])]


@pytest.mark.parametrize("tree", TREES)
def test_no_command_exits_3_and_no_temporary_file_is_left(run_cli, trees: dict[str, Path], tree: str,
                                                          tmp_path: Path) -> None:
    for name, argv in _commands(trees[tree], tmp_path).items():
        if name == "summary-xlsx":
            pytest.importorskip("openpyxl")
        code, _out, err = run_cli(*argv)
        assert code in (0, 1, 2), f"{name}: exit {code}: {err[-400:]}"
        assert "internal error" not in err, name
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".")]


@pytest.mark.parametrize("tree", ["accelerators-4000-digit-string", "nodes-5000-digit-string", "count-400-digits"])
def test_a_count_no_system_has_is_sys048(run_cli, trees: dict[str, Path], tree: str) -> None:
    code, out, _err = run_cli("check", "--ruleset", RULESET, "--format", "json", trees[tree])
    assert code == 1
    found = [f for f in _findings(out) if f["code"] == "SYS048"]
    assert len(found) == 1 and str(found[0]["path"]).endswith("pod16.json") and found[0]["line"]


def test_a_deep_system_file_is_a_finding_in_check(run_cli, trees: dict[str, Path]) -> None:
    code, out, _err = run_cli("check", "--ruleset", RULESET, "--format", "json", trees["array-100000-deep"])
    assert code == 1
    assert any(f["code"] == "SYS003" and "deep" in str(f["message"]) for f in _findings(out))


def test_a_lone_surrogate_is_written_as_its_escape(run_cli, trees: dict[str, Path], tmp_path: Path) -> None:
    code, _out, err = run_cli("report", "--ruleset", RULESET, "--summary-csv", tmp_path / "s.csv",
                              trees["lone-surrogate"])
    assert code in (0, 1), err
    row = (tmp_path / "s.csv").read_text(encoding="utf-8").splitlines()[1]
    assert "\\ud800" in row and "a\\udcffb" in row
