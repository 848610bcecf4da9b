"""tools/bench_hostile.py, the worst cases `make bench` runs: its inputs are what they say (records, keys, the cut
check makes), written small here; the figures themselves are measured by `make bench`, never asserted."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from fixtures.project_tools import load_tool
from mlsubmit.checker.logs.reader import Record, read_log


def _tool() -> ModuleType:
    return load_tool("bench_hostile")


def test_repeated_gzip_members_read_as_one_log(tmp_path: Path) -> None:
    tool = _tool()
    block = b"".join(tool.EVAL % b'"acc%d"' % i for i in range(10))
    path = tool._write(tmp_path / "findings.txt.gz", block, 7)
    seen: list[Record] = []
    log = read_log(path, unpack=True, sink=seen.extend)
    assert log.readable and sum(str(r.value["value"]).startswith("acc") for r in seen) == 70
    assert seen[-1].key == "run_stop" and not [f for f in log.findings if f.code.startswith("LOG")]


def test_distinct_keys_are_distinct(tmp_path: Path) -> None:
    tool = _tool()
    path = tool.distinct_keys(tmp_path / "keys.txt.gz", blocks=3, per_block=10)
    keys = [r.key for r in read_log(path, unpack=True).records if r.key.startswith("k0")]
    assert len(keys) == len(set(keys)) == 30
