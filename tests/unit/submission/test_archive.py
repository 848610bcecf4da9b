"""The archive: same bytes every time, sha256sum/sha1sum files, a refusing unpack."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from mlsubmit.submission import archive as arch


def make_tree(root: Path) -> Path:
    (root / "Org" / "results" / "sys" / "bert").mkdir(parents=True)
    (root / "Org" / "results" / "sys" / "bert" / "result_0.txt").write_bytes(b":::MLLOG {}\n")
    (root / "Org" / "systems").mkdir()
    (root / "Org" / "systems" / "sys.json").write_text("{}\n")
    run = root / "Org" / "benchmarks" / "bert" / "implementations" / "x" / "run_and_time.sh"
    run.parent.mkdir(parents=True)
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    (root / "manifest.json").write_text("{}\n")
    return root


def test_two_builds_give_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    one, two = make_tree(tmp_path / "a"), make_tree(tmp_path / "b")
    os.utime(two / "Org" / "systems" / "sys.json", (1, 1))  # mtimes and the folder's path must not matter
    (two / "Org" / "systems" / "sys.json").chmod(0o600)
    arch.write_tar_gz(one, ["Org", "manifest.json"], tmp_path / "one.tar.gz")
    arch.write_tar_gz(two, ["Org", "manifest.json"], tmp_path / "two.tar.gz")
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()


def test_members_are_sorted_with_fixed_owner_time_and_modes(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "t")
    arch.write_tar_gz(root, ["Org", "manifest.json"], tmp_path / "o.tar.gz")
    data = (tmp_path / "o.tar.gz").read_bytes()
    assert data[4:8] == b"\x00\x00\x00\x00"  # gzip header mtime 0
    assert data[3] & 0x08 == 0  # no file name stored in the gzip header
    with tarfile.open(tmp_path / "o.tar.gz") as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and names[0] == "Org" and "manifest.json" in names
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(0, 0, "", "", 0)}
    modes = {m.name.rsplit("/", 1)[-1]: m.mode for m in members}
    assert modes["run_and_time.sh"] == 0o755 and modes["sys.json"] == 0o644 and modes["systems"] == 0o755


def test_links_are_never_archived(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "t")
    os.symlink("/etc/passwd", root / "Org" / "systems" / "link")
    with pytest.raises(ValueError, match="only files and folders"):
        arch.write_tar_gz(root, ["Org"], tmp_path / "o.tar.gz")


def test_checksum_files_are_in_sha256sum_and_sha1sum_format(tmp_path: Path) -> None:
    target = tmp_path / "Org.tar.gz"
    target.write_bytes(b"archive bytes")
    sums = arch.write_checksums(target)
    assert [p.name for p in sums] == ["Org.tar.gz.sha256", "Org.tar.gz.sha1"]
    assert sums[0].read_text() == f"{hashlib.sha256(b'archive bytes').hexdigest()}  Org.tar.gz\n"
    assert sums[1].read_text() == f"{hashlib.sha1(b'archive bytes').hexdigest()}  Org.tar.gz\n"
    for tool, sums_file in (("sha256sum", sums[0]), ("sha1sum", sums[1])):
        if shutil.which(tool):
            subprocess.run([tool, "-c", sums_file.name], cwd=tmp_path, check=True, capture_output=True)


# --- unpacking ---------------------------------------------------------------------------------------------------


def hostile_archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o644
    return info


def test_unpack_refuses_climbing_absolute_links_and_devices(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    archive = hostile_archive(tmp_path / "evil.tar.gz", [
        (member("Org/ok.txt"), b"fine"),
        (member("../outside.txt"), b"climbed"),
        (member("Org/../../outside.txt"), b"climbed"),
        (member("/tmp/absolute.txt"), b"abs"),
        (member("Org/link", tarfile.SYMTYPE, "/etc/passwd"), None),
        (member("Org/hard", tarfile.LNKTYPE, "Org/ok.txt"), None),
        (member("Org/dev", tarfile.CHRTYPE), None),
        (member("Org/fifo", tarfile.FIFOTYPE), None),
        (member("Org/ok.txt"), b"overwrite"),
        (member("Org/ok.txt/below"), b"under a file"),
        (member("./"), b"a file named like the folder"),
    ])  # fmt: skip
    dest = tmp_path / "dest"
    dest.mkdir()
    result = arch.unpack(archive, dest, "evil.tar.gz")
    assert result.files == 1
    assert [p.relative_to(dest).as_posix() for p in sorted(dest.rglob("*"))] == ["Org", "Org/ok.txt"]
    assert (dest / "Org" / "ok.txt").read_bytes() == b"fine"
    assert not outside.exists() and not Path("/tmp/absolute.txt").exists()
    findings = result.findings or []
    assert [f.code for f in findings] == ["PKG042"] * 10
    messages = " | ".join(f.message for f in findings)
    for why in ("'..'", "absolute path", "symbolic link", "hard link", "device or FIFO", "appears twice",
                "below a member that is a file", "file with the folder name"):
        assert why in messages
    assert findings[0].path == "evil.tar.gz:../outside.txt"


def test_unpack_of_a_non_archive_is_a_finding(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x1f\x8b\x08\x00garbage")
    result = arch.unpack(junk, tmp_path, "junk.tar.gz")
    assert [f.code for f in result.findings or []] == ["PKG044"]


def test_unpack_restores_a_packed_tree(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "t")
    arch.write_tar_gz(root, ["Org", "manifest.json"], tmp_path / "o.tar.gz")
    dest = tmp_path / "dest"
    dest.mkdir()
    result = arch.unpack(tmp_path / "o.tar.gz", dest, "o.tar.gz")
    assert result.findings == [] and result.files == 4
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    after = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    assert before == after
    assert os.access(dest / "Org/benchmarks/bert/implementations/x/run_and_time.sh", os.X_OK)


def test_unpack_checks_the_whole_gzip_stream(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "t")
    arch.write_tar_gz(root, ["Org", "manifest.json"], tmp_path / "o.tar.gz")
    data = bytearray((tmp_path / "o.tar.gz").read_bytes())
    data[-6] ^= 0xFF  # inside the gzip trailer's CRC: tarfile alone would never notice
    (tmp_path / "bad.tar.gz").write_bytes(bytes(data))
    dest = tmp_path / "dest"
    dest.mkdir()
    result = arch.unpack(tmp_path / "bad.tar.gz", dest, "bad.tar.gz")
    assert [f.code for f in result.findings or []] == ["PKG044"] and not any(dest.iterdir())


def test_an_archive_of_too_many_members_or_bytes_is_not_unpacked(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49: 100,000 empty files (644 KB) took verify 858 MB; the headers are counted before anything is written."""
    monkeypatch.setattr(arch, "MAX_MEMBERS", 30)
    many = hostile_archive(tmp_path / "many.tar.gz", [(member(f"Org/f{i}"), b"") for i in range(31)])
    dest = tmp_path / "dest"
    dest.mkdir()
    result = arch.unpack(many, dest, "many.tar.gz")
    assert [(f.code, f.message) for f in result.findings or []] == [
        ("PKG044", "not unpacked: it holds more than 30 members (files and folders)")]
    assert result.files == 0 and not any(dest.iterdir())
    enough = hostile_archive(tmp_path / "enough.tar.gz", [(member(f"Org/f{i}"), b"") for i in range(30)])
    assert arch.unpack(enough, dest, "enough.tar.gz").files == 30
    monkeypatch.setattr(arch, "MAX_UNPACKED", 10)
    big = hostile_archive(tmp_path / "big.tar.gz", [(member("Org/a"), b"12345678"), (member("Org/b"), b"123")])
    shutil.rmtree(dest)
    dest.mkdir()
    result = arch.unpack(big, dest, "big.tar.gz")
    assert [f.message for f in result.findings or []] == ["not unpacked: its members hold more than 10 bytes"]
    assert not any(dest.iterdir())


