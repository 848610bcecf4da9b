"""`mlsubmit check ORG`: tree findings from real shapes, through main(argv); never a crash, never a write."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import tree_digest
from fixtures.synth import RunSpec
from fixtures.treefix import build_org, resnet_runs

Cli = Callable[..., tuple[int, str, str]]
GOOD = [36, 37, 37, 38, 39]  # epochs to converge: slower than the RCP mean, so no normalisation


def check(run_cli: Cli, *args: object, ruleset: str = "1.0.0") -> tuple[int, list[dict[str, object]]]:
    code, out, err = run_cli("check", "--ruleset", ruleset, "--format", "json", *args)
    assert code in (0, 1), err
    data = json.loads(out)
    findings = [f for entry in data["files"] for f in entry["findings"]] + data["findings"]
    return code, findings


def tree_codes(findings: list[dict[str, object]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in findings:
        if str(f["code"]).startswith("TREE"):
            out.setdefault(str(f["code"]), []).append(str(f["path"]))
    return out


def test_clean_closed_tree(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "Graphcore", {("pod16", "resnet"): resnet_runs(GOOD)})
    code, findings = check(run_cli, org, "--profile", "reference")
    assert code == 0
    assert tree_codes(findings) == {"TREE019": [f"{org}/results/pod16/resnet"]}  # RCP passed, reported
    _, full = check(run_cli, org)
    assert set(tree_codes(full)) == {"TREE019"}


def test_rcp_normalisation_factor_is_reported_and_never_written(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs([34, 35, 35, 35, 36])})
    before = tree_digest(org)
    _, findings = check(run_cli, org)
    (rcp,) = [f for f in findings if f["code"] == "TREE019"]
    assert "score normalisation factor 1.004" in str(rcp["message"])
    assert tree_digest(org) == before  # no scaling.json


def test_rcp_failure_is_an_error(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs([30] * 5)})
    code, findings = check(run_cli, org, "--profile", "reference")
    assert code == 1 and "TREE018" in tree_codes(findings)


def test_dlrm_folder_in_a_1x_ruleset(tmp_path: Path, run_cli: Cli) -> None:
    """The reference crashes (KeyError 'dlrm'); we check the folder and say the reference would crash."""
    specs = [RunSpec(benchmark="dlrm", seed=i, evals=3, hyperparameters={"global_batch_size": 65536}) for i in range(5)]
    org = build_org(tmp_path / "GIGABYTE", {("hugectr", "dlrm"): specs})
    _, findings = check(run_cli, org)
    codes = tree_codes(findings)
    tree024 = [str(f["message"]) for f in findings if f["code"] == "TREE024"]
    assert any("has no run count for 'dlrm'" in m for m in tree024), tree024  # said in words, not as KeyError
    assert not any("KeyError" in m for m in tree024)
    assert "TREE003" not in codes
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 1 and "TREE024" in tree_codes(ref)


def test_empty_results_folder(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "NVIDIA", {("dgx", "resnet"): resnet_runs(GOOD)})
    (org / "results" / "dgx" / "bert").mkdir()
    _, findings = check(run_cli, org)
    codes = tree_codes(findings)
    assert f"{org}/results/dgx/bert" in codes["TREE003"]
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 1 and {"TREE003", "TREE024"} <= set(tree_codes(ref))


def test_results_folder_without_a_system_file(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs(GOOD)}, systems={})
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 1
    assert any("FileNotFoundError" in str(f["message"]) for f in ref if f["code"] == "TREE024")
    full_code, full = check(run_cli, org)  # the pairing finding itself belongs to the system checks
    assert full_code == 1
    missing = [f for f in full if f["code"] == "SYS040"]
    assert [f["path"] for f in missing] == [str(org / "results" / "pod16")]
    assert "systems/pod16.json" in str(missing[0]["message"]) and "TREE024" not in tree_codes(full)
    (said,) = [f["message"] for f in full if f["code"] == "TREE025"]  # closed logs: no "division None"
    assert said.startswith("systems/pod16.json gives no division (missing, unreadable or without the field)")


def test_unknown_benchmark_folder_is_an_error(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs(GOOD)})
    shutil.copytree(org / "results" / "pod16" / "resnet", org / "results" / "pod16" / "gpt9")
    code, findings = check(run_cli, org)
    assert code == 1 and tree_codes(findings)["TREE002"] == [f"{org}/results/pod16/gpt9"]
    code, ref = check(run_cli, org, "--profile", "reference")  # the reference only warns and skips it
    assert code == 0
    assert [f["severity"] for f in ref if f["code"] == "TREE002"] == ["warning"]


def test_results_folder_typos_get_a_did_you_mean(tmp_path: Path, run_cli: Cli) -> None:
    closed = "ipu-pod16-POPART-closed"
    org = build_org(tmp_path / "G", {("ipu-pod16-POPART-closd", "resnet"): resnet_runs(GOOD),
                                     (closed, "bret"): resnet_runs(GOOD[:1])}, systems={closed: "closed"})
    _, full = check(run_cli, org)
    said = {str(f["code"]): str(f["message"]) for f in full if f["code"] in ("SYS040", "TREE002")}
    assert said == {
        "SYS040": f"results/ipu-pod16-POPART-closd/ has no system description systems/ipu-pod16-POPART-closd.json"
                  f'; did you mean "{closed}"?',
        "TREE002": "'bret' is not a benchmark of ruleset 1.0.0; did you mean \"bert\"?"}
    _, ref = check(run_cli, org, "--profile", "reference")
    skipped = [f["message"] for f in ref if f["code"] == "TREE002"]
    assert skipped == ["the reference skips 'bret'; did you mean \"bert\"?"]


def test_runs_with_different_batch_sizes(tmp_path: Path, run_cli: Cli) -> None:
    specs = resnet_runs(GOOD)
    specs[4].hyperparameters = {"global_batch_size": 1632}
    org = build_org(tmp_path / "Supermicro", {("as4124", "resnet"): specs})
    _, findings = check(run_cli, org)
    assert "TREE021" in tree_codes(findings)
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 1 and "TREE024" in tree_codes(ref)


def test_counts_names_and_stray_files(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs(GOOD[:4])})
    folder = org / "results" / "pod16" / "resnet"
    (folder / "result_3.txt").rename(folder / "result_run3.txt")
    (folder / "postprocess.py").write_text("print(1)\n", encoding="utf-8")
    (folder / "scaling.json").write_text('{"scaling_factor": 1.01}', encoding="utf-8")
    _, findings = check(run_cli, org)
    codes = tree_codes(findings)
    assert codes["TREE003"] == [str(folder)]
    assert codes["TREE006"] == [f"{folder}/result_run3.txt"]
    assert codes["TREE004"] == [f"{folder}/postprocess.py"]
    assert codes["TREE005"] == [f"{folder}/scaling.json"]


def test_nested_logs_and_benchmark_folder_name(tmp_path: Path, run_cli: Cli) -> None:
    """Habana v1.0 kept ten BERT logs under resnet/bert/; twelve submitters wrote benchmark/ for benchmarks/."""
    org = build_org(tmp_path / "Habana", {("sys", "resnet"): resnet_runs(GOOD)}, code=())
    nested = org / "results" / "sys" / "resnet" / "bert"
    nested.mkdir()
    (nested / "result_0.txt").write_bytes((org / "results/sys/resnet/result_0.txt").read_bytes())
    (org / "benchmark" / "resnet" / "implementations" / "tf").mkdir(parents=True)
    (org / "benchmark/resnet/implementations/tf/run_and_time.sh").write_text("python r.py\n", encoding="utf-8")
    (org / "package_checker.log").write_text("INFO\n", encoding="utf-8")
    _, findings = check(run_cli, org)
    codes = tree_codes(findings)
    assert codes["TREE009"] == [str(nested)]
    assert codes["TREE010"] == [f"{org}/benchmark"]
    assert codes["TREE011"] == [f"{org}/benchmark/resnet/implementations"]  # README.md missing
    assert "TREE012" not in codes
    assert codes["TREE026"] == [f"{org}/package_checker.log"]


def test_missing_implementation(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs(GOOD)}, code=())
    _, findings = check(run_cli, org)
    assert tree_codes(findings)["TREE013"] == [f"{org}/benchmarks/resnet"]


def test_olympic_tolerance(tmp_path: Path, run_cli: Cli) -> None:
    one = resnet_runs(GOOD)
    one[0].omit = ("eval_samples",)
    org = build_org(tmp_path / "one", {("pod16", "resnet"): one})
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 0 and "TREE008" in tree_codes(ref)
    two = resnet_runs(GOOD)
    two[0].omit = two[1].omit = ("eval_samples",)
    org2 = build_org(tmp_path / "two", {("pod16", "resnet"): two})
    code, ref = check(run_cli, org2, "--profile", "reference")
    assert code == 1 and "TREE007" in tree_codes(ref)


def test_seeds(tmp_path: Path, run_cli: Cli) -> None:
    specs = resnet_runs(GOOD)
    specs[1].seed = None
    specs[3].seed = specs[2].seed
    org = build_org(tmp_path / "X", {("pod16", "resnet"): specs})
    code, ref = check(run_cli, org, "--profile", "reference")
    codes = tree_codes(ref)
    assert code == 1
    assert codes["TREE014"] == [f"{org}/results/pod16/resnet/result_1.txt"]
    assert codes["TREE015"] == [f"{org}/results/pod16/resnet/result_3.txt"]


def test_seed_and_rcp_follow_the_system_files_division_for_close(tmp_path: Path, run_cli: Cli) -> None:
    """PCL v1.0 wrote "division": "close": the package checker skips seeds and RCPs and the summarizer lists the
    result under "close", in no results table. Both profiles judge the folder in that division (no TREE018); the
    default fails the system file (SYS013) and says which table the folder lands in (TREE025)."""
    specs = resnet_runs([30] * 5)
    org = build_org(tmp_path / "PCL", {("cb", "resnet"): specs}, systems={"cb": "close"})
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 0 and not ({"TREE018", "TREE014"} & set(tree_codes(ref)))
    code, full = check(run_cli, org)
    assert code == 1 and "TREE018" not in tree_codes(full) and "TREE025" in tree_codes(full)
    assert {(f["code"], f["severity"]) for f in full if f["code"] == "SYS013"} == {("SYS013", "error")}
    (note,) = [f["message"] for f in full if f["code"] == "TREE025"]
    assert "judged as 'close'" in note and "no results table" in note


def test_bypass_file_with_a_newline_is_ignored_by_the_reference(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs([30] * 5)})
    params = org / "results" / "pod16" / "resnet" / "package_checker_params"
    params.write_text("rcp-bypass\n", encoding="utf-8")
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 1 and "TREE018" in tree_codes(ref)
    params.write_bytes(b"rcp-bypass")
    code, ref = check(run_cli, org, "--profile", "reference")
    assert code == 0 and "TREE018" not in tree_codes(ref)


def test_init_time_limit_of_the_round(tmp_path: Path, run_cli: Cli) -> None:
    specs = resnet_runs(GOOD, ruleset="1.1.0")
    specs[0].init_minutes = 25.0  # v1.1 allows 20 min; the installed rules allow 30
    org = build_org(tmp_path / "X", {("pod16", "resnet"): specs})
    _, findings = check(run_cli, org, ruleset="1.1.0")
    assert tree_codes(findings)["TREE023"] == [f"{org}/results/pod16/resnet/result_0.txt"]
    _, v10 = check(run_cli, build_org(tmp_path / "Y", {("p", "resnet"): resnet_runs(GOOD)}))
    assert "TREE023" not in tree_codes(v10)


def test_hygiene_in_a_tree(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "Graphcore", {("pod16", "resnet"): resnet_runs(GOOD)})
    (org / "systems" / ".pod16.json.swp").write_bytes(b"b0VIM 8.2\x00user host /home/user/pod16.json")
    script = org / "benchmarks/resnet/implementations/ipu/run_and_time.sh"
    script.write_text(script.read_text() + 'export WANDB_API_KEY="0123456789abcdef0123456789abcdef01234567"\n'
                      'password="hunter2-is-long"\n')  # fmt: skip
    _, findings = check(run_cli, org)
    codes = tree_codes(findings)
    assert codes["TREE040"] == [f"{org}/systems/.pod16.json.swp"]
    assert codes["TREE045"] == [str(script)] * 2  # the API key line and the password line


def test_check_is_read_only_over_a_whole_tree(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs([34, 35, 35, 35, 36]),
                                     ("pod16", "bert"): [RunSpec(seed=i) for i in range(10)]})  # fmt: skip
    (org / "results/pod16/resnet/package_checker_params").write_bytes(b"rcp-bypass")
    before = tree_digest(tmp_path)
    for profile in ("full", "reference"):
        check(run_cli, org, "--profile", profile)
    assert tree_digest(tmp_path) == before


def test_cache_gives_the_same_report(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs(GOOD)})
    cache = tmp_path / "cache"
    cold = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--cache", cache, org)
    warm = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--cache", cache, org)
    assert cold == warm
    assert len([p for p in cache.rglob("*.json") if not {"rcp", "secrets"} & set(p.parts)]) == 5  # one per log
    assert len(list((cache / "rcp").glob("*.json"))) == 1  # and the folder's RCP result


@pytest.mark.parametrize("planted", [b'{"something": "else"}', b"[1, 2]", b'{"runs": 3}', b"{not json"])
def test_a_planted_rcp_entry_is_a_miss_never_an_exit_3(tmp_path: Path, run_cli: Cli, planted: bytes) -> None:
    """The issue's report: valid JSON of the wrong shape under --cache DIR/rcp/ ended the run (KeyError 'runs')."""
    org = build_org(tmp_path / "G", {("pod16", "resnet"): resnet_runs(GOOD)})
    cache = tmp_path / "cache"
    expected = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--cache", cache, org)
    for entry in (cache / "rcp").glob("*.json"):
        entry.write_bytes(planted)
    assert run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--cache", cache, org) == expected


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_changed_since_checks_only_touched_folders(tmp_path: Path, run_cli: Cli) -> None:
    repo = tmp_path / "repo"
    org = build_org(repo / "Graphcore", {("pod16", "resnet"): resnet_runs(GOOD),
                                         ("pod64", "resnet"): resnet_runs(GOOD)},
                    systems={"pod16": "closed", "pod64": "closed"})  # fmt: skip
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "runs")
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--changed-since", "HEAD", org)
    assert code == 0 and json.loads(out)["files"] == []  # nothing changed: nothing to check
    changed = org / "results/pod64/resnet/result_2.txt"
    changed.write_bytes(changed.read_bytes().replace(b'"seed", "value": 102', b'"seed", "value": 100'))
    code, findings = check(run_cli, "--changed-since", "HEAD", org)
    paths = {str(f["path"]) for f in findings}
    assert not any("/pod16/" in p for p in paths)  # the untouched folder is not checked again
    assert tree_codes(findings)["TREE015"] == [f"{org}/results/pod64/resnet/result_2.txt"]
    (org / "results/pod16/resnet/result_4.txt").unlink()  # a deleted run touches its folder too
    _, findings = check(run_cli, "--changed-since", "HEAD", org)
    assert tree_codes(findings)["TREE003"] == [f"{org}/results/pod16/resnet"]
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--changed-since", "no-such-rev", org)
    assert code == 2 and "unknown revision" in err


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe{}", b"[" * 100_000, b'{"division": "closed", "accelerators_per_node": 8}', b"42"],
)
def test_broken_system_files_never_crash(tmp_path: Path, run_cli: Cli, content: bytes) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs(GOOD)})
    (org / "systems" / "pod16.json").write_bytes(content)
    for profile in ("full", "reference"):
        code, findings = check(run_cli, org, "--profile", profile)
        assert code == 1
    assert {"TREE024"} <= set(tree_codes(findings))  # the reference stops on each of these


