"""The RCP verdict and scaling factor of one closed results folder, in the result summarizer's terms.

The RCP check itself is the tree checks' (`mlsubmit.checker.rcp.verdict`, the reference's data and statistics without
its file writes), and its verdict is reused: `rcp_verdict` gives the one the check gave in this run on the same runs,
and judges only a folder the check did not. This module translates it into what the summarizer shows: its RCP column
("Pass", "Fail", "Interp. Fail", "Missing", "No RCP", "Unknown state", or empty when its check raised) and whether a
reference point was compared, which decides whether the reference rewrites `scaling.json`.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlsubmit.checker import LogFacts
from mlsubmit.checker.rcp.verdict import RcpResult, rcp_verdict
from mlsubmit.report.scoring import RcpOutcome


def summarizer_status(result: RcpResult) -> str:
    """The summarizer's RCP column for a check that ran (result_summarizer `_compute_strong_scaling_scores`)."""
    if result.passed:
        return "Pass"
    msg = result.reference
    if msg == "RCP found":
        return "Fail"
    if msg == "RCP Interpolation":
        return "Interp. Fail"
    if "Missing" in msg:
        return "Missing"
    if msg == "Cannot find any RCPs":
        return "No RCP"
    return "Unknown state"


def rcp_outcome(result: RcpResult) -> RcpOutcome:
    if result.crash:
        # The reference raises inside its RCP step; the summarizer prints a warning, leaves the column empty and
        # the folder's scaling.json as it was.
        # The message says it in words (checker.rcp.verdict.error_in_words); the raw exception stays in the result,
        # not in the page.
        return RcpOutcome(status="", message=f"the reference's RCP check stops here: {result.message}")
    return RcpOutcome(
        status=summarizer_status(result),
        message=result.message,
        evaluated=result.submission_mean is not None,
        factor=float(result.scaling_factor),
    )


def evaluate(benchmark: str, ruleset: str, facts: Sequence[LogFacts]) -> RcpOutcome:
    """RCP outcome of a closed results folder (TR1.0/TR1.1 §"Reference Convergence Points")."""
    try:
        result = rcp_verdict(benchmark, ruleset, list(facts), closed=True)
    except Exception as exc:  # the summarizer wraps its RCP step the same way: no column, scaling.json untouched
        return RcpOutcome(status="", message=f"RCP check could not run: {type(exc).__name__}: {exc}")
    return rcp_outcome(result)
