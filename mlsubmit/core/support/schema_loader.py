"""Load the JSON Schemas shipped in mlsubmit.schemas and validate data against them."""

from __future__ import annotations

import functools
import importlib.resources
import json
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable


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
    return cls(_inlined(schema), registry=_registry(), format_checker=cls.FORMAT_CHECKER)


_INLINED: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})  # values there are data, not subschemas


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with each bare `{"$ref": ...}` replaced by the subschema it names, once per schema object.

    Validation then gives the same errors (same instance paths, failing subschemas and messages; only
    schema_path loses its "$ref" steps, which nothing reads) without a registry lookup per reference: those were
    half the time of checking a system file. A schema that would still hold a reference afterwards (a loop, a
    `$ref` beside other keywords, `$dynamicRef`) or whose references do not resolve is used as it is.
    """
    held = _INLINED.get(id(schema))
    if held is not None and held[0] is schema:  # the schema is held, so its id cannot be reused meanwhile
        return held[1]
    try:
        resolver = _registry().resolver(base_uri=str(schema.get("$id", "")))
        done = _inline(schema, resolver, 0)
        result = schema if _has_reference(done) else done
    except (RecursionError, Unresolvable):
        result = schema
    _INLINED[id(schema)] = (schema, result)
    return result


def _inline(node: Any, resolver: Any, depth: int) -> Any:
    if depth > 32:
        raise RecursionError("schema references nest too deeply to inline")
    if isinstance(node, list):
        return [_inline(item, resolver, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) == 1:
        resolved = resolver.lookup(ref)
        return _inline(resolved.contents, resolved.resolver, depth + 1)
    return {k: v if k in _DATA_KEYWORDS else _inline(v, resolver, depth) for k, v in node.items()}


def _has_reference(node: Any) -> bool:
    if isinstance(node, list):
        return any(_has_reference(item) for item in node)
    if not isinstance(node, dict):
        return False
    if any(k in node for k in ("$ref", "$dynamicRef", "$recursiveRef")):
        return True
    return any(_has_reference(v) for k, v in node.items() if k not in _DATA_KEYWORDS)


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
