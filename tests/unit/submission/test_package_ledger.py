"""`package` takes a set's runs from the run ledger, lists the whole run set in the manifest and writes the round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.demo import BERT_SYSTEM, ledger_config_text, write_example, write_runs

from mlsubmit.cli import main

RULESET = "1.1.0"


def _config(root: Path) -> Path:
    config = root / "ledger.toml"
    config.write_text(ledger_config_text("ledger.db", RULESET), encoding="utf-8")
    return config


def test_package_from_the_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ex = write_example(tmp_path)
    runs = tmp_path / "runs" / "pod16-bert"
    assert main(["check", "--ruleset", RULESET, "--system", BERT_SYSTEM, "--ledger", str(tmp_path / "ledger.db"),
                 str(runs)]) == 0
    assert main(["package", str(_config(tmp_path))]) == 0
    out = tmp_path / "submission"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (sel,) = manifest["selections"]
    assert sel["ledger"] == "ledger.db" and sel["candidates"] == 10
    assert [r["source_sha256"] for r in sel["run_set"]] == [r["source_sha256"] for r in manifest["results"]]
    assert {r["source"] for r in sel["run_set"]} == {f"runs/pod16-bert/{p.name}" for p in ex.bert_runs}
    assert (out / ".mlsubmit-round").read_text() == "1.1\n"  # beside the tree: the repo checker refuses dot names in it
    assert not (out / "Graphcore" / ".mlsubmit-round").exists()
    assert "Graphcore/.mlsubmit-round" not in {f["path"] for f in manifest["files"]}

    ex.bert_runs[5].write_bytes(ex.bert_runs[5].read_bytes() + b"job restarted\n")  # a rerun wrote over it
    capsys.readouterr()
    assert main(["package", str(_config(tmp_path)), "--color", "never"]) == 1
    text = capsys.readouterr().out
    assert "RUN008" in text and "changed since ledger.db recorded it" in text and "PKG004" in text


def test_a_trees_round_wins_over_a_repository_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_example(tmp_path)
    assert main(["package", str(tmp_path / "package.toml")]) == 0
    (tmp_path / "mlsubmit.toml").write_text('[check]\nruleset = "1.0"\n', encoding="utf-8")
    capsys.readouterr()
    main(["check", str(tmp_path / "build" / "submission" / "Graphcore")])
    err = capsys.readouterr().err
    assert "ruleset 1.1.0 (from " in err and "which wins over" in err and "(ruleset 1.0.0)" in err


def test_a_tree_checked_into_the_ledger_is_recorded_by_results_folder(tmp_path: Path) -> None:
    from mlsubmit.checker.base.ledger_rows import read

    write_example(tmp_path)
    assert main(["package", str(tmp_path / "package.toml")]) == 0
    db = tmp_path / "tree.db"
    assert main(["check", "--ruleset", RULESET, "--ledger", str(db), str(tmp_path / "build" / "submission")]) == 0
    entries = read(db)
    assert len(entries) == 15
    bert = [e for e in entries if e.benchmark == "bert"]
    assert {e.system for e in bert} == {BERT_SYSTEM} and all(e.rcp_mean and e.rcp_fastest for e in bert)


def test_a_changed_recorded_run_stops_the_build_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 47: one line appended to a recorded log of 12 moved the median window and packaging exited 0."""
    write_example(tmp_path)
    runs = write_runs(tmp_path / "runs12", "bert", BERT_SYSTEM, 12)
    assert main(["check", "--ruleset", RULESET, "--system", BERT_SYSTEM, "--ledger", str(tmp_path / "ledger.db"),
                 str(tmp_path / "runs12")]) == 0
    config = _config(tmp_path)
    config.write_text(config.read_text(encoding="utf-8") + 'select = "median-window"\n', encoding="utf-8")
    runs[4].write_bytes(runs[4].read_bytes() + b"job restarted\n")
    capsys.readouterr()
    assert main(["package", str(config), "--color", "never"]) == 1
    text = capsys.readouterr().out
    assert "RUN008" in text and f"{runs[4].resolve()}: changed since ledger.db recorded it" in text
    assert not (tmp_path / "submission").exists()  # nothing packaged: not the recorded set, not another one
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ledger.db")) == ["ledger.db"]
