"""What the report shows beside a score: the system description's facts and an optional list price.

Neither is checked here (the systems checks report broken system files); a file that cannot be read just leaves
its columns empty. Prices come from `prices.toml` beside `systems/` (schemas/prices.schema.json), or `--prices`.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError
from mlsubmit.core.findings import Finding
from mlsubmit.core.support import tomlfile
from mlsubmit.core.support.safe_io import read_bounded
from mlsubmit.core.support.schema_loader import errors as schema_errors
from mlsubmit.core.support.schema_loader import load_schema, pointer

if TYPE_CHECKING:
    from mlsubmit.checker.systems.descriptions import SystemSummary

PRICES_FILE = "prices.toml"
_PRICES_LIMIT = 4 << 20  # a prices file is a few KiB; a bigger one is not read
MAX_SYSTEM_BYTES = 1 << 20  # a system description is a few KB; a bigger file is not shown (the checks report it)


@dataclass(frozen=True)
class SystemFacts:
    """A system description as the report shows it; totals come from the systems checks' summarize()."""

    id: str
    path: str
    readable: bool = True
    fields: tuple[tuple[str, str], ...] = ()
    summary: SystemSummary | None = None

    def get(self, key: str) -> str:
        return next((v for k, v in self.fields if k == key), "")

    @property
    def accelerators(self) -> int | None:
        return self.summary.accelerators if self.summary else None

    @property
    def host_processors(self) -> int | None:
        return self.summary.host_processors if self.summary else None

    def totals(self) -> list[tuple[str, str]]:
        """Label, value pairs of the totals the systems checks derive (servers, cores), for the page."""
        if self.summary is None:
            return []
        s = self.summary
        pairs = [("accelerators (total)", s.accelerators), ("host processors (total)", s.host_processors),
                 ("host servers (total)", s.host_servers), ("host cores (total)", s.host_cores),
                 ("system family", s.family)]  # fmt: skip
        return [(label, str(value)) for label, value in pairs if value is not None]

    def to_dict(self) -> dict[str, Any]:
        s = self.summary
        return {
            "name": self.get("system_name") or None,
            "division": self.get("division") or None,
            "status": self.get("status") or None,
            "accelerators": self.accelerators,
            "accelerator_model_name": self.get("accelerator_model_name") or None,
            "host_processors": self.host_processors,
            "host_processor_model_name": self.get("host_processor_model_name") or None,
            "host_servers": s.host_servers if s else None,
            "host_cores": s.host_cores if s else None,
            "framework": self.get("framework") or None,
        }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read_system(path: Path, shown: str) -> SystemFacts:
    """Decode a system file for display; the systems checks report what is wrong with it."""
    # the systems checks' readers only for a system file (start-up of `report`)
    from mlsubmit.checker.systems.descriptions import summarize
    from mlsubmit.checker.systems.jsonfile import read_json

    system_id = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    doc = read_json(path, shown, max_bytes=MAX_SYSTEM_BYTES)
    data = doc.data
    if not doc.decoded or not isinstance(data, dict):  # the systems checks report why
        return SystemFacts(id=system_id, path=shown, readable=False)
    return SystemFacts(
        id=system_id,
        path=shown,
        fields=tuple((str(k), _text(v)) for k, v in data.items()),
        summary=summarize(data, system_id),
    )


@dataclass(frozen=True)
class Price:
    """The price of one system: a rule's price, times number_of_nodes when the rule prices a node."""

    amount: float
    currency: str
    basis: str  # "list" or "estimate"
    source: str
    date: str = ""
    rule: str = ""  # the rule's key or label
    matched_by: str = ""  # "id", "name" or "description"
    nodes: int | None = None  # number_of_nodes multiplied in; None for a per-system price
    baseline: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"amount": self.amount, "currency": self.currency, "basis": self.basis, "source": self.source,
                "date": self.date, "rule": self.rule, "matched_by": self.matched_by, "nodes": self.nodes,
                "baseline": self.baseline}  # fmt: skip


@dataclass(frozen=True)
class PriceRule:
    """One rule of prices.toml: a key (id or system_name) or a `where` match on the system description."""

    label: str
    amount: float
    currency: str = "USD"
    basis: str = "estimate"
    source: str = ""
    date: str = ""
    per: str = "node"
    baseline: bool = False
    where: tuple[tuple[str, str | int], ...] = ()

    def matches(self, system: SystemFacts) -> bool:
        return bool(self.where) and system.readable and all(_field_matches(system.get(k), v) for k, v in self.where)

    def apply(self, system: SystemFacts | None, matched_by: str) -> Price | str:
        """The system's price, or why this rule cannot price it."""
        nodes = None
        if self.per == "node":
            nodes = _nodes(system)
            if nodes is None:
                shown = "unknown (no description)"
                if system is not None and system.readable:
                    shown = repr(system.get("number_of_nodes"))
                return f"rule {self.label!r} prices a node, but number_of_nodes is {shown}"
        total = self.amount * (nodes or 1)
        return Price(total, self.currency, self.basis, self.source, self.date, self.label, matched_by, nodes,
                     self.baseline)  # fmt: skip


def _field_matches(text: str, wanted: str | int) -> bool:
    if isinstance(wanted, str):
        return wanted.casefold() in text.casefold()
    number = re.fullmatch(r"\s*(\d+)\s*", text)
    return number is not None and int(number.group(1)) == wanted


def _nodes(system: SystemFacts | None) -> int | None:
    if system is None or not system.readable:
        return None
    found = re.fullmatch(r"\s*(\d+)\s*", system.get("number_of_nodes"))
    return int(found.group(1)) if found and int(found.group(1)) > 0 else None


