"""What a check is given: the targets discovery (checker/engine/discover.py) finds under the PATHs. A log (`LogRef`),
an organisation tree (`OrgTree`, with the `Preparation` its preparations fill), a folder of raw job output
(`RawFolder`), a system file given on its own (`SystemFileRef`), and all of them (`Targets`); and one
`results/<system>/<benchmark>/` folder of a tree as listed (`BenchFolder`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.core.support import jsontext
from mlsubmit.core.support.safe_io import SMALL_FILE, read_bounded

if TYPE_CHECKING:
    from mlsubmit.checker.hygiene.scan import Scanned, Walk
    from mlsubmit.checker.logs.facts import LogFacts
    from mlsubmit.checker.power.folder import ReferenceVerdict
    from mlsubmit.checker.power.power_log import PowerLog
    from mlsubmit.checker.systems.jsonfile import JsonDocument
    from mlsubmit.checker.tree.shared import TreeFacts

    from mlsubmit.core.findings import Finding


@dataclass(frozen=True)
class LogRef:
    path: Path
    display: str
    system: str | None = None
    benchmark: str | None = None
    unpack: bool = False  # raw job output: gzip-compressed content is read (a result file is read as stored)


@dataclass
class Preparation:
    """Tree-level work done before the logs' facts exist, beside the log checks (the profile's preparations, and
    the pool's secret scan), kept for the org check that uses it. Each check takes its part (sets it back to
    empty), so a second check of the same tree works afresh."""

    folders: list[BenchFolder] | None = None  # tree: the results' benchmark folders
    layout: list[Finding] | None = None  # tree: the layout findings
    implementations: list[Finding] | None = None  # tree: the implementation findings
    walk: Walk | None = None  # tree.code_to_scan: the hygiene walk of the tree
    entry_findings: list[Finding] | None = None  # hygiene: the walk's findings but the secrets
    scanned: dict[Path, Scanned] | None = None  # the pipeline's pool: each code file read and scanned
    systems: dict[str, tuple[JsonDocument, list[Finding]]] = field(default_factory=dict)  # systems.agreement
    power_verdicts: dict[Path, ReferenceVerdict] = field(default_factory=dict)  # power: per power/ folder
    power_logs: dict[Path, PowerLog] = field(default_factory=dict)  # power: the logs the verdicts listed
    tree: TreeFacts | None = None  # the full profile's tree checks: what several of them need, once per pass


@dataclass
class BenchFolder:
    """One results/<system>/<benchmark>/ folder as listed on disk (the reference's view plus what it ignores)."""

    system: str
    name: str
    path: Path
    shown: str
    logs: list[str] = field(default_factory=list)  # display paths of result_*.txt files, sorted
    others: list[str] = field(default_factory=list)  # other non-hidden entry names
    nested_logs: dict[str, int] = field(default_factory=dict)  # sub-folder name -> result logs in it

    def facts(self, all_facts: Mapping[str, LogFacts]) -> list[LogFacts]:
        return [all_facts[d] for d in self.logs if d in all_facts]


@dataclass
class OrgTree:
    root: Path
    display: str
    logs: list[LogRef] = field(default_factory=list)
    prepared: Preparation = field(default_factory=Preparation)
    unreadable: list[str] = field(default_factory=list)  # folders under results/ that could not be listed

    @property
    def name(self) -> str:
        return self.root.resolve().name

    def sub(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def shown(self, *parts: str) -> str:
        return os.path.join(self.display, *parts)


@dataclass(frozen=True)
class SystemFileRef:
    """A system description given on its own (a .json PATH, or the files of a `systems/` folder)."""

    path: Path
    display: str


@dataclass
class RawFolder:
    """A folder of raw job output given as a PATH: its runs are judged as run sets (tree/runset.py)."""

    root: Path
    display: str
    logs: list[LogRef] = field(default_factory=list)  # also in Targets.loose_logs, where their log checks run


@dataclass
class Targets:
    loose_logs: list[LogRef] = field(default_factory=list)
    raw_folders: list[RawFolder] = field(default_factory=list)
    orgs: list[OrgTree] = field(default_factory=list)
    system_files: list[SystemFileRef] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)  # PATHs passed over as documentation (DOCUMENT_SUFFIXES)

    def all_logs(self) -> list[LogRef]:
        return [*self.loose_logs, *(ref for org in self.orgs for ref in org.logs)]


def system_field(org: OrgTree, system: str, key: str) -> Any:
    """A top-level field of the system file, or None when the file is missing or unreadable (systems/descriptions.py
    reports those); the name comes from the folder listing, never from a log."""
    path = org.sub("systems", system + ".json")
    if not path.is_file():  # missing, or a FIFO or device that a read would block on
        return None
    try:
        data = jsontext.loads(read_bounded(path, SMALL_FILE))
    except (OSError, ValueError):
        return None
    return data.get(key) if isinstance(data, dict) else None
