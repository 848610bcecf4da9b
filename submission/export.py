"""Export an implementation from a git revision into the submission tree, leaving junk and secrets out.

Only the commit's objects are read (never the working tree), so what ships is exactly what the revision holds.
Every name is checked before it becomes a path, so a crafted tree cannot write outside the implementation folder.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker.hygiene.scan import scan as scan_hygiene
from mlsubmit.submission.package_config import Implementation

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support import git as _git

_MAX_LINK_HOPS = 8
_UNSAFE_PART = re.compile(r"[\x00-\x1f\x7f\\]")
# Hygiene codes whose files never ship, and the packaging code each becomes.
_LEFT_OUT = {"TREE040": "PKG030", "TREE045": "PKG031"}


@dataclass
class Exported:
    benchmark: str
    impl: Implementation
    revision: _git.Revision
    dest: Path
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path below the folder, code)


def safe_parts(parts: tuple[str, ...]) -> bool:
    return bool(parts) and all(
        p not in ("", ".", "..", ".git") and "/" not in p and not _UNSAFE_PART.search(p) for p in parts
    )


def export(impl: Implementation, benchmark: str, dest: Path, display: str) -> Exported:
    """Write the files of `impl` at its revision under `dest`; `display` is dest as shown in findings."""
    revision = _git.resolve(impl.repo, impl.rev)
    out = Exported(benchmark, impl, revision, dest)
    entries = _git.tree_entries(revision, impl.path)
    changes = _git.work_tree_changes(revision, impl.path)
    if changes:
        out.findings.append(finding("PKG034", display, _describe(changes, impl, revision)))
    by_path = {e.path: e for e in entries}
    reader = _git.BlobReader(revision)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for entry in entries:
            shown = posixpath.join(display, entry.path)
            problem = _write_entry(entry, by_path, reader, dest, shown, impl)
            if problem is None:
                out.files += 1
            else:
                out.findings.append(problem)
                out.left_out.append((entry.path, problem.code))
    finally:
        reader.close()
    _drop_junk_and_secrets(out, display)
    return out


def _describe(changes: _git.WorkTreeChanges, impl: Implementation, revision: _git.Revision) -> str:
    def some(paths: tuple[str, ...]) -> str:
        return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")

    parts = []
    if changes.modified:
        parts.append(f"{len(changes.modified)} file(s) differ ({some(changes.modified)})")
    if changes.untracked:
        parts.append(f"{len(changes.untracked)} file(s) are not committed ({some(changes.untracked)})")
    where = impl.path if impl.path not in ("", ".") else "the repository"
    return (f"uncommitted changes in {where} of {impl.repo_text}: " + "; ".join(parts)
            + f"; they are not exported (revision {impl.rev} = {revision.commit[:12]} is)")


def _drop_junk_and_secrets(out: Exported, display: str) -> None:
    """Remove what the tree check's hygiene scan calls junk or a secret, with a PKG finding for each.

    The scan runs on the exported copy (a temporary folder), so the rules are exactly those `mlsubmit check` applies
    to a finished tree, and junk shipped by accident can never pass the post-build check unnoticed.
    """
    removed: set[str] = set()
    for found in scan_hygiene(out.dest, display):
        code = _LEFT_OUT.get(found.code)
        if code is None:
            continue
        rel = posixpath.relpath(found.path, display)
        if any(rel == r or rel.startswith(r + "/") for r in removed):
            continue
        target = out.dest.joinpath(*rel.split("/"))
        if target.is_dir():
            gone = sum(1 for p in target.rglob("*") if p.is_file())
            shutil.rmtree(target)
        else:
            gone = 1
            target.unlink(missing_ok=True)
        removed.add(rel)
        out.files -= gone
        what = "a secret" if code == "PKG031" else "junk"
        where = f" (line {found.line})" if found.line else ""
        out.findings.append(finding(code, found.path, f"left out as {what}: {found.message}{where}", line=found.line))
        out.left_out.append((rel, code))


def _write_entry(
    entry: _git.TreeEntry,
    by_path: dict[str, _git.TreeEntry],
    reader: _git.BlobReader,
    dest: Path,
    shown: str,
    impl: Implementation,
) -> Finding | None:
    """Write one entry; return the finding that explains why it was left out, or None when it was written."""
    if not safe_parts(entry.parts):
        return finding("PKG035", shown, f"unsafe name {entry.path!r} in the git tree; left out")
    if entry.mode == _git.MODE_SUBMODULE:
        return finding("PKG033", shown, f"git submodule (commit {entry.sha[:12]}) is not exported")
    parts, mode, blob = entry.parts, entry.mode, entry
    if mode == _git.MODE_SYMLINK:
        target, why = _follow_link(entry, by_path, reader, impl)
        if target is None:
            return finding("PKG032", shown, f"symbolic link {why}; left out")
        mode, blob = target.mode, target  # shipped as a regular file with the target's bytes: archives hold no links
    data = reader.read(blob.sha)
    path = dest.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o755 if mode == _git.MODE_EXECUTABLE else 0o644)
    return None


def _follow_link(
    link: _git.TreeEntry, by_path: dict[str, _git.TreeEntry], reader: _git.BlobReader, impl: Implementation
) -> tuple[_git.TreeEntry | None, str]:
    """The regular file a link resolves to inside the exported folder, or None and why not.

    The target is resolved against the repository (the exported folder's place in it), never the file system, so a
    link cannot reach files outside the repository however it is written.
    """
    prefix = "" if impl.path in ("", ".") else impl.path.strip("/")
    current = link
    for _ in range(_MAX_LINK_HOPS):
        target = reader.read(current.sha).decode("utf-8", "replace")
        if target.startswith("/"):
            return None, f"points to the absolute path {target!r}"
        in_repo = posixpath.normpath(posixpath.join(prefix, posixpath.dirname(current.path), target))
        if in_repo == ".." or in_repo.startswith("../"):
            return None, f"points outside the repository ({target!r})"
        rel = in_repo if not prefix else posixpath.relpath(in_repo, prefix)
        if rel == ".." or rel.startswith("../"):
            return None, f"points outside the exported folder {impl.path!r} ({target!r})"
        found = by_path.get(rel)
        if found is None:
            return None, f"points to {target!r}, which is not a file at this revision"
        if found.mode != _git.MODE_SYMLINK:
            return found, ""
        current = found
    return None, "is part of a chain of links that is too long or circular"
