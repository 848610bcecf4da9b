"""A git repository made for the packaging example and the tests: the one place mlsubmit writes to git.

`mlsubmit.support.git` only reads repositories (the promise the packaging command relies on); fixtures that need a
repository to export are committed here instead.
"""

from __future__ import annotations

from pathlib import Path

# GitPython is reached through support.git, so its import failure is reported the same way (a FatalError)
from mlsubmit.support.git import _git, _scrubbed_env


def commit_example(path: Path, files: dict[str, bytes], message: str, tag: str | None = None) -> str:
    """Create (or extend) a repository at `path` with one commit of `files`; for `make demo` and tests.

    Author, committer and dates are fixed, so the commit SHA is the same on every machine.
    """
    gitmod = _git()
    _scrubbed_env()
    repo = gitmod.Repo.init(path) if not (path / ".git").exists() else gitmod.Repo(path)
    for name, data in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if name.endswith(".sh"):
            target.chmod(0o755)
    repo.index.add(list(files))
    who = gitmod.Actor("mlsubmit example", "example@mlsubmit.invalid")
    when = "1619870400 +0000"  # 2021-05-01 12:00 UTC, in git's raw format
    commit = repo.index.commit(message, author=who, committer=who, author_date=when, commit_date=when)
    if tag:
        repo.create_tag(tag, ref=commit)
    sha: str = commit.hexsha
    repo.close()
    return sha
