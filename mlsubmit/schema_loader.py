"""Load the JSON Schemas shipped in mlsubmit.schemas and validate data against them."""

from __future__ import annotations

import functools
import importlib.resources
import json
from typing import Any

import jsonschema
from referencing import Registry, Resource


class SchemaError(ValueError):
    """Data shipped with or given to the tool does not match its schema."""


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    text = importlib.resources.files("mlsubmit.schemas").joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _registry() -> Registry:
    """All shipped schemas by $id, so schemas can $ref each other without network access."""
    resources = []
    for entry in importlib.resources.files("mlsubmit.schemas").iterdir():
        if entry.name.endswith(".json"):
            schema = json.loads(entry.read_text(encoding="utf-8"))
            if "$id" in schema:
                resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


def validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, registry=_registry(), format_checker=cls.FORMAT_CHECKER)


def errors(data: Any, schema: dict[str, Any]) -> list[jsonschema.ValidationError]:
    return sorted(validator(schema).iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))


def pointer(error: jsonschema.ValidationError) -> str:
    """RFC 6901 pointer of the failing instance."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path]
    return "/" + "/".join(parts) if parts else ""


def validate_or_raise(data: Any, schema: dict[str, Any], *, what: str) -> None:
    errs = errors(data, schema)
    if errs:
        lines = [f"{pointer(e) or '/'}: {e.message}" for e in errs[:10]]
        raise SchemaError(f"{what} does not match {schema.get('title', 'its schema')}:\n  " + "\n  ".join(lines))
