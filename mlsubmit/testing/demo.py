"""An example packaging job: raw IPU job output, system files, a git repository and the config that ties them.

Used by `make demo` (through `run_demo`) and by the packaging tests. Runs are written with mllog (testing.synth)
and then dressed as raw job output: launcher prefixes, interleaved training output, one file gzipped.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from mlsubmit.testing.synth import RunSpec, render

BERT_SYSTEM = "ipu-pod16-POPART-closed"
RESNET_SYSTEM = "ipu-pod64-TF-closed"
TAG = "v1.0"

# A minimal but complete system description (the submission rules' fields), used when no systems folder is given.
_SYSTEM_FIELDS = {
    "submitter": "Graphcore", "division": "closed", "status": "onprem", "system_name": "IPU-POD16",
    "number_of_nodes": "1", "host_processors_per_node": "2", "host_processor_model_name": "AMD EPYC 7742",
    "host_processor_core_count": "64", "host_processor_vcpu_count": "128", "host_processor_frequency": "2.25 GHz",
    "host_processor_caches": "256 MB L3", "host_processor_interconnect": "Infinity Fabric",
    "host_memory_capacity": "1 TB", "host_storage_type": "NVMe SSD", "host_storage_capacity": "4 TB",
    "host_networking": "100 GbE", "host_networking_topology": "Ethernet", "host_memory_configuration": "16 x 64 GB",
    "accelerators_per_node": "16", "accelerator_model_name": "Graphcore IPU GC200",
    "accelerator_host_interconnect": "25 GbE", "accelerator_frequency": "1.33 GHz",
    "accelerator_on-chip_memories": "900 MB", "accelerator_memory_configuration": "DDR4",
    "accelerator_memory_capacity": "32 GB", "accelerator_interconnect": "IPU-Link",
    "accelerator_interconnect_topology": "2D torus", "cooling": "air", "hw_notes": "",
    "framework": "PopART Poplar SDK 2.1.0", "other_software_stack": "POD-SW 2.0.0",
    "operating_system": "Ubuntu 18.04.3", "sw_notes": "",
}  # fmt: skip


@dataclass
class Example:
    root: Path
    config: Path
    repo: Path
    bert_runs: list[Path] = field(default_factory=list)
    resnet_runs: list[Path] = field(default_factory=list)


# Epoch (BERT: sample) count of each evaluation, so that the runs converge about as fast as the reference's
# convergence points (RCPs) say, and the RCP check passes: the synthetic runs evaluate at epochs 1, 2, 3, 4.
EPOCH_SCALE = {"bert": 660_000, "resnet": 9}
_EPOCH_FIELD = re.compile(r'("(?:first_)?epoch_num": )([0-9]+)')


def raw_run(spec: RunSpec) -> bytes:
    """A run as a job's raw output: a banner, launcher prefixes on some records, interleaved training output."""
    spec.raw_output = True
    scale = EPOCH_SCALE.get(spec.benchmark, 1)
    body = _EPOCH_FIELD.sub(lambda m: f"{m.group(1)}{int(m.group(2)) * scale}", render(spec))
    return (f"poprun: launching {spec.benchmark} on {spec.platform}\n{body}job finished\n").encode()


