"""An mlperf-sysinfo capture, read as hostile input: bounded in size and depth, typed, never run.

mlperf-sysinfo (MLCommons, PyPI) writes with its `training` profile one flat JSON object: the fields of
mlperf-logging's system_desc_checker, every value a string, followed by its provenance block `mlperf_sysinfo`
(`version`, `profile`, `benchmark`, `captured_at`, `nodes_expected`, `nodes_collected`, `complete`, a `warning` on a
partial capture, and `mlc_scripts`). That documented shape (its README and output.py, 1.0.0a12) is the only format
read here; a file without the block, or of another benchmark's field set, is CAP007. Nothing in the file is
executed or evaluated: values are kept as strings and only counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker.systems.jsonfile import JsonCodes, JsonDocument, escape, parse_json, read_json

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity

CODES = JsonCodes(unreadable="CAP001", encoding="CAP002", invalid="CAP003", not_object="CAP004",
                  duplicate="CAP005", too_large="CAP006")  # fmt: skip
BLOCK = "mlperf_sysinfo"
MAX_VALUE = 4096  # characters in one field; the longest published value is a few hundred
_NOT_TEXT = re.compile("[\ud800-\udfff]")  # a lone surrogate: a JSON escape can make one, UTF-8 cannot hold it
# The block's keys mlsubmit reads, with the JSON types mlperf-sysinfo writes them as.
_BLOCK_TYPES: dict[str, tuple[type, ...]] = {
    "version": (str,), "profile": (str,), "benchmark": (str,), "nodes_expected": (int,),
    "nodes_collected": (int,), "complete": (bool,),
}  # fmt: skip


@dataclass(frozen=True)
class Capture:
    """What a capture says: its fields as strings, and whether it covers the whole system."""

    path: str
    fields: dict[str, str]
    complete: bool
    nodes_expected: int
    nodes_collected: int
    version: str
    document: JsonDocument = field(repr=False)

    @property
    def partial_message(self) -> str:
        return (f"partial capture (mlperf_sysinfo.complete is false): {self.nodes_collected} of "
                f"{self.nodes_expected} node(s) answered")  # fmt: skip


def read_capture(path: str | Path, display: str | None = None) -> tuple[Capture | None, list[Finding]]:
    """The capture at `path`; None with the findings that say why when it is not one mlsubmit can use."""
    return _capture(read_json(path, display, codes=CODES))


def parse_capture(raw: bytes, display: str) -> tuple[Capture | None, list[Finding]]:
    return _capture(parse_json(raw, display, codes=CODES))


def _capture(doc: JsonDocument) -> tuple[Capture | None, list[Finding]]:
    found = list(doc.findings)
    if not doc.is_object or any(f.severity is Severity.ERROR for f in found):
        return None, found
    block, problems = _block(doc)
    found.extend(problems)
    fields, typed = _fields(doc)
    found.extend(typed)
    if block is None or typed:
        return None, found
    capture = Capture(doc.path, fields, block["complete"], block["nodes_expected"], block["nodes_collected"],
                      block["version"], doc)  # fmt: skip
    if not capture.complete or capture.nodes_collected < capture.nodes_expected:
        found.append(finding("CAP008", doc.path, capture.partial_message, line=doc.line("/" + BLOCK),
                             pointer=f"/{BLOCK}/complete"))  # fmt: skip
    return capture, found


def _block(doc: JsonDocument) -> tuple[dict[str, Any] | None, list[Finding]]:
    block = doc.data.get(BLOCK)
    if not isinstance(block, dict):
        why = "has no" if block is None else "has a malformed"
        return None, [finding("CAP007", doc.path, f"the file {why} \"{BLOCK}\" provenance block; it is not a "
                              "capture made by mlperf-sysinfo", line=doc.line("/" + BLOCK) or 1, pointer="/" + BLOCK)]
    out: list[Finding] = []
    for key, types in _BLOCK_TYPES.items():
        value = block.get(key)
        wrong = isinstance(value, bool) and bool not in types  # a JSON true is no count
        surrogate = isinstance(value, str) and _NOT_TEXT.search(value) is not None
        if not isinstance(value, types) or wrong or surrogate or (isinstance(value, int) and value < 0):
            pointer = f"/{BLOCK}/{escape(key)}"
            out.append(finding("CAP007", doc.path, f"{BLOCK}.{key} is {_shown(value)}, not a "
                               f"{'/'.join(t.__name__ for t in types)} as mlperf-sysinfo writes it",
                               line=doc.line(pointer), pointer=pointer))  # fmt: skip
    if out:
        return None, out
    if block["benchmark"] != "training":
        return None, [finding("CAP007", doc.path, f"a capture of mlperf-sysinfo's {block['benchmark'][:40]!r} field "
                              "set; a training system description needs its training profile",
                              line=doc.line(f"/{BLOCK}/benchmark"), pointer=f"/{BLOCK}/benchmark")]
    return block, []


def _fields(doc: JsonDocument) -> tuple[dict[str, str], list[Finding]]:
    fields: dict[str, str] = {}
    out: list[Finding] = []
    for key, value in doc.data.items():
        if key == BLOCK:
            continue
        pointer = "/" + escape(key)
        if not isinstance(value, str) or len(value) > MAX_VALUE or _NOT_TEXT.search(key + value):
            what = (_shown(value) if not isinstance(value, str) else f"a string of {len(value)} characters"
                    if len(value) > MAX_VALUE else "named or valued with a lone surrogate (no UTF-8 text holds one)")
            out.append(finding("CAP009", doc.path, f"field {key[:80]!r} is {what}; mlperf-sysinfo writes every "
                               f"field as a string of at most {MAX_VALUE} characters", line=doc.line(pointer),
                               pointer=pointer))  # fmt: skip
            continue
        fields[key] = value.strip()
    return fields, out


def _shown(value: Any) -> str:
    if value is None:
        return "missing or null"
    return f"a JSON {type(value).__name__}" if isinstance(value, (dict, list, str)) else repr(value)
