"""System descriptions: schema per round, hardware semantics from data, and agreement with the logs.

Three layers, each a small function:
- `validate(doc, ruleset, system_id)`: the round's JSON Schema (schemas/system-*.schema.json); every schema error
  becomes a finding whose code the schema itself names (`x-finding`), with its pointer and line.
- `semantic_findings(data, system_id)`: facts from checker/tables/systems-knowledge.yaml (knowledge.py): the POD
  size in a name, the accelerator of a family, the cores of a host processor, host servers per node.
- `agreement.check(org, facts, options)`: systems/ against results/, and each log's submission_* values
  against the system description (through `LogFacts`, never by re-reading logs).

`summarize(data, system_id)` gives the totals the report shows (accelerators, host processors, host servers).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.logs.decode import clipped_quote
from mlsubmit.checker.systems.jsonfile import JsonDocument, escape, read_json
from mlsubmit.checker.systems.knowledge import Processor, knowledge, spelling_key

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support import numbers
from mlsubmit.core.support.schema_loader import load_schema, validator

if TYPE_CHECKING:
    import jsonschema

COUNT_FIELDS = ("number_of_nodes", "host_processors_per_node", "accelerators_per_node",
                "host_processor_core_count", "host_processor_vcpu_count", "host_network_card_count")
# Fields mlperf-logging's system_desc_checker joins as strings (a JSON number there raises TypeError).
_REFERENCE_CSV_FIELDS = frozenset({"accelerators_per_node", "host_processor_core_count"})
ZERO = "zero"  # SYS012's case of a count of 0, which int() reads: the profile levels it per field
_COUNT_EXAMPLES = dict(zip(COUNT_FIELDS, ("1", "2", "16", "64", "128", "2"), strict=True))  # our IPU-POD16's


def count(value: Any) -> int | None:
    """A count field as an int (JSON integer, integral float or digit string) up to MAX_COUNT (SYS048), else None."""
    return numbers.whole_number(value)


def _huge_counts(doc: JsonDocument) -> Iterator[Finding]:
    for key in (k for k in COUNT_FIELDS if isinstance(doc.data, dict) and numbers.too_large(doc.data.get(k))):
        yield finding("SYS048", doc.path, f"{key} is larger than {numbers.MAX_COUNT:,}, which no system has",
                      line=doc.line("/" + key), pointer="/" + key)


# ---------------------------------------------------------------- schema validation


def schema_for(ruleset: str) -> dict[str, Any]:
    return load_schema(knowledge().schema_name(ruleset))


def _pointer(error: jsonschema.ValidationError) -> str:
    return "".join("/" + escape(str(p)) for p in error.absolute_path)


def _code(error: jsonschema.ValidationError) -> str:
    tag = error.schema.get("x-finding") if isinstance(error.schema, dict) else None
    if isinstance(tag, dict):
        tag = tag.get(str(error.validator))
    return tag if isinstance(tag, str) else "SYS011"


def _keyword_value(error: jsonschema.ValidationError) -> list[str]:
    """The failing keyword's value (the enum or required list) read from the schema, typed."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    value = schema.get(str(error.validator), [])
    return [str(v) for v in value] if isinstance(value, list) else []


def _field(pointer: str) -> str:
    return pointer.split("/")[1].replace("~1", "/").replace("~0", "~") if pointer else "(top level)"


def _message(code: str, error: jsonschema.ValidationError, pointer: str) -> str:
    name, value = _field(pointer), error.instance
    shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    texts = {
        "SYS011": f"{name} is a JSON {type(value).__name__}, not a string",
        "SYS012": f"{name} is {shown}, not a whole number of at least 1",
        "SYS013": f"division is {shown}; it must be \"closed\" or \"open\"",
        "SYS016": f"{name} is empty, but the rules require a meaningful value",
        "SYS017": f"{name} is the placeholder {shown}, but the rules require a meaningful value",
        "SYS018": f"{name} is still {shown}",
        "SYS022": "neither host_processor_core_count nor host_processor_vcpu_count gives a number",
    }
    return texts.get(code, f"{name}: {error.message}")


