"""Reading the tool's own YAML data files (rule tables, knowledge, code catalogue) quickly and safely.

Shipped data is validated against its schema on load. Importing jsonschema and validating costs more than a small
check itself (about 0.1 s per process), so a copy of each file that passed is kept as JSON in the user's cache
(`$MLSUBMIT_DATA_CACHE`, else `$XDG_CACHE_HOME/mlsubmit/data`, else `~/.cache/mlsubmit/data`), named by the hash
of the file's bytes, every shipped schema and the tool version: an edited file or schema is validated again, and a
copy that cannot be read or written is simply not used. `MLSUBMIT_DATA_CACHE=off` turns the copies off. Copies are
entries of checker/base/cache.py: each names its key and the digest of its data, so a damaged copy, another copy
renamed, or a link is a miss and the file is validated again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from mlsubmit import __version__
from mlsubmit.core.support.cache_entries import MISS, load_entry, store_entry

CACHE_ENV = "MLSUBMIT_DATA_CACHE"


def load_yaml(text: str) -> Any:
    """yaml.safe_load, with the C loader when PyYAML has one (imported here: a run whose data all comes from
    validated copies never needs PyYAML)."""
    import yaml

    try:  # libyaml's loader is several times faster; both build only plain Python data (no objects from tags)
        loader: Any = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - PyYAML built without libyaml
        loader = yaml.SafeLoader
    return yaml.load(text, Loader=loader)


class Readable(Protocol):
    """A shipped file: importlib.resources' Traversable, or a Path."""

    def read_bytes(self) -> bytes: ...


def load_validated(entry: Readable, schema: str, *, what: str) -> Any:
    """A shipped YAML file's data after validation against `schema` (a file of mlsubmit.schemas).

    Raises schema_loader.SchemaError when the file does not match; a validated copy is reused when one exists.
    """
    raw = entry.read_bytes()
    copy = _copy_path(raw, schema)
    if copy is not None and (kept := _read_copy(copy, _schema_shape(schema))) is not _missing():
        return kept  # else absent or damaged: validate the source and write a fresh copy
    data = load_yaml(raw.decode("utf-8"))
    from mlsubmit.core.support.schema_loader import (  # only on a miss: jsonschema is heavy
        load_schema,
        validate_or_raise,
    )

    validate_or_raise(data, load_schema(schema), what=what)
    if copy is not None:
        _store(copy, data)
    return data


def derived_data(name: str, inputs: bytes, build: Callable[[], Any]) -> Any:
    """Data computed from shipped files only (no user input), e.g. RCP statistics from mlperf-logging's data:
    `build()` once, then a JSON copy named by `name` and the hash of `inputs` (every byte the result depends on,
    the code that computes it included). A copy that is missing, damaged or cannot be written means `build()`."""
    folder = cache_dir()
    if folder is None:
        return build()

    key = hashlib.sha256(__version__.encode() + b"\0" + inputs).hexdigest()
    path = folder / f"{name}-{key}.json"
    if (kept := _read_copy(path)) is not _missing():
        return kept
    data = build()
    _store(path, data)
    return data


def _missing() -> Any:
    return MISS


def _read_copy(path: Path, shape: Callable[[Any], bool] | None = None) -> Any:
    """A kept copy's data, or MISS when it is absent, damaged or not the copy its name says (data may be null)."""
    return load_entry(path.parent, path, _copy_key(path), shape)


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {"object": dict, "array": list, "string": str}


@functools.cache
def _schema_shape(schema: str) -> Callable[[Any], bool]:
    """The schema's top level (type, required properties) as a cheap test of a copy: the copy was validated when
    written, so this only has to tell our data from another body that happens to carry a right digest. Reads the
    schema as plain JSON: jsonschema is not imported on a hit."""
    spec = json.loads(importlib.resources.files("mlsubmit.schemas").joinpath(schema).read_text(encoding="utf-8"))
    kind = _JSON_TYPES.get(spec.get("type", ""), object)
    required = tuple(spec.get("required", ()))

    def fits(data: Any) -> bool:
        if not isinstance(data, kind):
            return False
        return not required or (isinstance(data, dict) and all(k in data for k in required))

    return fits


def _copy_key(path: Path) -> str:
    return f"data/{path.stem}"


def cache_dir() -> Path | None:
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "no") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlsubmit" / "data"


@functools.cache
def _schemas_digest() -> bytes:
    """Every shipped schema at once: a schema can $ref another, so any change re-validates everything."""
    digest = hashlib.sha256(__version__.encode())
    folder = importlib.resources.files("mlsubmit.schemas")
    for item in sorted(folder.iterdir(), key=lambda e: e.name):
        if item.name.endswith(".json"):
            digest.update(item.name.encode() + b"\0" + item.read_bytes() + b"\0")
    return digest.digest()


def _copy_path(raw: bytes, schema: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(_schemas_digest() + schema.encode() + b"\0" + raw).hexdigest()
    return folder / f"{key}.json"


def _store(path: Path, data: Any) -> None:
    """Write the copy atomically; data JSON cannot represent exactly (non-string keys, dates) is not cached."""
    try:
        if json.loads(json.dumps(data, ensure_ascii=False)) != data:  # Infinity is kept: only our reader reads it
            return
    except (TypeError, ValueError):
        return
    store_entry(path.parent, path, _copy_key(path), data)
