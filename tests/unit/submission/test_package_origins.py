"""Staging keeps each record's raw line; build paths map back to the inputs they came from."""

from __future__ import annotations

import gzip
from pathlib import Path

from mlsubmit.submission.origins import Origins, PlacedLog, to_inputs
from mlsubmit.submission.run_selection import stage_run

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Location

REC = b':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "k%d", "value": 1}'


def test_staging_notes_the_raw_line_of_each_record(tmp_path: Path) -> None:
    raw = b"banner\n[1,0]<stdout>:" + REC % 1 + b"\nnoise\n" + REC % 2 + b"\r" + REC % 3 + b"\n\n" + REC % 4
    for name, data in (("job.out", raw), ("job.out.gz", gzip.compress(raw, mtime=0))):
        (tmp_path / name).write_bytes(data)
        run, problems = stage_run(tmp_path / name, name, tmp_path / f"{name}.staged")
        assert problems == [] and run is not None
        assert run.raw_lines == [2, 4, 4, 6]  # a bare CR keeps two records on one raw line; no final newline
        assert (run.raw_line(2), run.raw_line(None), run.raw_line(9)) == (4, None, 9)


def test_build_paths_map_to_the_inputs() -> None:
    origins = Origins(config="pkg/package.toml", org="Org", entry_lines=[7, 13], ruleset_line=3)
    origins.logs["Org/results/s/bert/result_0.txt"] = PlacedLog("runs/job.out", (2, 4, 9), 0)
    origins.systems["Org/systems/s.json"] = "systems/s.json"
    origins.folders[("s", "bert")] = 0
    origins.implementations["Org/benchmarks/bert/implementations/p"] = "repo/bert/p"
    root = "/tmp/.out.build-x"

    def at(path: str, line: int | None = None, code: str = "TREE021") -> tuple[str, int | None, str | None, str]:
        f = to_inputs(finding(code, f"{root}/{path}", "msg", line=line), root, origins)
        return f.path, f.line, f.pointer, f.message

    assert at("Org/results/s/bert/result_0.txt", 3) == ("runs/job.out", 9, None, "msg")
    assert at("Org/systems/s.json", 5) == ("systems/s.json", 5, None, "msg")
    assert at("Org/benchmarks/bert/implementations/p/run.sh") == ("repo/bert/p/run.sh", None, None, "msg")
    assert at("Org/results/s/bert") == ("pkg/package.toml", 7, "/results/0", "Org/results/s/bert: msg")
    assert at("Org/results/s") == ("pkg/package.toml", 7, "/results/0/system", "Org/results/s: msg")
    assert at("Org") == ("pkg/package.toml", None, None, "Org: msg")
    assert to_inputs(finding("TREE021", "elsewhere", "m"), root, origins).path == "elsewhere"
    moved = to_inputs(finding("SYS046", f"{root}/Org/results/s/bert/result_0.txt", "m", line=1,
                              related=[Location(f"{root}/Org/results/s/bert")]), root, origins)
    assert moved.related == (Location("pkg/package.toml", 7, "/results/0"),)
    assert "results[0].benchmark in package.toml" in moved.hint
    origins.placed_at = "out"
    placed = to_inputs(finding("LOG004", f"{root}/Org/results/s/bert/result_0.txt", "m", line=2), root, origins)
    assert (placed.path, placed.line) == ("runs/job.out", 4)
    assert placed.related == (Location("out/Org/results/s/bert/result_0.txt", 2),)
