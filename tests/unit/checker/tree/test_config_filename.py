"""TREE050: a 6.1 log's config_filename names a file under the benchmark's implementations (PR #592)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth import RunSpec
from fixtures.treefix import build_org
from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.tree.configfile import check_config_names


def org_with(tmp_path: Path, *files: str) -> OrgTree:
    for name in files:
        path = tmp_path / "benchmarks" / "llama31_8b" / "implementations" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    return OrgTree(tmp_path, "org")


def run(value: Any, path: str = "org/results/s/llama31_8b/result_0.txt") -> LogFacts:
    return LogFacts(path=path, first={"config_filename": Occurrence(value, {}, 0.0, 12)})


def found(org: OrgTree, runs: list[LogFacts], ruleset: str = "6.1.0") -> list[tuple[str, str, int | None, str]]:
    return [(f.code, f.path, f.line, f.message) for f in check_config_names(org, "llama31_8b", runs, ruleset)]


@pytest.mark.parametrize("value", ["config_GB200_8x4.sh", "/workspace/llm/config_GB200_8x4.sh",
                                   "config_GB200_8x4", "C:\\jobs\\config_GB200_8x4.sh"])
def test_a_value_naming_a_submitted_file_passes(tmp_path: Path, value: str) -> None:
    org = org_with(tmp_path, "nemo/config_GB200_8x4.sh", "nemo/README.md")
    assert found(org, [run(value)]) == []


def test_a_value_naming_no_file_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    org = org_with(tmp_path, "nemo/config_GB200_8x4.sh")
    runs = [run("/workspace/config_GB200_8x8.sh", f"org/r/result_{i}.txt") for i in range(3)]
    assert found(org, runs) == [(
        "TREE050", "org/r/result_0.txt", 12,
        "config_filename '/workspace/config_GB200_8x8.sh' names no file under "
        'org/benchmarks/llama31_8b/implementations; did you mean "config_GB200_8x4.sh"?',
    )]  # fmt: skip


def test_no_implementation_folder_and_odd_values(tmp_path: Path) -> None:
    org = OrgTree(tmp_path, "org")
    got = found(org, [run("c.yaml", "a"), run({"x": 1}, "b"), run("  ", "c")])
    assert [(c, p) for c, p, _, _ in got] == [("TREE050", "a"), ("TREE050", "b"), ("TREE050", "c")]
    assert "names no file under org/benchmarks/llama31_8b" in got[0][3]


@pytest.mark.parametrize("ruleset", ["5.1.0", "6.0.0"])
def test_before_6_1_the_key_is_not_checked(tmp_path: Path, ruleset: str) -> None:
    assert found(OrgTree(tmp_path, "org"), [run("missing.sh")], ruleset) == []


def test_runs_without_the_key_give_nothing(tmp_path: Path) -> None:
    assert found(OrgTree(tmp_path, "org"), [LogFacts(path="a")]) == []


def tree050(out: str) -> list[tuple[str, int]]:
    data = json.loads(out)
    every = data["findings"] + [f for e in data["files"] for f in e["findings"]]
    return [(f["path"], f["line"]) for f in every if f["code"] == "TREE050"]


def test_check_reports_it_in_a_6_1_tree(tmp_path: Path, run_cli: Any) -> None:
    spec = RunSpec(benchmark="llama31_8b", ruleset="6.1.0", raw_output=True)  # logs config_filename "config.yaml"
    org = build_org(tmp_path / "Org", {("sys", "llama31_8b"): [spec]})
    log = org / "results" / "sys" / "llama31_8b" / "result_0.txt"
    line = next(n for n, text in enumerate(log.read_text("utf-8").splitlines(), 1) if '"config_filename"' in text)
    code, out, _ = run_cli("check", "--ruleset", "6.1.0", "--format", "json", org)
    assert (code, tree050(out)) == (1, [(f"{org}/results/sys/llama31_8b/result_0.txt", line)])
    (org / "benchmarks" / "llama31_8b" / "implementations" / "ipu" / "config.yaml").write_text("a: 1\n", "utf-8")
    code, out, _ = run_cli("check", "--ruleset", "6.1.0", "--format", "json", org)
    assert tree050(out) == []
