"""Differential test, system descriptions mutated field by field: `--profile reference` gives mlperf-logging's
package checker's own verdict on each, and the default gives the verdict docs/policy.md decides per field: an error
where the official tools refuse or the published row would be wrong (a field of the result summarizer's row or its
links, a count it multiplies with int()), a warning naming the practice where accepted results show the review
accepts the value. The default never passes what the package checker fails.

Small trees: one organisation with its system file and an empty results/<system>/ (the system-file mutations), and
three with five closed ResNet-50 runs that converge too fast, under a system file saying closed, open or banana (the
division a folder is judged in). The package checker runs once for all of them, in one process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from fixtures.treefix import build_org, resnet_runs, system_json

RULESET = "5.0.0"  # a round whose system_desc_checker checks the status vocabulary
DROP = object()  # the key taken out of the file
INVENTORY = "1x Intel X550T 10GbE, 8x ConnectX-7 400Gb/s"

# (field, value, the default's verdict on the field: error, warning or pass)
MUTATIONS: list[tuple[str, Any, str]] = [
    ("division", "banana", "error"), ("division", "", "error"), ("division", "Closed", "error"),
    ("status", "", "error"), ("status", "on-premise", "error"),
    ("submitter", "", "error"), ("submitter", "N/A", "error"), ("submitter", 7, "error"),
    ("system_name", "", "error"), ("system_name", "TODO", "error"), ("system_name", 16, "error"),
    ("host_processor_model_name", "", "error"), ("host_processor_model_name", 7742, "error"),
    ("accelerator_model_name", "", "error"), ("accelerator_model_name", 200, "error"),
    ("accelerator_model_name", "N/A", "warning"),
    ("framework", "", "warning"), ("framework", 2.3, "error"), ("framework", "TBD", "error"),
    ("number_of_nodes", "", "error"), ("number_of_nodes", "8.0", "error"), ("number_of_nodes", "eight", "error"),
    ("number_of_nodes", "0", "error"), ("number_of_nodes", 1, "pass"),
    ("host_processors_per_node", "", "error"), ("host_processors_per_node", "2.0", "error"),
    ("host_processors_per_node", "two", "error"),
    ("accelerators_per_node", "", "error"), ("accelerators_per_node", "16.0", "error"),
    ("accelerators_per_node", "sixteen", "error"), ("accelerators_per_node", "0", "warning"),
    ("accelerators_per_node", 16, "error"), ("host_processor_core_count", 64, "error"),
    ("host_network_card_count", INVENTORY, "warning"), ("host_processor_vcpu_count", "N/A", "warning"),
    ("host_processor_vcpu_count", "0", "warning"), ("host_processor_core_count", "64 cores per processor", "warning"),
    ("host_networking_topology", "", "warning"), ("cooling", "", "warning"), ("sw_notes", "", "pass"),
    ("cooling", DROP, "error"),
]  # fmt: skip
LEVELS = {"error": 0, "warning": 1, "pass": 2}


def _name(field: str, value: Any) -> str:
    shown = "dropped" if value is DROP else json.dumps(value)
    return f"{field}={shown}"


def _system(field: str, value: Any) -> dict[str, object]:
    data = system_json("p")
    # a name that states no POD size, so that mlsubmit's hardware knowledge (SYS030-SYS034) stays out of the verdicts
    data.update(status="Available on-premise", system_name="Example training system")
    if value is DROP:
        del data[field]
    else:
        data[field] = value
    return data


def _system_tree(root: Path, data: dict[str, object]) -> Path:
    (root / "systems").mkdir(parents=True)
    (root / "results" / "p").mkdir(parents=True)
    (root / "systems" / "p.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return root


def _reference(jobs: list[tuple[str, Path]]) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"],
                          input="".join(f"{r}\t{p}\n" for r, p in jobs), capture_output=True, text=True, check=True,
                          timeout=600)  # fmt: skip
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def _findings(out: str) -> list[dict[str, Any]]:
    data = json.loads(out)
    return [*data["findings"], *(f for entry in data["files"] for f in entry["findings"])]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path, dict[str, Any]]]:
    """name -> (ruleset, tree, the package checker's result), for every mutated tree."""
    root = tmp_path_factory.mktemp("mutations")
    trees = {"clean": (RULESET, _system_tree(root / "clean" / "Org", _system("cooling", "Air")))}
    for n, (field, value, _) in enumerate(MUTATIONS):
        trees[_name(field, value)] = (RULESET, _system_tree(root / f"m{n}" / "Org", _system(field, value)))
    for division in ("closed", "open", "banana"):  # runs that converge faster than the RCP allows
        org = build_org(root / f"division-{division}" / "Org", {("p", "resnet"): resnet_runs([30] * 5)},
                        systems={"p": division}, code=())
        trees[f"division-{division}"] = ("1.0.0", org)
    refs = _reference(list(trees.values()))
    return {name: (ruleset, tree, ref) for (name, (ruleset, tree)), ref in zip(trees.items(), refs, strict=True)}


def _ours(run_cli: Callable[..., tuple[int, str, str]], ruleset: str, tree: Path,
          profile: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = run_cli("check", "--ruleset", ruleset, "--profile", profile, "--format", "json", tree)
    assert code in (0, 1), err
    return code, _findings(out)


def test_the_reference_profile_gives_the_package_checkers_verdict_on_every_mutation(
    verdicts: dict[str, tuple[str, Path, dict[str, Any]]], run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    failed = []
    for name, (ruleset, tree, ref) in verdicts.items():
        code, found = _ours(run_cli, ruleset, tree, "reference")
        codes = {f["code"] for f in found if f["severity"] == "error"}
        if ref["crash"]:
            assert code == 1 and "TREE024" in codes, (name, ref["crash"], codes)
        else:
            assert code == (0 if ref["ok"] else 1), (name, ref["error_lines"], codes)
        failed.append(name) if code else None
    # the mutations bite both ways: the checker refuses some (a missing key, a status, a number it joins as text)
    assert {"status=\"\"", "cooling=dropped", "accelerators_per_node=16", "submitter=7"} <= set(failed)
    assert {"clean", "division=\"banana\"", "submitter=\"\"", "number_of_nodes=\"8.0\""}.isdisjoint(failed)


def test_the_default_decides_each_field_as_the_policy_says_and_never_passes_a_refusal(
    verdicts: dict[str, tuple[str, Path, dict[str, Any]]], run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    code, found = _ours(run_cli, RULESET, verdicts["clean"][1], "full")
    assert code == 0 and not [f for f in found if f["severity"] == "error"]
    wrong = {}
    for field, value, want in MUTATIONS:
        name = _name(field, value)
        _, tree, ref = verdicts[name]
        code, found = _ours(run_cli, RULESET, tree, "full")
        here = [f for f in found if (f.get("pointer") or "").split("/")[1:2] in ([field], [""])]
        worst = min((LEVELS.get(f["severity"], 2) for f in here), default=2)
        got = next(level for level, rank in LEVELS.items() if rank == worst)
        if got != want or code != (1 if want == "error" else 0):
            wrong[name] = (got, code, [(f["code"], f["severity"]) for f in here])
        if ref["crash"] or not ref["ok"]:
            assert code == 1, name  # the default never passes what the package checker refuses
    assert wrong == {}


def test_a_folder_is_judged_in_the_division_its_system_file_gives(
    verdicts: dict[str, tuple[str, Path, dict[str, Any]]], run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    """Logs say closed and converge too fast: the RCP check fails the folder only where the system file says closed,
    as in the package checker; elsewhere TREE025 names the table the result is listed in."""
    seen = {}
    for division in ("closed", "open", "banana"):
        ruleset, tree, ref = verdicts[f"division-{division}"]
        _, found = _ours(run_cli, ruleset, tree, "full")
        codes = {(f["code"], f["severity"]) for f in found}
        seen[division] = (("TREE018", "error") in codes, bool(ref["kinds"]["rcp"]))
        if division != "closed":
            note = next(f["message"] for f in found if f["code"] == "TREE025")
            assert ("open results table" if division == "open" else "no results table") in note
    assert seen == {"closed": (True, True), "open": (False, False), "banana": (False, False)}
