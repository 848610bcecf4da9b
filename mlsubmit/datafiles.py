"""Reading the tool's own YAML data files (rule tables, knowledge, code catalogue) quickly and safely."""

from __future__ import annotations

from typing import Any

import yaml

try:  # libyaml's loader is several times faster; both build only plain Python data (no objects from tags)
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


def load_yaml(text: str) -> Any:
    """yaml.safe_load, with the C loader when PyYAML has one."""
    return yaml.load(text, Loader=_SafeLoader)
