"""Issue 38: `report --generate-private-ids DIR` writes, byte for byte, the privateid.json files mlperf-logging's
result summarizer writes with --generate_private_ids; differential on every corpus tree. The summarizer runs on a
skeleton copy (system files, empty system folders, any privateid.json already there): ids come from the system
files alone, and the summarizer writes them before it reads a result."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_path
from fixtures.summarizer_run import corpus_trees, package_check

from mlsubmit.report.private_ids import HASHED, spell

Cli = Callable[..., tuple[int, str, str]]
TREES = corpus_trees(corpus_path()) if corpus_path() else []


def skeleton(tree: Path, dest: Path) -> Path:
    org = dest / tree.name
    shutil.copytree(tree / "systems", org / "systems", ignore=shutil.ignore_patterns("*.swp", ".*"))
    for system in (tree / "results").iterdir():
        if system.is_dir():
            (org / "results" / system.name).mkdir(parents=True)
            if (system / "privateid.json").is_file():
                shutil.copyfile(system / "privateid.json", org / "results" / system.name / "privateid.json")
    return org


def written_ids(root: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in sorted(root.glob("*/results/*/privateid.json"))}


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize(("name", "tree", "ruleset"), TREES, ids=[t[0] for t in TREES])
def test_the_ids_are_the_summarizers(tmp_path: Path, run_cli: Cli, name: str, tree: Path, ruleset: str) -> None:
    chair = tmp_path / "chair"
    org = skeleton(tree, chair)
    before = written_ids(chair)
    proc = subprocess.run([sys.executable, "-m", "mlperf_logging.result_summarizer", org.name, "training", ruleset,
                           "--generate_private_ids"], cwd=chair, capture_output=True, text=True, timeout=300,
                          check=False)  # fmt: skip
    theirs = {k: v for k, v in written_ids(chair).items() if before.get(k) != v}
    _code, out, err = run_cli("report", "--ruleset", ruleset, tree, "--generate-private-ids", tmp_path / "ours")
    ours = written_ids(tmp_path / "ours")
    if proc.returncode != 0:  # the summarizer stopped (a system file without a hashed key): REP010 says where
        assert "KeyError" in proc.stderr and "REP010" in out + err, proc.stderr[-1500:]
        assert all(theirs[k] == ours[k] for k in theirs)
        return
    assert ours == theirs and (theirs or before), (proc.stdout[-1500:], err)
    assert all(json.loads(v)["private_id"].count("-") == 3 for v in ours.values())


def test_spelling_and_collisions() -> None:
    from mlsubmit.report.private_ids import private_id

    assert spell("00" * 32) == "ack-ack-ack-ack"  # every segment folds to byte 0: the list's first word
    assert spell("ff" + "00" * 31) == "zulu-ack-ack-ack"  # the first segment alone carries 0xff: its last word
    desc = dict.fromkeys(HASHED, "x")
    seen: set[str] = set()
    first, second = private_id(desc, "a", seen), private_id(desc, "b", seen)
    assert first != second  # the same description twice: the second gets its system id in the hash


def test_the_ids_never_go_into_the_checked_tree(tmp_path: Path, run_cli: Cli) -> None:
    from fixtures.synth import RunSpec
    from fixtures.treefix import build_org

    org = build_org(tmp_path / "Graphcore", {("sys", "resnet"): [RunSpec(benchmark="resnet")]})
    code, _out, err = run_cli("report", "--ruleset", "1.0.0", org, "--generate-private-ids", org / "results")
    assert code == 2 and "inside or above the checked" in err
    code, _out, err = run_cli("report", "--ruleset", "1.0.0", org, "--generate-private-ids", tmp_path / "ids")
    assert (tmp_path / "ids" / "Graphcore" / "results" / "sys" / "privateid.json").is_file(), err
    (tmp_path / "ids" / "Graphcore" / "results" / "sys" / "privateid.json").write_text("{}", encoding="utf-8")
    code, _out, err = run_cli("report", "--ruleset", "1.0.0", org, "--generate-private-ids", tmp_path / "ids")
    assert code == 2 and "never replaces a file" in err


@pytest.mark.slow
@pytest.mark.corpus
def test_the_summary_shows_the_ids_it_generates_as_the_summarizer_does(
    tmp_path: Path, run_cli: Cli, reference: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The summarizer run with --generate_private_ids puts the new ids in its private_id column: so does ours
    (the same bytes, on a corpus tree the package checker has settled first, as the verify script runs them: the
    package checker's run is the one test_reference_package reads, kept once per session)."""
    found = [t for t in TREES if t[0].endswith("IBM+CoreWeave+NVIDIA")]
    if not found:
        pytest.skip("the corpus has no training_results_v5.0/IBM+CoreWeave+NVIDIA")
    _name, tree, ruleset = found[0]
    chair = tmp_path / "chair"
    checked, verdict = package_check(reference, tmp_path_factory, tree, ruleset)
    assert verdict["crash"] is None, verdict
    shutil.copytree(checked / "copy" / tree.name, chair / tree.name)
    subprocess.run([sys.executable, "-m", "mlperf_logging.result_summarizer", tree.name, "training", ruleset,
                    "--csv", "chair.csv", "--generate_private_ids"], cwd=chair, capture_output=True, timeout=300,
                   check=True)  # fmt: skip
    code, _out, err = run_cli("report", "--ruleset", ruleset, tree, "--generate-private-ids", tmp_path / "ids",
                              "--summary-csv", tmp_path / "ours.csv", "-o", tmp_path / "table.txt")
    assert code in (0, 1), err
    assert b"-" in (chair / "chair.csv").read_bytes().splitlines()[1]  # an id is there
    assert (tmp_path / "ours.csv").read_bytes() == (chair / "chair.csv").read_bytes()
    assert written_ids(tmp_path / "ids") == written_ids(chair)


def test_a_hashed_value_that_is_not_text_is_rep010_not_a_crash(tmp_path: Path, run_cli: Cli) -> None:
    """Issue 49: a lone surrogate in a hashed field raised UnicodeEncodeError (exit 3); the summarizer stops there."""
    from fixtures.synth import RunSpec
    from fixtures.treefix import build_org

    org = build_org(tmp_path / "Graphcore", {("sys", "resnet"): [RunSpec(benchmark="resnet")]})
    desc = org / "systems" / "sys.json"
    desc.write_text(desc.read_text(encoding="utf-8").replace('"framework": "', '"framework": "\\ud800'),
                    encoding="utf-8")
    code, _out, err = run_cli("report", "--ruleset", "1.0.0", "--format", "json", org, "--generate-private-ids",
                             tmp_path / "ids")
    assert code == 1 and "internal error" not in err and "wrote 0 privateid.json" in err
    assert not (tmp_path / "ids" / "Graphcore" / "results" / "sys" / "privateid.json").exists()
