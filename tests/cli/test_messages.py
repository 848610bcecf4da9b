"""Messages that say what is so (issue 57 item 6)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixtures.synth import RunSpec, write_run

Cli = Callable[..., tuple[int, str, str]]


def _broken_at(path: Path, record: int) -> int:
    """The log with its `record`-th line (1-based; -1 the last) cut in the middle of its JSON; that line's number."""
    lines = path.read_bytes().splitlines(keepends=True)
    at = len(lines) - 1 if record < 0 else record - 1
    lines[at] = lines[at][: len(lines[at]) // 2] + (b"\n" if record >= 0 else b"")
    path.write_bytes(b"".join(lines))
    return at + 1


def test_a_record_broken_mid_file_is_not_called_a_truncated_log(tmp_path: Path, run_cli: Cli) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(ruleset="1.0.0"))
    line = _broken_at(log, 3)
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", log, "--color", "never")
    assert code == 1 and f":{line}: error LOG004" in out
    assert "truncated" not in out and f"following from LOG004 {log}:{line}:" in out


def test_a_log_cut_at_its_last_record_is_called_truncated(tmp_path: Path, run_cli: Cli) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(ruleset="1.0.0"))
    line = _broken_at(log, -1)
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", log, "--color", "never")
    assert code == 1 and f"the log looks truncated at line {line} (its last record is cut off); so:" in out


def test_the_hint_of_a_count_names_the_field_it_is_about(tmp_path: Path, run_cli: Cli) -> None:
    import json

    from conftest import ROOT

    data = json.loads((ROOT / "systems" / "ipu-pod16-POPART-closed.json").read_text(encoding="utf-8"))
    data["number_of_nodes"] = "1.0"
    system = tmp_path / "ipu-pod16-POPART-closed.json"
    system.write_text(json.dumps(data, indent=2), encoding="utf-8")
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", system, "--format", "json")
    (found,) = [f for f in json.loads(out)["files"][0]["findings"] if f["code"] == "SYS012"]
    assert code == 1 and found["pointer"] == "/number_of_nodes"
    assert found["hint"] == 'Write the count as digits only, e.g. "number_of_nodes": "1".'  # was accelerators_per_node


def test_the_strictness_query_says_what_it_measured(run_cli: Cli) -> None:
    code, out, _ = run_cli("advise", "--ruleset", "5.0.0", "--strictness", "bert:448", "--color", "never")
    assert code == 0 and "info HP011 batch size 448: bert_ref_448 (" in out
    assert "fastest allowed (the record's Min Epochs) " in out and " samples, max speedup" in out
    assert out.splitlines()[-1] == "1 measured RCP record(s) compared, 0 failed; 0 error(s), 0 warning(s), 1 info"


def test_the_strictness_records_come_in_batch_size_order(run_cli: Cli) -> None:
    code, out, _ = run_cli("advise", "--ruleset", "4.0.0", "--strictness", "bert", "--color", "never")
    sizes = [int(line.split("batch size")[1].split(":")[0]) for line in out.splitlines() if "HP011" in line]
    assert code == 0 and len(sizes) == 13 and sizes == sorted(sizes)  # were 12288, 13056, 1536, 16384, 256, ...
