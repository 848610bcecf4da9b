"""The folder a build is made in: beside its `out`, so the finished tree is renamed into place; marked with the
building process's id, so a later build can tell a killed run's folder from a concurrent one."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mlsubmit.core.errors import FatalError

MARKER = ".mlsubmit-build-pid"


def remove_stale_builds(out: Path) -> list[Path]:
    """Build folders beside `out` left by a killed run (their process is gone) are removed; live ones are not."""
    removed = []
    for folder in out.parent.glob(f".{out.name}.build-*"):
        try:
            pid = int((folder / MARKER).read_text(encoding="ascii"))
        except (OSError, ValueError):
            continue  # not ours, or still being set up: leave it
        try:
            os.kill(pid, 0)
            continue  # that process still runs: a concurrent build
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


@contextmanager
def build_folder(out: Path) -> Iterator[Path]:
    """A private folder beside `out` to build in (the finished tree is renamed into place), removed in the end."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
        tmp.chmod(0o755)  # mkdtemp makes it private; the finished tree is an ordinary folder
    except OSError as exc:
        raise FatalError(f"{out.parent}: cannot create the build folder: {exc.strerror or exc}") from None
    try:
        yield tmp
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
