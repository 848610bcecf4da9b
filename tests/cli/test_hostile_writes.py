"""Outputs written whole or not at all, and a chair's CSV that csv cannot read (issue 35)."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth_org import runs, system, write_org

import mlsubmit.cli.output as output

RULESET = "1.1.0"


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_org(tmp_path_factory.mktemp("writes") / "Graphcore", {"pod16": system()},
                     {("pod16", "resnet"): runs([14.0, 14.5, 15.0, 14.25, 14.75], ruleset=RULESET, evals=35,
                                                hyperparameters={"global_batch_size": 3264})})


def test_check_o_on_a_full_disk_leaves_no_file(run_cli, org: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def full(_report: Any, stream: Any, **_kw: Any) -> None:
        stream.write("partial")
        stream.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(output.REPORTERS, "text", full)
    code, _out, err = run_cli("check", "--ruleset", RULESET, "-o", tmp_path / "report.txt", org)
    assert code == 2 and "No space left" in err
    assert list(tmp_path.iterdir()) == []  # neither a 0-byte report nor a temporary file


def test_check_o_replaces_an_old_report_only_when_whole(run_cli, org: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "report.txt"
    old.write_text("the last good report\n", encoding="utf-8")
    def full(*_a: Any, **_k: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(output.REPORTERS, "text", full)
    assert run_cli("check", "--ruleset", RULESET, "-o", old, org)[0] == 2
    assert old.read_text(encoding="utf-8") == "the last good report\n" and len(list(tmp_path.iterdir())) == 1
    monkeypatch.undo()
    assert run_cli("check", "--ruleset", RULESET, "-o", old, org)[0] in (0, 1)
    assert "the last good report" not in old.read_text(encoding="utf-8")


def test_a_chair_csv_field_over_csvs_limit_is_exit_2(run_cli, org: Path, tmp_path: Path) -> None:
    chair = tmp_path / "chair.csv"
    chair.write_text("division,system,details_url\nclosed,\"" + "x" * 200_000 + "\",u\n", encoding="utf-8")
    code, _out, err = run_cli("report", "--ruleset", RULESET, "--against", chair, org)
    assert code == 2, err
    assert "chair.csv" in err and "internal error" not in err
