"""`--ledger FILE|URL`: which of the two a run ledger is, and a PostgreSQL URL as every message may show it.

A text that starts with `postgresql://` or `postgres://` is a PostgreSQL ledger's URL (checker/base/ledger_pg.py
connects to it); anything else is an SQLite file (checker/base/ledger.py). A URL is kept in a LedgerUrl, whose
`str()` and `repr()` leave its password out (`user:***@`, `password=***`): the command line, messages, reports and
the manifest name the ledger through it and never hold the password. Parsed here, in the foundation, so that the
command line's parsers need no checker module (`check --help` loads none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql://", "postgres://")
_SECRET_KEYS = frozenset({"password", "sslpassword"})


@dataclass(frozen=True)
class LedgerUrl:
    """A PostgreSQL ledger's connection URL. `str()` is the URL without its password, for every message."""

    url: str = field(repr=False)

    def __str__(self) -> str:
        return without_password(self.url)

    def __repr__(self) -> str:
        return f"LedgerUrl({without_password(self.url)!r})"

    def secrets(self) -> list[str]:
        """The password(s) the URL holds, to take out of a server's message."""
        parts = urlsplit(self.url)
        found = [parts.password, unquote(parts.password)] if parts.password else []  # as given and as meant
        return found + [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in _SECRET_KEYS and v]


def without_password(url: str) -> str:
    """`url` without a password: user:password@ becomes user:***@, password=... in the query becomes ***."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, hosts = netloc.rpartition("@")
            name, colon, _ = user.partition(":")
            netloc = f"{name}{':***' if colon else ''}@{hosts}"
        query = [(k, "***" if k in _SECRET_KEYS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="/*:"), ""))
    except ValueError:  # a URL urllib cannot split: shown as its scheme only
        return url.split("//", 1)[0] + "//***"


def location(text: str, base: Path | None = None) -> Path | LedgerUrl:
    """`--ledger TEXT` (or a config's `ledger = TEXT`): a PostgreSQL URL, else a file (relative to `base`)."""
    if text.startswith(SCHEMES):
        return LedgerUrl(text)
    return Path(text) if base is None else base / text


def shown_ledger(text: str) -> str:
    """A config's `ledger = TEXT` as a report or manifest may show it: a URL without its password."""
    return without_password(text) if text.startswith(SCHEMES) else text
