"""The codes the `systems` check may emit (checker/engine/checks.py registers it). A module of its own: the check
itself is imported when it first runs (jsonschema), its declaration whenever the registry is."""

from __future__ import annotations

CODES = frozenset({"SYS001", "SYS002", "SYS003", "SYS004", "SYS005", "SYS006", "SYS010", "SYS011", "SYS012",
                   "SYS013", "SYS014", "SYS015", "SYS016", "SYS017", "SYS018", "SYS019", "SYS020", "SYS021",
                   "SYS022", "SYS030", "SYS031", "SYS032", "SYS033", "SYS034", "SYS040", "SYS041", "SYS042",
                   "SYS043", "SYS044", "SYS045", "SYS046", "SYS047", "SYS048", "SYS049"})
