"""`--cache DIR`: reuse a log's findings and facts when nothing that decides them has changed; and the one place
where every cache of mlsubmit (logs, RCP verdicts, hygiene and secret results, the data copies) stores and reads
its entries.

The key is the log's sha256 plus everything else its result depends on: the ruleset, the profile and options that
pick log-level checks, mlsubmit's and mlperf-logging's versions and the cache format. Entries are JSON (never
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
import os
import tempfile
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit import __version__

if TYPE_CHECKING:  # imported where used: mlsubmit.datafiles reads its copies through this module at start-up
    from mlsubmit.checker.facts import LogFacts

    from mlsubmit.findings import Finding

FORMAT = 3  # 2: facts keep fewer series, and call-site metadata only for seeds; 3: entries carry key and digest
ENTRY_FORMAT = "mlsubmit-cache-entry/1"
MAX_ENTRY_BYTES = 256 * 1024 * 1024  # a bigger file is not one of ours: never read it into memory


@functools.cache
def _mlperf_logging_version() -> str:
    """Looked up once per process: each lookup scans the installed distributions (~0.3 ms), and every log asks."""
    import importlib.metadata  # only with --cache: the module costs ~15 ms to import

    try:
        return importlib.metadata.version("mlperf-logging")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"



@functools.cache  # asked twice per log (lookup, then store); its inputs do not change within a process
def context_key(ruleset: str, profile: str, hyperparameters: bool) -> str:
    from mlsubmit.checker.facts import SERIES_KEYS

    parts = {
        "format": FORMAT,
        "mlsubmit": __version__,
        "mlperf_logging": _mlperf_logging_version(),
        "ruleset": ruleset,
        "profile": profile,
        "hyperparameters": hyperparameters,
        "series": sorted(SERIES_KEYS),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


# --- JSON codec for what a log check returns ----------------------------------------------------------------


def _finding_to_json(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code, "severity": f.severity.value, "path": f.path, "message": f.message, "hint": f.hint,
        "line": f.line, "pointer": f.pointer, "related": [[r.path, r.line, r.pointer] for r in f.related],
    }  # fmt: skip


def _finding_from_json(d: dict[str, Any], old: str, new: str) -> Finding:
    from mlsubmit.findings import Finding, Location, Severity

    path = new if d["path"] == old else d["path"]
    related = tuple(Location(new if p == old else p, ln, ptr) for p, ln, ptr in d["related"])
    return Finding(d["code"], Severity(d["severity"]), path, d["message"], d["hint"], d["line"], d["pointer"], related)


def _occ(o: Any) -> list[Any]:
    return [o.value, o.metadata, o.time_ms, o.line]


def _facts_to_json(f: LogFacts) -> dict[str, Any]:
    plain = {fl.name: getattr(f, fl.name) for fl in fields(f) if fl.name not in ("first", "series", "error_codes")}
    plain["error_codes"] = list(f.error_codes)
    plain["first"] = {k: _occ(o) for k, o in f.first.items()}
    plain["series"] = {k: [_occ(o) for o in v] for k, v in f.series.items()}
    return plain


def _facts_from_json(d: dict[str, Any], new: str) -> LogFacts:
    from mlsubmit.checker.facts import LogFacts, Occurrence

    first = {k: Occurrence(*v) for k, v in d.pop("first").items()}
    series = {k: [Occurrence(*o) for o in v] for k, v in d.pop("series").items()}
    d["error_codes"] = tuple(d["error_codes"])
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


def _is_log_body(body: Any) -> bool:
    return (isinstance(body, dict) and isinstance(body.get("display"), str)
            and isinstance(body.get("findings"), list) and isinstance(body.get("facts"), dict)
            and all(isinstance(f, dict) for f in body["findings"]))  # fmt: skip


# --- entries that cannot lie ---------------------------------------------------------------------------------

MISS: Any = object()  # load_entry's answer for anything but a valid entry (a body may itself be null)


def _inside(root: Path, path: Path) -> bool:
    """The entry's folder, links resolved, is the cache folder or below it."""
    top = os.path.realpath(root)
    return os.path.commonpath([top, os.path.realpath(path.parent)]) == top


def _encode(key: str, body: Any) -> bytes | None:
    try:
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):  # not representable: not cached
        return None
    header = {"format": ENTRY_FORMAT, "key": key, "sha256": hashlib.sha256(data).hexdigest(), "length": len(data)}
    return json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + data


def _read_bytes(path: Path) -> bytes | None:
    """The entry's bytes; never through a symbolic link, never a FIFO or device, never a huge file."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        if fd != -1:
            os.close(fd)


def _decode(raw: bytes, key: str) -> Any:
    head, sep, data = raw.partition(b"\n")
    if not sep:
        return MISS
    try:
        header = json.loads(head)
    except ValueError:
        return MISS
    if (not isinstance(header, dict) or header.get("format") != ENTRY_FORMAT or header.get("key") != key
            or header.get("length") != len(data) or header.get("sha256") != hashlib.sha256(data).hexdigest()):
        return MISS  # another program's file, another key's entry, a truncated or altered body
    try:
        return json.loads(data)
    except ValueError:
        return MISS


def load_entry(root: Path, path: Path, key: str, shape: Callable[[Any], bool] | None = None) -> Any:
    """The body stored under `key` at `path` (inside the cache folder `root`), or MISS when there is no valid one:
    missing, unreadable, a link, outside the folder, truncated, of another key, altered, or failing `shape`."""
    if not _inside(root, path):
        return MISS
    raw = _read_bytes(path)
    if raw is None:
        return MISS
    body = _decode(raw, key)
    if body is MISS or (shape is not None and not shape(body)):
        return MISS
    return body


def store_entry(root: Path, path: Path, key: str, body: Any) -> None:
    """Write the entry atomically (temporary file + os.replace, which replaces a planted link, never its target).
    Best effort: a cache that cannot be written (read-only, full, outside its folder) never fails the check."""
    data = _encode(key, body)
    if data is None:
        return
    try:
        if not _inside(root, path):  # before creating folders: a planted link must not lead the write out
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(root, path):
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def folder_key(*parts: Any) -> str:
    """Key of a folder-level result (the RCP check) from the inputs that decide it."""
    text = json.dumps([FORMAT, __version__, _mlperf_logging_version(), *parts], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()
