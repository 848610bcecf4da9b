"""Organisation trees: systems/ against results/, and each log's submission_* values against its system description.

TR/SR1.x: every results/<system>/ needs systems/<system>.json, and a log's division, organisation, status and
platform must be those of the system it ran on (mlperf-logging compares none of these). Logs are seen through
`LogFacts`, never read again; system files through the JSON reader and `systems.check_system_file`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.base.targets import LogRef, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rounds import division
from mlsubmit.checker.systems.descriptions import check_system_file
from mlsubmit.checker.systems.jsonfile import JsonDocument
from mlsubmit.checker.systems.knowledge import knowledge, spelling_key

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location
from mlsubmit.core.support.names import did_you_mean

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions


# the codes the `systems` check may emit (checker/engine/checks.py registers it), at each of its stages: the whole SYS
# family, which no other check emits, wherever in systems/ a code is written; a new SYS code needs no line here
CODES = frozenset({"SYS"})


def org_system_files(org: OrgTree) -> list[tuple[Path, str]]:
    """systems/*.json of an organisation tree with their display paths (other files are the tree checks')."""
    try:
        files = sorted(p for p in org.sub("systems").iterdir() if p.suffix == ".json" and not p.name.startswith("."))
    except OSError:  # no systems/ folder, or one that cannot be listed: the tree checks report the layout
        return []
    return [(p, org.shown("systems", p.name)) for p in files]


def _result_systems(org: OrgTree) -> list[str]:
    try:
        return sorted(p.name for p in org.sub("results").iterdir() if p.is_dir())
    except OSError:
        return []


def _pairing_findings(org: OrgTree, docs: dict[str, JsonDocument]) -> Iterator[Finding]:
    used = _result_systems(org)
    for name in used:
        if name not in docs:
            near = did_you_mean(name, docs)
            yield finding("SYS040", org.shown("results", name),
                          f"results/{name}/ has no system description systems/{name}.json{near}")
    if not org.sub("results").is_dir():
        return  # a tree being assembled: systems first, results later
    for stem, doc in docs.items():
        if stem not in used:
            near = did_you_mean(stem, used)
            yield finding("SYS041", doc.path, f"no results/{stem}/ folder uses this system description{near}",
                          line=doc.line(""))


def _names_agree(a: str, b: str) -> bool:
    na, nb = spelling_key(a), spelling_key(b)
    return bool(na and nb) and (na in nb or nb in na)


@dataclass(frozen=True)
class _LogSide:
    ref: LogRef
    facts: LogFacts

    def value(self, key: str) -> str | None:
        v = self.facts.value(key)
        return v if isinstance(v, str) else None

    def finding(self, code: str, key: str, message: str, related: Location) -> Finding:
        return finding(code, self.ref.display, message, line=self.facts.line(key), related=[related])


def _division_finding(log: _LogSide, doc: JsonDocument) -> Iterator[Finding]:
    ours, theirs = log.value("submission_division"), doc.data.get("division")
    if ours is None or not isinstance(theirs, str) or ours == theirs:
        return
    tail = (", so the package checker and mlsubmit make none of the closed division's checks (seeds, RCP) on "
            "these closed runs") if ours == "closed" else ""
    yield log.finding("SYS042", "submission_division",
                      f"submission_division is {ours!r} but {doc.path} says division {theirs!r}: the result is "
                      f"listed in {division.table(theirs)}{tail}", doc.location("/division"))


def _status_finding_log(log: _LogSide, doc: JsonDocument) -> Iterator[Finding]:
    ours, theirs = log.value("submission_status"), doc.data.get("status")
    info = knowledge().status.get(spelling_key(theirs)) if isinstance(theirs, str) else None
    if ours is None or info is None or ours in info.log:
        return
    yield log.finding("SYS043", "submission_status",
                      f"submission_status is {ours!r} but {doc.path} says status {theirs!r} "
                      f"(which agrees with {' or '.join(info.log)})", doc.location("/status"))


def _org_finding(log: _LogSide, doc: JsonDocument) -> Iterator[Finding]:
    ours, theirs = log.value("submission_org"), doc.data.get("submitter")
    if ours is None or not isinstance(theirs, str):
        return
    if ours in knowledge().log_placeholders:
        yield log.finding("SYS047", "submission_org", f"submission_org is the placeholder {ours!r}",
                          doc.location("/submitter"))
    elif not _names_agree(ours, theirs):
        yield log.finding("SYS044", "submission_org",
                          f"submission_org is {ours!r} but {doc.path} names submitter {theirs!r}",
                          doc.location("/submitter"))


def _platform_finding(log: _LogSide, doc: JsonDocument) -> Iterator[Finding]:
    ours = log.value("submission_platform")
    if ours is None:
        return
    bare = re.sub(r"^\s*[0-9]+\s*x\s*", "", ours)  # "8xDGXA100": node count, then the platform
    if bare in knowledge().log_placeholders:
        yield log.finding("SYS047", "submission_platform", f"submission_platform is the placeholder {ours!r}",
                          doc.location("/system_name"))
        return
    data: dict[str, Any] = doc.data
    names = [log.ref.system or "", *(v for v in (data.get("system_name"), data.get("accelerator_model_name"))
                                     if isinstance(v, str))]
    if not any(_names_agree(bare, n) for n in names):
        yield log.finding("SYS045", "submission_platform",
                          f"submission_platform {ours!r} names neither the system file, its system_name "
                          f"nor its accelerator", doc.location("/system_name"))


def _benchmark_finding(log: _LogSide, org: OrgTree) -> Iterator[Finding]:
    ours, folder = log.value("submission_benchmark"), log.ref.benchmark
    if ours is None or folder is None or ours == folder:
        return
    shown = org.shown("results", log.ref.system or "", folder)
    yield log.finding("SYS046", "submission_benchmark",
                      f"submission_benchmark is {ours!r} but the log is in the folder {folder!r}", Location(shown))


def agreement_findings(org: OrgTree, facts: Mapping[str, LogFacts], docs: dict[str, JsonDocument]) -> list[Finding]:
    out: list[Finding] = []
    for ref in org.logs:
        log_facts = facts.get(ref.display)
        if log_facts is None:
            continue
        log = _LogSide(ref, log_facts)
        out.extend(_benchmark_finding(log, org))
        doc = docs.get(ref.system or "")
        if doc is None or not doc.is_object:
            continue
        for check in (_division_finding, _status_finding_log, _org_finding, _platform_finding):
            out.extend(check(log, doc))
    return out


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """Read and validate the system files before the logs' facts exist; `check` uses the results."""
    org.prepared.systems = {
        str(path): check_system_file(path, shown, options.ruleset) for path, shown in org_system_files(org)
    }


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    """System files of the tree, their pairing with results/, and the logs' agreement with them."""
    findings: list[Finding] = []
    docs: dict[str, JsonDocument] = {}
    prepared, org.prepared.systems = org.prepared.systems, {}
    for path, shown in org_system_files(org):
        doc, found = prepared.get(str(path)) or check_system_file(path, shown, options.ruleset)
        docs[path.stem] = doc
        if system_changed(org, path.stem, options):
            findings.extend(found)
    findings.extend(f for f in _pairing_findings(org, docs) if system_changed(org, _system_of(org, f), options))
    findings.extend(agreement_findings(org, facts, docs))
    return findings


def system_changed(org: OrgTree, system: str, options: CheckOptions) -> bool:
    """With --changed-since, a system's own findings are reported again only when its file or its results folder
    holds a change: one changed log must not bring back every unchanged system file's warnings."""
    changed = options.changed_paths
    if changed is None:
        return True
    own = str(org.sub("systems", system + ".json").resolve())
    folder = str(org.sub("results", system).resolve()) + os.sep
    return own in changed or any(p.startswith(folder) for p in changed)


def _system_of(org: OrgTree, f: Finding) -> str:
    """The system a pairing finding is about: results/<system> (SYS040) or systems/<system>.json (SYS041)."""
    name = os.path.basename(f.path)
    return name.removesuffix(".json") if f.code == "SYS041" else name