def _status_finding(doc: JsonDocument, error: jsonschema.ValidationError, pointer: str) -> Finding:
    allowed = _keyword_value(error)
    canonical_round = "Preview" in allowed  # the 4.x vocabulary
    value = error.instance
    info = knowledge().status.get(spelling_key(value)) if isinstance(value, str) else None
    line = doc.line(pointer)
    if info is None:
        return finding("SYS014", doc.path, f"status {value!r} is not one of: {', '.join(map(repr, allowed))}",
                       line=line, pointer=pointer)
    spelling = info.canonical if canonical_round else info.legacy
    return finding("SYS015", doc.path, f"status {value!r} should be spelled {spelling!r} in this round",
                   line=line, pointer=pointer, severity=Severity.ERROR if canonical_round else None)


def _required_findings(doc: JsonDocument, error: jsonschema.ValidationError, code: str) -> Iterator[Finding]:
    data = doc.data if isinstance(doc.data, dict) else {}
    for name in _keyword_value(error):
        if name not in data:
            yield finding(code, doc.path, f'field "{name}" is missing', line=doc.line(""), pointer="/" + escape(name))


def schema_findings(doc: JsonDocument, schema: dict[str, Any]) -> list[Finding]:
    """Every schema error of the document as a finding with its code, pointer and line."""
    out: list[Finding] = []
    seen_required: set[int] = set()
    for error in validator(schema).iter_errors(doc.data):
        code, pointer = _code(error), _pointer(error)
        if error.validator == "required":
            if id(error.schema) not in seen_required:  # one error per missing key; report them once
                seen_required.add(id(error.schema))
                out.extend(_required_findings(doc, error, code))
        elif code == "SYS014":
            out.append(_status_finding(doc, error, pointer))
        else:  # a count of 0 is a case of its own: int() reads it, and CPU-only systems write it (the profile)
            zero = code == "SYS012" and count(error.instance) == 0
            example = _COUNT_EXAMPLES.get(_field(pointer)) if code == "SYS012" else None  # its own field's hint
            hint = f'Write the count as digits only, e.g. "{_field(pointer)}": "{example}".' if example else None
            out.append(finding(code, doc.path, _message(code, error, pointer), line=doc.line(pointer),
                               pointer=pointer or "/", case=ZERO if zero else None, hint=hint))
    return out


def _extra_findings(doc: JsonDocument, schema: dict[str, Any]) -> Iterator[Finding]:
    data: dict[str, Any] = doc.data
    for name in COUNT_FIELDS:
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            why = ("mlperf-logging's system_desc_checker joins it as text and stops with a TypeError, so the package "
                   "check fails" if name in _REFERENCE_CSV_FIELDS else "the result summarizer reads it with int()")
            yield finding("SYS020", doc.path, f"{name} is the JSON number {value}; {why}",
                          line=doc.line("/" + name), pointer="/" + name)
    known = list(schema.get("properties", {}))
    for name in data:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.85)
        if close:
            yield finding("SYS021", doc.path, f'unknown field "{name}"; did you mean "{close[0]}"?',
                          line=doc.line("/" + escape(name)), pointer="/" + escape(name))


def validate(doc: JsonDocument, ruleset: str, system_id: str) -> list[Finding]:
    """Schema, extra and semantic findings of a decoded document (nothing when it is not an object)."""
    if not doc.is_object:
        return []
    schema = schema_for(ruleset)
    out = schema_findings(doc, schema)
    out.extend(_extra_findings(doc, schema))
    out.extend(semantic_findings(doc, system_id))
    return out


