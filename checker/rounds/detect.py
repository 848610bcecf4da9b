"""`check --ruleset auto`: the round of each PATH, read from the folder names of the MLCommons results repositories.

A published tree sits under `training_results_vX.Y/`, and round X.Y is checked with mlperf-logging's training
ruleset X.Y.0. The round is never taken from a log's contents (1.x logs do not name it, and log values never choose
files). A folder holding round folders (a checkout of several results repositories) stands for each of them.
Outside such folders (a team's own tree, the demo) a tree states its round once: a `.mlsubmit-round` file holding
e.g. `1.1`, the `ruleset` of the `manifest.json` that `package` writes beside `<org>/` (so an unpacked archive
states it), or `ruleset` in the `[check]` table of an `mlsubmit.toml`, in the folder or any folder above it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from mlsubmit.checker.rules.files import newer_than_installed, unknown_ruleset

from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.safe_io import open_regular, read_bounded

AUTO = "auto"
_ROUND_DIR = re.compile(r"^training_results_v(\d+)\.(\d+)$")
ROUND_FILE = ".mlsubmit-round"  # hidden: an organisation folder may hold nothing else visible (TREE026)
CONFIG_FILE = "mlsubmit.toml"
_CONFIG_LIMIT = 1 << 20
# The manifest `package` writes beside `<org>/` and into the archive (submission/manifest.py): an unpacked archive
# states its round there, since `.mlsubmit-round` cannot go into `<org>/` (the chair's repo checker refuses names
# that start with a dot) and is not an archive member.
MANIFEST_FILE = "manifest.json"
_MANIFEST_FORMAT = "mlsubmit-manifest/"  # any version of ours; another tool's manifest.json states nothing
_MANIFEST_LIMIT = 64 << 20  # the same bound verify --official reads an archive's manifest within
# The ways people write a round or ruleset: 1.1, v1.1, 1.1.0, v1.1.0, training_1.1.0
_SPELLING = re.compile(r"^(?:v|training_)?(\d+)\.(\d+)(?:\.(\d+))?$", re.IGNORECASE)


def spelled_ruleset(text: str) -> str | None:
    """The ruleset "X.Y.Z" that `text` names in any of the usual spellings, else None."""
    m = _SPELLING.match(text.strip())
    if m is None:
        return None
    return f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3) or 0)}"


Stated = tuple[str, str] | None


def stated_round(path: Path, memo: dict[Path, Stated] | None = None) -> Stated:
    """(ruleset, file stating it) from the nearest `.mlsubmit-round` or `mlsubmit.toml` [check] ruleset in the
    folder of `path` (itself when a folder) or a folder above it; None when no such file states a round.
    `memo` keeps each folder's answer for one command (a run may name thousands of logs in one folder)."""
    memo = {} if memo is None else memo
    start = path.resolve()
    folders = [start, *start.parents] if start.is_dir() else list(start.parents)
    for k, folder in enumerate(folders):
        if folder not in memo:
            memo[folder] = _stated_in(folder)
        found = memo[folder]
        if found is not None:
            return found if found[1].endswith(CONFIG_FILE) else _over_config(found, folders[k + 1 :], memo)
    return None


def _over_config(found: tuple[str, str], above: list[Path], memo: dict[Path, Stated]) -> tuple[str, str]:
    """A tree's own round file wins over a repository's mlsubmit.toml above it; the source says so when they
    differ (the round `package` writes into a tree it builds inside a checkout)."""
    for folder in above:
        if folder not in memo:
            memo[folder] = _stated_in(folder)
        other = memo[folder]
        if other is not None and other[1].endswith(CONFIG_FILE):
            if other[0] != found[0]:
                return found[0], f"{found[1]}, which wins over {other[1]} (ruleset {other[0]})"
            return found
    return found


def _stated_in(folder: Path) -> Stated:
    marker = folder / ROUND_FILE
    if marker.is_file():
        try:
            with open_regular(marker) as stream:  # a round is a few bytes: the rest of a big file is never read
                text = stream.read(4096).decode("utf-8", errors="replace")
            lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        except OSError as exc:
            raise UsageError(f"{marker}: cannot read it: {exc.strerror or exc}") from None
        text = next((ln for ln in lines if ln), "")
        return _checked(text, marker)
    manifest = folder / MANIFEST_FILE
    if manifest.is_file():
        stated = _manifest_round(manifest)
        if stated is not None:
            return stated
    config = folder / CONFIG_FILE
    if config.is_file():
        table = check_table(config)
        if "ruleset" in table:
            return _checked(table["ruleset"], config)
    return None


def _manifest_round(manifest: Path) -> Stated:
    """The ruleset an mlsubmit manifest names; None when the file cannot be read as one of ours (another tool's
    manifest.json, a FIFO, a file past the bound), so that the round is looked for further up. A manifest of ours
    naming no round is a usage error naming it."""
    from mlsubmit.core.support import jsontext  # only when a manifest is met (start-up)

    try:
        data = jsontext.loads(read_bounded(manifest, _MANIFEST_LIMIT))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith(_MANIFEST_FORMAT):
        return None
    return _checked(data.get("ruleset"), manifest)


