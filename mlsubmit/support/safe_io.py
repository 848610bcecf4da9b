"""Opening input files without being stalled or fooled by what sits at the path."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder: reading it could block forever or never end."""


def open_regular(path: str | Path) -> BinaryIO:
    """Open a file for reading in binary mode, refusing anything that is not a regular file.

    The check is made on the open descriptor (fstat), not on the path, so a file swapped for a FIFO between a
    check and the open cannot stall the reader; O_NONBLOCK keeps the open itself from waiting on a FIFO writer.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(0, "not a regular file", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def sha256_file(path: str | Path) -> str:
    """SHA-256 of a regular file's bytes, read in 1 MiB blocks (memory does not grow with the file)."""
    digest = hashlib.sha256()
    with open_regular(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
