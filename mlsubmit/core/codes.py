"""The catalogue of finding codes: data in mlsubmit/core/codes/<family>.yaml, validated on load.

Checks create findings only through `finding()`, so every finding carries a registered code, a default
severity and a hint, and `mlsubmit explain CODE` can never drift from what the checks emit.
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Iterable
from dataclasses import dataclass

from mlsubmit.core.findings import Finding, Location, Severity
from mlsubmit.core.support.datafiles import load_validated


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
def family_codes(family: str) -> dict[str, CodeInfo]:
    """The codes of one family, from codes/<family>.yaml (each family loads on its own, when first used)."""
    entry = importlib.resources.files("mlsubmit.core").joinpath("codes").joinpath(f"{family.lower()}.yaml")
    data = load_validated(entry, "codes.schema.json", what=f"codes/{family.lower()}.yaml")
    if data["family"] != family:
        raise ValueError(f"codes/{family.lower()}.yaml declares family {data['family']}")
    out: dict[str, CodeInfo] = {}
    for code, meta in data["codes"].items():
        if not code.startswith(family) or not code[len(family) :].isdigit():
            raise ValueError(f"codes/{family.lower()}.yaml: {code} is not in family {family}")
        out[code] = CodeInfo(
            code=code,
            family=family,
            severity=Severity(meta["severity"]),
            title=meta["title"].strip(),
            explanation=" ".join(meta["explanation"].split()),
            hint=" ".join(meta["hint"].split()),
            references=tuple(meta.get("references", ())),
        )
    return out


def families() -> list[str]:
    root = importlib.resources.files("mlsubmit.core").joinpath("codes")
    return sorted(e.name[: -len(".yaml")].upper() for e in root.iterdir() if e.name.endswith(".yaml"))


def catalogue() -> dict[str, CodeInfo]:
    """Every code of every family, in family order."""
    out: dict[str, CodeInfo] = {}
    for family in families():
        out.update(family_codes(family))
    return out


def code_info(code: str) -> CodeInfo:
    family = code.rstrip("0123456789")
    try:
        return family_codes(family)[code]
    except (KeyError, FileNotFoundError):
        raise KeyError(f"finding code {code} is not in the catalogue (mlsubmit/core/codes/*.yaml)") from None


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
    cause: str | None = None,
    case: str | None = None,
) -> Finding:
    """Build a Finding for a catalogued code; severity and hint default to the catalogue's."""
    meta = code_info(code)
    return Finding(
        code=code,
        severity=severity or meta.severity,
        path=path,
        message=message,
        hint=hint or meta.hint,
        line=line,
        pointer=pointer,
        related=tuple(related),
        cause=cause,
        case=case,
    )
