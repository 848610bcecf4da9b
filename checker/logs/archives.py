"""Archives given where a run log is expected: told by their first bytes, so that `check` can say what the file is
and what to do with it instead of reading a zip or a tarball as a log (LOG009 "no records", LOG002 NUL bytes).

Only the leading bytes are read (and, for a gzip file, the first block of what it expands to, where a tar header
would be); a gzip-compressed log is raw job output and stays a log.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from mlsubmit.checker.logs.input import GZIP_MAGIC

from mlsubmit.core.support.safe_io import open_regular

_TAR_MAGIC_AT = 257  # ustar magic in a tar header (POSIX and GNU)
_HEAD = 512
_PREFIXES: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a zip archive"),
    (b"PK\x05\x06", "a zip archive (empty)"),
    (b"Salted__", "an encrypted archive (openssl enc, as pack_submission.sh --pack writes it)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
)


def _is_tar(head: bytes) -> bool:
    return head[_TAR_MAGIC_AT:_TAR_MAGIC_AT + 5] == b"ustar"


def _gunzipped_head(data: bytes) -> bytes:
    """The first bytes a gzip stream expands to (as much as `data` holds); b"" when it is not gzip at all."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, _HEAD)
    except zlib.error:
        return b""


def archive_kind(path: str | Path) -> str | None:
    """What archive or foreign compression `path` is ("a zip archive", "a gzip-compressed tar archive", ...), or None
    for anything else (a log, plain or gzip-compressed, included). An unreadable file is None: reading it as a log
    reports the problem."""
    try:
        with open_regular(path) as stream:
            head = stream.read(64 << 10)
    except OSError:
        return None
    for prefix, kind in _PREFIXES:
        if head.startswith(prefix):
            return kind
    if _is_tar(head):
        return "a tar archive"
    if head.startswith(GZIP_MAGIC) and _is_tar(_gunzipped_head(head)):
        return "a gzip-compressed tar archive"
    return None


def archive_advice(given: str, kind: str) -> str:
    """What a user is told for an archive given to `check`: what it is and what to do instead."""
    if kind.startswith("an encrypted"):
        return (f"{given}: {kind}, not a run log; `mlsubmit verify {given} --passphrase-file FILE` checks the "
                "results chair's archive")
    if kind == "a gzip-compressed tar archive":  # the only plain archive `verify` opens (pack_submission.sh's)
        return (f"{given}: {kind}, not a run log; unpack it and check the folder (`mlsubmit check FOLDER`), or, "
                f"for the results chair's archive, `mlsubmit verify {given}`")
    if "archive" in kind:
        return f"{given}: {kind}, not a run log; unpack it and check the folder (`mlsubmit check FOLDER`)"
    return f"{given}: {kind}, not a run log; decompress it and check the file (a gzip-compressed log is read as is)"
