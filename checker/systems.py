"""Organisation-level systems checks (placeholder until its issue lands: no findings yet)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlsubmit.checker.discover import OrgTree
from mlsubmit.checker.facts import LogFacts

from mlsubmit.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.pipeline import CheckOptions


def check_org(org: OrgTree, facts: dict[str, LogFacts], options: CheckOptions) -> list[Finding]:
    return []
