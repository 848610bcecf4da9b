"""`check --custom-rcps FILE` (mlperf-logging's `rcp_checker --custom_rcps`) and the verify script's
`--rcp-bert-train-samples` read from the organisation's package_checker_params."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.demo import MODERN_SYSTEM
from fixtures.flowfix import BENCHMARK, ORG, RULESET, write_system
from fixtures.synth import RunSpec
from fixtures.treefix import build_org

Cli = Callable[..., tuple[int, str, str]]
RECORD = {"Benchmark": BENCHMARK, "BS": 8, "Hyperparams": {"opt_base_learning_rate": 4e-4},
          "samples to converge": [2304, 2304, 2688, 2304, 2304, 2688, 2304, 2304, 2688, 2304]}
BERT_RECORD = {"Benchmark": "bert", "BS": 8, "Hyperparams": {}, "Epochs to converge": [2.5e6] * 10}


def fast_tree(root: Path) -> Path:
    """A closed 6.1 llama2_70b_lora folder converging at 2400 samples: faster than the shipped RCPs allow."""
    base = RunSpec(benchmark=BENCHMARK, ruleset=RULESET, platform="IPU-POD64", converge_at=2400, raw_output=True)
    specs = [replace(base, seed=700 + i, start_ms=1_790_000_000_000 + i * 10_000_000) for i in range(10)]
    org = build_org(root / ORG, {(MODERN_SYSTEM, BENCHMARK): specs}, systems={})
    write_system(org / "systems", ROOT / "systems")
    return org


def rcp_codes(out: str) -> list[str]:
    return sorted(f["code"] for f in json.loads(out)["findings"] if f["code"].startswith("TREE0") and
                  f["code"] in ("TREE018", "TREE019", "TREE020", "TREE021", "TREE024"))


def test_custom_rcps_replace_the_shipped_ones(tmp_path: Path, run_cli: Cli) -> None:
    org = fast_tree(tmp_path)
    code, out, _ = run_cli("check", "--ruleset", RULESET, "--format", "json", org)
    assert rcp_codes(out) == ["TREE018"]
    rcps = tmp_path / "rcps.json"
    rcps.write_text(json.dumps({"llama2_70b_lora_late_8": RECORD, "bert_x": BERT_RECORD}))
    code, out, err = run_cli("check", "--ruleset", RULESET, "--format", "json", "--custom-rcps", rcps, org)
    assert rcp_codes(out) == ["TREE019"], err
    assert code in (0, 1)


@pytest.mark.parametrize(("text", "said"), [
    (None, "cannot read it"),
    ("{not json", "not JSON an RCP file can hold: Expecting property name enclosed in double quotes: line 1 column 2"),
    ("[]", "an RCP file is a JSON object of records"),
    (json.dumps({"r": {**RECORD, "BS": "8"}}), "record 'r': \"BS\" is not a positive integer"),
    (json.dumps({"r": {**RECORD, "samples to converge": [1, float("nan")]}}), "NaN is not a JSON number"),
    # issue 35: read through core/support/jsontext like every JSON we did not write (json.loads: RecursionError)
    ("[" * 100_000 + "]" * 100_000, "not JSON an RCP file can hold: nested more than 64 levels deep"),
    (json.dumps({"r": {**RECORD, "samples to converge": [1, 7]}}).replace("7", "1e999"), "out of a float's range"),
    (json.dumps({"r": {k: v for k, v in RECORD.items() if k != "samples to converge"}}),
     "has no 'samples to converge'"),
    # the reference reads one key per benchmark: the other one was a KeyError there (TREE020), not a usage error
    (json.dumps({"r": {**{k: v for k, v in RECORD.items() if k != "samples to converge"},
                       "Epochs to converge": RECORD["samples to converge"]}}), "has no 'samples to converge'"),
    (json.dumps({"r": {**RECORD, "Benchmark": "bert"}}), "has no 'Epochs to converge' (the key of bert's runs)"),
    (json.dumps({"r": RECORD, "s": {**RECORD, "Benchmark": "bert"}}), "record 's' has no 'Epochs to converge'"),
    ("\xff".encode("latin-1"), "not UTF-8 text"),
])  # fmt: skip
def test_an_unusable_rcp_file_is_exit_2(tmp_path: Path, run_cli: Cli, text: str | bytes | None, said: str) -> None:
    rcps = tmp_path / "rcps.json"
    if isinstance(text, bytes):
        rcps.write_bytes(text)
    elif text is not None:
        rcps.write_text(text, encoding="utf-8")
    org = tmp_path / "empty"
    org.mkdir()
    code, out, err = run_cli("check", "--ruleset", RULESET, "--custom-rcps", rcps, org)
    assert code == 2 and said in err, (out, err)


def test_the_reference_profile_refuses_custom_rcps(tmp_path: Path, run_cli: Cli) -> None:
    rcps = tmp_path / "rcps.json"
    rcps.write_text(json.dumps({"r": RECORD}), encoding="utf-8")
    code, _, err = run_cli("check", "--ruleset", RULESET, "--profile", "reference", "--custom-rcps", rcps, tmp_path)
    assert code == 2 and "the package checker takes no custom RCPs" in err


@pytest.mark.parametrize("profile", ["full", "reference"])
def test_bert_train_samples_from_the_org_params(tmp_path: Path, run_cli: Cli, profile: str) -> None:
    """BERT runs whose eval epoch_num is tiny (fail the RCPs) but whose train_samples (3,000,000) pass them: the
    flag makes the reference's reader take train_samples, as the verify script passes it from 2.0 on."""
    base = RunSpec(benchmark="bert", ruleset="2.0.0", raw_output=True)
    specs = [replace(base, seed=50 + i, start_ms=1_650_000_000_000 + i * 10_000_000) for i in range(10)]
    org = build_org(tmp_path / "Org", {("sys", "bert"): specs})
    found = []
    for params in (None, "rcp-bert-train-samples\n"):
        if params is not None:
            (org / "package_checker_params").write_text(params, encoding="utf-8")
        _, out, _ = run_cli("check", "--ruleset", "2.0.0", "--profile", profile, "--format", "json", org)
        found.append(rcp_codes(out))
    assert found == [["TREE018"], ["TREE019"]], found
