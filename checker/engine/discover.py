"""Turn the PATHs given on the command line into logs and organisation trees to check.

A PATH is a log file, a folder of logs (a benchmark folder, `results/<system>/`, `results/`), an organisation
folder (it has `systems/`, `results/` or `benchmarks/`), or a folder of organisation folders (a round). A file given
by name that is not a `result_*.txt` is raw job output, read as `package` reads it (gzip-compressed or not); so is
every file holding MLLOG records in a folder without `result_*.txt` logs (a folder of a run's job output).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mlsubmit.checker.base.targets import LogRef, OrgTree, RawFolder, SystemFileRef, Targets
from mlsubmit.checker.logs.archives import archive_advice, archive_kind
from mlsubmit.checker.logs.input import holds_records, is_result_log

from mlsubmit.core.errors import UsageError

ORG_MARKERS = ("systems", "results", "benchmarks")
# A round's own documents (README.md, CONTRIBUTING.md, LICENSE.md at the top of training_results_vX.Y): named by
# a shell glob such as `training_results_v4.0/*`, they are passed over, not read as run logs.
DOCUMENT_SUFFIXES = (".md",)


def is_org(path: Path) -> bool:
    return path.is_dir() and any((path / m).is_dir() for m in ORG_MARKERS)


def org_logs(org: Path, display: str, unreadable: list[str] | None = None) -> list[LogRef]:
    """`results/<system>/<benchmark>/result_*.txt`, the files the reference package checker reads; the folders
    that cannot be listed are added to `unreadable` (as shown, under `display`)."""
    out: list[LogRef] = []
    results = org / "results"
    skipped = unreadable if unreadable is not None else []
    if not results.is_dir():
        return out
    for system in _listing(results, org, display, skipped, dirs=True):
        for bench in _listing(system, org, display, skipped, dirs=True):
            for log in (p for p in _listing(bench, org, display, skipped, dirs=False) if is_result_log(p.name)):
                shown = os.path.join(display, "results", system.name, bench.name, log.name)
                out.append(LogRef(log, shown, system.name, bench.name))
    return out


def _listing(folder: Path, org: Path, display: str, unreadable: list[str], *, dirs: bool) -> list[Path]:
    """The folders (or files) in a folder, sorted; none when it cannot be listed, which is noted in `unreadable`
    for a TREE048 finding instead of the whole run ending in a traceback."""
    try:
        entries = sorted(folder.iterdir())
        return [p for p in entries if (p.is_dir() if dirs else p.is_file())]
    except OSError:
        unreadable.append(os.path.join(display, os.path.relpath(folder, org)))
        return []


def _loose_logs(folder: Path, display: str) -> list[LogRef]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            if is_result_log(name):
                full = Path(dirpath) / name
                rel = os.path.relpath(full, folder)
                out.append(LogRef(full, os.path.join(display, rel)))
    return out


def _raw_outputs(folder: Path, display: str) -> list[LogRef]:
    """Files of raw job output under a folder, compressed or not: every visible file with MLLOG records that is not
    an archive (a tarball of the runs beside them is left alone, as notes are)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if not name.startswith(".") and holds_records(full) and archive_kind(full) is None:
                out.append(LogRef(full, os.path.join(display, os.path.relpath(full, folder)), unpack=True))
    return out


def _system_files(folder: Path, display: str) -> list[SystemFileRef]:
    """The *.json files of a `systems/` folder given on its own (hidden files such as vim swaps are skipped)."""
    names = sorted(p.name for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
    return [SystemFileRef(folder / name, os.path.join(display, name)) for name in names]


def _add_file(targets: Targets, path: Path, given: str) -> None:
    """A regular file given as a PATH: a system description (.json), a document passed over, or a run log."""
    if not os.access(path, os.R_OK):
        raise UsageError(f"{given}: not readable")
    if path.suffix.lower() == ".json":  # a system description: whatever its bytes, the JSON reader's findings say
        targets.system_files.append(SystemFileRef(path, given))
        return
    kind = archive_kind(path)
    if kind is not None:  # read as a log, a zip or tarball gives only LOG009 and LOG002: say what it is instead
        raise UsageError(archive_advice(given, kind))
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        targets.documents.append(given)
    else:
        targets.loose_logs.append(LogRef(path, given, unpack=not is_result_log(path.name)))


def _org(root: Path, display: str) -> OrgTree:
    unreadable: list[str] = []
    logs = org_logs(root, display, unreadable)
    return OrgTree(root, display, logs, unreadable=unreadable)


def _add_folder(targets: Targets, path: Path, given: str) -> None:
    """A folder of result logs, else of raw job output (which is also a folder of run sets)."""
    logs = _loose_logs(path, given)
    if not logs:
        logs = _raw_outputs(path, given)
        if logs:
            targets.raw_folders.append(RawFolder(path, given, logs))
    targets.loose_logs.extend(logs)


def discover(paths: list[str]) -> Targets:
    targets = Targets()
    for given in paths:
        path = Path(given)
        try:
            mode = os.stat(path).st_mode  # one system call per PATH: a run may name thousands of logs
        except OSError:
            raise UsageError(f"{given}: no such file or folder") from None
        if stat.S_ISREG(mode):
            _add_file(targets, path, given)
        elif is_org(path):
            targets.orgs.append(_org(path, given))
        elif stat.S_ISDIR(mode) and path.name == "systems":
            targets.system_files.extend(_system_files(path, given))
        elif stat.S_ISDIR(mode):
            orgs = sorted(p for p in path.iterdir() if is_org(p))
            if orgs:
                for org in orgs:
                    shown = os.path.join(given, org.name)
                    targets.orgs.append(_org(org, shown))
            else:
                _add_folder(targets, path, given)
        else:
            raise UsageError(f"{given}: not a regular file or folder")
    return targets
