"""`mlsubmit advise` (and the HP part of `mlsubmit check`) through main(argv), on mllog runs (on the corpus:
tests/differential/test_advise_corpus.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import tree_digest
from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.logs.reader import read_log

from mlsubmit.core.support.schema_loader import errors, load_schema

BENCHMARKS = ("bert", "dlrm", "maskrcnn", "minigo", "resnet", "rnnt", "ssd", "unet3d")


def _json(out: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(out)
    assert errors(report, load_schema("report.schema.json")) == []
    return report


def _open_ipu_resnet(tmp_path: Path) -> Path:
    """An open IPU-POD16 ResNet-50 run with LARS momentum 0.95 at batch 3264 and 2 LARS epsilons."""
    return write_run(
        tmp_path / "ipu-pod16-open" / "resnet" / "result_0.txt",
        RunSpec(benchmark="resnet", division="open", platform="IPU-POD16",
                hyperparameters={"global_batch_size": 3264, "lars_opt_momentum": 0.95, "lars_epsilon": 2e-5}),
    )


def test_open_run_learns_every_closed_rule_it_breaks_with_lines(run_cli: Any, tmp_path: Path) -> None:
    log = _open_ipu_resnet(tmp_path)
    code, out, err = run_cli("advise", "--ruleset", "1.0.0", "--format", "json", log)
    assert code == 1, out + err
    report = _json(out)
    (entry,) = report["files"]
    lines = {r.key: r.line for r in read_log(log).records}
    got = sorted((f["code"], f["line"]) for f in entry["findings"] if f["severity"] != "info")
    # HP: momentum (error, L302). The epsilon breaks both the closed rule file's own check and the manual-review
    # row (L300): reported once, as the rule file's finding naming the row.
    assert got == sorted([("HP001", lines["lars_opt_momentum"]), ("RULE001", lines["lars_epsilon"])])
    (eps,) = [f for f in entry["findings"] if f["code"] == "RULE001"]
    assert "the closed table says the same: 'lars_epsilon' is 2e-05" in eps["message"] and "[* RN-L4]" in eps["message"]
    assert report["tool"]["command"] == "advise" and report["tool"]["ruleset"] == "1.0.0"
    # and the RCP it would be measured against as closed, with the predicted verdict (info)
    (rcp,) = [f for f in entry["findings"] if f["code"] == "HP006"]
    assert rcp["message"].startswith("open resnet at global_batch_size 3264 as closed, ruleset 1.0.0: ")
    assert [f["code"] for f in entry["findings"] if f["code"] == "HP008"] == ["HP008"]


def test_table_only_leaves_out_the_rule_files(run_cli: Any, tmp_path: Path) -> None:
    log = _open_ipu_resnet(tmp_path)
    code, out, _ = run_cli("advise", "--ruleset", "1.0.0", "--table-only", "--no-rcp", "--format", "json", log)
    assert code == 1
    assert sorted(f["code"] for f in _json(out)["files"][0]["findings"]) == ["HP001", "HP002"]


@pytest.mark.parametrize("ruleset", ["1.0.0", "1.1.0"])
def test_compliant_closed_runs_get_an_empty_list(run_cli: Any, tmp_path: Path, ruleset: str) -> None:
    logs = [write_run(tmp_path / b / "result_0.txt", RunSpec(benchmark=b, ruleset=ruleset)) for b in BENCHMARKS]
    code, out, err = run_cli("advise", "--ruleset", ruleset, "--no-rcp", "--format", "json", *logs)
    assert code == 0, out + err
    report = _json(out)
    assert [f["findings"] for f in report["files"]] == [[]] * len(BENCHMARKS)
    assert report["findings"] == []
    # With the RCP advice: only info, one RCP finding per run with a batch size and RCP data (minigo has none).
    code, out, err = run_cli("advise", "--ruleset", ruleset, "--format", "json", *logs)
    assert code == 0, out + err
    found = [x for f in _json(out)["files"] for x in f["findings"]]
    assert {(x["code"], x["severity"]) for x in found} <= {("HP006", "info"), ("HP007", "info"), ("HP008", "info"),
                                                            ("RUN009", "info")}
    assert sum(x["code"] == "HP006" for x in found) == len(BENCHMARKS)


def test_an_open_run_with_closed_values_gets_an_empty_list_too(run_cli: Any, tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(division="open"))
    code, out, _ = run_cli("advise", "--ruleset", "1.0.0", log)
    assert code == 0
    assert out.splitlines()[0] == f"{log}: PASS"


def test_text_output_names_key_value_allowed_clause_and_line(run_cli: Any, tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="ssd", division="open", hyperparameters={
        "opt_learning_rate_decay_boundary_epochs": [41, 55]}))
    code, out, _ = run_cli("advise", "--ruleset", "1.1.0", "--table-only", log)
    rec = read_log(log).first("opt_learning_rate_decay_boundary_epochs")
    assert code == 1 and rec is not None
    line = rec.line
    assert (f"  {log}:{line}: error HP001 'opt_learning_rate_decay_boundary_epochs' is [41, 55]; closed allows "
            "[40, 50]*(1 + k/10) with one integer k; with k=0 that is [40, 50] "
            "(TR1.1 §Hyperparameters, ssd opt_learning_rate_decay_boundary_epochs, L357 [SD-8])") in out


@pytest.mark.parametrize("ruleset", ["2.0.0", "2.1.0", "3.0.0", "3.1.0", "4.0.0", "4.1.0", "5.0.0"])
def test_every_round_with_bert_has_a_table_and_no_hp003(run_cli: Any, tmp_path: Path, ruleset: str) -> None:
    logs = [write_run(tmp_path / f"result_{i}.txt", RunSpec(ruleset=ruleset)) for i in range(3)]
    code, out, _ = run_cli("advise", "--ruleset", ruleset, "--table-only", "--no-rcp", "--format", "json", *logs)
    report = _json(out)
    assert code == 0  # every BERT row of these rounds is free, as in 1.0/1.1
    assert report["findings"] == []
    assert all(f["findings"] == [] for f in report["files"])


def test_advice_for_a_later_round_names_its_row(run_cli: Any, tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama2_70b_lora", ruleset="5.1.0", division="open",
                                                       hyperparameters={"lora_alpha": 16}))
    code, out, _ = run_cli("advise", "--ruleset", "5.1.0", "--table-only", log)
    assert code == 1
    assert ("'lora_alpha' is 16; closed allows 32 "
            "(TR5.1 §Hyperparameters, llama2_70b_lora lora_alpha, L343 [LO-5])") in out


def test_advise_is_read_only_and_takes_folders(run_cli: Any, tmp_path: Path) -> None:
    _open_ipu_resnet(tmp_path)
    write_run(tmp_path / "ipu-pod16-open" / "resnet" / "result_1.txt", RunSpec(benchmark="resnet", division="open"))
    before = tree_digest(tmp_path)
    code, out, _ = run_cli("advise", "--ruleset", "1.0.0", "--no-rcp", "--format", "json", tmp_path)
    assert tree_digest(tmp_path) == before
    assert code == 1
    # the broken run: its two closed rules; the compliant open run: nothing keeps it out of closed (HP010)
    assert [sorted(x["code"] for x in f["findings"]) for f in _json(out)["files"]] == [["HP001", "RULE001"], ["HP010"]]


def test_bad_input_is_a_finding_and_bad_usage_exits_2(run_cli: Any, tmp_path: Path) -> None:
    binary = tmp_path / "result_0.txt"
    binary.write_bytes(b"\x00\x01\xff" * 100)
    code, out, err = run_cli("advise", "--ruleset", "1.0.0", "--format", "json", binary)
    assert code in (0, 1) and "Traceback" not in err
    assert {f["code"][:3] for f in _json(out)["files"][0]["findings"]} == {"LOG"}
    assert run_cli("advise", "--ruleset", "9.9.9", binary)[0] == 2
    assert run_cli("advise", "--ruleset", "1.0.0", tmp_path / "missing.txt")[0] == 2


def test_check_reports_hp_for_closed_logs_only(run_cli: Any, tmp_path: Path) -> None:
    bad = {"global_batch_size": 3264, "lars_opt_momentum": 0.5}
    closed = write_run(tmp_path / "closed" / "result_0.txt", RunSpec(benchmark="resnet", hyperparameters=bad))
    opened = write_run(tmp_path / "open" / "result_0.txt", RunSpec(benchmark="resnet", division="open",
                                                                     hyperparameters=bad))
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", closed, opened)
    assert code == 1
    by_path = {f["path"]: [x["code"] for x in f["findings"] if x["code"].startswith("HP")] for f in _json(out)["files"]}
    assert by_path == {str(closed): ["HP001"], str(opened): []}


def test_check_has_a_table_for_every_shipped_ruleset(run_cli: Any, tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(ruleset="1.0.0"))
    _, out, _ = run_cli("check", "--ruleset", "3.0.0", "--format", "json", log)
    assert [f["code"] for f in _json(out)["findings"] if f["code"].startswith("HP")] == []
    _, out, _ = run_cli("check", "--ruleset", "3.0.0", "--profile", "reference", "--format", "json", log)
    assert [f["code"] for f in _json(out)["findings"] if f["code"].startswith("HP")] == []


def test_explain_names_the_covered_rounds_and_the_codes(run_cli: Any) -> None:
    code, out, _ = run_cli("explain")
    assert code == 0
    assert "HP001" in out and "HP004" in out
    flat = " ".join(out.split())
    assert "1.0 to 6.1 (rulesets 1.0.0 to 6.1.0" in flat and "out of scope" in flat
    assert "training_6.1.0" in flat and "retired" in flat and "HP009" in flat and "--fail-on rcp" in flat
    code, out, _ = run_cli("explain", "HP004")
    assert code == 0 and "32768" in out
    for n in range(1, 11):  # every HP code explains itself and how to fix it
        code, out, _ = run_cli("explain", f"HP{n:03d}")
        assert code == 0 and out.startswith(f"HP{n:03d} (") and "How to fix:" in out


def test_check_reports_a_value_the_rule_file_and_the_table_both_refuse_once(run_cli: Any, tmp_path: Path) -> None:
    hps = {"global_batch_size": 1152, "opt_base_learning_rate": 8e-05, "opt_end_learning_rate": 8e-07,
           "opt_learning_rate_warmup_steps": 8000, "opt_learning_rate_decay_steps": 1192000,
           "opt_adamw_weight_decay": 0.2}
    log = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="llama31_405b", ruleset="5.1.0", hyperparameters=hps))
    line = read_log(log).first("opt_adamw_weight_decay").line  # type: ignore[union-attr]
    _, out, _ = run_cli("check", "--ruleset", "5.1.0", "--format", "json", log)
    at_line = [x for f in _json(out)["files"] for x in f["findings"] if x["line"] == line]
    assert [x["code"] for x in at_line] == ["RULE001"]
    assert "the closed table says the same" in at_line[0]["message"] and "[LL-8]" in at_line[0]["message"]
    _, out, _ = run_cli("check", "--ruleset", "5.1.0", "--profile", "reference", "--format", "json", log)
    at_line = [x for f in _json(out)["files"] for x in f["findings"] if x["line"] == line]
    assert [x["code"] for x in at_line] == ["RULE001"] and "closed table" not in at_line[0]["message"]


def test_advise_takes_each_paths_round_from_its_folder_without_ruleset(run_cli: Any, tmp_path: Path) -> None:
    old = write_run(tmp_path / "training_results_v1.0" / "result_0.txt", RunSpec(ruleset="1.0.0", division="open",
                                                                                 hyperparameters={"opt_name": "x"}))
    new = write_run(tmp_path / "training_results_v5.1" / "result_0.txt", RunSpec(
        benchmark="llama2_70b_lora", ruleset="5.1.0", division="open", hyperparameters={"lora_alpha": 16}))
    code, out, _ = run_cli("advise", "--table-only", "--no-rcp", "--format", "json", old, new)
    report = _json(out)
    assert code == 1 and report["tool"]["ruleset"] == "1.0.0, 5.1.0"
    by_path = {f["path"]: [x["message"] for x in f["findings"]] for f in report["files"]}
    assert [m[:9] for m in by_path[str(old)]] == ["open run:"]  # bert has no opt_name row: HP010
    assert len(by_path[str(new)]) == 1 and "[LO-5]" in by_path[str(new)][0]
    loose = write_run(tmp_path / "elsewhere" / "result_0.txt", RunSpec())
    assert run_cli("advise", loose)[0] == 2  # no round folder holds it: --ruleset is needed
