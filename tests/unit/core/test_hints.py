"""Each code's hint stays on its own subject, checked mechanically over the whole catalogue:

- a code the hint names exists and is the code's neighbour: named in its title or explanation, or its root cause
  or one of its consequences (formats/causes.py);
- an option the hint names is an option of an mlsubmit command, or of the reference package checker when the hint
  says it is the reference's;
- a field the hint gives a value for (`"key": value`) is one the title or explanation is about;
- a code a system-description schema reports for missing fields (`required` with `x-finding`) has a hint that
  names every one of those fields (SYS019's hint had advised on system_type for a missing
  host_network_card_count).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mlsubmit.cli import COMMANDS, build_parser
from mlsubmit.core.codes import CodeInfo, catalogue
from mlsubmit.formats.causes import ROOTS

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
CODE = re.compile(r"\b[A-Z]{2,5}[0-9]{3}\b")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SETS = re.compile(r'"([a-z][a-z0-9_]*)": (?!\.\.\.)')  # `"key": ...` only shows a shape
REFERENCE_OPTIONS = {"--seed-checker-bypass", "--rcp-bypass", "--rcp-bert-train-samples"}  # mlperf-logging's


def _explains(root: str, code: str) -> bool:
    explained = ROOTS[root][1] if root in ROOTS else frozenset()
    return code in explained or code.rstrip("0123456789") in explained


def _linked(code: str, other: str) -> bool:
    """Cause and consequence (causes.ROOTS), either way round."""
    return _explains(code, other) or _explains(other, code)


def _about(meta: CodeInfo) -> str:
    return f"{meta.title} {meta.explanation}"


def _options() -> set[str]:
    out = set()
    for command in COMMANDS:
        parser = build_parser(command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for action in [*parser._actions, *_nested(sub.choices[command])]:
            out.update(action.option_strings)
    return out


def _nested(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A command's options and those of its own subcommands (review borrow)."""
    out = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            out += [a for child in action.choices.values() for a in _nested(child)]
    return out


def _required_by_code(node: Any) -> Iterator[tuple[str, list[str]]]:
    if isinstance(node, dict):
        tag = node.get("x-finding")
        if isinstance(tag, str) and isinstance(node.get("required"), list):
            yield tag, node["required"]
        for value in node.values():
            yield from _required_by_code(value)
    elif isinstance(node, list):
        for value in node:
            yield from _required_by_code(value)


def code_problems(cat: dict[str, CodeInfo]) -> dict[str, str]:
    return {code: other for code, meta in cat.items() for other in sorted(set(CODE.findall(meta.hint)) - {code})
            if other not in cat or not (other in _about(meta) or _linked(code, other))}  # fmt: skip


def option_problems(cat: dict[str, CodeInfo], known: set[str]) -> dict[str, str]:
    return {code: option for code, meta in cat.items() for option in OPTION.findall(meta.hint)
            if option not in known and not (option in REFERENCE_OPTIONS and "reference" in meta.hint)}  # fmt: skip


def field_problems(cat: dict[str, CodeInfo]) -> dict[str, str]:
    return {code: key for code, meta in cat.items() for key in SETS.findall(meta.hint) if key not in _about(meta)}


def required_problems(cat: dict[str, CodeInfo], schema: Any) -> set[tuple[str, str]]:
    return {(code, key) for code, keys in _required_by_code(schema) for key in keys if key not in cat[code].hint}


def test_codes_a_hint_names_are_its_neighbours() -> None:
    assert code_problems(catalogue()) == {}


def test_options_a_hint_names_exist() -> None:
    assert option_problems(catalogue(), _options()) == {}


def test_fields_a_hint_sets_are_its_subject() -> None:
    assert field_problems(catalogue()) == {}


@pytest.mark.parametrize("schema", sorted(p.name for p in SCHEMAS.glob("system-*.schema.json")))
def test_hints_of_required_fields_name_every_field(schema: str) -> None:
    assert required_problems(catalogue(), json.loads((SCHEMAS / schema).read_text("utf-8"))) == set()


def test_the_rules_refuse_the_mistakes_they_are_for() -> None:
    """A passing catalogue proves nothing on its own: each rule refuses a hint that strays."""
    cat = catalogue()
    sys019 = cat["SYS019"]
    old = replace(sys019, hint='Add the field to the system description, e.g. "system_type": "datacenter".')
    schema = {"allOf": [{"required": ["system_type", "host_network_card_count"], "x-finding": "SYS019"}]}
    assert required_problems({**cat, "SYS019": old}, schema) == {("SYS019", "host_network_card_count")}
    stray = replace(sys019, hint='Write "division": "closed"; see TREE018; or check --rulset.')
    assert code_problems({**cat, "SYS019": stray}) == {"SYS019": "TREE018"}
    assert field_problems({**cat, "SYS019": stray}) == {"SYS019": "division"}
    assert option_problems({"SYS019": stray}, _options()) == {"SYS019": "--rulset"}
    assert _linked("PKG020", "TREE025") and _linked("TREE025", "PKG020") and _linked("LOG004", "RULE002")
