"""Repository hygiene of a tree: junk files, git-unfriendly names, big files, bad symlinks, secrets in code.

`scan(root, display)` is the one entry point; the tree check calls it on an organisation folder and the packager
calls it on an implementation tree before export. It reads file contents only to look for secrets and core-dump
headers, never follows a symlink, and never writes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.base.options import Tracker, no_progress
from mlsubmit.checker.rounds.detect import ROUND_FILE

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

SIZE_LIMIT = 50 * 1024 * 1024  # the results repositories' limit, as mlperf-logging's repo checker counts it
# TR6.1 "Result files" (training_policies PR #588): a result file keeps the job's whole output, and its framework
# output may be cut only above GitHub's file-size limit, 100 MiB
RESULT_FILE_LIMIT_61 = 100 * 1024 * 1024
_RESULT_FILE = re.compile(r"^results/[^/]+/[^/]+/result_[^/]*\.txt$")
SECRET_SCAN_LIMIT = 2 * 1024 * 1024  # code files are small; bigger files are data or logs, not worth the time

_JUNK_FILES = re.compile(
    r"""^(?:
        \..*\.sw[a-p]       # vim swap files: .name.swp, .name.swo, ...
      | .*~                 # editor backups
      | \.DS_Store | Thumbs\.db | desktop\.ini
      | .*\.py[co]          # compiled Python
      | .*\.(?:orig|rej|bak)
    )$""",
    re.VERBOSE,
)
_JUNK_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache"})
_CORE_NAME = re.compile(r"^core(?:\.\d+)?$")
_NOT_DESCENDED = _JUNK_DIRS | {".git"}

# detect-secrets plugins for credential formats and password assignments. The high-entropy plugins are left out
# on purpose: training scripts are full of hashes, checksums and base64 blobs that are not secrets.
SECRET_PLUGINS = (
    "ArtifactoryDetector", "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "CloudantDetector",
    "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector", "IbmCloudIamDetector",
    "IbmCosHmacDetector", "JwtTokenDetector", "KeywordDetector", "MailchimpDetector", "NpmDetector",
    "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
    "SoftlayerDetector", "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
)  # fmt: skip


@dataclass(frozen=True)
class _Entry:
    path: Path
    rel: str  # relative to the scanned root, '/'-separated
    is_dir: bool


def _dir_entry_is_dir(entry: os.DirEntry[str]) -> bool:
    """As os.walk tells a folder: links followed, and one that cannot be followed (a loop) is not a folder."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _walk(root: Path) -> Iterator[_Entry]:
    """Every entry under root, sorted, without following symlinks or entering junk folders and .git. Depth first
    as os.walk goes, but with a stack of its own: os.walk recurses (Python 3.11) and ~1,000 nested folders ended
    the check in RecursionError. A folder that cannot be listed is passed over, as os.walk does."""
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        base, prefix = stack.pop()
        try:
            with os.scandir(base) as listing:
                found = [(e.name, _dir_entry_is_dir(e)) for e in listing]
        except OSError:
            continue
        dirnames = sorted(name for name, is_dir in found if is_dir)
        for name in dirnames:
            yield _Entry(base / name, prefix + name, True)
        descend = [d for d in dirnames if d not in _NOT_DESCENDED and not (base / d).is_symlink()]
        stack.extend((base / d, f"{prefix}{d}/") for d in reversed(descend))
        for name in sorted(name for name, is_dir in found if not is_dir):
            yield _Entry(base / name, prefix + name, False)


