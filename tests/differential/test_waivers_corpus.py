"""`--write-waivers` then `--waivers` on a published tree of the corpus (tests/cli/test_waivers_cli.py: made trees)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.slow
@pytest.mark.corpus
def test_write_waivers_round_trip_on_a_real_tree(corpus: Path, tmp_path: Path, run_cli: Cli,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    tree = corpus / "training_results_v1.1" / "Graphcore"
    if not tree.is_dir():
        pytest.skip(f"{tree} is not in the corpus")
    monkeypatch.chdir(tmp_path)
    first, out1, _ = run_cli("check", str(tree), "--format", "json", "--write-waivers", "w.toml")
    assert first == 1
    second, out2, err = run_cli("check", str(tree), "--format", "json", "--waivers", "w.toml")
    found, again = json.loads(out1), json.loads(out2)
    assert second == 0, err
    assert again["summary"]["waived"] == found["summary"]["error"] + found["summary"]["warning"]
    assert not [f for f in again["findings"] if f["code"].startswith("WVR")]
