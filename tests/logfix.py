"""One log checked as the pipeline checks each log of a run (cache lookup, else read, check and store), for the
cache and fuzz tests: the product itself only checks logs through run_check."""

from __future__ import annotations

from mlsubmit.checker.run.discover import LogRef
from mlsubmit.checker.run.options import CheckOptions
from mlsubmit.checker.run.pipeline import LogResult, _check_and_store, _lookup


def check_log_file(ref: LogRef, options: CheckOptions) -> LogResult:
    """One log's findings and facts: from the cache when it holds them, else read and checked (and stored)."""
    sha, hit = _lookup(ref, options)
    return hit if hit is not None else _check_and_store(ref, options, sha)
