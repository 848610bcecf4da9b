"""Examples of system descriptions (SYS): a systems/*.json file checked on its own. Each negative is the project's
IPU-POD16 description (systems/ipu-pod16-POPART-closed.json, shortened) with one fault; its positive is the
description without it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from examplelog import Example

CHECK = ["check", "--ruleset", "1.0.0"]
DROP = object()  # a change that removes the field

BASE: dict[str, Any] = {
    "submitter": "Graphcore", "division": "closed", "system_type": "datacenter", "status": "onprem",
    "system_name": "IPU-POD16", "number_of_nodes": "1", "host_processors_per_node": "2",
    "host_processor_model_name": "AMD EPYC 7742", "host_processor_core_count": "64",
    "host_processor_vcpu_count": "128", "host_processor_frequency": "2.25 GHz",
    "host_processor_caches": "256 MB L3 per processor", "host_processor_interconnect": "AMD Infinity Fabric",
    "host_memory_capacity": "768GB", "host_storage_type": "NVMe SSD", "host_storage_capacity": "4 x 1TB NVMe SSD",
    "host_networking": "100GbE", "host_networking_topology": "Ethernet", "host_memory_configuration": "24 x 32GB",
    "accelerators_per_node": "16", "accelerator_model_name": "Graphcore IPU GC200",
    "accelerator_host_interconnect": "100GbE", "accelerator_frequency": "1.33 GHz",
    "accelerator_on-chip_memories": "900 MB per IPU", "accelerator_memory_configuration": "DDR4",
    "accelerator_memory_capacity": "32GB", "accelerator_interconnect": "IPU-Link",
    "accelerator_interconnect_topology": "2D torus", "cooling": "Air", "hw_notes": "",
    "framework": "PopART Poplar SDK 2.3.0", "other_software_stack": "POD-SW 2.3.0", "operating_system": "Ubuntu 18.04",
    "sw_notes": "",
}  # fmt: skip


def text(changes: dict[str, Any] | None = None) -> str:
    """The description with `changes` (DROP removes a field; a new key goes at the end), as JSON text."""
    out = {k: v for k, v in {**BASE, **(changes or {})}.items() if v is not DROP}
    return json.dumps(out, indent=2) + "\n"


def field(code: str, name: str, shows: str, bad: dict[str, Any], good: dict[str, Any] | None = None,
          pointer: str | None = None) -> Example:
    """A pair differing in fields: `bad` on the negative, `good` (or nothing) on the positive; the finding is at
    the pointer of the first changed field unless `pointer` says otherwise."""
    where = pointer if pointer is not None else "/" + next(iter(bad))
    return Example(code, name, shows, CHECK, text(bad).encode(), text(good).encode(), ext="json", pointer=where)


def edit(code: str, name: str, shows: str, change: Callable[[str], bytes], line: int | None = None,
         pointer: str | None = None) -> Example:
    """A pair differing in the text: `change` makes the negative out of the positive's text."""
    return Example(code, name, shows, CHECK, change(text()), text().encode(), ext="json", line=line,
                   pointer=pointer)


def _reading() -> list[Example]:
    return [
        edit("SYS002", "latin-1", "a latin-1 byte (0xe9) in a value: JSON text must be UTF-8",
             lambda t: t.replace('"Air"', '"Air, a\xe9r\xe9"').encode("latin-1"), line=30),
        edit("SYS003", "trailing-comma", "a comma after the last field: the text is not JSON",
             lambda t: t.replace('"sw_notes": ""', '"sw_notes": "",').encode(), line=36),
        edit("SYS004", "array", "the description wrapped in a list: the top level must be one object",
             lambda t: ("[" + t.rstrip("\n") + "]\n").encode(), line=1),
        edit("SYS005", "status-twice", "\"status\" given twice with different values: json keeps the last",
             lambda t: t.replace('"sw_notes": ""', '"sw_notes": "",\n  "status": "cloud"').encode(),
             pointer="/status"),
    ]


def _fields() -> list[Example]:
    return [
        field("SYS010", "no-framework", "the required framework field is left out", {"framework": DROP},
              pointer="/framework"),
        field("SYS011", "list-framework", "framework is a JSON list where a string is required",
              {"framework": ["PopART", "Poplar SDK 2.3.0"]}),
        field("SYS012", "fraction-nodes", "number_of_nodes \"1.0\": the summarizer's int() refuses it",
              {"number_of_nodes": "1.0"}),
        field("SYS013", "close", "division \"close\" (PCL's v1.0 spelling): only \"closed\" is closed",
              {"division": "close"}),
        field("SYS014", "status", "status \"sold\" names no availability category", {"status": "sold"}),
        field("SYS015", "on-premise", "status \"Available on premise\": recognisable, but 1.0.0's logs say onprem",
              {"status": "Available on premise"}),
        field("SYS016", "empty-memory", "host_memory_capacity, a required response, is empty",
              {"host_memory_capacity": ""}),
        field("SYS017", "tbd-memory", "host_memory_capacity, a required response, says TBD",
              {"host_memory_capacity": "TBD"}),
        field("SYS018", "todo-notes", "the optional sw_notes says TODO (empty is fine)", {"sw_notes": "TODO"}),
        field("SYS019", "no-system-type", "system_type, which the rules ask for, is left out",
              {"system_type": DROP}, pointer="/system_type"),
        field("SYS020", "number-count", "accelerators_per_node written as the JSON number 16, not \"16\"",
              {"accelerators_per_node": 16}),
        field("SYS021", "misspelt-field", "an extra field host_storage_capacty, one letter off a defined one",
              {"host_storage_capacty": "4 x 1TB"}),
        field("SYS022", "no-core-count", "neither host_processor_core_count nor host_processor_vcpu_count",
              {"host_processor_core_count": DROP, "host_processor_vcpu_count": DROP}, pointer="/"),
    ]


def _semantics() -> list[Example]:
    return [
        field("SYS030", "pod-size", "system_name IPU-POD64 on 1 node of 16 accelerators",
              {"system_name": "IPU-POD64"}),
        field("SYS031", "accelerator", "an IPU-POD of NVIDIA A100s", {"accelerator_model_name": "NVIDIA A100"}),
        field("SYS032", "core-count", "48 cores and 96 threads for the AMD EPYC 7742, which has 64 and 128",
              {"host_processor_core_count": "48", "host_processor_vcpu_count": "96"}),
        field("SYS033", "four-servers", "8 EPYC processors per node: 4 dual-socket host servers (an info)",
              {"host_processors_per_node": "8"}),
        field("SYS034", "three-sockets", "3 EPYC processors per node do not fill dual-socket servers",
              {"host_processors_per_node": "3"}),
        field("SYS048", "huge-count", "number_of_nodes of eleven digits: beyond any system",
              {"number_of_nodes": "10000000000"}),
        field("SYS049", "unitless-memory", "host_memory_capacity \"512\": megabytes or gigabytes?",
              {"host_memory_capacity": "512"}),
    ]


def systems() -> list[Example]:
    return [*_reading(), *_fields(), *_semantics()]
