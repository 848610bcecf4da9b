"""Every use of git goes through here: the only module that imports GitPython.

GitPython raises a zoo of exception types and, when git itself is missing, fails at import time. Callers get plain
dataclasses and `FatalError`s with advice instead, so no GitPython type leaks into the rest of the tool.
Environment variables such as GIT_DIR or GIT_INDEX_FILE would silently point git at another repository than the
one the config names, so they are removed from the environment of every git process started here, and optional
index writes are switched off (GIT_OPTIONAL_LOCKS=0) so that reading a repository never changes it.
Only the object store is read through git (`git cat-file`). The working tree is compared with a revision in Python
(`work_tree_changes`), because the git commands that look at it (`status`, `diff`) run programs named in the
repository's own config (core.fsmonitor, clean filters): a repository to export must not be able to run code.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.core.errors import FatalError

if TYPE_CHECKING:
    import git

# Variables that redirect git to another repository, work tree or object store than the one opened.
_REDIRECTING_ENV = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
)  # fmt: skip

# git tree entry modes (see git's object format): what an exported path is.
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000
MODE_SUBMODULE = 0o160000


@dataclass(frozen=True)
class Revision:
    """A revision resolved in a repository: what the config said, and the commit it means."""

    repo: Path
    rev: str
    commit: str
    bare: bool = False
    head: str | None = None  # the commit checked out in the working tree, if any


@dataclass(frozen=True)
class TreeEntry:
    """One non-folder entry of a commit's tree, below the exported sub-folder.

    `parts` are the path components relative to that sub-folder, exactly as stored in git (not yet checked: a crafted
    tree can hold `..` or `/`-free oddities, and the caller decides what is safe to write).
    """

    parts: tuple[str, ...]
    mode: int
    size: int
    sha: str

    @property
    def path(self) -> str:
        return "/".join(self.parts)


def _git() -> Any:
    try:
        # lazy: GitPython: ~90 ms to import; only a tree with code under git needs it
        import git
    except ImportError as exc:  # GitPython refuses to import when no git executable is found
        raise FatalError(f"git is needed to export implementations and could not be used: {exc}") from exc
    return git


def _scrubbed_env() -> None:
    for name in _REDIRECTING_ENV:
        os.environ.pop(name, None)
    # `git status` and `git diff` refresh the index's stat cache and write it back when they can take the lock;
    # inputs must stay byte-identical, so those optional writes are switched off for every git we start.
    os.environ["GIT_OPTIONAL_LOCKS"] = "0"


def open_repo(path: Path) -> git.Repo:
    """Open the repository whose top folder (or .git) is `path`; never searches parent folders."""
    gitmod = _git()
    _scrubbed_env()
    if not path.exists():
        raise FatalError(f"{path}: implementation repository not found; `repo` is relative to the config file")
    try:
        return gitmod.Repo(path, search_parent_directories=False)
    except gitmod.exc.InvalidGitRepositoryError:
        raise FatalError(
            f"{path}: not a git repository; `repo` must name the top folder of a git clone (the folder holding .git)"
        ) from None
    except gitmod.exc.NoSuchPathError:
        raise FatalError(f"{path}: implementation repository not found") from None
    except gitmod.exc.GitError as exc:
        raise FatalError(f"{path}: git could not open the repository: {exc}") from None


def resolve(path: Path, rev: str) -> Revision:
    """Resolve `rev` (tag, branch, commit) to a commit; an unknown revision is a FatalError."""
    gitmod = _git()
    repo = open_repo(path)
    try:
        try:
            if rev.startswith("-"):  # would be read as an option by git rev-parse
                raise ValueError(rev)
            commit = repo.commit(rev)
        except (gitmod.exc.BadName, gitmod.exc.BadObject, ValueError, gitmod.exc.GitCommandError):
            raise FatalError(
                f"{path}: unknown revision {rev!r}; give a tag, branch or commit that exists there "
                f"(`git -C {path} log --oneline` lists commits; fetch tags with `git fetch --tags`)"
            ) from None
        try:
            head: str | None = None if repo.bare else repo.head.commit.hexsha
        except (ValueError, TypeError, gitmod.exc.GitError):  # an unborn or broken HEAD: no working tree to compare
            head = None
        return Revision(repo=path, rev=rev, commit=commit.hexsha, bare=bool(repo.bare), head=head)
    finally:
        repo.close()  # GitPython keeps `git cat-file` processes per Repo until it is closed


def tree_entries(revision: Revision, subdir: str) -> list[TreeEntry]:
    """Blobs, links and submodules under `subdir` of the resolved commit, in git's (sorted) order.

    Reads only the object store: the working tree, which may be dirty, is never looked at.
    """
    gitmod = _git()
    repo = open_repo(revision.repo)
    try:
        tree = repo.commit(revision.commit).tree
        if subdir not in ("", "."):
            try:
                tree = tree / subdir
            except KeyError:
                raise FatalError(
                    f"{revision.repo}: no folder {subdir!r} at revision {revision.rev!r} ({revision.commit[:12]})"
                ) from None
            if not isinstance(tree, gitmod.Tree):
                raise FatalError(f"{revision.repo}: {subdir!r} at revision {revision.rev!r} is a file, not a folder")
        return list(_walk(gitmod, tree, ()))
    except (gitmod.exc.GitError, ValueError) as exc:
        raise FatalError(f"{revision.repo}: git could not read revision {revision.rev!r}: {exc}") from None
    finally:
        repo.close()


def _walk(gitmod: Any, tree: Any, prefix: tuple[str, ...]) -> Iterator[TreeEntry]:
    for item in tree:
        # a submodule read from a tree has no name set (GitPython raises on .name); its path ends with it
        parts = (*prefix, item.path.rsplit("/", 1)[-1] if item.mode == MODE_SUBMODULE else item.name)
        if isinstance(item, gitmod.Tree):
            yield from _walk(gitmod, item, parts)
        elif item.mode == MODE_SUBMODULE:
            yield TreeEntry(parts, item.mode, 0, item.hexsha)
        else:
            yield TreeEntry(parts, item.mode, int(item.size), item.hexsha)


@dataclass(frozen=True)
class WorkTreeChanges:
    """How the working tree's copy of an exported folder differs from the revision (paths below the folder)."""

    modified: tuple[str, ...] = ()  # at the revision, but with other content (or missing) in the working tree
    untracked: tuple[str, ...] = ()  # in the working tree only, and not ignored by a .gitignore

    def __bool__(self) -> bool:
        return bool(self.modified or self.untracked)


