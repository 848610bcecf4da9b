"""mlsubmit: check, package and score MLPerf Training submissions."""

from __future__ import annotations

# pyproject.toml's [project] version, written here too so that start-up does not pay for importlib.metadata (about
# 25 ms, a sixth of checking one log). tools/release.py prepare sets both; tests/unit/project/test_release.py holds
# them equal. CHANGELOG.md says what each version changed.
__version__ = "0.2.0"


def version_line() -> str:
    """What `mlsubmit --version` prints: this release and the mlperf-logging it runs with, whose rules and RCP data
    decide verdicts as much as our own code does."""
    # lazy: importlib.metadata, ~25 ms to import; only --version asks
    import importlib.metadata

    try:
        mlperf_logging = importlib.metadata.version("mlperf-logging")
    except importlib.metadata.PackageNotFoundError:
        mlperf_logging = "unknown"
    return f"mlsubmit {__version__} (mlperf-logging {mlperf_logging})"