def test_odd_folder_shapes_never_crash(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs(GOOD)})
    (org / "results" / "stray.txt").write_text("x", encoding="utf-8")
    (org / "results" / "pod16" / "notes.txt").write_text("x", encoding="utf-8")
    os.symlink("loop", org / "results" / "loop")
    os.mkfifo(org / "results" / "pod16" / "resnet" / "package_checker_params")
    for profile in ("full", "reference"):
        code, _ = check(run_cli, org, "--profile", profile)
        assert code in (0, 1)
    os.mkfifo(org / "systems" / "fifo.json")  # a read would block; the reference profile never opens it
    code, findings = check(run_cli, org, "--profile", "reference")
    assert code == 1 and "TREE028" in tree_codes(findings)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_changed_since_reports_only_the_system_files_a_change_concerns(tmp_path: Path, run_cli: Cli) -> None:
    repo = tmp_path / "repo"
    org = build_org(repo / "G", {("pod16", "resnet"): resnet_runs(GOOD), ("pod64", "resnet"): resnet_runs(GOOD)},
                    systems={"pod16": "closed", "pod64": "closed"})  # fmt: skip
    for name in ("pod16", "pod64"):  # each system file has a warning of its own (SYS019: no system_type)
        path = org / "systems" / f"{name}.json"
        data = json.loads(path.read_text("utf-8"))
        del data["system_type"]
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "runs")

    def sys019() -> tuple[list[str], list[str]]:
        code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "--changed-since", "HEAD", org)
        assert code == 0, err  # warnings only
        data = json.loads(out)
        listed = [e["path"] for e in data["files"] if e["path"].endswith(".json")]
        return listed, sorted(f["path"] for e in data["files"] for f in e["findings"] if f["code"] == "SYS019")

    log = org / "results/pod64/resnet/result_0.txt"
    log.write_bytes(log.read_bytes() + b"\n")  # one log changed: only its system is reported again
    pod64 = str(org / "systems/pod64.json")
    assert sys019() == ([pod64], [pod64])
    pod16 = org / "systems/pod16.json"
    pod16.write_bytes(pod16.read_bytes() + b"\n")  # the changed system file itself is reported too
    assert sys019() == ([str(pod16), pod64], [str(pod16), pod64])
    _, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", org)  # without it: all of them
    assert sorted(f["path"] for e in json.loads(out)["files"] for f in e["findings"] if f["code"] == "SYS019") == [
        str(pod16), pod64]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_changed_since_never_starts_a_configured_fsmonitor(tmp_path: Path, run_cli: Cli) -> None:
    repo = tmp_path / "repo"
    org = build_org(repo / "G", {("pod16", "resnet"): resnet_runs(GOOD)})
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "runs")
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    hook.chmod(0o755)
    _git(repo, "config", "core.fsmonitor", str(hook))
    (org / "results/pod16/resnet/result_0.txt").write_bytes(b"changed\n")
    code, findings = check(run_cli, "--changed-since", "HEAD", org)
    assert code in (0, 1) and findings
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_changed_since_covers_code_under_benchmarks(tmp_path: Path, run_cli: Cli) -> None:
    """A change under benchmarks/ alone is checked: the changed file's secrets are found (from a warm cache the
    other files are not scanned again); untouched files' secrets are not reported again."""
    repo = tmp_path / "repo"
    org = build_org(repo / "Graphcore", {("pod16", "resnet"): resnet_runs(GOOD)})
    code_dir = org / "benchmarks" / "resnet" / "implementations" / "pod16"
    code_dir.mkdir(parents=True)
    (code_dir / "old.py").write_text('GH = "ghp_' + "Zq4" * 12 + '"\n', encoding="utf-8")
    (code_dir / "train.py").write_text("import torch\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "code")
    cache = tmp_path / "cache"
    _, every = check(run_cli, "--cache", cache, org)
    shown = f"{org}/benchmarks/resnet/implementations/pod16"
    assert [f["path"] for f in every if f["code"] == "TREE045"] == [f"{shown}/old.py"]
    (code_dir / "train.py").write_text('import torch\nSTRIPE = "sk_live_' + "Xy8" * 8 + '"\n', encoding="utf-8")
    _, changed = check(run_cli, "--cache", cache, "--changed-since", "HEAD", org)
    secrets = [(f["path"], f["message"]) for f in changed if f["code"] == "TREE045"]
    assert secrets == [(f"{shown}/train.py", "possible secret: Stripe Access Key")]


@pytest.mark.parametrize("spelling", ["rcp-bypass", "rcp_bypass"])
def test_org_package_checker_params_is_read_as_the_verify_script_reads_it(tmp_path: Path, run_cli: Cli,
                                                                           spelling: str) -> None:
    """From 2.0 on, `<org>/package_checker_params` lines become package-checker flags (both spellings), in both
    profiles; the file is part of the submission, not a stray entry."""
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs([30] * 5, ruleset="2.0.0")})
    for profile in ("full", "reference"):
        code, found = check(run_cli, org, "--profile", profile, ruleset="2.0.0")
        assert code == 1 and "TREE018" in tree_codes(found), profile  # too fast without the bypass
    params = org / "package_checker_params"
    params.write_text(f"{spelling}\n", encoding="utf-8")
    for profile in ("full", "reference"):
        code, found = check(run_cli, org, "--profile", profile, ruleset="2.0.0")
        codes = tree_codes(found)
        assert "TREE018" not in codes and "TREE026" not in codes and "TREE046" not in codes, (profile, codes)
        assert codes["TREE022"] == [str(params)], profile
    params.write_bytes(f"{spelling}".encode())  # `read` drops a last line without its newline
    code, found = check(run_cli, org, ruleset="2.0.0")
    assert {"TREE018", "TREE047"} <= set(tree_codes(found))
    params.write_bytes(b"rcp-bypass\r\n")  # CRLF: `--rcp-bypass\r` is an unknown option
    code, found = check(run_cli, org, "--profile", "reference", ruleset="2.0.0")
    assert code == 1 and {"TREE018", "TREE046"} <= set(tree_codes(found))


def test_org_package_checker_params_before_2_0_is_not_part_of_a_submission(tmp_path: Path, run_cli: Cli) -> None:
    org = build_org(tmp_path / "X", {("pod16", "resnet"): resnet_runs([30] * 5)})
    (org / "package_checker_params").write_text("rcp-bypass\n", encoding="utf-8")
    _, found = check(run_cli, org)  # 1.0.0: verify_for_v1.0_training.sh does not read it
    codes = tree_codes(found)
    assert "TREE026" in codes and "TREE018" in codes and "TREE022" not in codes
