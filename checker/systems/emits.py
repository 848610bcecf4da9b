"""The codes the `systems` check may emit (checker/engine/checks.py registers it): the whole SYS family, which no
other check emits, so a new SYS code needs no line here. A module of its own: the check itself is imported when it
first runs (jsonschema), its declaration whenever the registry is."""

from __future__ import annotations

CODES = frozenset({"SYS"})
