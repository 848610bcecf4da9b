"""mlsubmit: check, package and score MLPerf Training submissions."""

from __future__ import annotations

__version__ = "0.1.0"
