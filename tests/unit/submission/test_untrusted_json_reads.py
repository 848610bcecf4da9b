"""JSON from the tree or an archive read by package, verify --official and report --generate-private-ids goes
through the one bounded loader (core/support/jsontext, safe_io.read_bounded): a 100,000-deep file or a FIFO is a
miss, never a RecursionError (exit 3) or a read that never ends."""

from __future__ import annotations

import os
from pathlib import Path

from mlsubmit.submission.bypass import _closed
from mlsubmit.submission.official import _manifest_ruleset

from mlsubmit.report.private_ids import _json as private_id_json

DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_json_is_a_miss(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP, encoding="ascii")
    assert private_id_json(deep) is None
    assert _closed(deep) is False
    assert _manifest_ruleset(deep) is None


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert private_id_json(fifo) is None
    assert _closed(fifo) is False
    assert _manifest_ruleset(fifo) is None


def test_the_files_they_are_for_still_read(tmp_path: Path) -> None:
    system = tmp_path / "system.json"
    system.write_text('{"division": "closed", "x": NaN}', encoding="ascii")
    assert _closed(system) is True
    assert private_id_json(system)["division"] == "closed"
    manifest = tmp_path / "manifest.json"
    manifest.write_text('{"ruleset": "6.1.0"}', encoding="ascii")
    assert _manifest_ruleset(manifest) == "6.1.0"