@dataclass(frozen=True)
class PriceBook:
    """Price rules: by system id, then by system_name (case ignored), then the first description match.

    A book merged over another (--prices over the tree's prices.toml) is asked first, whole.
    """

    entries: Mapping[str, PriceRule] = field(default_factory=dict)
    origin: str = ""
    matches: tuple[PriceRule, ...] = ()
    under: PriceBook | None = None

    def __bool__(self) -> bool:
        return bool(self.entries or self.matches or self.under)

    def resolve(self, system: SystemFacts | None, system_id: str) -> Price | str:
        """The system's price, or a sentence saying why it has none."""
        name = system.get("system_name") if system and system.readable else ""
        for key, how in ((system_id, "id"), (name, "name")):
            rule = self.entries.get(key.strip().lower()) if key else None
            if rule is not None:
                return rule.apply(system, how)
        rule = next((r for r in self.matches if system is not None and r.matches(system)), None)
        if rule is not None:
            return rule.apply(system, "description")
        if self.under is not None:
            return self.under.resolve(system, system_id)
        named = f"id {system_id!r}" + (f" or name {name!r}" if name and name != system_id else "")
        return f"no price: no rule for {named}, and no description match"

    def lookup(self, system: SystemFacts | None, system_id: str) -> Price | None:
        found = self.resolve(system, system_id)
        return found if isinstance(found, Price) else None

    def merged(self, other: PriceBook) -> PriceBook:
        """This book first, then `other` (a price given on the command line wins over the tree's)."""
        if not other:
            return self
        if not self:
            return other
        return PriceBook(self.entries, self.origin, self.matches, other if self.under is None else
                         self.under.merged(other))  # fmt: skip


class PricesError(ValueError):
    """A prices file that cannot be used; `line` or `pointer` say where when known."""

    def __init__(self, message: str, *, line: int | None = None, pointer: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.pointer = message, line, pointer


def _read_toml(path: Path) -> Any:
    try:
        return tomlfile.loads(read_bounded(path, _PRICES_LIMIT).decode("utf-8"))
    except OSError as exc:
        raise PricesError(f"cannot read prices: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PricesError(f"cannot read prices: not UTF-8 at byte {exc.start}") from exc
    except tomlfile.TOMLDecodeError as exc:
        where = re.search(r"at line (\d+)", str(exc))
        raise PricesError(f"cannot read prices: {exc}", line=int(where.group(1)) if where else None) from exc


def _rule(label: str, entry: Mapping[str, Any], currency: str) -> PriceRule:
    try:
        amount = float(entry["price"])
    except OverflowError:  # an integer past a float's range
        amount = math.inf
    if not math.isfinite(amount):  # TOML spells nan and inf; the schema's minimum lets nan through
        raise PricesError(f"{label}: price must be a finite number, not {str(entry['price'])[:40]}")
    where = tuple((str(k), v) for k, v in entry.get("where", {}).items())
    return PriceRule(label=label, amount=amount, currency=currency,
                     basis=str(entry.get("basis", "estimate")), source=str(entry["source"]), date=str(entry["date"]),
                     per=str(entry.get("per", "node")), baseline=bool(entry.get("baseline", False)),
                     where=where)  # fmt: skip


@functools.cache
def description_fields() -> frozenset[str]:
    """Every field a system description schema of any round names: what a `where` may test."""
    names: set[str] = set()
    for version in ("1.0", "2.1", "4.0"):
        names.update(load_schema(f"system-{version}.schema.json").get("properties", {}))
    return frozenset(names)


def _check_fields(data: Mapping[str, Any]) -> None:
    """A misspelt field would silently match nothing: refuse it, with the nearest name."""
    known = description_fields()
    for i, entry in enumerate(data.get("match", [])):
        for key in entry["where"]:
            if key not in known:
                near = difflib.get_close_matches(key, sorted(known), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise PricesError(f"/match/{i}/where: {key!r} is not a system description field{hint}",
                                  pointer=f"/match/{i}/where/{key}")  # fmt: skip


def parse_prices(path: Path) -> PriceBook:
    """Read and validate a prices file (schemas/prices.schema.json)."""
    data = _read_toml(path)
    errs = schema_errors(data, load_schema("prices.schema.json"))
    if errs:
        first = errs[0]
        raise PricesError(f"{pointer(first) or '/'}: {first.message}", pointer=pointer(first) or "/")
    _check_fields(data)
    currency = str(data.get("currency", "USD"))
    entries = {str(name).strip().lower(): _rule(str(name), entry, currency)
               for name, entry in data.get("systems", {}).items()}  # fmt: skip
    matches = tuple(_rule(str(entry["label"]), entry, currency) for entry in data.get("match", []))
    return PriceBook(entries, str(path), matches)


def load_prices(path: Path) -> PriceBook:
    """A prices file named on the command line: one the user asked for, so a broken one is a usage error."""
    try:
        return parse_prices(path)
    except PricesError as exc:
        raise FatalError(f"{path}: {exc.message}") from exc


def tree_prices(path: Path, shown: str) -> tuple[PriceBook, Finding | None]:
    """A prices file found in the checked tree: a broken one is a finding and the report goes on without it."""
    try:
        return parse_prices(path), None
    except PricesError as exc:
        return PriceBook(), finding("REP001", shown, exc.message, line=exc.line, pointer=exc.pointer)


def performance_per_price(minutes: float | None, price: Price | None) -> float | None:
    """Time-to-train runs per hour per million of currency: higher is better. An estimate from a list price."""
    if minutes is None or not 0 < minutes < math.inf or price is None or not 0 < price.amount < math.inf:
        return None
    millions = price.amount / 1_000_000.0
    if millions == 0.0:  # a subnormal price (1e-320) underflows: no meaningful figure
        return None
    value = (60.0 / minutes) / millions
    return value if math.isfinite(value) else None
