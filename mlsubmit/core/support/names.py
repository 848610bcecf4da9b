"""A "did you mean" for names a user types: folder names, system names, benchmark names."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_SUGGESTION = re.compile(r'; did you mean "[^"]*"\?')


def has_suggestion(message: str) -> bool:
    return _SUGGESTION.search(message) is not None


def without_suggestion(message: str) -> str:
    """The message without the suggestion did_you_mean put in it: where a root cause already suggests a name, a
    consequence computed from another list of names must not suggest a second, different one."""
    return _SUGGESTION.sub("", message)


def did_you_mean(name: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`; did you mean "X"?` for the closest of `choices` (not `name` itself), or "" when none is close.
    Case is ignored when comparing, since a change of case is the commonest slip; X is shown as written."""
    spelt = {c.lower(): c for c in sorted(set(choices)) if c != name}
    close = difflib.get_close_matches(name.lower(), list(spelt), n=1, cutoff=cutoff)
    return f'; did you mean "{spelt[close[0]]}"?' if close else ""
