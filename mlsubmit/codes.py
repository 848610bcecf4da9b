"""The catalogue of finding codes: data in mlsubmit/codes/<family>.yaml, validated on load.

Checks create findings only through `finding()`, so every finding carries a registered code, a default
severity and a hint, and `mlsubmit explain CODE` can never drift from what the checks emit.
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from mlsubmit.findings import Finding, Location, Severity
from mlsubmit.schema_loader import load_schema, validate_or_raise


@dataclass(frozen=True)
class CodeInfo:
    code: str
    family: str
    severity: Severity
    title: str
    explanation: str
    hint: str
    references: tuple[str, ...] = ()


@functools.cache
def catalogue() -> dict[str, CodeInfo]:
    schema = load_schema("codes.schema.json")
    out: dict[str, CodeInfo] = {}
    for entry in sorted(importlib.resources.files("mlsubmit").joinpath("codes").iterdir(), key=str):
        if not entry.name.endswith(".yaml"):
            continue
        data = yaml.safe_load(entry.read_text(encoding="utf-8"))
        validate_or_raise(data, schema, what=f"codes/{entry.name}")
        family = data["family"]
        for code, info in data["codes"].items():
            if not code.startswith(family):
                raise ValueError(f"codes/{entry.name}: {code} is not in family {family}")
            if code in out:
                raise ValueError(f"codes/{entry.name}: {code} is defined twice")
            out[code] = CodeInfo(
                code=code,
                family=family,
                severity=Severity(info["severity"]),
                title=info["title"].strip(),
                explanation=" ".join(info["explanation"].split()),
                hint=" ".join(info["hint"].split()),
                references=tuple(info.get("references", ())),
            )
    return out


def info(code: str) -> CodeInfo:
    try:
        return catalogue()[code]
    except KeyError:
        raise KeyError(f"finding code {code} is not in the catalogue (mlsubmit/codes/*.yaml)") from None


def finding(
    code: str,
    path: str,
    message: str,
    *,
    line: int | None = None,
    pointer: str | None = None,
    severity: Severity | None = None,
    hint: str | None = None,
    related: Iterable[Location] = (),
) -> Finding:
    """Build a Finding for a catalogued code; severity and hint default to the catalogue's."""
    meta = info(code)
    return Finding(
        code=code,
        severity=severity or meta.severity,
        path=path,
        message=message,
        hint=hint or meta.hint,
        line=line,
        pointer=pointer,
        related=tuple(related),
    )
