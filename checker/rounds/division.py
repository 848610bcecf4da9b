"""Which division a results folder is judged in: the one home for the answers the checks and the report give.

The reference (mlperf-logging's package checker and result summarizer) takes the system file's `division` as
written, and runs seeds and RCPs only for exactly "closed" (package_checker.py; rules-spec §1.2): PCL's v1.0
`"close"` is skipped there. The default profile is stricter on the submitter: a folder is closed when its system
file says closed in any spelling or any of its logs says closed, and TREE025 says when the two disagree. The report
scores a result in the division its system file states, else the one most of its logs state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from mlsubmit.checker.logs.facts import LogFacts

_CLOSED_SPELLINGS = ("closed", "close")


def reference_closed(json_division: Any) -> bool:
    """Closed as the reference decides it: the system file's value is exactly "closed"."""
    return json_division == "closed"


def closed(json_division: str | None, runs: Sequence[LogFacts]) -> bool:
    """Closed for the default profile: the system file says closed in any spelling, or a run's log does."""
    if isinstance(json_division, str) and json_division.strip().lower() in _CLOSED_SPELLINGS:
        return True
    return any(f.division == "closed" for f in runs)


def stated(json_division: str | None, runs: Sequence[LogFacts]) -> str | None:
    """The division a result is scored in: the system file's as written, else the one most logs state."""
    if json_division:
        return json_division
    said = Counter(f.division for f in runs if f.division)
    return said.most_common(1)[0][0] if said else None