def _is_regular(path: Path) -> bool:
    """A regular file, not followed through a link: FIFOs and devices are never opened (a read would block)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_special(path: Path) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _is_core_dump(path: Path) -> bool:
    """An ELF file of type ET_CORE (4) named core or core.<pid>: a crashed process left its memory here."""
    if not _is_regular(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(18)
    except OSError:
        return False
    if len(head) < 18 or head[:4] != b"\x7fELF":
        return False
    little = head[5] == 1
    e_type = int.from_bytes(head[16:18], "little" if little else "big")
    return e_type == 4


def _is_junk(entry: _Entry) -> bool:
    name = entry.path.name
    if entry.is_dir:
        return name in _JUNK_DIRS
    if _JUNK_FILES.match(name):
        return True
    return bool(_CORE_NAME.match(name)) and _is_core_dump(entry.path)


def _link_findings(entry: _Entry, root_real: str, shown: str) -> list[Finding]:
    target = os.readlink(entry.path)
    resolved = os.path.realpath(entry.path)
    if not os.path.exists(resolved):
        return [finding("TREE043", shown, f"symbolic link to {target!r} points at nothing")]
    if os.path.commonpath([root_real, resolved]) != root_real:
        return [finding("TREE044", shown, f"symbolic link to {target!r} leaves the tree")]
    return []


def _size_findings(entry: _Entry, shown: str, ruleset: str) -> list[Finding]:
    """The round's file-size rule: 50 MiB (the repo checker's) for every file, but a result file of 6.1 on, which
    may reach 100 MiB (TR6.1 "Result files"), where the installed repo checker still says 50 (TREE061)."""
    try:
        size = entry.path.stat().st_size
    except OSError:
        return []
    mib = f"{size / 1024 / 1024:.1f} MiB"
    version = tuple(int(x) for x in ruleset.split(".")[:2] if x.isdigit())
    if version >= (6, 1) and _RESULT_FILE.match(entry.rel):
        if size > RESULT_FILE_LIMIT_61:
            return [finding("TREE042", shown, f"result file is {mib}: round {ruleset[:3]} allows 100 MiB (TR6.1 "
                            '"Result files", training_policies PR #588; framework output above it may be cut)')]
        if size > SIZE_LIMIT:
            return [finding("TREE061", shown, f"result file is {mib}: allowed in round {ruleset[:3]} (up to 100 MiB, "
                            "TR6.1 \"Result files\"), but mlperf-logging's repo checker still flags files over 50 MiB")]
        return []
    if size > SIZE_LIMIT:
        rnd = f"round {ruleset[:3]}: " if ruleset else ""
        return [finding("TREE042", shown, f"file is {mib} ({rnd}limit 50 MiB, the results repositories' and "
                        "mlperf-logging's repo checker's)")]
    return []


def _entry_findings(entry: _Entry, root_real: str, display: str, ruleset: str = "") -> list[Finding]:
    shown = os.path.join(display, entry.rel)
    out: list[Finding] = []
    if entry.path.is_symlink():
        out.extend(_link_findings(entry, root_real, shown))
    if _is_junk(entry):
        what = "folder" if entry.is_dir else "file"
        out.append(finding("TREE040", shown, f"{what} {entry.path.name!r} is editor, build or OS junk"))
    elif not entry.is_dir and _is_special(entry.path):
        out.append(finding("TREE040", shown, f"{entry.path.name!r} is a special file (FIFO, socket or device)"))
    elif entry.rel == ROUND_FILE:  # the tree stating its round (rounds/detect.py): mlsubmit's own, not left behind
        pass
    elif entry.path.name.startswith(".") or " " in entry.path.name:
        why = "starts with a dot" if entry.path.name.startswith(".") else "contains a space"
        out.append(finding("TREE041", shown, f"name {entry.path.name!r} {why}"))
    if not entry.is_dir and not entry.path.is_symlink():
        out.extend(_size_findings(entry, shown, ruleset))
    return out


def _secret_candidates(entries: Iterable[_Entry], prefixes: tuple[str, ...],
                       only: frozenset[str] | None = None) -> list[_Entry]:  # fmt: skip
    """Regular, non-junk files under the prefixes, no bigger than SECRET_SCAN_LIMIT (`only`: relative paths to
    keep, for --changed-since)."""
    out = []
    for e in entries:
        if e.is_dir or (only is not None and e.rel not in only) or not _is_regular(e.path) or _is_junk(e):
            continue
        if not any(p == "" or e.rel == p or e.rel.startswith(p + "/") for p in prefixes):
            continue
        try:
            if e.path.stat().st_size > SECRET_SCAN_LIMIT:
                continue
        except OSError:
            continue
        out.append(e)
    return out


@dataclass(frozen=True)
class Scanned:
    """One file as the secret scan read it: "text" (UTF-8), "other" (readable, not UTF-8) or "skip" (binary or
    unreadable), the SHA-256 of a text file, and detect-secrets' (line, kind) hits, None when not scanned yet."""

    kind: str
    sha256: str
    hits: tuple[tuple[int, str], ...] | None = None


