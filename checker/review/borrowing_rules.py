"""The borrowing rules of each round, from checker/tables/borrowing.yaml (validated by borrowing.schema.json)."""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass
from typing import Any

from mlsubmit.core.support.datafiles import load_validated


@dataclass(frozen=True)
class BorrowRules:
    round: str
    tag: str
    copy: str
    group_line: int  # "replace all other hyperparameters as a group"
    system_line: int  # same software, system and configuration; the scale rule
    refused: dict[str, int]  # benchmark -> line saying borrowing is not allowed
    kept: frozenset[str]  # settings that are not hyperparameters: the original's must stay
    batch: frozenset[str]
    not_hyperparameters: frozenset[str]
    ignored_fields: frozenset[str]
    scale_fields: frozenset[str]
    software_fields: frozenset[str]

    def cite(self, line: int) -> str:
        return f"{self.tag} §Hyperparameter Borrowing, {self.copy} L{line}"


@functools.cache
def _data() -> dict[str, Any]:
    entry = importlib.resources.files("mlsubmit.checker").joinpath("tables/borrowing.yaml")
    data: dict[str, Any] = load_validated(entry, "borrowing.schema.json", what="tables/borrowing.yaml")
    return data


def _resolved(round_: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    rounds = _data()["rounds"]
    raw = rounds[round_]
    if "extends" not in raw:
        return dict(raw)
    if raw["extends"] in seen:
        raise ValueError(f"tables/borrowing.yaml: round {round_} extends itself")
    return {**_resolved(raw["extends"], (*seen, round_)), **{k: v for k, v in raw.items() if k != "extends"}}


@functools.cache
def rules_for(ruleset: str) -> BorrowRules | None:
    """The rules of the round of `ruleset` ("5.0.0" -> round 5.0); None for a round the data does not hold."""
    round_ = ".".join(ruleset.split(".")[:2])
    if round_ not in _data()["rounds"]:
        return None
    raw, data = _resolved(round_), _data()
    source, system = raw["source"], data["system"]
    return BorrowRules(
        round=round_, tag=source["tag"], copy=source["copy"], group_line=source["lines"][0],
        system_line=source["lines"][1], refused=dict(raw.get("refused", {})), kept=frozenset(raw.get("kept", ())),
        batch=frozenset(data["batch"]), not_hyperparameters=frozenset(data["not_hyperparameters"]),
        ignored_fields=frozenset(system["ignored"]), scale_fields=frozenset(system["scale"]),
        software_fields=frozenset(system["software"]),
    )
