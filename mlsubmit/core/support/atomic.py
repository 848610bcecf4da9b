"""Files the user asked for (`-o`, `--html`, the chair's summary files), written whole or not at all.

A report is written to a temporary file beside its target and renamed over it only once complete: a full disk, an
encoding error or an interrupted run leaves the target as it was (no 0-byte or half-written file) and no temporary
file behind. Text is encoded as UTF-8 with unencodable characters (lone surrogates from a hostile file) written as
backslash escapes, never an exception. A target that exists and is not a regular file (/dev/stdout, /dev/null, a
FIFO) is written in place: a rename would replace the device's name, not write to it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

ENCODING_ERRORS = "backslashreplace"


def _mode_for(target: str) -> int | None:
    """The permissions the file should get: the existing file's, else what open() gives a new file (0666 less the
    umask); None when the target exists and is not a regular file."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """A stream whose content replaces `path` when the block ends without an exception. Through a symbolic link
    the link's target is replaced, as open() would have written it. OSError as open() and write() raise it."""
    target = os.path.realpath(path)
    mode = _mode_for(target)
    if mode is None:  # a device or FIFO: there is nothing to keep whole
        with open(target, "wb" if binary else "w", **({} if binary else _TEXT)) as stream:
            yield stream
        return
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else _TEXT)) as stream:
            yield stream
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_TEXT: dict[str, Any] = {"encoding": "utf-8", "errors": ENCODING_ERRORS, "newline": ""}


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """`text` as the whole content of `path` (UTF-8, line ends as given); OSError leaves `path` as it was."""
    with replacing(path) as stream:
        stream.write(text)
