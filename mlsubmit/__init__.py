"""mlsubmit: check, package and score MLPerf Training submissions."""

from __future__ import annotations

import importlib.metadata


def _installed_version(name: str) -> str:
    """The version pip recorded for `name` (pyproject.toml's, at install time); "unknown" when not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# One source: pyproject.toml's [project] version, read from the installed metadata (an editable install records it
# when installed: reinstall after tools/release.py changes it). CHANGELOG.md says what each version changed.
__version__ = _installed_version("mlsubmit")


def version_line() -> str:
    """What `mlsubmit --version` prints: this release and the mlperf-logging it runs with, whose rules and RCP data
    decide verdicts as much as our own code does."""
    return f"mlsubmit {__version__} (mlperf-logging {_installed_version('mlperf-logging')})"
