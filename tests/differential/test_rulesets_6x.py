"""Rulesets 6.0.0 and 6.1.0 as the reference package checker judges them, on organisation trees written with mllog.

No 6.x results are published, so each tree is built here: IPU-POD64 runs of five benchmarks both rounds share
(llama2_70b_lora, llama31_8b, flux1, gpt_oss_20b, deepseekv3_671b), closed, each folder's runs converging near the
RCP of their batch size, and variants that each break one thing the reference checks (6.1's newly mandatory keys
and DeepSeek's first-eval check, the RCP, the run count, seeds, convergence). The reference judges every tree in
one process; our `--profile reference` verdict and reasons must be its own, and the default profile must agree on
every folder the reference passes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.differential import our_kinds
from fixtures.synth import RunSpec
from fixtures.treefix import build_org
from mlsubmit.checker.rounds import benchmarks

pytestmark = pytest.mark.slow
SYSTEM = "ipu-pod64"
# Samples to converge, just above each RCP mean at the synthesizer's batch size.
CONVERGE = {"llama2_70b_lora": 3400, "llama31_8b": 184_320, "flux1": 8_650_752, "gpt_oss_20b": 200_704,
            "deepseekv3_671b": 786_432}
FIRST_EVAL = {"deepseekv3_671b": 16384 * 43}  # the rule files' GBS * floor(42 + 24576 / GBS) (6.1's FIRST_CHECK)


def runs(benchmark: str, ruleset: str, **changes: object) -> list[RunSpec]:
    base = RunSpec(benchmark=benchmark, ruleset=ruleset, platform="IPU-POD64", converge_at=CONVERGE[benchmark],
                   first_eval=FIRST_EVAL.get(benchmark))
    count = benchmarks.runs(benchmark) or 10  # 3 for deepseekv3_671b
    return [replace(base, seed=200 + i, start_ms=1_760_000_000_000 + i * 10_000_000, **changes) for i in range(count)]


def build(root: Path, ruleset: str, folders: dict[str, list[RunSpec]]) -> Path:
    org = build_org(root, {(SYSTEM, bench): specs for bench, specs in folders.items()})
    system = org / "systems" / f"{SYSTEM}.json"
    data = json.loads(system.read_text(encoding="utf-8"))
    data["status"] = "Available on-premise"  # the only spellings rulesets from 4.0 on accept
    system.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return org


def trees(root: Path, ruleset: str) -> dict[str, Path]:
    shared = {b: runs(b, ruleset) for b in CONVERGE}
    made = {"clean": build(root / "clean" / "Org", ruleset, shared)}
    fast = runs("llama2_70b_lora", ruleset, converge_at=2400)
    made["rcp"] = build(root / "rcp" / "Org", ruleset, {"llama2_70b_lora": fast})
    made["count"] = build(root / "count" / "Org", ruleset, {"llama31_8b": runs("llama31_8b", ruleset)[:9]})
    same_seed = runs("flux1", ruleset)
    same_seed[4] = replace(same_seed[4], seed=same_seed[0].seed)
    made["seeds"] = build(root / "seeds" / "Org", ruleset, {"flux1": same_seed})
    stalled = runs("llama2_70b_lora", ruleset)
    stalled[:2] = [replace(r, converge=False) for r in stalled[:2]]
    made["converge"] = build(root / "converge" / "Org", ruleset, {"llama2_70b_lora": stalled})
    if ruleset == "6.1.0":  # config_filename became mandatory in 6.1 (common.yaml): every run fails compliance
        made["mandatory"] = build(root / "mandatory" / "Org", ruleset,
                                  {"llama31_8b": runs("llama31_8b", ruleset, omit=("config_filename",))})  # fmt: skip
    # DeepSeek's first eval off the schedule: 6.1's FIRST_CHECK refuses every run, 6.0 has no such check.
    made["first_eval"] = build(root / "first_eval" / "Org", ruleset,
                               {"deepseekv3_671b": runs("deepseekv3_671b", ruleset, first_eval=16384 * 44)})
    return made


@pytest.mark.parametrize("ruleset", ["6.0.0", "6.1.0"])
def test_our_verdicts_are_the_references(
    ruleset: str, tmp_path: Path, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    made = trees(tmp_path, ruleset)
    jobs = "".join(f"{ruleset}\t{org}\n" for org in made.values())
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"],
                          input=jobs, capture_output=True, text=True, check=True, timeout=900)  # fmt: skip
    refs = dict(zip(made, (json.loads(line) for line in proc.stdout.splitlines()), strict=True))
    verdicts = {name: (None if r["crash"] else r["ok"]) for name, r in refs.items()}
    expected = {"clean": True, "rcp": False, "count": False, "seeds": False, "converge": False, "mandatory": False,
                "first_eval": ruleset == "6.0.0"}
    assert verdicts == {name: expected[name] for name in made}
    for name, org in made.items():
        code, out, _ = run_cli("check", "--ruleset", ruleset, "--profile", "reference", "--format", "json", org)
        data = json.loads(out)
        findings = data["findings"] + [f for e in data["files"] for f in e["findings"]]
        assert code == (0 if refs[name]["ok"] else 1), (name, refs[name]["error_lines"])
        assert our_kinds(findings) == refs[name]["kinds"], name
    code, out, _ = run_cli("check", "--ruleset", ruleset, "--format", "json", made["clean"])
    data = json.loads(out)
    rcp = [f for f in data["findings"] if f["code"] in ("TREE018", "TREE019", "TREE020", "TREE021")]
    assert sorted(f["code"] for f in rcp) == ["TREE019"] * len(CONVERGE), rcp  # default profile: the RCPs pass