def find_secrets(paths: list[Path], *, cache_dir: Path | None = None, workers: int = 0, pack: str = "",
                 complete: bool = True, progress: Tracker = no_progress,
                 scanned: Mapping[Path, Scanned] | None = None) -> list[tuple[Path, int, str]]:  # fmt: skip
    """(file, 1-based line, kind of secret) for each secret found; the secret itself is never returned.

    Every UTF-8 file is scanned as detect-secrets scans it (checker/hygiene/secrets.py: the same findings, faster,
    cached by content under `cache_dir`); binary files (a NUL in the first 8 KB) are skipped, and other non-UTF-8
    files, which detect-secrets skips, get the small built-in pattern set. `scanned`: files already read (and
    scanned, where hits are given) by the check's worker pool (`scan_one`)."""
    if importlib.util.find_spec("detect_secrets") is None:  # pragma: no cover - a dependency; a minimal net
        return _fallback_secrets(paths)
    # detect-secrets only when files are scanned (start-up)
    from mlsubmit.checker.hygiene.secrets import Job, scan_files

    jobs: list[Job] = []
    other: list[Path] = []
    done: dict[str, list[tuple[int, str]]] = {}
    for path in paths:
        known = scanned.get(path) if scanned is not None else None
        kind, digest = (known.kind, known.sha256) if known is not None else _read_kind(path)
        if kind == "text":
            jobs.append(Job(str(path), digest))
            if known is not None and known.hits is not None:
                done[str(path)] = list(known.hits)
        elif kind == "other":
            other.append(path)
    found = [(Path(p), line, kind) for p, line, kind in scan_files(jobs, SECRET_PLUGINS, cache_dir=cache_dir,
                                                                      workers=workers, pack=pack, progress=progress,
                                                                      complete=complete, done=done)]  # fmt: skip
    found += _fallback_secrets(other)
    return sorted(found, key=lambda t: (str(t[0]), t[1], t[2]))


def scan_one(path: Path, kept: Mapping[str, list[list[Any]]] | None = None) -> Scanned:
    """One file read and, when it is text, scanned for secrets (unless `kept`, the cache's entry for its tree,
    holds the answer for its content): a task of the check's worker pool, run inside `scanning()`."""
    # detect-secrets only when files are scanned (start-up)
    from mlsubmit.checker.hygiene.secrets import file_key, scan_in_session

    kind, digest = _read_kind(path)
    if kind != "text":
        return Scanned(kind, digest)
    hits = kept.get(file_key(str(path), digest)) if kept is not None else None
    if hits is not None:
        return Scanned(kind, digest, tuple((int(n), str(k)) for n, k in hits))
    return Scanned(kind, digest, tuple(scan_in_session(str(path))))


def scanning() -> AbstractContextManager[None]:
    """`scan_one` may be called while this is open, here and in processes forked meanwhile (each sets detect-
    secrets up the first time it scans)."""
    # detect-secrets only when files are scanned (start-up)
    from mlsubmit.checker.hygiene.secrets import session

    return session(SECRET_PLUGINS)


def cached_answers(cache_dir: Path, pack: str) -> dict[str, list[list[Any]]]:
    """The cache's entry for a scanned tree (`Walk.pack`), for `scan_one`; empty when there is none."""
    # detect-secrets only when files are scanned (start-up)
    from mlsubmit.checker.hygiene.secrets import load_pack

    return load_pack(cache_dir, pack, SECRET_PLUGINS)


