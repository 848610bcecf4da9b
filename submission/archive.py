"""The archive: a deterministic tar.gz, its checksum files and a refusing unpacker.

Determinism: members sorted by name, owner 0/0 with empty names, mode 0644 (0755 for folders and executables),
one fixed mtime (SOURCE_DATE_EPOCH when set, else 0), gzip header without name and with mtime 0. The same tree
gives the same bytes on every machine.

Encryption (OpenSSL's `enc` format, as pack_submission.sh writes it) lives in `encryption.py`.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.repeats import Capped
from mlsubmit.core.support.safe_io import open_regular

_CHUNK = 1 << 20
MAX_UNPACKED = 16 << 30  # a gzip bomb stops here instead of filling the disk
# Members an archive may hold, counted before anything is written: the corpus's largest organisation holds 523
# files and folders; 100,000 empty files (a 644 KB archive) took verify 858 MB and 64 s, 300,000 took 2.5 GB.
MAX_MEMBERS = 50_000
# No submission nests this deep; deeper names end unpacking in RecursionError or exceed PATH_MAX on disk.
MAX_MEMBER_DEPTH = 128
MAX_MEMBER_NAME = 3072
Bound = Callable[[str, int], "str | None"]  # why a member (its name, its size) is not written, or None
# A name longer than a path may be (PATH_MAX) or with a component longer than a file name may be (NAME_MAX) is no
# submission's: the archive is refused from its headers (3,000 members of 100 KB PAX names, 556 KB, took 651 MB).
MAX_NAME_BYTES = 4096
MAX_COMPONENT_BYTES = 255


def fixed_mtime() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    return int(value) if value.isascii() and value.isdigit() else 0


def _members(root: Path, tops: list[str]) -> Iterator[tuple[str, Path]]:
    """(archive name, file) for `tops` under root and everything below them, sorted by archive name."""
    found: list[tuple[str, Path]] = []
    for top in tops:
        start = root / top
        found.append((top, start))
        if start.is_dir():
            for dirpath, dirnames, filenames in os.walk(start):
                for name in dirnames + filenames:
                    full = Path(dirpath) / name
                    found.append((full.relative_to(root).as_posix(), full))
    yield from sorted(found)


def write_tar_gz(root: Path, tops: list[str], dest: Path) -> None:
    """Write `tops` (files or folders under root) to dest as a byte-for-byte reproducible tar.gz."""
    mtime = fixed_mtime()
    with (
        open(dest, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, path in _members(root, tops):
            info = _info(name, path, mtime)
            if info.isdir():
                tar.addfile(info)
                continue
            with open(path, "rb") as fh:
                tar.addfile(info, fh)


def _info(name: str, path: Path, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if path.is_symlink() or not (path.is_dir() or path.is_file()):
        raise ValueError(f"{path}: only files and folders can be archived")
    if path.is_dir():
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    else:
        info.size = path.stat().st_size
        info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
    return info


def digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open_regular(path) as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def archive_name(org: str) -> str:
    """The archive's name in MLCommons' pack_submission.sh (which the results chair expects)."""
    return f"mlperf_submission_{org}.tar.gz"


def sha1_name(org: str) -> str:
    """pack_submission.sh's checksum file: sha1sum's line for the (encrypted) archive."""
    return f"mlperf_submission_{org}.sha1"


def write_checksums(path: Path, algorithms: tuple[str, ...] = ("sha256", "sha1"), *, named: str | None = None
                    ) -> list[Path]:
    """`<named>.sha256` and `<named>.sha1` (named: the file's name) in the format `sha256sum -c` / `sha1sum -c`
    read (run beside the file)."""
    out = []
    named = named or path.name
    for alg in algorithms:
        target = path.with_name(f"{named}.{alg}")
        target.write_text(f"{digest(path, alg)}  {named}\n", encoding="ascii")
        out.append(target)
    return out


def write_sha1(path: Path, target: Path) -> Path:
    """sha1sum's line for `path`, written to `target` (pack_submission.sh's `mlperf_submission_<org>.sha1`)."""
    target.write_text(f"{digest(path, 'sha1')}  {path.name}\n", encoding="ascii")
    return target


def read_checksum(path: Path) -> tuple[str, str] | None:
    """(hex digest, file name) from a sha256sum/sha1sum line; None when the file does not hold one."""
    try:
        with open_regular(path) as fh:  # a link to /proc/kmsg would block; a checksum line is short
            text = fh.read(4096).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    parts = text.split(None, 1)
    if not parts or not all(c in "0123456789abcdefABCDEF" for c in parts[0]):
        return None
    name = parts[1].lstrip("*") if len(parts) > 1 else ""
    return parts[0].lower(), name


# --- unpacking ---------------------------------------------------------------------------------------------------


@dataclass
class Unpacked:
    files: int = 0
    findings: list[Finding] | None = None


def _name_problem(name: str) -> str | None:
    if not name or "\x00" in name or "\\" in name:
        return f"has an unusable name {name!r}"
    if name.startswith("/") or PurePosixPath(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "has an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "climbs out of the folder with '..'"
    if len(PurePosixPath(name).parts) > MAX_MEMBER_DEPTH or len(os.fsencode(name)) > MAX_MEMBER_NAME:
        return f"is nested too deep ({len(PurePosixPath(name).parts)} levels, {len(os.fsencode(name))} bytes)"
    return None


def member_problem(member: tarfile.TarInfo) -> str | None:
    """Why a member must not be written, or None when it is a plain file or folder with a safe relative name."""
    name = member.name
    named = _name_problem(name)
    if named is not None:
        return named
    if member.issym() or member.islnk():
        return f"is a {'symbolic' if member.issym() else 'hard'} link to {member.linkname!r}"
    if member.ischr() or member.isblk() or member.isfifo():
        return "is a device or FIFO"
    if not (member.isfile() or member.isdir()):
        return f"is a special member (type {member.type!r})"
    if member.isfile() and PurePosixPath(name).as_posix() in ("", "."):
        return f"is a file with the folder name {name!r}"
    return None


def unpack(archive: Path, dest: Path, display: str, too_big: Bound | None = None) -> Unpacked:
    """Extract the plain files and folders of a tar.gz into dest; every other member is refused with a finding.
    Members are written by our own code from checked names (tarfile's extract is never used), with fixed modes and
    no owners, so an archive cannot place anything outside dest or create links or devices; at a file `too_big(name,
    size)` says is past what the caller reads (from its header's size), unpacking stops unwritten (PKG071)."""
    findings = Capped()  # a refusal per member, folded past a bound: 50,000 of them quote 50,000 names
    result = Unpacked(findings=[])
    written: set[str] = set()
    total, problem = 0, _gzip_problem(archive)
    problem = f"not a complete gzip file: {problem}" if problem else _size_problem(archive)
    if problem:
        result.findings = [finding("PKG044", display, problem)]
        return result
    try:
        with tarfile.open(archive, mode="r|gz") as tar:
            for member in _streamed(tar):
                shown = f"{display}:{member.name}"
                problem = member_problem(member)
                clean = PurePosixPath(member.name.removeprefix("./")).as_posix()
                if problem is None and clean in written:
                    problem = "appears twice (a later copy would overwrite the first)"
                if problem is None and clean != "." and any(
                    p in written and (dest / p).is_file() for p in _parents(clean)
                ):
                    problem = "sits below a member that is a file"
                if problem is not None:
                    findings.append(finding("PKG042", shown, f"refused: the member {problem}"))
                    continue
                target = dest.joinpath(*PurePosixPath(clean).parts) if clean != "." else dest
                written.add(clean)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if too_big is not None and (why := too_big(clean, member.size)):
                    findings.append(finding("PKG071", shown, why))
                    break  # skipping it in the stream would take minutes (tarfile re-joins its buffer per block)
                total += member.size
                if total > MAX_UNPACKED:
                    findings.append(finding("PKG044", shown, f"the archive unpacks to more than {MAX_UNPACKED} bytes"))
                    break
                target.parent.mkdir(parents=True, exist_ok=True)
                stream = tar.extractfile(member)
                assert stream is not None
                _copy(stream, target)
                target.chmod(0o755 if member.mode & 0o111 else 0o644)
                result.files += 1
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        findings.append(finding("PKG044", display, f"not a readable tar.gz: {exc}"))
    result.findings = list(findings)
    return result


def _streamed(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members of a tar stream, one at a time: tarfile keeps every member it has read (its name, its PAX
    headers) in `members`, which a stream never needs again."""
    while (member := tar.next()) is not None:
        tar.members.clear()  # type: ignore[attr-defined]  # tarfile's list, not in its stubs
        yield member


def _long_name(name: str) -> str | None:
    size = len(os.fsencode(name))
    if size > MAX_NAME_BYTES:
        return f"a member's name has {size:,} bytes (more than {MAX_NAME_BYTES:,})"
    longest = max((len(os.fsencode(part)) for part in name.split("/")), default=0)
    if longest > MAX_COMPONENT_BYTES:
        return f"a member's name has a part of {longest:,} bytes (more than {MAX_COMPONENT_BYTES})"
    return None


def _size_problem(archive: Path) -> str | None:
    """Why the archive is not unpacked at all: more than MAX_MEMBERS members, more than MAX_UNPACKED bytes in them,
    or a name longer than a path may be, from the headers alone (one streamed pass; no member is kept or written)."""
    count = total = 0
    try:  # gzip's own reader under a plain tar stream: twice as fast as tarfile's "r|gz" on headers alone
        with gzip.open(archive, "rb") as plain, tarfile.open(fileobj=plain, mode="r|") as tar:
            for member in _streamed(tar):
                long = _long_name(member.name) or _long_name(member.linkname)
                if long is not None:
                    return f"not unpacked: {long}"
                count, total = count + 1, total + max(member.size, 0)
                if count > MAX_MEMBERS:
                    return f"not unpacked: it holds more than {MAX_MEMBERS:,} members (files and folders)"
                if total > MAX_UNPACKED:
                    return f"not unpacked: its members hold more than {MAX_UNPACKED:,} bytes"
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile):
        return None  # the unpacking pass says what is wrong, at the member where it is
    return None


def _gzip_problem(archive: Path) -> str | None:
    """Read the whole gzip stream once: tarfile stops at the end-of-archive block and never checks the CRC."""
    try:
        with gzip.open(archive, "rb") as gz:
            while gz.read(_CHUNK):
                pass
    except (OSError, EOFError, zlib.error) as exc:
        return str(exc) or type(exc).__name__
    return None


def _parents(name: str) -> list[str]:
    parts = name.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _copy(stream: IO[bytes], target: Path) -> None:
    with open(target, "wb") as out:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            out.write(chunk)