def _blob_id(data: bytes, sha: str) -> str:
    """The object id git gives a blob with these bytes (SHA-1 repositories, or SHA-256 ones)."""
    h = hashlib.sha256() if len(sha) == 64 else hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _ignore_specs(top: Path, folder: Path) -> list[tuple[Path, Any]]:
    """(folder, pathspec) for .git/info/exclude and every .gitignore from the top down to and inside `folder`."""
    # lazy: pathspec: ~90 ms to import; only .gitignore matching needs it
    import pathspec

    sources = [(top, top / ".git" / "info" / "exclude"), (top, top / ".gitignore")]
    here = top
    for part in folder.relative_to(top).parts:
        here = here / part
        sources.append((here, here / ".gitignore"))
    sources += [(p.parent, p) for p in sorted(folder.rglob(".gitignore")) if p.parent != folder]
    specs = []
    for base, file in sources:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        specs.append((base, pathspec.GitIgnoreSpec.from_lines(lines)))
    return specs


def _ignored(path: Path, specs: list[tuple[Path, Any]]) -> bool:
    for base, spec in specs:
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(rel):
            return True
    return False


def work_tree_changes(
    revision: Revision, subdir: str, *, unchanged: Callable[[str, str, os.stat_result], bool] | None = None
) -> WorkTreeChanges:
    """Uncommitted changes under `subdir`: the working tree against the checked-out commit, without running git.

    Content is compared by git's blob id, links by their target. Ignored files (.gitignore, .git/info/exclude; nested
    files are applied to their own folder, negations only within one file) do not count as untracked. `unchanged`
    (path, blob id, lstat) may vouch for a file without reading it, as git's index stat data does.
    """
    top = revision.repo
    if revision.bare or revision.head is None or not (top / ".git").exists():
        return WorkTreeChanges()
    try:
        entries = tree_entries(Revision(top, "HEAD", revision.head), subdir)
    except FatalError:  # the folder does not exist at HEAD: everything in it is uncommitted
        entries = []
    folder = top if subdir in ("", ".") else top.joinpath(*subdir.split("/"))
    modified: list[str] = []
    for entry in entries:
        if entry.mode == MODE_SUBMODULE:
            continue
        path = folder.joinpath(*entry.parts)
        try:
            if unchanged is not None and unchanged(entry.path, entry.sha, path.lstat()):
                continue
            if entry.mode == MODE_SYMLINK:
                same = path.is_symlink() and _blob_id(os.readlink(path).encode(), entry.sha) == entry.sha
            else:
                same = not path.is_symlink() and path.is_file() and _blob_id(path.read_bytes(), entry.sha) == entry.sha
        except OSError:
            same = False
        if not same:
            modified.append(entry.path)
    known = {entry.path for entry in entries}
    specs = _ignore_specs(top, folder) if folder.is_dir() else []
    untracked: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not _ignored(base / d, specs))
        for name in sorted(filenames):
            rel = (base / name).relative_to(folder).as_posix()
            if rel not in known and not _ignored(base / name, specs):
                untracked.append(rel)
    return WorkTreeChanges(tuple(modified), tuple(untracked))


