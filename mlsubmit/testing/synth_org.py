"""Write a small organisation tree (systems/ + results/) of synthetic runs, for report fixtures and demos.

Logs come from `testing.synth` (mlperf-logging's own logger); system descriptions hold every field mlperf-logging's
result summarizer reads, so the reference tools can run on the same tree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mlsubmit.testing.synth import RunSpec, write_run

SYSTEM_TEMPLATE: dict[str, Any] = {
    "submitter": "Graphcore",
    "division": "closed",
    "status": "onprem",
    "system_name": "IPU-POD16",
    "number_of_nodes": "1",
    "host_processors_per_node": "2",
    "host_processor_model_name": "AMD EPYC 7742",
    "host_processor_core_count": "64",
    "host_processor_vcpu_count": "",
    "host_processor_frequency": "",
    "host_processor_caches": "",
    "host_processor_interconnect": "",
    "host_memory_capacity": "512GB",
    "host_storage_type": "NVMe SSD",
    "host_storage_capacity": "4TB",
    "host_networking": "100GbE",
    "host_networking_topology": "",
    "host_memory_configuration": "",
    "accelerators_per_node": "16",
    "accelerator_model_name": "Graphcore IPU GC200",
    "accelerator_host_interconnect": "25GbE",
    "accelerator_frequency": "1.33 GHz",
    "accelerator_on-chip_memories": "900 MB",
    "accelerator_memory_configuration": "DDR4",
    "accelerator_memory_capacity": "32GB",
    "accelerator_interconnect": "IPU-Link",
    "accelerator_interconnect_topology": "",
    "cooling": "air",
    "hw_notes": "",
    "framework": "PopART Poplar SDK 2.1.0",
    "other_software_stack": "",
    "operating_system": "Ubuntu 18.04",
    "sw_notes": "",
}


def system(**changes: Any) -> dict[str, Any]:
    """A complete system description with some fields changed."""
    return {**SYSTEM_TEMPLATE, **changes}


def write_org(
    root: Path,
    systems: Mapping[str, Mapping[str, Any]],
    runs: Mapping[tuple[str, str], Sequence[RunSpec]],
) -> Path:
    """Write `root/systems/<id>.json` and `root/results/<id>/<benchmark>/result_<i>.txt`; returns root."""
    (root / "systems").mkdir(parents=True, exist_ok=True)
    for system_id, desc in systems.items():
        (root / "systems" / f"{system_id}.json").write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")
    for (system_id, benchmark), specs in runs.items():
        for i, spec in enumerate(specs):
            path = root / "results" / system_id / benchmark / f"result_{i}.txt"
            write_run(path, replace(spec, benchmark=benchmark))
    return root


ROUND_MS = 180 * 86_400_000  # about the time between two rounds: a later round's runs start this much later


def runs(minutes: Sequence[float], *, first_ms: int = 1_620_000_000_000, **common: Any) -> list[RunSpec]:
    """One RunSpec per duration; the seed and start time differ so runs are distinct, as real ones are. The first
    starts at `first_ms`: a tree of another round gives another (review preview tells the same runs apart)."""
    return [
        RunSpec(minutes=m, seed=1000 + i, start_ms=first_ms + i * 7_200_000, **common)
        for i, m in enumerate(minutes)
    ]
