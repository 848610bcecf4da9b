"""Files are opened for reading only when the open descriptor is a regular file outside the kernel's pseudo-files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlsubmit.core.support.safe_io import NotRegularFile, open_regular, sha256_file


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


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="needs Linux /proc")
def test_tree_files_linked_to_proc_are_not_read(tmp_path: Path) -> None:
    """Each of these read its file whole; on some kernels /proc/self/pagemap reads for 256 GiB (issue 26). Here it
    may fail at once (EINVAL), so this guards the refusal rather than reproducing the hang."""
    from mlsubmit.checker.base.targets import OrgTree
    from mlsubmit.checker.power.folder import number_of_nodes
    from mlsubmit.checker.tree.folders import bypass_flags, read_division

    from mlsubmit.report.scoring import committed_scaling

    org = OrgTree(tmp_path, "Org")
    (tmp_path / "systems").mkdir()
    (tmp_path / "systems" / "s.json").symlink_to("/proc/self/pagemap")
    folder = tmp_path / "results" / "s" / "bert"
    folder.mkdir(parents=True)
    (folder / "package_checker_params").symlink_to("/proc/self/pagemap")
    (folder / "scaling.json").symlink_to("/proc/self/pagemap")
    assert read_division(org, "s") is None
    assert number_of_nodes(org, "s") is None
    assert bypass_flags(folder) == (set(), set())
    assert committed_scaling(folder) is None