def _read_kind(path: Path) -> tuple[str, str]:
    """("text", sha256) for a UTF-8 file, ("other", "") for another readable non-binary one, ("skip", "") for a
    binary or unreadable one. A binary file is read no further than its first 8 KB, a text file once."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
            if b"\x00" in head:  # binary: no credentials in readable form
                return "skip", ""
            data = head + fh.read()
    except OSError:
        return "skip", ""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "other", ""
    return "text", hashlib.sha256(data).hexdigest()


_FALLBACK = (
    (re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "Private Key"),
    (re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "AWS Access Key"),
    (re.compile(rb"(?i)\b(?:password|passwd|secret|token)\s*[:=]\s*['\"][^'\"\s]{6,}['\"]"), "Secret Keyword"),
)


def _fallback_secrets(paths: list[Path]) -> list[tuple[Path, int, str]]:
    found: list[tuple[Path, int, str]] = []
    for path in paths:
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            found.extend((path, number, kind) for rx, kind in _FALLBACK if rx.search(line))
    return found


@dataclass(frozen=True)
class Walk:
    """A tree walked for the hygiene scan: its entries, the files its secret scan reads, and the name of those
    files' entry in the cache."""

    root_real: str
    entries: list[_Entry]
    secret_paths: list[Path]
    pack: str


def walk(root: Path, *, secrets_under: tuple[str, ...] = ("",), changed: frozenset[str] | None = None
         ) -> Walk | None:
    """The tree under root walked once (None when root is not a folder); arguments as `scan`'s."""
    root = Path(root)
    if not root.is_dir():
        return None
    root_real = os.path.realpath(root)
    entries = list(_walk(root))
    only = None if changed is None else _relative(changed, root_real)
    paths = [e.path for e in _secret_candidates(entries, secrets_under, only)]
    return Walk(root_real, entries, paths, json.dumps([root_real, list(secrets_under)]))


def entry_findings(walked: Walk, display: str, ruleset: str = "") -> list[Finding]:
    """Junk, names, links, special and big files (by the round's rule; "" = the repo checker's): every finding but
    the secrets."""
    return [f for entry in walked.entries for f in _entry_findings(entry, walked.root_real, display, ruleset)]


def secret_findings(walked: Walk, display: str, found: Iterable[tuple[Path, int, str]]) -> list[Finding]:
    by_path = {e.path: e for e in walked.entries}
    out = []
    for path, line, kind in found:
        hit = by_path.get(path)
        rel = hit.rel if hit else path.name
        out.append(finding("TREE045", os.path.join(display, rel), f"possible secret: {kind}", line=line or None))
    return out


def scan(root: Path, display: str, *, secrets_under: tuple[str, ...] = ("",), cache_dir: Path | None = None,
         workers: int = 0, changed: frozenset[str] | None = None, progress: Tracker = no_progress,
         walked: Walk | None = None, scanned: Mapping[Path, Scanned] | None = None,
         entries: list[Finding] | None = None, ruleset: str = "") -> list[Finding]:
    """Hygiene findings for everything under root; paths are shown as display/<relative path>.

    `secrets_under` limits the secret scan to these relative folders ("" = the whole tree); the tree check passes
    ("benchmarks", "benchmark") since logs and system files are not code. `cache_dir` keeps secret-scan results by
    file content; `changed` (resolved paths, from --changed-since) limits the secret scan to those files.
    `walked`, `scanned` and `entries`: the walk, the files the check's pool already read (see `find_secrets`)
    and `entry_findings(walked, display)`, when already done.
    """
    walked = walked or walk(root, secrets_under=secrets_under, changed=changed)
    if walked is None:
        return []
    found = find_secrets(walked.secret_paths, cache_dir=cache_dir, workers=workers, pack=walked.pack,
                         complete=changed is None, progress=progress, scanned=scanned)  # fmt: skip
    return (entry_findings(walked, display, ruleset) if entries is None else entries) + secret_findings(walked, display,
                                                                                                  found)


def _relative(paths: frozenset[str], root_real: str) -> frozenset[str]:
    prefix = root_real.rstrip(os.sep) + os.sep
    return frozenset(p[len(prefix):].replace(os.sep, "/") for p in paths if p.startswith(prefix))
