"""What the system-description checks know about hardware, as data (checker/tables/systems-knowledge.yaml, schema-
checked): the schema of each round, the status spellings, the placeholders a log may carry, accelerator families
(their POD size in a name) and host processors (cores, threads, sockets). Names are compared by `spelling_key`.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from dataclasses import dataclass

from mlsubmit.core.support import numbers
from mlsubmit.core.support.datafiles import load_validated


@dataclass(frozen=True)
class Family:
    name: str
    pattern: re.Pattern[str]
    accelerators: tuple[re.Pattern[str], ...]
    units_per_accelerator: int = 1


@dataclass(frozen=True)
class Processor:
    name: str
    pattern: re.Pattern[str]
    cores: int
    threads: int | None
    max_sockets: int


@dataclass(frozen=True)
class StatusInfo:
    log: tuple[str, ...]
    canonical: str
    legacy: str


@dataclass(frozen=True)
class Knowledge:
    schemas: tuple[tuple[tuple[int, ...], tuple[int, ...], str], ...]
    status: dict[str, StatusInfo]
    log_placeholders: frozenset[str]
    families: tuple[Family, ...]
    processors: tuple[Processor, ...]

    def schema_name(self, ruleset: str) -> str:
        version = _version(ruleset)
        for low, high, name in self.schemas:
            if low <= version < high:
                return name
        return self.schemas[-1][2]

    def family_of(self, text: str) -> tuple[Family, int | None] | None:
        for fam in self.families:
            match = fam.pattern.search(text)
            if match:
                # None: no system's size (int() of 5,000 digits raised)
                return fam, numbers.whole_number(match.group("size"))
        return None

    def processor_of(self, model: str) -> Processor | None:
        return next((p for p in self.processors if p.pattern.search(model)), None)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in text.split("."))


@functools.cache
def knowledge() -> Knowledge:
    """Load and validate checker/tables/systems-knowledge.yaml (once per process)."""
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/systems-knowledge.yaml")
    data = load_validated(entry, "systems-knowledge.schema.json", what="systems-knowledge.yaml")
    families = tuple(
        Family(f["name"], re.compile(f["pattern"], re.I), tuple(re.compile(a, re.I) for a in f["accelerators"]),
               f.get("units_per_accelerator", 1))
        for f in data["families"]
    )
    processors = tuple(
        Processor(p["name"], re.compile(p["pattern"], re.I), p["cores"], p.get("threads"), p["max_sockets"])
        for p in data["processors"]
    )
    schemas = tuple((_version(s["from"]), _version(s["until"]), s["schema"]) for s in data["schemas"])
    status = {k: StatusInfo(tuple(v["log"]), v["canonical"], v["legacy"]) for k, v in data["status"].items()}
    return Knowledge(schemas, status, frozenset(data["log_placeholders"]), families, processors)


def spelling_key(text: str) -> str:
    """Lower-case letters and digits only: how names and status spellings are compared."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