def write_runs(folder: Path, benchmark: str, platform: str, count: int, *, ruleset: str = "1.1.0",
               gzip_index: int | None = None, non_converged: Sequence[int] = (), start_ms: int = 1_630_000_000_000,
               minutes: Sequence[float] = ()) -> list[Path]:
    """`count` runs launched one hour apart; the `gzip_index`-th is gzip-compressed."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(count):
        spec = RunSpec(benchmark=benchmark, ruleset=ruleset, platform=platform, seed=1000 + k,
                       start_ms=start_ms + k * 3_600_000, minutes=minutes[k] if k < len(minutes) else 20.0 + k % 3,
                       converge=k not in non_converged)
        data = raw_run(spec)
        if k == gzip_index:
            path = folder / f"job_{k:02d}.out.gz"
            path.write_bytes(gzip.compress(data, mtime=0))
        else:
            path = folder / f"job_{k:02d}.out"
            path.write_bytes(data)
        out.append(path)
    return out


def implementation_files() -> dict[str, bytes]:
    readme = b"# BERT on IPU-POD16 with PopART\n\nRun `./run_and_time.sh` after `./setup.sh`.\n"
    return {
        "bert/popart/README.md": readme,
        "bert/popart/run_and_time.sh": b"#!/bin/sh\nset -e\npython3 bert.py --config pod16\n",
        "bert/popart/setup.sh": b"#!/bin/sh\npip install -r requirements.txt\n",
        "bert/popart/init_datasets.sh": b"#!/bin/sh\necho 'see README.md'\n",
        "bert/popart/bert.py": b"print('bert')\n",
        "bert/popart/requirements.txt": b"numpy\n",
        "resnet/tf/README.md": b"# ResNet-50 on IPU-POD64 with TensorFlow 1.15\n",
        "resnet/tf/run_and_time.sh": b"#!/bin/sh\npython3 train.py\n",
        "resnet/tf/setup.sh": b"#!/bin/sh\ntrue\n",
        "resnet/tf/init_datasets.sh": b"#!/bin/sh\ntrue\n",
        "resnet/tf/train.py": b"print('resnet')\n",
        "README.md": b"IPU benchmarks\n",
    }


def write_systems(dest: Path, source: Path | None) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name, system_name, accel in ((BERT_SYSTEM, "IPU-POD16", "16"), (RESNET_SYSTEM, "IPU-POD64", "64")):
        given = source / f"{name}.json" if source else None
        if given is not None and given.is_file():
            shutil.copyfile(given, dest / f"{name}.json")
            continue
        fields = dict(_SYSTEM_FIELDS, system_name=system_name, accelerators_per_node=accel)
        (dest / f"{name}.json").write_text(json.dumps(fields, indent=2) + "\n", encoding="utf-8")


def config_text(out: str = "build/submission", ruleset: str = "1.1.0") -> str:
    return f'''# mlsubmit package configuration: paths are relative to this file
org = "Graphcore"
ruleset = "{ruleset}"
out = "{out}"
systems = "systems"

[[results]]
system = "{BERT_SYSTEM}"
benchmark = "bert"
logs = ["runs/pod16-bert/*.out", "runs/pod16-bert/*.out.gz"]
implementation = {{ repo = "ipu-benchmarks", rev = "{TAG}", path = "bert/popart", name = "popart" }}

[[results]]
system = "{RESNET_SYSTEM}"
benchmark = "resnet"
logs = ["runs/pod64-resnet/*"]
implementation = {{ repo = "ipu-benchmarks", rev = "{TAG}", path = "resnet/tf", name = "tensorflow" }}
'''


def write_example(root: Path, systems: Path | None = None, ruleset: str = "1.1.0",
                  non_converged: Sequence[int] = ()) -> Example:
    """Everything `mlsubmit package` needs, under root; `systems` is a folder of real system files to use."""
    from mlsubmit.testing.repo import commit_example

    root.mkdir(parents=True, exist_ok=True)
    repo = root / "ipu-benchmarks"
    commit_example(repo, implementation_files(), "IPU benchmarks for MLPerf Training", tag=TAG)
    write_systems(root / "systems", systems)
    ex = Example(root=root, config=root / "package.toml", repo=repo)
    ex.bert_runs = write_runs(root / "runs" / "pod16-bert", "bert", "IPU-POD16", 10, ruleset=ruleset, gzip_index=3,
                              non_converged=non_converged)
    ex.resnet_runs = write_runs(root / "runs" / "pod64-resnet", "resnet", "IPU-POD64", 5, ruleset=ruleset,
                                start_ms=1_631_000_000_000)
    ex.config.write_text(config_text(ruleset=ruleset), encoding="utf-8")
    return ex


MODERN_SYSTEM = "ipu-pod64-POPART-closed"
MODERN_POINTS = (3328, 3456, 3328, 3584, 3456, 3328, 3712, 3456, 3584, 3456)  # samples to converge, batch 8


def modern_system(systems: Path) -> dict[str, Any]:
    """The repository's IPU-POD64 system file as the current rounds ask for it (availability, system type, network
    cards), with notes of its own: the file's notes describe its 1.x BERT system, and they end up in the chair's
    summary of a Llama 2 70B LoRA result."""
    system = json.loads((systems / f"{MODERN_SYSTEM}.json").read_text(encoding="utf-8"))
    system.update(status="Available on-premise", system_type="datacenter", host_network_card_count="8",
                  hw_notes="IPU-POD64: sixteen IPU-M2000 machines (4 GC200 IPUs each) and one dual-socket host "
                           "server.",
                  sw_notes="Llama 2 70B with LoRA adapters, fine-tuned in PopART.")  # fmt: skip
    return cast(dict[str, Any], system)

