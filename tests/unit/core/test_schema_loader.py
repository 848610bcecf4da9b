"""Inlined schema references: the same errors as validating through the registry, one lookup fewer per $ref."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mlsubmit.core.support import schema_loader
from mlsubmit.core.support.schema_loader import load_schema

ROOT = Path(__file__).resolve().parents[3]
SYSTEM = json.loads(next((ROOT / "systems").glob("*.json")).read_text(encoding="utf-8"))


def _through_registry(schema: dict[str, Any], data: Any) -> list[tuple[Any, ...]]:
    cls = jsonschema.validators.validator_for(schema)
    plain = cls(schema, registry=schema_loader._registry(), format_checker=cls.FORMAT_CHECKER)
    return _shape(plain.iter_errors(data))


def _shape(errors: Any) -> list[tuple[Any, ...]]:
    """What the findings read of an error: where, which keyword and its value, the message, the x-finding tag
    (a failing subschema holding references differs from its inlined copy only by them)."""
    return sorted((list(map(str, e.absolute_path)), e.validator, e.message, json.dumps(e.schema.get("x-finding")),
                   json.dumps(e.validator_value, sort_keys=True) if e.validator in PLAIN else "")
                  for e in errors)


PLAIN = {"required", "enum", "type", "pattern", "const", "minimum", "minLength"}


def _mutants() -> list[Any]:
    out: list[Any] = [SYSTEM, {}, [], "x", dict.fromkeys(SYSTEM), dict.fromkeys(SYSTEM, "TODO"),
                      dict.fromkeys(SYSTEM, ""), dict.fromkeys(SYSTEM, 0)]
    for key in list(SYSTEM)[:12]:
        out.append({k: v for k, v in SYSTEM.items() if k != key})
        out.append({**SYSTEM, key: ["a"]})
    out.append({**SYSTEM, "status": "avaliable", "division": "close"})
    return out


@pytest.mark.parametrize("name", ["system-1.0.schema.json", "system-2.1.schema.json", "system-4.0.schema.json"])
def test_inlined_schema_gives_the_same_errors(name: str) -> None:
    schema = load_schema(name)
    inlined = schema_loader._inlined(schema)
    assert inlined is not schema and not schema_loader._has_reference(inlined)
    for data in _mutants():
        assert _shape(schema_loader.validator(schema).iter_errors(data)) == _through_registry(schema, data)


def test_a_schema_that_cannot_be_inlined_is_used_as_it_is() -> None:
    looping = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://mlsubmit.invalid/loop",
               "$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "$ref": "#/$defs/node"}
    assert schema_loader._inlined(looping) is looping
    assert [e.validator for e in schema_loader.validator(looping).iter_errors([[1]])] == ["type"]
    sibling = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://mlsubmit.invalid/sib",
               "$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s", "minLength": 2}}}
    assert schema_loader._inlined(sibling) is sibling
    assert [e.validator for e in schema_loader.validator(sibling).iter_errors({"a": 1})] == ["type"]
