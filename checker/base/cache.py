"""`--cache DIR`: reuse a log's findings and facts when nothing that decides them has changed; and the one place
where every cache of mlsubmit (logs, RCP verdicts, hygiene and secret results, the data copies) stores and reads
its entries.

The key is the log's sha256 plus everything else its result depends on: the ruleset, the profile and options that
pick log-level checks, mlsubmit's and mlperf-logging's versions, the closed hyperparameter tables' bytes and the
cache format. Entries are JSON (never
pickle: a shared cache folder must not be a way to run code) written to a temporary file and moved into place with
os.replace, so concurrent checks sharing a cache only ever see whole entries.

Caches cannot lie (`store_entry` / `load_entry`): an entry is a header line (JSON: the format, the entry's full
key, the sha256 and length of its body) and the body (JSON). On reading, the header must name the key asked for,
the body must have that digest, and the decoded body must pass the cache's own shape check; an entry reached
through a symbolic link, or lying outside the cache folder, is never opened. Anything else is a miss, and the
caller computes the answer and writes the entry again. Writing is best effort: a read-only folder or a full disk
leaves the cache as it was and the check goes on.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.logs.facts import SERIES_KEYS, LogFacts, Occurrence
from mlsubmit.checker.upstream.installed import version  # here: datafiles reads through this module at start

from mlsubmit import __version__
from mlsubmit.core.codes import catalogue
from mlsubmit.core.findings import Finding, Location, Severity
from mlsubmit.core.support.cache_entries import MISS, load_entry, store_entry

__all__ = ["MISS", "LogCache", "context_key", "folder_key", "load_entry", "store_entry"]

# imported where used: mlsubmit.core.support.datafiles reads its copies through this module at start-up
if TYPE_CHECKING:
    from mlsubmit.checker.logs.facts import LogFacts

    from mlsubmit.core.findings import Finding

FORMAT = 8  # 2: fewer series, call-site metadata only for seeds; 3: RCP lines; 4: key and digest; 5: RCP answer;
# 6: a new log check (TREE049), whose findings older entries lack; 7: facts' long values clipped (LOG012 notes
# it) and RULE010 (older entries say RULE008, a warning inside a tree, for a value that climbs out of the rule folder);
# 8: a finding's case is kept (LOG004's "last-record": a log cut off there, not a record broken mid-file)


def _mlperf_logging_version() -> str:
    return version()


@functools.cache  # asked twice per log (lookup, then store); its inputs do not change within a process
def context_key(ruleset: str, log_checks: str, hp_tables: str) -> str:
    """The key of everything a log's cached result depends on beside its bytes; `log_checks`: the profile's log
    checks (ProfileSpec.key()); `hp_tables`: the closed tables' digest when those checks read them, else "" (the
    engine gives it: the tables are a layer above this one). Severities are applied after the cache, to findings with
    the checks' own."""
    parts = {
        "format": FORMAT,
        "mlsubmit": __version__,
        "mlperf_logging": _mlperf_logging_version(),
        "ruleset": ruleset,
        "log_checks": log_checks,
        "hp_tables": hp_tables,
        "series": sorted(SERIES_KEYS),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


# --- JSON codec for what a log check returns ----------------------------------------------------------------


def _finding_to_json(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code, "severity": f.severity.value, "path": f.path, "message": f.message, "hint": f.hint,
        "line": f.line, "pointer": f.pointer, "related": [[r.path, r.line, r.pointer] for r in f.related],
        **({"repeats": f.repeats} if f.repeats else {}), **({"case": f.case} if f.case else {}),
    }  # fmt: skip


def _finding_from_json(d: dict[str, Any], old: str, new: str) -> Finding:
    path = new if d["path"] == old else d["path"]
    related = tuple(Location(new if p == old else p, ln, ptr) for p, ln, ptr in d["related"])
    return Finding(d["code"], Severity(d["severity"]), path, d["message"], d["hint"], d["line"], d["pointer"], related,
                   repeats=d.get("repeats", 0), case=d.get("case"))


def _occ(o: Any) -> list[Any]:
    return [o.value, o.metadata, o.time_ms, o.line]


def _facts_to_json(f: LogFacts) -> dict[str, Any]:
    plain = {fl.name: getattr(f, fl.name) for fl in fields(f) if fl.name not in ("first", "series", "error_codes")}
    plain["error_codes"] = list(f.error_codes)
    plain["first"] = {k: _occ(o) for k, o in f.first.items()}
    plain["series"] = {k: [_occ(o) for o in v] for k, v in f.series.items()}
    return plain


def _facts_from_json(d: dict[str, Any], new: str) -> LogFacts:
    first = {k: Occurrence(*v) for k, v in d.pop("first").items()}
    series = {k: [Occurrence(*o) for o in v] for k, v in d.pop("series").items()}
    d["error_codes"] = tuple(d["error_codes"])
    d["rcp_lines"] = tuple(d["rcp_lines"])
    d["path"] = new
    return LogFacts(first=first, series=series, **d)


class LogCache:
    def __init__(self, root: Path, context: str) -> None:
        self.root = Path(root)
        self.context = context

    def _entry(self, sha256: str) -> Path:
        return self.root / self.context / sha256[:2] / f"{sha256}.json"

    def _key(self, sha256: str) -> str:
        return f"log/{self.context}/{sha256}"

    def get(self, sha256: str, display: str) -> tuple[list[Finding], LogFacts] | None:
        data = load_entry(self.root, self._entry(sha256), self._key(sha256), _is_log_body)
        if data is MISS:
            return None
        try:
            old = data["display"]
            findings = [_finding_from_json(d, old, display) for d in data["findings"]]
            return findings, _facts_from_json(data["facts"], display)
        except (ValueError, KeyError, TypeError, AttributeError):  # the right digest over a body of another shape
            return None

    def put(self, sha256: str, display: str, findings: list[Finding], facts: LogFacts) -> None:
        payload = {"display": display, "findings": [_finding_to_json(f) for f in findings],
                   "facts": _facts_to_json(facts)}  # fmt: skip
        store_entry(self.root, self._entry(sha256), self._key(sha256), payload)


@functools.cache
def _log_body_validator() -> Any:
    # jsonschema only when an entry is validated (start-up)
    from mlsubmit.core.support.schema_loader import load_schema, validator

    return validator(load_schema("cache-log-entry.schema.json"))


def _is_log_body(body: Any) -> bool:
    """The body has the shape schemas/cache-log-entry.schema.json gives, and its findings' codes are catalogued:
    an entry with the right key and digest but another shape is a miss, never a finding on line "abc"."""
    if not _log_body_validator().is_valid(body):
        return False

    known = catalogue()
    return all(f["code"] in known for f in body["findings"])


def folder_key(*parts: Any) -> str:
    """Key of a folder-level result (the RCP check) from the inputs that decide it."""
    text = json.dumps([FORMAT, __version__, _mlperf_logging_version(), *parts], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()
