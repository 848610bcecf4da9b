"""A capture made into a system description of a round: POD facts, host counts per processor, status spelling.

The facts come from their one home, checker/tables/systems-knowledge.yaml (a family's `completion`: the machine a
POD is built from, its sizes, the accelerator fields); the status spelling of the round and the checks the result
must pass come from checker/systems/descriptions.py. What nothing knows stays empty and is listed (CAP011).
The text written is the description's bytes: keys in the round schema's order (as systems/*.json are laid out),
two-space indents, every value a string, no timestamp, so the same inputs give the same bytes.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from dataclasses import dataclass, field
from typing import Any

from mlsubmit.checker.systems.capture import Capture
from mlsubmit.checker.systems.descriptions import count, schema_for, validate
from mlsubmit.checker.systems.jsonfile import parse_json
from mlsubmit.checker.systems.knowledge import knowledge, spelling_key

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.datafiles import load_validated

# Optional fields are written only when known, after the field our own files put them after.
_PLACED_AFTER = {"system_type": "division", "host_network_card_count": "host_networking"}


@dataclass(frozen=True)
class Pod:
    family: str
    machine: str
    size: int
    machines: int
    nodes: int
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Request:
    """What the user states beside the capture (command-line flags)."""

    system_id: str
    ruleset: str
    pod: Pod | None = None
    host_servers: int | None = None
    status: str | None = None
    settings: tuple[tuple[str, str], ...] = ()


@dataclass
class Description:
    data: dict[str, str]
    findings: list[Finding] = field(default_factory=list)
    filled: list[str] = field(default_factory=list)  # fields the family facts gave


@functools.cache
def _families() -> tuple[dict[str, Any], ...]:
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/systems-knowledge.yaml")
    data = load_validated(entry, "systems-knowledge.schema.json", what="systems-knowledge.yaml")
    return tuple(f for f in data["families"] if "completion" in f)


def pod_sizes() -> dict[str, list[int]]:
    """Family -> the sizes it can be completed for."""
    return {f["name"]: [p["size"] for p in f["completion"]["pods"]] for f in _families()}


def pod_of(size: int | None, machines: int | None) -> Pod:
    """The POD of that size or machine count (both, when given, must agree); UsageError otherwise."""
    for fam in _families():
        facts = fam["completion"]
        for pod in facts["pods"]:
            if pod["size"] == size or (size is None and pod["machines"] == machines):
                if machines is not None and machines != pod["machines"]:
                    raise UsageError(f"--pod-size {pod['size']} is {pod['machines']} × {facts['machine']} "
                                     f"({facts['accelerators_per_machine']} accelerators each), not {machines}")
                return Pod(fam["name"], facts["machine"], pod["size"], pod["machines"], pod["nodes"],
                           tuple(facts["fields"].items()))  # fmt: skip
    known = ", ".join(f"{name}: {', '.join(map(str, sizes))}" for name, sizes in pod_sizes().items())
    asked = f"size {size}" if size is not None else f"{machines} machines"
    raise UsageError(f"no POD of {asked} is known (known sizes: {known})")


def field_order(ruleset: str) -> list[str]:
    """The round's fields in the order our systems/*.json files use: the schema's required list, with the
    optional fields placed where those files put them."""
    schema = schema_for(ruleset)
    order = list(schema["required"])
    for name in schema.get("properties", {}):
        if name not in order:
            after = _PLACED_AFTER.get(name)
            order.insert(order.index(after) + 1 if after in order else len(order), name)
    return order


def status_spelling(value: str, ruleset: str) -> str:
    """`value` spelled as the round's schema requires (canonical from 4.0.0, the short names before)."""
    info = knowledge().status.get(spelling_key(value))
    if info is None:
        return value  # the round's schema reports it (SYS014)
    allowed = _status_enum(schema_for(ruleset))
    return info.canonical if info.canonical in allowed else info.legacy


def _status_enum(schema: dict[str, Any]) -> list[str]:
    status = schema.get("properties", {}).get("status", {})
    for part in status.get("allOf", [status]):
        if isinstance(part, dict) and isinstance(part.get("enum"), list):
            return [str(v) for v in part["enum"]]
    return []


def build(capture: Capture, request: Request) -> Description:
    """The description's fields from the capture, the POD facts and the user's statements, in that order of
    precedence (a statement wins); counts per processor and per node."""
    order = field_order(request.ruleset)
    known = set(order)
    data = {name: value for name, value in capture.fields.items() if name in known}
    out = Description(data)
    _host_counts(capture, request, out)
    if request.pod is not None:
        _pod_fields(request.pod, out)
    data.update(request.settings)
    status = request.status or data.get("status", "")
    if status:
        data["status"] = status_spelling(status, request.ruleset)
    dropped = sorted(set(capture.fields) - known)
    if dropped:
        out.findings.append(finding("CAP012", capture.path, "not fields of the round's schema, left out: "
                                    + ", ".join(repr(d[:80]) for d in dropped[:20])))  # fmt: skip
    out.data = {name: data.get(name, "") for name in order
                if data.get(name) or name in _required(request.ruleset)}  # fmt: skip
    empty = [name for name, value in out.data.items() if not value]
    if empty:
        out.findings.append(finding("CAP011", capture.path, "left empty, no probe or fact gives them: "
                                    + ", ".join(empty)))  # fmt: skip
    return out


def _required(ruleset: str) -> set[str]:
    return set(schema_for(ruleset)["required"])


def _pod_fields(pod: Pod, out: Description) -> None:
    out.data["number_of_nodes"] = str(pod.nodes)
    out.data["accelerators_per_node"] = str(pod.size // pod.nodes)
    out.filled += ["number_of_nodes", "accelerators_per_node"]
    for name, value in pod.fields:
        out.data[name] = value
        out.filled.append(name)


def _host_counts(capture: Capture, request: Request, out: Description) -> None:
    """Per-processor core and thread counts, and host processors per node of the description.

    mlc-scripts fills the capture's core and vCPU counts from a host's total physical and logical cores over all
    its sockets (host_processors_per_node); a description states them per processor."""
    data, doc = out.data, capture.document
    sockets = count(data.get("host_processors_per_node"))
    if not sockets:
        return
    for key in ("host_processor_core_count", "host_processor_vcpu_count"):
        total = count(data.get(key))
        if total is None:
            continue
        if total % sockets:
            out.findings.append(finding("CAP010", capture.path, f"{key} {total} is not a whole number per processor "
                                        f"over {sockets} socket(s)", line=doc.line("/" + key), pointer="/" + key))
            continue
        data[key] = str(total // sockets)
    if request.pod is None:
        return
    servers = request.host_servers or count(data.get("number_of_nodes")) or 1
    if (servers * sockets) % request.pod.nodes:
        out.findings.append(finding("CAP010", capture.path, f"{servers} host server(s) of {sockets} socket(s) do not "
                                    f"split evenly over {request.pod.nodes} node(s) of {request.pod.size} accelerators",
                                    line=doc.line("/number_of_nodes"), pointer="/number_of_nodes"))  # fmt: skip
        return
    data["host_processors_per_node"] = str(servers * sockets // request.pod.nodes)


def render(data: dict[str, str]) -> bytes:
    """The description's bytes: keys in the order given, two-space indents, a final newline; a lone surrogate (from
    a `--set` argument's undecodable bytes) written as its JSON escape."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")


def check_bytes(raw: bytes, display: str, request: Request) -> list[Finding]:
    """The round's schema and semantic checks on the exact bytes to be written (as `mlsubmit check` reads them)."""
    doc = parse_json(raw, display)
    return [*doc.findings, *validate(doc, request.ruleset, request.system_id)]