def check_system_file(path: str | Path, display: str, ruleset: str) -> tuple[JsonDocument, list[Finding]]:
    """Read and check one system description; the document is returned for the agreement checks."""
    doc = read_json(path, display)
    findings = list(doc.findings)
    findings.extend(validate(doc, ruleset, Path(path).stem))
    return doc, findings


# ---------------------------------------------------------------- semantics and summary


@dataclass(frozen=True)
class SystemSummary:
    """What the report shows about one system; None where the file does not say or the tool does not know."""

    system_id: str
    system_name: str | None
    submitter: str | None
    division: str | None
    status: str | None
    family: str | None
    stated_size: int | None
    nodes: int | None
    accelerators_per_node: int | None
    accelerators: int | None
    accelerator_model: str | None
    host_processor_model: str | None
    host_processors_per_node: int | None
    host_processors: int | None
    processor: str | None  # the knowledge entry the model matched
    cores_per_processor: int | None
    host_cores: int | None
    servers_per_node: int | None
    host_servers: int | None


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _times(a: int | None, b: int | None) -> int | None:
    return a * b if a is not None and b is not None else None


def summarize(data: Any, system_id: str = "") -> SystemSummary:
    """Totals per system from a decoded system description (any shape; never raises)."""
    data = data if isinstance(data, dict) else {}
    kb = knowledge()
    name = _text(data, "system_name")
    fam = kb.family_of(name or "") or kb.family_of(system_id)
    model = _text(data, "host_processor_model_name")
    proc = kb.processor_of(model) if model else None
    nodes, apn, hpn = (count(data.get(k)) for k in ("number_of_nodes", "accelerators_per_node",
                                                     "host_processors_per_node"))
    cores = proc.cores if proc else count(data.get("host_processor_core_count"))
    per_node = -(-hpn // proc.max_sockets) if proc and hpn else None
    return SystemSummary(
        system_id=system_id, system_name=name, submitter=_text(data, "submitter"),
        division=_text(data, "division"), status=_text(data, "status"),
        family=fam[0].name if fam else None, stated_size=fam[1] if fam else None,
        nodes=nodes, accelerators_per_node=apn, accelerators=_times(nodes, apn),
        accelerator_model=_text(data, "accelerator_model_name"), host_processor_model=model,
        host_processors_per_node=hpn, host_processors=_times(nodes, hpn),
        processor=proc.name if proc else None, cores_per_processor=cores,
        host_cores=_times(_times(nodes, hpn), cores), servers_per_node=per_node, host_servers=_times(nodes, per_node),
    )


def _pod_size_findings(doc: JsonDocument, s: SystemSummary) -> Iterator[Finding]:
    kb = knowledge()
    if s.accelerators is None:
        return
    for source, text, pointer in (("system_name", s.system_name or "", "/system_name"),
                                  ("file name", s.system_id, "/number_of_nodes")):
        found = kb.family_of(text)
        if found is None:
            continue
        fam, size = found
        units = s.accelerators * fam.units_per_accelerator
        if size != units:
            per = f" ({fam.units_per_accelerator} per accelerator)" if fam.units_per_accelerator > 1 else ""
            yield finding("SYS030", doc.path,
                          f"{source} {clipped_quote(repr(text))} states size "
                          f"{'beyond any' if size is None else size}{per}, "
                          f"but number_of_nodes × accelerators_per_node = {s.nodes} × {s.accelerators_per_node} = "
                          f"{s.accelerators}",
                          line=doc.line(pointer), pointer=pointer,
                          related=[doc.location("/number_of_nodes"), doc.location("/accelerators_per_node")])


def _accelerator_findings(doc: JsonDocument, s: SystemSummary) -> Iterator[Finding]:
    kb = knowledge()
    found = kb.family_of(s.system_name or "") or kb.family_of(s.system_id)
    if found is None or s.accelerator_model is None:
        return
    fam = found[0]
    if not any(p.search(s.accelerator_model) for p in fam.accelerators):
        yield finding("SYS031", doc.path,
                      f"{s.accelerator_model!r} is not an accelerator of the {fam.name} family "
                      f"(expected: {', '.join(p.pattern for p in fam.accelerators)})",
                      line=doc.line("/accelerator_model_name"), pointer="/accelerator_model_name",
                      related=[doc.location("/system_name")])


def _processor_findings(doc: JsonDocument, s: SystemSummary) -> Iterator[Finding]:
    data: dict[str, Any] = doc.data
    proc = knowledge().processor_of(s.host_processor_model or "")
    if proc is None:
        return
    hpn = s.host_processors_per_node or 1
    checks = (("host_processor_core_count", (proc.cores,)),
              ("host_processor_vcpu_count", tuple(v for v in (proc.cores, proc.threads) if v)))
    for key, per_processor in checks:
        given = count(data.get(key))
        allowed = {v * k for v in per_processor for k in (1, hpn)}
        if given is not None and given not in allowed:
            accepted = " or ".join(map(str, sorted(set(per_processor)))) + " per processor"
            if hpn > 1:
                accepted += ", " + " or ".join(str(v * hpn) for v in sorted(set(per_processor))) + f" for {hpn}"
            yield finding("SYS032", doc.path,
                          f"{key} is {given}, but an {proc.name} has {proc.cores} cores"
                          + (f" and {proc.threads} threads" if proc.threads else "") + f" (accepted: {accepted})",
                          line=doc.line("/" + key), pointer="/" + key,
                          related=[doc.location("/host_processor_model_name")])
    yield from _server_findings(doc, s, proc)


def _server_findings(doc: JsonDocument, s: SystemSummary, proc: Processor) -> Iterator[Finding]:
    hpn = s.host_processors_per_node
    if hpn is None or hpn <= proc.max_sockets:
        return
    line, pointer = doc.line("/host_processors_per_node"), "/host_processors_per_node"
    if hpn % proc.max_sockets:
        yield finding("SYS034", doc.path, f"{hpn} host processors per node do not fill servers of "
                      f"{proc.max_sockets} sockets ({proc.name})", line=line, pointer=pointer)
        return
    total = f", {s.host_servers} in total over {s.nodes} node(s)" if s.host_servers is not None else ""
    yield finding("SYS033", doc.path,
                  f"{hpn} × {proc.name} per node with at most {proc.max_sockets} per server: "
                  f"{s.servers_per_node} host servers per node{total}", line=line, pointer=pointer)


MEMORY_FIELDS = ("host_memory_capacity", "accelerator_memory_capacity")
# A size unit as published descriptions write one ("32GB", "2.0 TB", "183359 MiB", "24 x 32GB RDIMM") or as
# mlperf-sysinfo captures it ("25G", "1.0T", free -h's letters).
_MEMORY_UNIT = re.compile(r"\d\s*[KMGTP](?:i?B)?\b|\b[KMGTP]i?B\b|\bbytes?\b", re.IGNORECASE)


def _unitless_memory(doc: JsonDocument) -> Iterator[Finding]:
    """A memory capacity that states a number and no unit: "512" is MB to one reader and GB to another."""
    for key in MEMORY_FIELDS:
        value = doc.data.get(key) if isinstance(doc.data, dict) else None
        if isinstance(value, str) and re.search(r"\d", value) and not _MEMORY_UNIT.search(value):
            yield finding("SYS049", doc.path, f"{key} is {clipped_quote(value)!r}: a number with no unit",
                          line=doc.line("/" + key), pointer="/" + key)


def semantic_findings(doc: JsonDocument, system_id: str) -> list[Finding]:
    summary = summarize(doc.data, system_id)
    out = list(_pod_size_findings(doc, summary))
    out.extend(_accelerator_findings(doc, summary))
    out.extend(_processor_findings(doc, summary))
    out.extend(_huge_counts(doc))
    out.extend(_unitless_memory(doc))
    return out
