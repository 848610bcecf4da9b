"""What a round asks a result file to hold besides its MLLOG records (a log check of the full profile).

From ruleset 6.1.0 on, a result file holds the job's whole output: "the full framework logs and all MLLOG lines"
(training_rules.adoc, section "Result files", added by training_policies PR #588 for mlcommons/training#880). A
file in which every line is a record is what the packaging of earlier rounds wrote, and breaks that rule. Only the
line count is compared, so a file padded with blank lines is not flagged: the warning errs on the quiet side.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mlsubmit.checker.logs.input import is_result_log
from mlsubmit.checker.rounds.detect import version

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.logs.reader import ParsedLog

# the codes the `result-file` check may emit (checker/engine/checks.py registers it)
CODES = frozenset({"TREE049"})

FULL_OUTPUT_FROM = (6, 1, 0)  # training_policies PR #588


def check_log(log: ParsedLog, options: CheckOptions) -> list[Finding]:
    """TREE049 on a result_<i>.txt of 6.1.0 or later whose every line is a record (raw job output is no
    result file: packaging makes one of it)."""
    if version(options.ruleset) < FULL_OUTPUT_FROM or not is_result_log(os.path.basename(log.path)):
        return []
    # counted, not kept: `check` streams the records past its checks (logs/sinks.py)
    mllog_lines = log.record_count + log.parse_errors  # one per line (a bare CR can make more, never fewer)
    if not log.record_count or mllog_lines < log.lines:
        return []
    return [finding("TREE049", log.path, f"all {log.lines} line(s) are :::MLLOG records: no framework output")]