@pytest.mark.parametrize(("name", "said"), [
    ("Org/" + "a" * 5000, "a member's name has 5,004 bytes (more than 4,096)"),
    ("Org/" + "a" * 256 + "/f", "a member's name has a part of 256 bytes (more than 255)"),
], ids=["name", "component"])
def test_a_name_no_file_system_holds_refuses_the_archive_from_its_headers(tmp_path: Path, name: str,
                                                                         said: str) -> None:
    """Issue 54: 3,000 members of 100 KB PAX names (556 KB) took verify 651 MB and wrote a 301 MB JSON report."""
    archive = hostile_archive(tmp_path / "long.tar.gz", [(member("Org/ok"), b"x"), (member(name), b"")])
    dest = tmp_path / "dest"
    dest.mkdir()
    result = arch.unpack(archive, dest, "long.tar.gz")
    assert [(f.code, f.message) for f in result.findings or []] == [("PKG044", f"not unpacked: {said}")]
    assert result.files == 0 and not any(dest.iterdir())
    fits = hostile_archive(tmp_path / "fits.tar.gz", [(member("Org/" + "a" * 255), b"x")])
    assert arch.unpack(fits, dest, "fits.tar.gz").files == 1


def test_refusals_of_many_members_are_folded(tmp_path: Path) -> None:
    links = [(member(f"Org/l{i}", tarfile.SYMTYPE, f"/etc/{i}"), None) for i in range(3000)]
    archive = hostile_archive(tmp_path / "links.tar.gz", links)
    dest = tmp_path / "dest"
    dest.mkdir()
    found = arch.unpack(archive, dest, "links.tar.gz").findings or []
    assert len(found) == 1001  # 1,000 kept whole, one fold for the rest, each message quoting its own link
    assert sum(1 + f.repeats for f in found) == 3000
    assert "and 1,999 more PKG042 findings with other messages" in found[-1].message


def test_a_stream_keeps_no_member_it_has_read(tmp_path: Path) -> None:
    archive = hostile_archive(tmp_path / "a.tar.gz", [(member(f"Org/f{i}"), b"x") for i in range(50)])
    with tarfile.open(archive, mode="r|gz") as tar:
        sizes = [len(tar.members) for _ in arch._streamed(tar)]
    assert sizes == [0] * 50
