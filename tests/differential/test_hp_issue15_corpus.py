"""Issue 15's v5.1 cases on copies of published, compliant v5.1 closed logs, one value changed at a time: what
`mlsubmit check` reports, next to what mlperf-logging's rule files alone catch (RULE001)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mlsubmit.checker.logs.reader import read_log

pytestmark = pytest.mark.corpus

NEBIUS = "training_results_v5.1/Nebius/results"
LORA = f"{NEBIUS}/nebius_b200_n1/llama2_70b_lora/result_1.txt"
L8B = f"{NEBIUS}/nebius_b200_n1/llama31_8b/result_01.txt"
L405 = f"{NEBIUS}/nebius_h200_n64/llama31_405b/result_1.txt"


def mutate(corpus: Path, tmp_path: Path, rel: str, changes: dict[str, Any]) -> Path:
    """A copy of a published log with the first record of each key given a new value (nothing else touched)."""
    text = (corpus / rel).read_text(encoding="utf-8")
    for key, value in changes.items():
        pattern = re.compile(r'("key": "' + re.escape(key) + r'", "value": )([^,]+)(, "metadata")')
        text, n = pattern.subn(lambda m, v=value: m.group(1) + json.dumps(v) + m.group(3), text, count=1)
        assert n == 1, key
    out = tmp_path / "result_1.txt"
    out.write_text(text, encoding="utf-8")
    return out


def check(run_cli: Any, log: Path) -> dict[int, tuple[str, str]]:
    _, out, _ = run_cli("check", "--ruleset", "5.1.0", "--format", "json", log)
    report = json.loads(out)
    return {f["line"]: (f["code"], f["message"]) for e in report["files"] for f in e["findings"]
            if f["code"].startswith(("HP", "RULE001"))}


def line(log: Path, key: str) -> int:
    rec = read_log(log).first(key)
    assert rec is not None
    return rec.line


@pytest.mark.parametrize("rel", [LORA, L8B, L405])
def test_the_published_logs_pass(run_cli: Any, corpus: Path, tmp_path: Path, rel: str) -> None:
    assert check(run_cli, mutate(corpus, tmp_path, rel, {})) == {}


@pytest.mark.parametrize(("key", "value", "row"), [("lora_alpha", 16, "LO-5"), ("opt_gradient_clip_norm", 0.5, "LO-2"),
                                                   ("opt_adamw_weight_decay", 0.001, "LO-6")])
def test_llama2_70b_lora_values_the_rule_file_lets_through(run_cli: Any, corpus: Path, tmp_path: Path, key: str,
                                                          value: Any, row: str) -> None:
    log = mutate(corpus, tmp_path, LORA, {key: value})
    assert check(run_cli, log) == {line(log, key): ("HP001", check(run_cli, log)[line(log, key)][1])}
    assert f"[{row}]" in check(run_cli, log)[line(log, key)][1]


def test_llama31_8b_end_learning_rate(run_cli: Any, corpus: Path, tmp_path: Path) -> None:
    log = mutate(corpus, tmp_path, L8B, {"opt_end_learning_rate": 8e-05})  # 0.2 x base 4e-4
    (code, message), = check(run_cli, log).values()
    assert code == "HP001" and "[LS-10]" in message and "closed allows opt_base_learning_rate * 0.1" in message


@pytest.mark.parametrize(("key", "value", "row"), [("opt_adamw_beta_2", 0.99, "LS-3"),
                                                   ("opt_adamw_epsilon", 1e-08, "LS-4"),
                                                   ("opt_adamw_weight_decay", 0.01, "LS-6")])
def test_values_both_catch_are_reported_once(run_cli: Any, corpus: Path, tmp_path: Path, key: str, value: Any,
                                             row: str) -> None:
    log = mutate(corpus, tmp_path, L8B, {key: value})
    (code, message), = check(run_cli, log).values()
    assert code == "RULE001" and "the closed table says the same" in message and f"[{row}]" in message


def test_llama31_405b_at_batch_960(run_cli: Any, corpus: Path, tmp_path: Path) -> None:
    log = mutate(corpus, tmp_path, L405, {"global_batch_size": 960, "opt_end_learning_rate": 1e-06,
                                          "opt_learning_rate_decay_steps": 1440000 - 8000})
    found = check(run_cli, log)
    warm, end = found[line(log, "opt_learning_rate_warmup_steps")], found[line(log, "opt_end_learning_rate")]
    assert warm[0] == "HP001" and "[LL-10]" in warm[1] and "that is 9600 with global_batch_size 960" in warm[1]
    assert end[0] == "HP001" and "[LL-14]" in end[1] and "closed allows 8e-07" in end[1]
    lr = found[line(log, "opt_base_learning_rate")]  # 8e-5 at 960: outside the side table, and not 8e-5*960/1152
    assert lr[0] == "RULE001" and "[LL-13]" in lr[1] and "outside it" in lr[1]
