"""The `hygiene` check of an organisation tree: junk, names, big files and links (the walk's entry findings) and the
secret scan of the implementation code, whose files the pipeline's worker pool scans beside the logs (`code`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.options import CodeTask
from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.hygiene import scan
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.tree.shared import only_logs_changed

from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE040", "TREE041", "TREE042", "TREE043", "TREE044", "TREE045", "TREE061"})

SECRETS_UNDER = ("benchmarks", "benchmark")  # implementation code: logs and system files are not scanned


def code(org: OrgTree, options: CheckOptions) -> list[CodeTask]:
    """The files whose secret scan the pipeline gives its worker pool, beside the logs: the implementation code,
    unless only logs changed, each with the cache's answers for its tree (the task hashes the file and looks
    there first). The walk is kept for the check."""
    if only_logs_changed(org, options):
        return []
    walked = scan.walk(org.root, secrets_under=SECRETS_UNDER, changed=options.changed_paths)
    if walked is None:
        return []
    org.prepared.walk = walked
    kept = None if options.cache_dir is None else scan.cached_answers(options.cache_dir, walked.pack)
    return [(path, kept) for path in walked.secret_paths]


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """The walk's findings but the secrets, beside the log checks, when `code` walked the tree."""
    if org.prepared.walk is not None:
        org.prepared.entry_findings = scan.entry_findings(org.prepared.walk, org.display, options.ruleset)


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    """With --changed-since, only changed files are scanned for secrets (the others were, when they changed).
    What the pipeline's pool scanned (`code`) is not scanned again."""
    if only_logs_changed(org, options):  # code, names and files did not change: the check cannot change
        return []
    prep = org.prepared
    walked, scanned, entries = prep.walk, prep.scanned, prep.entry_findings
    prep.walk, prep.scanned, prep.entry_findings = None, None, None  # taken: a second check scans afresh
    return scan.scan(org.root, org.display, secrets_under=SECRETS_UNDER, cache_dir=options.cache_dir,
                     workers=options.jobs, changed=options.changed_paths, progress=options.progress,
                     walked=walked, scanned=scanned, entries=entries, ruleset=options.ruleset)
