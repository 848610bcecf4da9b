"""`check --ruleset auto`: the round of each PATH, read from the folder names of the MLCommons results repositories.

A published tree sits under `training_results_vX.Y/`, and round X.Y is checked with mlperf-logging's training
ruleset X.Y.0. The round is never taken from a log's contents (1.x logs do not name it, and log values never choose
files). A folder holding round folders (a checkout of several results repositories) stands for each of them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from mlsubmit.errors import UsageError

AUTO = "auto"
_ROUND_DIR = re.compile(r"^training_results_v(\d+)\.(\d+)$")


def round_of(path: Path) -> str | None:
    """Ruleset "X.Y.0" of the innermost `training_results_vX.Y` folder holding `path` (or being it), else None.

    The path as given is looked at first (no system calls: a run may name thousands of logs), then the resolved
    one, for `.`, links, and folders above the working directory. Only parts after the last `..` count:
    `training_results_v1.0/../x` is not in round 1.0, `../training_results_v1.0/x` is.
    """
    return _named_round(path.parts) or _named_round(path.resolve().parts)


def _named_round(parts: tuple[str, ...]) -> str | None:
    if ".." in parts:
        parts = parts[len(parts) - parts[::-1].index("..") :]
    for part in reversed(parts):
        m = _ROUND_DIR.match(part)
        if m:
            return f"{int(m.group(1))}.{int(m.group(2))}.0"
    return None


def _round_folders(path: Path) -> list[str]:
    if not path.is_dir():
        return []
    try:
        return sorted(e.name for e in os.scandir(path) if e.is_dir() and _ROUND_DIR.match(e.name))
    except OSError:
        return []


def group_by_round(paths: Iterable[str], known: Sequence[str]) -> dict[str, list[str]]:
    """PATHs by ruleset, oldest round first; a PATH whose round cannot be told is a usage error."""
    groups: dict[str, list[str]] = {}
    for given in paths:
        if not os.path.exists(given):
            raise UsageError(f"{given}: no such file or folder")
        # the name as given first, split as text (no Path per log: a run may name thousands), as round_of does
        ruleset = _named_round(tuple(given.split(os.sep))) or round_of(Path(given))
        if ruleset is not None:
            _add(groups, ruleset, given, known)
            continue
        path = Path(given)
        inner = _round_folders(path)
        if not inner:
            raise UsageError(
                f"{given}: cannot tell its round (no training_results_vX.Y folder holds it); give --ruleset X.Y.Z"
            )
        for name in inner:
            _add(groups, round_of(path / name) or "", os.path.join(given, name), known)
    return {r: groups[r] for r in sorted(groups, key=lambda v: tuple(int(x) for x in v.split(".")))}


def _add(groups: dict[str, list[str]], ruleset: str, path: str, known: Sequence[str]) -> None:
    if ruleset not in known:
        raise UsageError(
            f"{path}: round {ruleset.rsplit('.', 1)[0]} has no training ruleset in the installed mlperf-logging "
            f"(it ships {', '.join(known)}); give --ruleset X.Y.Z"
        )
    groups.setdefault(ruleset, []).append(path)
