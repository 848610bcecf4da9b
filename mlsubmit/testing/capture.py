"""mlperf-sysinfo captures for tests and demos, in the format its training profile writes (1.0.0a12).

`THIS_HOST` holds what mlperf-sysinfo 1.0.0a12 (mlc-scripts 1.2.0a8) captured on the 2-core build machine of this
project on 2026-11-25 with `accelerator: none` (the config's statements included: submitter, status, cooling,
networking topology, framework). `DUAL_EPYC` is a dual-socket AMD EPYC 7742 host, as Graphcore's POD16 server is:
mlc-scripts gives the cores and threads of all sockets together.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlsubmit.checker.tree.reference import REQUIRED_SYSTEM_FIELDS

FIELDS = REQUIRED_SYSTEM_FIELDS  # the 33 fields mlperf-sysinfo's training profile writes: the checker's list

THIS_HOST: dict[str, str] = {
    "submitter": "Graphcore", "division": "closed", "status": "Available on-premise", "system_name": "IPU-POD16",
    "number_of_nodes": "1", "host_processors_per_node": "1", "host_processor_model_name": "AMD EPYC",
    "host_processor_core_count": "2", "host_processor_vcpu_count": "2",
    "host_processor_caches": "L1d: 96 KiB (2 instances); L1i: 64 KiB (2 instances); L2: 2 MiB (2 instances); "
                             "L3: 32 MiB (1 instance)",
    "host_processor_interconnect": "Single NUMA node", "host_memory_capacity": "25G",
    "host_storage_type": "SSD + HDD", "host_storage_capacity": "252 GB HDD", "host_networking": "Ethernet",
    "host_networking_topology": "Single host server; 100GbE to the IPU-M2000s", "cooling": "air",
    "framework": "PopART Poplar SDK 3.4.0", "operating_system": "debian 12",
}  # fmt: skip

DUAL_EPYC: dict[str, str] = {
    **THIS_HOST, "host_processors_per_node": "2", "host_processor_model_name": "AMD EPYC 7742 64-Core Processor",
    "host_processor_core_count": "128", "host_processor_vcpu_count": "256", "host_processor_frequency": "3400 MHz",
    "host_memory_capacity": "1.0T", "host_memory_configuration": "32 x 32GB DDR4 3200 MT/s",
    "host_processor_interconnect": "2 NUMA nodes",
}  # fmt: skip


def provenance(*, complete: bool = True, nodes: int = 1, answered: int | None = None,
               benchmark: str = "training") -> dict[str, Any]:  # fmt: skip
    """The `mlperf_sysinfo` block as output.provenance() writes it (a fixed time, so tests are byte-stable)."""
    block: dict[str, Any] = {
        "version": "1.0.0a12", "profile": benchmark, "shape": "flat", "benchmark": benchmark,
        "captured_at": "2026-11-25T15:55:35+00:00", "nodes_expected": nodes,
        "nodes_collected": nodes if answered is None else answered, "complete": complete,
    }  # fmt: skip
    if not complete:
        block["warning"] = ("PARTIAL CAPTURE -- one or more nodes did not answer. "
                            "This file does not describe the whole system.")  # fmt: skip
    block["mlc_scripts"] = {"repo": "mlc_scripts", "source": "package", "version": "1.2.0a8"}
    return block


def capture_document(host: dict[str, str] | None = None, **block: Any) -> dict[str, Any]:
    """Every training field (blank where the host gives none) in the profile's order, then the block."""
    host = THIS_HOST if host is None else host
    return {**{name: host.get(name, "") for name in FIELDS}, "mlperf_sysinfo": provenance(**block)}


def write_capture(path: Path, document: dict[str, Any] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(capture_document() if document is None else document, indent=2) + "\n",
                    encoding="utf-8")  # fmt: skip
    return path
