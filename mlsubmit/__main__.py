from __future__ import annotations

from mlsubmit.cli import console

raise SystemExit(console())
