"""Tree building blocks: the policy data, folder listing, names, bypass files, init limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts, Occurrence
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.division import is_closed as closed_division
from mlsubmit.checker.tree.folders import bench_folders, bypass_flags, check_olympic, tree_policy
from mlsubmit.checker.tree.init_time import check_init, init_limit
from mlsubmit.checker.tree.results_folders import check_names

from mlsubmit.core.support.schema_loader import load_schema, validator


def test_policy_is_valid_and_its_schema_is_a_valid_schema() -> None:
    schema = load_schema("tree-policy.schema.json")
    validator(schema).check_schema(schema)
    assert "olympic_tolerance" not in tree_policy()  # the benchmark table (benchmarks.yaml) is its one home
    assert (benchmarks.dropped("unet3d"), benchmarks.dropped("resnet")) == (4, 1)


def test_init_limits_per_round() -> None:
    assert init_limit("1.0.0", "closed") == 30  # TR1.0 appendix: v1.0-only raise
    assert init_limit("1.1.0", "closed") == 20  # TR1.1
    assert (init_limit("4.1.0", "closed"), init_limit("4.1.0", "open")) == (30, 240)


def test_tolerance() -> None:
    assert (benchmarks.dropped("bert"), benchmarks.dropped("unet3d")) == (1, 4)


def folder(names: list[str]) -> BenchFolder:
    logs = [f"org/results/sys/bert/{n}" for n in names]
    return BenchFolder("sys", "bert", Path("/x"), "org/results/sys/bert", logs=logs)


def test_names() -> None:
    assert check_names(folder([f"result_{i}.txt" for i in range(10)])) == []
    assert check_names(folder([f"result_{i}.txt" for i in range(1, 11)])) == []
    gap = check_names(folder(["result_0.txt", "result_2.txt"]))
    assert [(f.code, f.path) for f in gap] == [("TREE006", "org/results/sys/bert")]
    odd = check_names(folder(["result_run1.txt"]))
    assert [(f.code, f.path) for f in odd] == [("TREE006", "org/results/sys/bert/result_run1.txt")]


def test_olympic_counts_runs_with_errors() -> None:
    runs = [LogFacts(path=f"r{i}", error_codes=("RULE001",) if i < 2 else ()) for i in range(10)]
    assert [f.code for f in check_olympic(folder([]), runs[1:])] == ["TREE008"]
    assert [f.code for f in check_olympic(folder([]), runs)] == ["TREE007"]
    unet = BenchFolder("sys", "unet3d", Path("/x"), "u")
    assert [f.code for f in check_olympic(unet, [LogFacts(path=str(i), error_codes=("X",)) for i in range(4)])] == [
        "TREE008"
    ]


def test_bypass_file_newline_semantics(tmp_path: Path) -> None:
    (tmp_path / "package_checker_params").write_text("rcp-bypass\n", encoding="utf-8")
    assert bypass_flags(tmp_path) == (set(), {"rcp-bypass"})
    (tmp_path / "package_checker_params").write_bytes(b"seed-checker-bypass\nrcp-bypass")
    assert bypass_flags(tmp_path) == ({"rcp-bypass"}, {"rcp-bypass", "seed-checker-bypass"})


def test_init_time_finding_has_the_line() -> None:
    facts = LogFacts(path="r")
    facts.series["init_start"] = [Occurrence(None, {}, 0.0, 3)]
    facts.series["init_stop"] = [Occurrence(None, {}, 25 * 60000.0, 40)]
    (f,) = check_init([facts], "1.1.0")
    assert (f.code, f.line) == ("TREE023", 40)
    assert check_init([facts], "1.0.0") == []


@pytest.mark.parametrize(("json_division", "log", "closed"), [
    ("closed", None, True), ("close", "closed", False), ("open", "open", False), ("open", "closed", False),
    (None, "closed", True),
])  # fmt: skip
def test_closed_for_the_full_profile(json_division: str | None, log: str | None, closed: bool) -> None:
    facts = LogFacts(path="r")
    if log:
        facts.first["submission_division"] = Occurrence(log, {}, 0.0, 1)
    assert closed_division(json_division, [facts]) is closed


def test_folder_listing_sorts_out_entries(tmp_path: Path) -> None:
    bench = tmp_path / "results" / "sys" / "resnet"
    (bench / "bert").mkdir(parents=True)
    (bench / "bert" / "result_0.txt").write_text("x", encoding="utf-8")
    (bench / "power").mkdir()
    (bench / "empty").mkdir()
    for name in ("result_0.txt", "notes.md", ".hidden", "package_checker_params"):
        (bench / name).write_text("x", encoding="utf-8")
    (tmp_path / "results" / "stray.txt").write_text("x", encoding="utf-8")
    (found,) = bench_folders(OrgTree(tmp_path, "org"))
    assert found.logs == ["org/results/sys/resnet/result_0.txt"]
    assert found.others == ["empty", "notes.md", "package_checker_params", "power"]  # power/ is allowed later
    assert found.nested_logs == {"bert": 1}


def test_org_params_lines_as_the_verify_script_passes_them(tmp_path: Path) -> None:
    from mlsubmit.checker.tree import params

    path = tmp_path / params.NAME
    path.write_bytes(b"rcp_bert_train_samples\nseed-checker-bypass\n\nrcp-bypass extra\n  rcp-bypass\nbogus\nlast")
    got = params.read_org_params(tmp_path, "X/package_checker_params", "4.0.0")
    assert got.flags == {params.BERT_TRAIN_SAMPLES, params.SEED_BYPASS}
    assert [(f.code, f.line) for f in got.findings] == [
        ("TREE047", 7), ("TREE022", 2), ("TREE046", 4), ("TREE046", 5), ("TREE046", 6)]
    assert params.read_org_params(tmp_path, "X", "1.1.0").flags == set()  # no verify script read it then
    path.write_bytes(b"rcp-bypass\nseed-checker-bypass\n")
    clean = params.read_org_params(tmp_path, "X", "6.1.0")
    assert clean.flags == {params.RCP_BYPASS, params.SEED_BYPASS} and {f.code for f in clean.findings} == {"TREE022"}


def test_scaling_json_is_a_warning_before_6_1_and_allowed_from_6_1() -> None:
    from types import SimpleNamespace
    from typing import Any

    from mlsubmit.checker.tree.results_folders import check_entries

    folder: Any = SimpleNamespace(others=["scaling.json", "notes.txt"], shown="Org/results/s/llama31_8b",
                                  nested_logs={})
    assert [f.code for f in check_entries(folder, "6.0.0")] == ["TREE005", "TREE004"]
    assert [f.code for f in check_entries(folder, "6.1.0")] == ["TREE004"]  # mlcommons/training#879


@pytest.mark.parametrize(("mean", "low", "said"), [
    (2.5, 2.8, "the folder fails the RCP check: its runs converged faster than the reference allows; RCP found"),
    (float("nan"), 2.8, "the folder fails the RCP check: too few runs converged"),
    (None, None, "the folder fails the RCP check; RCP found"),
])  # fmt: skip
def test_rcp_failure_says_the_verdict_in_plain_words(mean: float | None, low: float | None, said: str) -> None:
    from mlsubmit.checker.rcp.verdict import RcpResult
    from mlsubmit.checker.tree.folders import rcp_findings

    text = "RCP found (global batch size 3072); submission olympic mean 2.5000 epochs, fastest allowed 2.8000 epochs"
    result = RcpResult("fail", False, 1.0, text, "RCP found", 3072, mean, 3.0, low)
    (f,) = rcp_findings(folder([]), result)
    assert f.code == "TREE018" and f.message.startswith(said) and f.message.endswith(text)  # the numbers kept
    passed = RcpResult("pass", True, 1.0, "RCP found (global batch size 3072)", "RCP found")
    assert [(g.code, g.message) for g in rcp_findings(folder([]), passed)] == [("TREE019", passed.message)]


def test_tree022_hint_gives_each_file_its_own_newline_rule() -> None:
    from mlsubmit.core.codes import finding

    hint = finding("TREE022", "org", "rcp-bypass").hint
    assert "without a trailing newline" in hint and "<org>/package_checker_params end every line with one" in hint
