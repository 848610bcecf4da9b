"""Closed-division hyperparameter table (placeholder until the HP issue lands: no findings yet)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlsubmit.checker.logs import ParsedLog

from mlsubmit.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.pipeline import CheckOptions


def check_log(log: ParsedLog, options: CheckOptions) -> list[Finding]:
    return []
