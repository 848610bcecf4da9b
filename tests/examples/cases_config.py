"""Examples of the files a command is given beside the logs: waiver files (WVR), checked with the RULE003 example
(a warning at line 3) as the log they waive findings of; mlperf-sysinfo captures (CAP) that `systems capture`
makes into a description."""

from __future__ import annotations

import json
from typing import Any

from cases_systems import BASE
from examplelog import Example
from fixtures.capture import DUAL_EPYC, FIELDS, capture_document

LOG = "negative/RULE003-same-org-twice.txt"
ARGV = ["check", "--ruleset", "1.0.0", "--no-project-waivers", "--waivers", "{file}", LOG]


def _waiver(code: str, expires: str) -> bytes:
    return f"""# What the review granted for the example runs.

[[waiver]]
code = "{code}"
path = "../negative/RULE003-*.txt"  # relative to this file's folder (positive/ or negative/)
reason = "submission_org is logged twice by the launcher and the training script"
reference = "https://github.com/example/our-submission/issues/7"
who = "results lead"
expires = {expires}
""".encode()


def waivers() -> list[Example]:
    return [
        Example("WVR001", "matches-nothing", "a waiver for RULE002 where the log has RULE003: it waives nothing",
                ARGV, _waiver("RULE002", "2099-12-31"), _waiver("RULE003", "2099-12-31"), ext="toml", line=3),
        Example("WVR002", "expired", "a waiver that expired on 2026-06-30: it waives nothing now",
                ARGV, _waiver("RULE003", "2026-06-30"), _waiver("RULE003", "2099-12-31"), ext="toml", line=3),
    ]


# `systems capture --from FILE` makes an mlperf-sysinfo capture (its training profile's JSON) into a description,
# written into --dir: the test gives it a folder of its own ({tmp}).
CAPTURE = ["systems", "capture", "--ruleset", "6.1.0", "--system-id", "ipu-pod16-POPART-closed", "--pod-size", "16",
           "--dir", "{tmp}", "--from", "{file}"]  # fmt: skip
ACCELERATOR = {key: value for key, value in BASE.items() if key.startswith("accelerator")}


def _capture(draft: bool = False, **changes: Any) -> bytes:
    """A dual-socket EPYC POD16 host's capture with every field answered (the accelerator ones as BASE's), and
    `changes` to its fields (a name no field has goes after the provenance block) or (`complete`, `nodes`,
    `answered`) to that block."""
    block = {k: changes.pop(k) for k in ("complete", "nodes", "answered") if k in changes}
    host = {**DUAL_EPYC, **ACCELERATOR, "hw_notes": "4 x IPU-M2000", "sw_notes": "PopART",
            "other_software_stack": "POD-SW 3.4.0", **changes}
    document = {**capture_document(host, **block), **{k: v for k, v in changes.items() if k not in FIELDS}}
    return (json.dumps(document, indent=2) + "\n").encode()


def captures() -> list[Example]:
    return [
        Example("CAP008", "partial", "a capture of 4 nodes where 3 answered (complete: false), written with --draft",
                [*CAPTURE, "--draft"], _capture(complete=False, nodes=4, answered=3), _capture(nodes=4, answered=4),
                ext="json", pointer="/mlperf_sysinfo/complete"),
        Example("CAP011", "empty-field", "the capture leaves accelerator_interconnect_topology empty: listed to "
                "fill in (an info, without a line)", CAPTURE, _capture(accelerator_interconnect_topology=""),
                _capture(), ext="json", line=None),
        Example("CAP012", "extra-field", "the capture has framework_name, which no description field takes: "
                "dropped and said (an info, without a line)", CAPTURE, _capture(framework_name="popart-3.4"),
                _capture(), ext="json", line=None),
        Example("CAP010", "odd-cores", "a two-socket host whose capture counts 127 cores in all: not a whole number "
                "per processor", CAPTURE, _capture(host_processor_core_count="127"), _capture(), ext="json",
                pointer="/host_processor_core_count"),
    ]