class BlobReader:
    """Reads many blobs of one repository through a single open handle (opening a Repo per blob is slow)."""

    def __init__(self, revision: Revision) -> None:
        self._repo = open_repo(revision.repo)

    def read(self, sha: str) -> bytes:
        try:
            data: bytes = self._repo.odb.stream(bytes.fromhex(sha)).read()
        except (ValueError, OSError) as exc:  # gitdb raises BadObject (a ValueError) for a missing object
            raise FatalError(f"{self._repo.working_dir}: git object {sha} cannot be read: {exc}") from None
        return data

    def close(self) -> None:
        self._repo.close()


def _index_vouches(repo: Any, top: Path) -> Callable[[str, str, os.stat_result], bool]:
    """A file is unchanged when the index holds HEAD's blob for it and its size and mtime are the ones the index
    recorded (git's own shortcut). The index is read by GitPython in Python: no git command, hook or filter runs."""
    try:
        entries = {e.path: e for (path, stage), e in repo.index.entries.items() if stage == 0}
        written = (top / ".git" / "index").stat().st_mtime_ns
    except (OSError, ValueError, AssertionError):  # no index, or one GitPython cannot read: hash everything
        entries, written = {}, 0

    def vouch(path: str, sha: str, st: os.stat_result) -> bool:
        entry = entries.get(path)
        return (
            entry is not None
            and entry.binsha.hex() == sha
            and entry.size == st.st_size & 0xFFFFFFFF
            and entry.mtime == (st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9)
            # "racy" entries: a file changed in the same instant the index was written cannot be vouched for
            and st.st_mtime_ns < written - 10**9
        )

    return vouch


def _below(top: Path, start: Path) -> str:
    """`start` (a folder, or a file whose folder is meant) relative to the work tree's top, '/'-separated; "" for
    the top itself or anything not below it."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    try:
        sub = here.relative_to(top).as_posix()
    except ValueError:
        return ""
    return "" if sub == "." else sub


def _joined(sub: str, path: str) -> str:
    return f"{sub}/{path}" if sub else path


def changed_paths(start: Path, rev: str) -> frozenset[str]:
    """Resolved paths of the files that differ between `rev` and the work tree of the repository holding `start`:
    committed since, staged, unstaged and untracked (for `mlsubmit check --changed-since REV`).

    No git command looks at the work tree (git would run the clean filters and fsmonitor hook the checked
    repository configures): commits are compared tree to tree, the work tree against HEAD in Python.
    """
    gitmod = _git()
    _scrubbed_env()
    try:
        repo = gitmod.Repo(start, search_parent_directories=True)
    except (gitmod.exc.InvalidGitRepositoryError, gitmod.exc.NoSuchPathError):
        raise FatalError(f"--changed-since needs a git work tree, and {start} is not in one") from None
    try:
        if repo.bare or repo.working_tree_dir is None:
            raise FatalError(f"--changed-since needs a work tree; the repository at {start} is bare")
        repo.git.set_persistent_git_options(c="core.fsmonitor=false")
        try:
            if rev.startswith("-"):  # would be read as an option by git
                raise ValueError(rev)
            commit = repo.commit(rev)
            head = repo.head.commit
        except (gitmod.exc.BadName, gitmod.exc.BadObject, ValueError, gitmod.exc.GitCommandError):
            raise FatalError(f"--changed-since: unknown revision {rev!r} in {repo.working_tree_dir}") from None
        top = Path(repo.working_tree_dir).resolve()
        try:
            names: set[str] = set()
            for diff in commit.diff(head):  # tree to tree: only the object store is read
                names.update(p for p in (diff.a_path, diff.b_path) if p)
        except gitmod.exc.GitCommandError as exc:
            raise FatalError(f"--changed-since: git could not list the changes: {exc}") from None
        here = Revision(repo=top, rev="HEAD", commit=head.hexsha, head=head.hexsha)
        # only the work tree under `start` is compared: the caller looks at nothing else, and a round's
        # repository holds every organisation's files (13,000 code files: seconds to walk in Python)
        sub = _below(top, start)
        vouch = _index_vouches(repo, top)
        local = work_tree_changes(here, sub, unchanged=lambda p, sha, st: vouch(_joined(sub, p), sha, st))
        names.update(_joined(sub, p) for p in (*local.modified, *local.untracked))
        return frozenset(str((top / name).resolve()) for name in names)
    finally:
        repo.close()  # GitPython keeps `git cat-file` processes per Repo until it is closed
