"""What the report shows beside a score: the system description's facts and an optional list price.

Neither is checked here (the systems checks report broken system files); a file that cannot be read just leaves
its columns empty. Prices come from `prices.toml` beside `systems/` (schemas/prices.schema.json), or `--prices`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.errors import FatalError
from mlsubmit.findings import Finding
from mlsubmit.support.schema_loader import errors as schema_errors
from mlsubmit.support.schema_loader import load_schema, pointer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

if TYPE_CHECKING:
    from mlsubmit.checker.systems import SystemSummary

PRICES_FILE = "prices.toml"
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
    from mlsubmit.checker.jsonfile import read_json
    from mlsubmit.checker.systems import summarize

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
    amount: float
    currency: str
    basis: str  # "list" or "estimate"
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"amount": self.amount, "currency": self.currency, "basis": self.basis, "source": self.source}


@dataclass(frozen=True)
class PriceBook:
    """Prices by system id or system name (case-insensitive)."""

    entries: Mapping[str, Price] = field(default_factory=dict)
    origin: str = ""

    def lookup(self, system: SystemFacts | None, system_id: str) -> Price | None:
        for key in (system_id, system.get("system_name") if system else ""):
            price = self.entries.get(key.strip().lower()) if key else None
            if price is not None:
                return price
        return None

    def merged(self, other: PriceBook) -> PriceBook:
        return PriceBook({**other.entries, **self.entries}, self.origin or other.origin)


class PricesError(ValueError):
    """A prices file that cannot be used; `line` or `pointer` say where when known."""

    def __init__(self, message: str, *, line: int | None = None, pointer: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.pointer = message, line, pointer


def parse_prices(path: Path) -> PriceBook:
    """Read and validate a prices file (schemas/prices.schema.json)."""
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise PricesError(f"cannot read prices: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PricesError(f"cannot read prices: not UTF-8 at byte {exc.start}") from exc
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"at line (\d+)", str(exc))
        raise PricesError(f"cannot read prices: {exc}", line=int(where.group(1)) if where else None) from exc
    errs = schema_errors(data, load_schema("prices.schema.json"))
    if errs:
        first = errs[0]
        raise PricesError(f"{pointer(first) or '/'}: {first.message}", pointer=pointer(first) or "/")
    currency = str(data.get("currency", "USD"))
    entries = {
        str(name).strip().lower(): Price(
            amount=float(entry["price"]),
            currency=currency,
            basis=str(entry.get("basis", "estimate")),
            source=str(entry.get("source", "")),
        )
        for name, entry in data.get("systems", {}).items()
    }
    return PriceBook(entries, str(path))


def load_prices(path: Path) -> PriceBook:
    """A prices file named on the command line: one the user asked for, so a broken one is a usage error."""
    try:
        return parse_prices(path)
    except PricesError as exc:
        raise FatalError(f"{path}: {exc.message}") from exc


def tree_prices(path: Path, shown: str) -> tuple[PriceBook, Finding | None]:
    """A prices file found in the checked tree: a broken one is a finding and the report goes on without it."""
    from mlsubmit.codes import finding

    try:
        return parse_prices(path), None
    except PricesError as exc:
        return PriceBook(), finding("REP001", shown, exc.message, line=exc.line, pointer=exc.pointer)


def performance_per_price(minutes: float | None, price: Price | None) -> float | None:
    """Time-to-train runs per hour per million of currency: higher is better. An estimate from a list price."""
    if minutes is None or minutes <= 0 or price is None or price.amount <= 0:
        return None
    return (60.0 / minutes) / (price.amount / 1_000_000.0)
