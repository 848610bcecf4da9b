"""One system identity for the review: what a system is, as its description tells it, whatever its folder or
system_name. Two descriptions are the same system when the submitter and division are the same and so is the
hardware: the accelerator model and count per node, or, for a system without accelerators, the host processor
(its generation: a Preview names "Sapphire Rapids", its Available successor "Platinum 8480+") and count per node.
Among several such systems the closest is the one that also shares the most of the interconnect, host
networking, host processor and name (the systems knowledge's family, else the name less status and software words
and scale numbers: dgxh100_preview is dgxh100). The data is
checker/tables/review-identity.yaml. `review preview` finds a Preview's successor with it, `review since` a renamed
system, `review borrow` the submitter's own entries."""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mlsubmit.checker.systems.descriptions import summarize
from mlsubmit.checker.systems.knowledge import spelling_key

from mlsubmit.core.support.datafiles import load_validated

T = TypeVar("T")
_NO_ACCELERATOR = {"", "na", "none", "nan", "null", "cpu"}


@functools.cache
def _data() -> dict[str, Any]:
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/review-identity.yaml")
    data: dict[str, Any] = load_validated(entry, "review-identity.schema.json", what="tables/review-identity.yaml")
    return data


@functools.cache
def _generations() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((g["name"], re.compile(g["pattern"], re.I)) for g in _data()["processor_generations"])


def processor(model: str) -> str:
    """The host processor's generation when the data knows it, else its model in compared form. Only the first
    256 characters are read: a model name is short, and the patterns' `.*` must not meet a huge hostile one."""
    model = model[:256]
    return next((name for name, pattern in _generations() if pattern.search(model)), spelling_key(model))


def name_stem(name: str) -> str:
    """A system name without status and software words or scale and version numbers (dgxh100_n4_preview ->
    dgxh100, D74H-7U_preview -> d74h7u)."""
    noise = set(_data()["name_noise"])
    tokens = re.split(r"[^a-z0-9]+", name.lower())
    kept = [t for t in tokens if t and t not in noise and not re.fullmatch(r"(n|x|ngc|gbs)?[0-9]+", t)]
    return "".join(kept)


@dataclass(frozen=True)
class Hardware:
    """What a system is, in compared form (spelling_key: lower-case letters and digits), and as its description
    says it."""

    submitter: str
    division: str
    accelerator: str  # "" for a system without accelerators
    per_node: int | None  # accelerators per node
    host: str
    hosts_per_node: int | None
    interconnect: str
    networking: str
    name: str
    said_accelerator: str
    said_host: str

    @property
    def cpu_only(self) -> bool:
        return not self.accelerator


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def hardware(data: Any, system_id: str, *, division: str | None = None, org: str | None = None) -> Hardware:
    """The identity of a decoded system description (any shape; never raises). `division` (the log's) and `org`
    (the log's submission_org or the tree's folder) stand in where the description does not say."""
    data = data if isinstance(data, dict) else {}
    s = summarize(data, system_id)
    model = _text(data, "accelerator_model_name")
    accelerator = "" if not s.accelerators_per_node or spelling_key(model) in _NO_ACCELERATOR else spelling_key(model)
    host = _text(data, "host_processor_model_name")
    return Hardware(
        submitter=spelling_key(s.submitter or org or ""), division=(s.division or division or "").lower(),
        accelerator=accelerator, per_node=s.accelerators_per_node, host=processor(host) if host else "",
        hosts_per_node=s.host_processors_per_node, interconnect=spelling_key(_text(data, "accelerator_interconnect")),
        networking=spelling_key(_text(data, "host_networking")),
        # a family's name has no scale in it
        name=spelling_key(s.family or "") or name_stem(s.system_name or system_id),
        said_accelerator=model, said_host=host,
    )


@dataclass(frozen=True)
class Match:
    """Why two descriptions are one system: the fields that must agree, and the optional ones that did."""

    required: tuple[str, ...]
    optional: tuple[str, ...]

    def say(self) -> str:
        return ", ".join((*self.required, *self.optional))


def _required(a: Hardware, b: Hardware) -> tuple[str, ...] | None:
    if not a.submitter or a.submitter != b.submitter or a.division != b.division or a.cpu_only != b.cpu_only:
        return None
    if a.cpu_only:
        if not a.host or (a.host, a.hosts_per_node) != (b.host, b.hosts_per_node):
            return None
        return ("submitter", "division", f"host processor {a.host} x {a.hosts_per_node} per node (no accelerator)")
    if (a.accelerator, a.per_node) != (b.accelerator, b.per_node):
        return None
    return ("submitter", "division", f"accelerator {a.said_accelerator} x {a.per_node} per node")


def match(a: Hardware, b: Hardware) -> Match | None:
    """How `b` is the same system as `a`; None when it is not."""
    required = _required(a, b)
    if required is None:
        return None
    pairs: list[tuple[str, object, object]] = [("interconnect", a.interconnect, b.interconnect),
                                               ("host networking", a.networking, b.networking)]
    if not a.cpu_only:  # for a CPU system the processor is required above
        pairs += [("host processor", a.host, b.host),
                  ("host processors per node", a.hosts_per_node, b.hosts_per_node)]
    pairs.append(("name", a.name, b.name))
    optional = [label for label, x, y in pairs if x and x == y]
    return Match(required, tuple(optional))


def closest(target: Hardware, candidates: Sequence[tuple[Hardware, T]]) -> tuple[list[T], Match | None]:
    """The candidates that are the target's system and share the most optional fields with it, and their match."""
    matched = [(m, item) for hw, item in candidates if (m := match(target, hw)) is not None]
    if not matched:
        return [], None
    best = max(len(m.optional) for m, _ in matched)
    chosen = [(m, item) for m, item in matched if len(m.optional) == best]
    return [item for _, item in chosen], chosen[0][0]


def same_submitter(a: Hardware, b: Hardware) -> bool:
    return bool(a.submitter) and a.submitter == b.submitter


@dataclass(frozen=True)
class Chips:
    """The chips of a system for the review's efficiency rule (time-to-train x chips, SR L755): its accelerators,
    or its host processors when it has none (accelerators_per_node 0: a CPU system)."""

    count: int | None
    host_processors: bool = False

    def say(self) -> str:
        if self.host_processors:
            return f"{self.count} chips: host processors, as accelerators_per_node is 0"
        return f"{self.count} chips"


def chips(data: Any, system_id: str) -> Chips:
    s = summarize(data if isinstance(data, dict) else {}, system_id)
    if s.accelerators_per_node == 0 and s.host_processors:
        return Chips(s.host_processors, True)
    return Chips(s.accelerators)
