"""Opening input files without being stalled or fooled by what sits at the path."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device, folder or kernel pseudo-file: reading it could block forever or never
    end."""


# Kernel pseudo-filesystems: their files say "regular, size 0" yet may block (/proc/kmsg) or run for hundreds of
# GiB (/proc/self/pagemap). No log, result or checksum lives there.
_PSEUDO_ROOTS = ("/proc", "/sys")


@functools.cache
def _pseudo_devices() -> frozenset[int]:
    return frozenset(os.stat(root).st_dev for root in _PSEUDO_ROOTS if os.path.isdir(root))


def _where(fd: int) -> str:
    """The path the kernel gives for an open descriptor (links resolved), or "" where it cannot tell."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def pseudo_file(fd: int, st: os.stat_result) -> bool:
    """Whether an open descriptor is a file of /proc or /sys (by its device, or where the kernel says it is)."""
    if st.st_dev in _pseudo_devices():
        return True
    where = _where(fd)
    return any(where == root or where.startswith(root + "/") for root in _PSEUDO_ROOTS)


def open_regular(path: str | Path) -> BinaryIO:
    """Open a file for reading in binary mode, refusing anything that is not a regular file.

    The check is made on the open descriptor (fstat), not on the path, so a file swapped for a FIFO between a
    check and the open cannot stall the reader; O_NONBLOCK keeps the open itself from waiting on a FIFO writer.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(0, "not a regular file", str(path))
        if pseudo_file(fd, st):
            raise NotRegularFile(0, "a kernel pseudo-file (/proc, /sys), not a regular file", str(path))
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


SMALL_FILE = 64 << 20  # descriptions, params, scaling.json: no real one comes near; a bigger one is not read


class TooLarge(OSError):
    """The file is larger than what its kind may hold; it is not read."""


def read_bounded(path: str | Path, limit: int) -> bytes:
    """A small file's bytes (configs, prices, checksums), refused past `limit` bytes without reading on."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(0, f"larger than {limit} bytes", str(path))
    return data
