from __future__ import annotations

from mlsubmit.cli import main

raise SystemExit(main())