def nearest_config(path: Path) -> Path | None:
    """The nearest mlsubmit.toml in the folder of `path` (itself when a folder) or a folder above it."""
    start = path.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
    return None


def nearest_configs(paths: Iterable[str]) -> list[Path | None]:
    """nearest_config of each PATH (a file's folder, or the folder itself), each folder looked up once, in the order
    first found; None stands for PATHs under no mlsubmit.toml. A check of 400 logs named one by one walked up 400
    times (0.15 s) before."""
    found: dict[str, Path | None] = {}
    for given in paths:
        folder = given if os.path.isdir(given) else os.path.dirname(os.path.abspath(given))
        if folder not in found:
            found[folder] = nearest_config(Path(folder))
    return list(dict.fromkeys(found.values()))


def check_table(config: Path) -> dict[str, object]:
    """The `[check]` table of an mlsubmit.toml ({} when it has none); UsageError when it cannot be read."""
    # tomllib only when an mlsubmit.toml is read (start-up)
    from mlsubmit.core.support import tomlfile

    try:
        with open_regular(config) as stream:  # a file of the tree under check: bounded, never a FIFO
            raw = stream.read(_CONFIG_LIMIT + 1)
        if len(raw) > _CONFIG_LIMIT:
            raise UsageError(f"{config}: larger than {_CONFIG_LIMIT} bytes; not read as a configuration")
        data = tomlfile.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomlfile.TOMLDecodeError) as exc:
        raise UsageError(f"{config}: cannot read it: {exc}") from None
    table = data.get("check")
    return table if isinstance(table, dict) else {}


def _checked(text: object, source: Path) -> tuple[str, str]:
    ruleset = spelled_ruleset(text) if isinstance(text, str) else None
    if ruleset is None:
        raise UsageError(f"{source}: {text!r} does not name a round; write it as 1.1 or 1.1.0")
    return ruleset, str(source)


def round_name(ruleset: str) -> str:
    """The round a ruleset belongs to, as rounds are named ("1.1.0" -> "1.1")."""
    return ".".join(ruleset.split(".")[:2])


def version(ruleset: str) -> tuple[int, ...]:
    """`X.Y.Z` as numbers to compare; () for anything else, which compares below every round."""
    try:
        return tuple(int(x) for x in ruleset.split("."))
    except ValueError:
        return ()


def ruleset_of_path(path: Path) -> str | None:
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


def group_by_round(paths: Iterable[str], known: Sequence[str], why: dict[str, set[str]] | None = None
                   ) -> dict[str, list[str]]:
    """PATHs by ruleset, oldest round first; a PATH whose round cannot be told is a usage error.
    `why`, when given, receives for each ruleset where it was read (round folders, or the files stating it)."""
    groups: dict[str, list[str]] = {}
    why = {} if why is None else why
    memo: dict[Path, Stated] = {}
    for given in paths:
        if not os.path.exists(given):
            raise UsageError(f"{given}: no such file or folder")
        # the name as given first, as text (no Path per log: a run may name thousands), as ruleset_of_path does
        ruleset = _named_round(tuple(given.split(os.sep))) or ruleset_of_path(Path(given))
        if ruleset is not None:
            _add(groups, ruleset, given, known)
            why.setdefault(ruleset, set()).add(f"training_results_v{ruleset.rsplit('.', 1)[0]}")
            continue
        path = Path(given)
        inner = _round_folders(path)
        stated = None if inner else stated_round(path, memo)
        if stated is not None:
            _add(groups, stated[0], given, known)
            why.setdefault(stated[0], set()).add(stated[1])
        elif not inner:
            raise UsageError(
                f"{given}: cannot tell its round (no training_results_vX.Y folder holds it, and no {ROUND_FILE}, "
                f"{MANIFEST_FILE} of a packaged tree or {CONFIG_FILE} with [check] ruleset in it or above it); "
                f"give --ruleset X.Y.Z, or write the round (e.g. 1.1) into {ROUND_FILE} at the tree's root"
            )
        for name in inner:
            _add(groups, ruleset_of_path(path / name) or "", os.path.join(given, name), known)
            why.setdefault(ruleset_of_path(path / name) or "", set()).add(name)
    return {r: groups[r] for r in sorted(groups, key=lambda v: tuple(int(x) for x in v.split(".")))}


def _add(groups: dict[str, list[str]], ruleset: str, path: str, known: Sequence[str]) -> None:
    if ruleset not in known:
        if newer_than_installed(ruleset):
            raise UsageError(f"{path}: {unknown_ruleset(ruleset)}")
        raise UsageError(
            f"{path}: round {ruleset.rsplit('.', 1)[0]} has no training ruleset in the installed mlperf-logging "
            f"(it ships {', '.join(known)}); give --ruleset X.Y.Z"
        )
    groups.setdefault(ruleset, []).append(path)
