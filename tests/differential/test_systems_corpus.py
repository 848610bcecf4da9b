"""Every system description in the real corpus: the findings expected per file, and no traceback.

The table was read finding by finding against the files (see docs/systems.md, "Corpus figures"). It pins the
known quirks: Graphcore's repeated host_storage_type (POD64/POD128 POPART and TF files), GIGABYTE's repeated
accelerator_model_name with two different values, TODO in required (SYS017) and optional (SYS018) fields,
PCL's "division": "close" (SYS013) with "system-type" for system_type (SYS021), and 8 EPYC per node on
Graphcore's ResNet-50 POD64+ systems (SYS033, 4 servers per POD64).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from mlsubmit.checker.systems.descriptions import check_system_file

pytestmark = pytest.mark.corpus

EXPECTED: dict[str, dict[str, int]] = {
    "training_results_v1.0/GIGABYTE/systems/G492-ZD2_A100_20210517.merlin_hugectr.json": {},
    "training_results_v1.0/GIGABYTE/systems/G492-ZD2_A100_20210517.mxnet.json": {},
    "training_results_v1.0/GIGABYTE/systems/G492-ZD2_A100_20210517.pytorch.json": {},
    "training_results_v1.0/GIGABYTE/systems/G492-ZD2_A100_20210517.tensorflow.json": {"SYS005": 1},
    "training_results_v1.0/Google/systems/tpu-v4-1024-JAX.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-128-JAX.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-128-TF.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-2048-TF.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-256-JAX-Distributed-Shampoo.json": {"SYS017": 2, "SYS018": 11,
                                                                                     "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-256-TF.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-4096-TF.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Google/systems/tpu-v4-6912-TF.json": {"SYS017": 2, "SYS018": 12, "SYS019": 1},
    "training_results_v1.0/Graphcore/systems/ipu-pod16-POPART-closed.json": {"SYS018": 2, "SYS019": 1},
    "training_results_v1.0/Graphcore/systems/ipu-pod16-POPART-open.json": {"SYS018": 2, "SYS019": 1},
    "training_results_v1.0/Graphcore/systems/ipu-pod16-TF1.json": {"SYS018": 2, "SYS019": 1},
    "training_results_v1.0/Graphcore/systems/ipu-pod64-POPART-closed.json": {"SYS005": 1, "SYS019": 1},
    "training_results_v1.0/Graphcore/systems/ipu-pod64-POPART-open.json": {"SYS005": 1, "SYS019": 1},
    "training_results_v1.0/Graphcore/systems/ipu-pod64-TF1.json": {"SYS005": 1, "SYS019": 1, "SYS033": 1},
    "training_results_v1.0/Habana/systems/SYS-420GH-TNGR.json": {"SYS019": 1},
    "training_results_v1.0/PCL/systems/CloudBrainII_1024_mindspore_close.json": {"SYS013": 1, "SYS019": 1,
                                                                               "SYS021": 1},
    "training_results_v1.0/PCL/systems/CloudBrainII_256_mindspore_close.json": {"SYS013": 1, "SYS019": 1,
                                                                              "SYS021": 1},
    "training_results_v1.0/PCL/systems/CloudBrainII_Enhanced_Prototype_256_mindspore_close.json": {
        "SYS013": 1, "SYS016": 1, "SYS019": 1, "SYS021": 1},
    "training_results_v1.1/Baidu/systems/1_node_8_A100_NGC21.05_MXNet.json": {"SYS019": 1},
    "training_results_v1.1/Baidu/systems/1_node_8_A100_PaddlePaddle.json": {"SYS019": 1},
    "training_results_v1.1/Google/systems/tpu-v4-2048-JAX.json": {"SYS017": 1, "SYS018": 12, "SYS019": 1},
    "training_results_v1.1/Google/systems/tpu-v4-4096-TF.json": {"SYS018": 12, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod128-POPART-closed.json": {"SYS005": 1, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod128-POPART-open.json": {"SYS005": 1, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod128-TF1.json": {"SYS018": 2, "SYS019": 1, "SYS033": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod16-POPART-closed.json": {"SYS018": 2, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod16-POPART-open.json": {"SYS018": 2, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod16-TF1.json": {"SYS018": 2, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod256-TF1.json": {"SYS018": 2, "SYS019": 1, "SYS033": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod64-POPART-closed.json": {"SYS005": 1, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod64-POPART-open.json": {"SYS005": 1, "SYS019": 1},
    "training_results_v1.1/Graphcore/systems/ipu-pod64-TF1.json": {"SYS005": 1, "SYS019": 1, "SYS033": 1},
}


def ruleset_of(rel: str) -> str:
    return "1.0.0" if rel.startswith("training_results_v1.0/") else "1.1.0"


def test_every_system_file_in_the_corpus_gives_located_findings(corpus: Path) -> None:
    """Every system file of every round, the pinned ones and any added later: no traceback, and each finding has
    its path, a line and a hint."""
    on_disk = sorted(str(p.relative_to(corpus)) for p in corpus.glob("training_results_v*/*/systems/*.json"))
    assert set(on_disk) >= {rel for rel in EXPECTED if (corpus / rel).exists()} and on_disk
    for rel in on_disk:
        ruleset = rel.split("/", 1)[0].split("_v", 1)[1] + ".0"
        _, findings = check_system_file(corpus / rel, rel, ruleset)
        for f in findings:
            assert f.path == rel and (f.line is not None or f.pointer is not None) and f.hint, (rel, f)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_expected_findings_per_file(corpus: Path, rel: str) -> None:
    if not (corpus / rel).exists():
        pytest.skip(f"{rel} is not in this corpus")
    _, findings = check_system_file(corpus / rel, rel, ruleset_of(rel))
    assert dict(Counter(f.code for f in findings)) == EXPECTED[rel]
    for f in findings:
        assert f.path == rel and f.line is not None and f.hint


def test_graphcore_duplicate_storage_type_names_both_lines(corpus: Path) -> None:
    rel = "training_results_v1.0/Graphcore/systems/ipu-pod64-TF1.json"
    _, findings = check_system_file(corpus / rel, rel, "1.0.0")
    dup = next(f for f in findings if f.code == "SYS005")
    assert (dup.pointer, dup.line, dup.related[0].line, dup.severity.value) == (
        "/host_storage_type", 16, 15, "warning")
    servers = next(f for f in findings if f.code == "SYS033")
    assert "4 host servers per node" in servers.message


def test_gigabyte_duplicate_with_different_values_is_an_error(corpus: Path) -> None:
    rel = "training_results_v1.0/GIGABYTE/systems/G492-ZD2_A100_20210517.tensorflow.json"
    _, findings = check_system_file(corpus / rel, rel, "1.0.0")
    assert [(f.code, f.severity.value, f.pointer) for f in findings] == [
        ("SYS005", "error", "/accelerator_model_name")]


def test_todo_fields_and_pcl_close(corpus: Path) -> None:
    rel = "training_results_v1.1/Graphcore/systems/ipu-pod16-POPART-closed.json"
    _, findings = check_system_file(corpus / rel, rel, "1.1.0")
    assert sorted(f.pointer or "" for f in findings if f.code == "SYS018") == [
        "/host_memory_configuration", "/host_networking_topology"]
    rel = "training_results_v1.0/PCL/systems/CloudBrainII_256_mindspore_close.json"
    _, findings = check_system_file(corpus / rel, rel, "1.0.0")
    close = next(f for f in findings if f.code == "SYS013")
    assert (close.line, close.pointer, close.severity.value) == (3, "/division", "error")
