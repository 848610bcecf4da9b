"""What would keep a run out of the closed division (`mlsubmit advise`), whatever division it claims.

The closed hyperparameter table (apply.py) and mlperf-logging's closed rule files (run by our engine on a
copy of the records that claims closed) give the rows and rules a run breaks. An open run that breaks none of them
is told so plainly (HP010): only convergence, the RCP check over its set of runs (rcp/prediction.py), decides.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from mlsubmit.checker.hyperparameters.apply import closed_advice, merge_rule_duplicates
from mlsubmit.checker.hyperparameters.table import table_for
from mlsubmit.checker.logs.reader import ParsedLog, Record
from mlsubmit.checker.rules.engine import check_records
from mlsubmit.checker.rules.files import get_ruleset

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, has_errors


def as_closed(records: Sequence[Record]) -> list[Record]:
    """A copy of the records in which the log claims the closed division (the caller's records are untouched)."""
    return [
        msgspec.structs.replace(rec, value={**rec.value, "value": "closed"}) if rec.key == "submission_division"
        else rec
        for rec in records
    ]


def advise_parsed(log: ParsedLog, ruleset: str, *, table_only: bool = False) -> list[Finding]:
    """Everything that would keep this parsed run out of the closed division of `ruleset`, with lines.

    The table is applied whatever the log claims; unless `table_only`, mlperf-logging's closed rule files are
    run too (through mlsubmit's own engine), on a copy of the records whose submission_division says closed.
    A log without a submission_division record is not given one: the missing record is the advice.
    """
    findings = list(log.findings)
    if log.records:
        findings.extend(closed_advice(log, ruleset))
        if not table_only:
            findings.extend(check_records(as_closed(log.records), get_ruleset(ruleset), log.path))
    findings = merge_rule_duplicates(findings)
    return [*findings, *_open_and_clear(log, ruleset, findings, table_only)]


def _open_and_clear(log: ParsedLog, ruleset: str, findings: Sequence[Finding], table_only: bool) -> list[Finding]:
    """HP010 for an open run that nothing in its log keeps out of closed (said, not left to a bare PASS)."""
    division = log.first("submission_division")
    if division is None or division.payload != "open" or has_errors(findings, strict=True):
        return []
    table = table_for(ruleset)
    checked = [f"the round {table.round} closed table"] if table is not None else []
    if not table_only:
        checked.append(f"mlperf-logging's closed rule files of {ruleset}")
    if not checked:
        return []
    what = " nor ".join(checked)
    return [finding("HP010", log.path, f"open run: {'neither ' if len(checked) > 1 else ''}{what} "
                    f"keep{'s' if len(checked) == 1 else ''} it out of closed; only convergence decides, by the RCP "
                    "check over its set of runs (HP008 gives the verdict where the benchmark has RCPs)",
                    line=division.line)]
