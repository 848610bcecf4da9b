"""Files are opened for reading only when the open descriptor is a regular file outside the kernel's pseudo-files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlsubmit.support.safe_io import NotRegularFile, open_regular, sha256_file


def test_a_regular_file_opens(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"abc")
    with open_regular(f) as fh:
        assert fh.read() == b"abc"


_SYS = "/sys/kernel/mm/transparent_hugepage/enabled"


@pytest.mark.parametrize("target", ["/proc/self/pagemap", "/proc/self/status", _SYS])
def test_links_to_proc_and_sys_are_refused(tmp_path: Path, target: str) -> None:
    if not os.path.exists(target):
        pytest.skip(f"{target} does not exist here")
    link = tmp_path / "result_0.txt"
    link.symlink_to(target)
    with pytest.raises(NotRegularFile):
        open_regular(link)
    with pytest.raises(NotRegularFile):
        sha256_file(link)


def test_fifos_and_devices_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/null")):
        with pytest.raises(NotRegularFile):
            open_regular(path)
