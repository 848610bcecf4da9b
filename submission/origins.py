"""Where each file of a build came from, so the post-build check's findings point at the user's own inputs.

The check reads the temporary build folder; its paths mean nothing to the user (the folder is gone, and `out` may
still hold the previous build). A placed result log is shown at its raw job output and that record's raw line; a
system file at the user's system file; an exported implementation file at its repository path; any other
generated folder or file at the `package.toml` entry that produced it. Hints that send the user to a command-line
option name the config key instead, since that is where the input came from.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace

from mlsubmit.submission.package_config import PackageConfig

from mlsubmit.core.findings import Finding, Location, Report, Severity, cause_label
from mlsubmit.core.support.names import has_suggestion, without_suggestion

_RESULTS_HEADER = re.compile(rb"^\s*\[\[\s*results\s*\]\]")
_RULESET_KEY = re.compile(rb"^\s*ruleset\s*=")


@dataclass(frozen=True)
class PlacedLog:
    source: str  # the raw output as the user names it (relative to the config's folder)
    raw_lines: tuple[int, ...]  # raw line of each record of the placed file
    entry: int


@dataclass
class Origins:
    """Paths are '/'-separated and relative to the build folder (they start with the org)."""

    config: str
    org: str
    logs: dict[str, PlacedLog] = field(default_factory=dict)
    systems: dict[str, str] = field(default_factory=dict)  # placed path -> the user's system file
    folders: dict[tuple[str, str], int] = field(default_factory=dict)  # (system, benchmark) -> entry index
    implementations: dict[str, str] = field(default_factory=dict)  # placed folder -> the repository folder it is from
    entry_lines: list[int] = field(default_factory=list)  # line of each [[results]] header in the config
    ruleset_line: int | None = None
    placed_at: str | None = None  # the finished tree's folder, once it is written: placed logs are named there too


def config_lines(cfg: PackageConfig, origins: Origins) -> None:
    """The lines of the `[[results]]` headers and the `ruleset` key (top level, before any table)."""
    try:
        lines = cfg.path.read_bytes().splitlines()
    except OSError:
        return
    in_table = False
    for number, text in enumerate(lines, 1):
        if _RESULTS_HEADER.match(text):
            origins.entry_lines.append(number)
        in_table = in_table or text.lstrip().startswith(b"[")
        if not in_table and origins.ruleset_line is None and _RULESET_KEY.match(text):
            origins.ruleset_line = number


def _entry_location(origins: Origins, index: int, key: str = "") -> Location:
    line = origins.entry_lines[index] if index < len(origins.entry_lines) else None
    return Location(origins.config, line, f"/results/{index}{key}")


def _locate(origins: Origins, rel: str, line: int | None) -> tuple[Location, str]:
    """Where a build path `rel` (and a line in it) came from, and the prefix its message needs, if any."""
    placed = origins.logs.get(rel)
    if placed is not None:
        ok = line is not None and 1 <= line <= len(placed.raw_lines)
        return Location(placed.source, placed.raw_lines[line - 1] if ok and line else line), ""
    if rel in origins.systems:
        return Location(origins.systems[rel], line), ""
    for folder, source in origins.implementations.items():
        if rel == folder or rel.startswith(folder + "/"):
            return Location(posixpath.join(source, rel[len(folder) + 1 :]) if rel != folder else source, line), ""
    parts = rel.split("/")
    if len(parts) >= 4 and parts[1] == "results" and (parts[2], parts[3]) in origins.folders:
        return _entry_location(origins, origins.folders[(parts[2], parts[3])]), f"{rel}: "
    if len(parts) == 3 and parts[1] == "results":
        for (system, _bench), index in origins.folders.items():
            if system == parts[2]:
                return _entry_location(origins, index, "/system"), f"{rel}: "
    return Location(origins.config), f"{rel}: "


def _relative(path: str, root: str) -> str | None:
    if path == root:
        return ""
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return None


def _hint(f: Finding, origins: Origins, index: int | None) -> str:
    name = posixpath.basename(origins.config)
    if f.code == "SYS046" and index is not None:
        return (f"Correct the entry's `benchmark` (results[{index}].benchmark in {name}), or take the log out of "
                "its `logs` patterns and into the entry of its benchmark.")
    return f.hint.replace("--ruleset", f"the `ruleset` key of {name}")


def _entry_of(rel: str | None, origins: Origins) -> int | None:
    placed = origins.logs.get(rel or "")
    return placed.entry if placed is not None else None


def to_inputs(f: Finding, root: str, origins: Origins) -> Finding:
    """The finding at the input it came from; `root` is the build folder as the check names it."""
    rel = _relative(f.path.replace("\\", "/"), root)
    where, prefix = (Location(f.path, f.line, f.pointer), "") if rel is None else _locate(origins, rel, f.line)
    related = []
    if rel in origins.logs and origins.placed_at is not None:
        related.append(Location(posixpath.join(origins.placed_at, rel), f.line))
    if "--ruleset" in f.hint:
        related.append(Location(origins.config, origins.ruleset_line, "/ruleset"))
    for loc in f.related:
        loc_rel = _relative(loc.path.replace("\\", "/"), root)
        related.append(loc if loc_rel is None else _locate(origins, loc_rel, loc.line)[0])
    return replace(f, path=where.path, line=where.line, pointer=where.pointer if prefix else f.pointer,
                   message=prefix + f.message, related=tuple(dict.fromkeys(related)),
                   hint=_hint(f, origins, _entry_of(rel, origins)))


def report_at_inputs(report: Report, root: str, origins: Origins) -> Report:
    """The same report with every path under `root` replaced by the input it came from."""
    out = Report(strict=report.strict, meta=dict(report.meta))
    for path, findings in report.files.items():
        rel = _relative(path.replace("\\", "/"), root)
        key = path if rel is None else _locate(origins, rel, None)[0].path
        out.add_file(key, [to_inputs(f, root, origins) for f in findings])
    out.tree.extend(to_inputs(f, root, origins) for f in report.tree)
    return out


# What a wrong `benchmark` of an entry brings about on its logs: each run names another benchmark than its folder.
_ON_LOGS_OF_A_WRONG_BENCHMARK = frozenset({"PKG009", "SYS046"})


def _entry(f: Finding) -> int | None:
    parts = (f.pointer or "").split("/")
    return int(parts[2]) if len(parts) >= 3 and parts[1] == "results" and parts[2].isdigit() else None


def _entry_roots(report: Report, origins: Origins) -> tuple[dict[str, Finding], dict[str, Finding]]:
    """The packager's findings about an entry's name (PKG013: not a benchmark of the round; PKG020: no such
    system file), by the message prefix of what the check says about the folders they built, and by the source
    logs of a wrong benchmark."""
    prefixes: dict[str, Finding] = {}
    sources: dict[str, Finding] = {}
    for root in report.all_findings():
        index = _entry(root)
        if root.cause or index is None or root.code not in ("PKG013", "PKG020"):
            continue
        for (system, bench), i in origins.folders.items():
            if i != index:
                continue
            if root.code == "PKG013":
                prefixes[f"{origins.org}/results/{system}/{bench}: "] = root
                sources.update({p.source: root for p in origins.logs.values() if p.entry == index})
            else:
                prefixes[f"{origins.org}/results/{system}: "] = root
                prefixes[f"{origins.org}/results/{system}/"] = root
    return prefixes, sources


def fold_entry_causes(report: Report, origins: Origins) -> Report:
    """A wrong name in an entry is the cause of what the check then finds in the folders it built: a benchmark
    that is not the round's (PKG013) makes every run disagree with its folder and the folder unknown; a system
    with no description (PKG020) leaves its results folder without one. Those findings name the packager's as
    their `cause` (reporters fold them under it), so one typo reads as one cause; and only the cause suggests a
    name, since a suggestion made from the built tree's few systems would be another, wrong one."""
    prefixes, sources = _entry_roots(report, origins)
    if not prefixes:
        return report

    def cause_of(f: Finding) -> Finding | None:
        if f.code in _ON_LOGS_OF_A_WRONG_BENCHMARK and f.path in sources:
            return sources[f.path]
        if f.path == origins.config and f.code not in ("PKG013", "PKG020"):
            return next((root for prefix, root in prefixes.items() if f.message.startswith(prefix)), None)
        return None

    def fold(f: Finding) -> Finding:
        root = None if f.cause or f.severity is Severity.INFO else cause_of(f)  # a fact is no consequence
        if root is None:
            return f
        message = without_suggestion(f.message) if has_suggestion(root.message) else f.message
        return replace(f, cause=cause_label(root), message=message)

    return Report(files={p: [fold(f) for f in fs] for p, fs in report.files.items()},
                  tree=[fold(f) for f in report.tree], strict=report.strict, meta=report.meta, tally=report.tally)
