"""Which division a results folder is judged in: the one home for the answers the checks and the report give.

The reference (mlperf-logging's package checker and result summarizer) takes the system file's `division` as
written: the package checker runs seeds and RCPs only for exactly "closed" (package_checker.py L84-90), and the
summarizer lists the result in the table of that division (result_summarizer.py L996, L1243). Both profiles judge
a folder in that division, so a folder whose logs say closed and whose system file says open is judged, and
listed, as open (SYS042 and TREE025 say so). Only where the system file gives no division (missing, unreadable,
no text) do the logs decide, for a tree still being assembled. The report scores a result in the division its
system file states, else the one most of its logs state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from mlsubmit.checker.logs.facts import LogFacts


def reference_closed(json_division: Any) -> bool:
    """Closed as the reference decides it: the system file's value is exactly "closed"."""
    return json_division == "closed"


def is_closed(json_division: str | None, runs: Sequence[LogFacts]) -> bool:
    """Closed as the package checker and the summarizer take it: the system file's division is exactly "closed";
    when the system file gives none, a run's log saying closed."""
    if json_division is not None:
        return reference_closed(json_division)
    return any(f.division == "closed" for f in runs)


def table(json_division: str) -> str:
    """Where the result summarizer lists a result of that division, in words."""
    if json_division in ("closed", "open"):
        return f"the {json_division} results table"
    return f"no results table (the summarizer's tables are closed and open; it writes the division {json_division!r})"


def scored_division(json_division: str | None, runs: Sequence[LogFacts]) -> str | None:
    """The division a result is scored in: the system file's as written, else the one most logs state."""
    if json_division:
        return json_division
    said = Counter(f.division for f in runs if f.division)
    return said.most_common(1)[0][0] if said else None
