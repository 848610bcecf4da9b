"""The `seeds` check: seeds of a closed results folder, as mlperf-logging's seed checker judges them, from
LogFacts.

The installed checker applies, to every ruleset from 1.0.0 and closed division only: every run logs at least one
`seed`; each seed record has an integer value and mllog's `file`/`lineno` metadata; the log has no unparseable
records; no two runs log the same seed on the same file and line; more than one seed per run is only a warning.
The training rules ask for this from v4.1 (TR "Random numbers"); for v1.x it is the verifier's retroactive rule,
which the finding's hint says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.tree import params
from mlsubmit.checker.tree.shared import tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Location

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE014", "TREE015", "TREE016", "TREE017"})  # the `seeds` check's


@dataclass
class SeedReport:
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(f.code != "TREE017" for f in self.findings)


def _records(facts: LogFacts) -> tuple[list[tuple[str, str, int, int]], str | None]:
    """(file, lineno, seed, log line) per seed record, or the reason the reference's reader gives up on the log."""
    if facts.parse_errors:
        return [], f"{facts.parse_errors} MLLOG record(s) do not parse, so the seed checker cannot read the log"
    out = []
    for occ in facts.all("seed"):
        meta = occ.metadata if isinstance(occ.metadata, dict) else {}
        if "file" not in meta or "lineno" not in meta:
            return [], f"seed record on line {occ.line} lacks mllog's file/lineno metadata"
        try:
            seed = int(occ.value)
        except (TypeError, ValueError, OverflowError):
            return [], f"seed value {occ.value!r} on line {occ.line} is not an integer"
        out.append((str(meta["file"]), repr(meta["lineno"]), seed, occ.line))  # repr: any JSON value is hashable
    return out, None


def check_seeds(runs: list[LogFacts]) -> SeedReport:
    """Seed findings for the runs of one folder (already known to be closed)."""
    report = SeedReport()
    seen: dict[tuple[str, str, int], tuple[str, int]] = {}
    for facts in sorted(runs, key=lambda f: f.path):
        records, problem = _records(facts)
        if problem:
            report.findings.append(finding("TREE016", facts.path, problem))
            continue
        if not records:
            report.findings.append(finding("TREE014", facts.path, "the run logs no seed record"))
            continue
        if len(records) > 1:
            report.findings.append(
                finding("TREE017", facts.path, f"the run logs {len(records)} seeds", line=records[1][3])
            )
        for src, lineno, seed, line in records:
            key = (src, lineno, seed)
            if key in seen:
                other, other_line = seen[key]
                report.findings.append(
                    finding(
                        "TREE015",
                        facts.path,
                        f"seed {seed} logged from {src}:{lineno} was already logged by {other}",
                        line=line,
                        related=[Location(other, other_line)],
                    )
                )
            else:
                seen[key] = (facts.path, line)
    return report


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    """The `seeds` check: every closed results folder's seeds, unless a bypass flag in force skips them."""
    return [f for folder in tree_facts(org, facts, options).closed() if params.SEED_BYPASS not in folder.asked
            for f in check_seeds(folder.runs).findings]
