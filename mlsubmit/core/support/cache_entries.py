"""Cache entries that cannot lie: the one format every mlsubmit cache writes (log results, RCP verdicts, the data
copies, the secret scan).

An entry is a header line (JSON: the format, the entry's full key, the sha256 and length of its body) and the body
(JSON). On reading, the header must name the key asked for, the body must have that digest, and the decoded body
must pass the caller's shape check; an entry reached through a symbolic link, or lying outside the cache folder, is
never opened. Anything else is MISS, and the caller computes the answer and writes the entry again. Writing is
atomic and best effort: a read-only folder or a full disk leaves the cache as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlsubmit.core.support import jsontext

ENTRY_FORMAT = "mlsubmit-cache-entry/1"
MAX_ENTRY_BYTES = 256 * 1024 * 1024  # a bigger file is not one of ours: never read it into memory

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
        header = jsontext.loads(head)
    except ValueError:
        return MISS
    if (not isinstance(header, dict) or header.get("format") != ENTRY_FORMAT or header.get("key") != key
            or header.get("length") != len(data) or header.get("sha256") != hashlib.sha256(data).hexdigest()):
        return MISS  # another program's file, another key's entry, a truncated or altered body
    try:  # a body is ours only if its digest matched, yet a forged one may still nest 100,000 deep
        return jsontext.loads(data, finite=False)
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


