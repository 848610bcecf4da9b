"""Issue 54, fourth round: `verify --official` fails closed. The gate before the reference tools reads what they
read (their own globs, a record they read that our reader drops), and bounds what is built for them (the private
copy by apparent size, the records once per path they open). Each attack plants a rule file whose code would write
a marker (`evil_common.yaml`); the marker never appears, and each case is tried on a tree and on an archive of it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from conftest import ROOT
from fixtures.flowfix import BENCHMARK, MODERN_SYSTEM, ORG, archived, fast_tree
from mlsubmit.submission import archive as arch
from mlsubmit.submission import handover

Cli = Callable[..., tuple[int, str, str]]
RESULTS = Path("results") / MODERN_SYSTEM / BENCHMARK
DIVISION = '"submission_division", "value": "closed"'




def official(run_cli: Cli, target: Path, *extra: str | Path) -> tuple[int, str, str]:
    return run_cli("verify", target, "--official", "--ruleset", "6.1.0", "--color", "never", *extra)


def on(run_cli: Cli, root: Path, org: Path, form: str, links: bool = False) -> tuple[int, str, str]:
    """The flow on the tree, or on an archive of it."""
    if form == "tree":
        return official(run_cli, org)
    archive, passphrase = archived(root, links)
    return official(run_cli, archive, "--passphrase-file", passphrase)


def refused(code: int, out: str, err: str, reason: str, org: str = ORG) -> None:
    """Exit 1, the handover step failed for `reason`, and no reference tool ran."""
    assert code == 1, out + err
    assert f"handover [{org}]: FAIL" in err and f"not handed to the reference tools: {reason}" in err, err
    assert "package checker [" not in err and "the chair's flow with mlperf-logging" in err


def planted(root: Path, org: Path) -> tuple[Path, str]:
    """The marker a planted rule file's BEGIN block would write, and the division value that climbs to it."""
    marker = root / "PWNED"
    impl = org / "benchmarks" / BENCHMARK / "implementations" / "ipu"
    (impl / "evil_common.yaml").write_text(f"- BEGIN:\n    CODE: \"open('{marker}', 'w').write('ran')\"\n", "utf-8")
    climb = "../" * 20 + f"proc/self/cwd/{ORG}/benchmarks/{BENCHMARK}/implementations/ipu/evil"
    return marker, climb


@pytest.mark.parametrize("form", ["tree", "archive"])
def test_a_system_folder_named_double_star_never_reaches_the_tools(tmp_path: Path, run_cli: Cli, form: str) -> None:
    """Case 1: `results/**/bert/result_*.txt`, the tools' glob with recursive=True, reaches `results/**/x/bert/
    result_0.txt`, a log our check never reads (its benchmark folder is `x`); its division climbs to the rule file."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker, climb = planted(tmp_path, org)
    star = org / "results" / "**"
    (star / "x" / BENCHMARK).mkdir(parents=True)
    (star / BENCHMARK).mkdir()
    text = (org / RESULTS / "result_0.txt").read_text(encoding="utf-8")
    (star / "x" / BENCHMARK / "result_0.txt").write_text(text.replace(DIVISION, f'"submission_division", "value": '
                                                                      f'"{climb}"'), encoding="utf-8")  # fmt: skip
    shutil.copy(org / "systems" / f"{MODERN_SYSTEM}.json", org / "systems" / "**.json")
    code, out, err = on(run_cli, tmp_path, org, form)
    refused(code, out, err, "PKG072 x 2")  # its system description `**.json` too
    assert "results/**: error PKG072 system folder '**' holds a glob character" in out
    assert not marker.exists()


def test_an_organisation_named_double_star_never_reaches_the_tools(tmp_path: Path, run_cli: Cli) -> None:
    org = fast_tree(tmp_path / "round", "rcp-bypass\n", ROOT / "systems")
    os.rename(org, org.with_name("**"))
    code, out, err = official(run_cli, tmp_path / "round")
    refused(code, out, err, "PKG072 x 1", org="**")
    assert "error PKG072 organisation folder '**' holds a glob character" in out


@pytest.mark.parametrize("form", ["tree", "archive"])
def test_a_folder_the_glob_takes_for_a_log_is_refused(tmp_path: Path, run_cli: Cli, form: str) -> None:
    """A folder `result_10.txt`: the tools' glob takes it (and would crash opening it), our check does not."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    (org / RESULTS / "result_10.txt").mkdir()
    (org / RESULTS / "result_10.txt" / "x").write_text("x\n", encoding="utf-8")  # a folder an archive keeps
    code, out, err = on(run_cli, tmp_path, org, form)
    refused(code, out, err, "PKG075 x 1")
    assert f"{RESULTS.as_posix()}/result_10.txt: error PKG075 the reference tools open this as a result log" in out


@pytest.mark.parametrize("form", ["tree", "archive"])
@pytest.mark.parametrize("time_ms", ["1e999", "NaN", "-Infinity", '"inf"'])
def test_a_division_record_we_drop_and_the_reference_reads_never_reaches_the_tools(
        tmp_path: Path, run_cli: Cli, form: str, time_ms: str) -> None:  # fmt: skip
    """Case 2: the one submission_division record has a time our reader refuses (LOG006, the record is dropped and
    its value never judged: no RULE010), which the reference reads; its value climbs to the planted rule file."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker, climb = planted(tmp_path, org)
    log = org / RESULTS / "result_0.txt"
    lines = log.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines, 1) if DIVISION in line)
    head, _, _ = lines[number - 1].partition(":::MLLOG")
    lines[number - 1] = (f'{head}:::MLLOG {{"namespace": "", "time_ms": {time_ms}, "event_type": "POINT_IN_TIME", '
                         f'"key": "submission_division", "value": "{climb}", "metadata": {{"file": "x.py", '
                         '"lineno": 1}}')  # fmt: skip
    log.write_text("\n".join(lines), encoding="utf-8")
    code, out, err = on(run_cli, tmp_path, org, form)
    refused(code, out, err, "PKG074 x 1")
    assert f"{RESULTS.as_posix()}/result_0.txt:{number}: error PKG074 our reader dropped this record (LOG006:" in out
    assert "RULE010" not in out and not marker.exists()


def test_a_sparse_file_is_refused_before_it_is_copied(tmp_path: Path, run_cli: Cli,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Case 3: 2 GiB of apparent size in a tree of a few MB: refused by its size, never written to the copy."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    sparse = org / "benchmarks" / BENCHMARK / "implementations" / "ipu" / "weights.bin"
    with open(sparse, "wb") as fh:
        fh.truncate(2 << 30)
    copied: list[int] = []
    real = shutil.copyfile

    def counting(src: Path, dst: Path, *, follow_symlinks: bool = True) -> object:
        copied.append(os.stat(src).st_size)
        return real(src, dst, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(handover.shutil, "copyfile", counting)
    before = os.stat(sparse)  # (a digest would read the 2 GiB)
    code, out, err = official(run_cli, org)
    refused(code, out, err, "PKG071 x 1")
    assert "weights.bin: error PKG071 2,147,483,648 bytes (apparent size), past the 50 MiB" in out
    assert copied and max(copied) < 1 << 20  # the other files are copied, the sparse one never is
    after = os.stat(sparse)
    assert (after.st_mtime_ns, after.st_size, after.st_blocks) == (before.st_mtime_ns, before.st_size, before.st_blocks)


def test_a_member_past_its_bound_is_refused_before_it_is_unpacked(tmp_path: Path, run_cli: Cli,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Case 3 on an archive (the bound lowered to 1 MiB and a 2 MiB member, to keep the test short; 2 GiB is refused
    the same way): the member's header says its size, and nothing of it is written."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    with open(org / "benchmarks" / BENCHMARK / "implementations" / "ipu" / "weights.bin", "wb") as fh:
        fh.truncate(2 << 20)
    monkeypatch.setattr(handover, "MAX_OTHER_BYTES", 1 << 20)
    written: list[str] = []
    real = arch._copy

    def counting(stream: IO[bytes], target: Path) -> None:
        written.append(target.name)
        real(stream, target)

    monkeypatch.setattr(arch, "_copy", counting)
    code, out, err = on(run_cli, tmp_path, org, "archive")
    assert code == 1 and "unpack: FAIL" in err and "package checker [" not in err, out + err
    assert "weights.bin: error PKG071 2,097,152 bytes (apparent size), past the 1 MiB a file may be: not written" in out
    assert written and "weights.bin" not in written


@pytest.mark.parametrize("form", ["tree", "archive"])
def test_links_to_the_system_folder_count_its_records_once_per_path(tmp_path: Path, run_cli: Cli, form: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Case 15, reduced: the tools read the system folder's logs again through each of 6 links inside the tree;
    the bound counts them so (the fixture's 10 logs of 58 records, the bound lowered to what one path reads)."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    records = sum(p.read_bytes().count(b":::MLLOG") for p in (org / RESULTS).glob("result_*.txt"))
    monkeypatch.setattr(handover, "MAX_RECORDS_TOTAL", records)
    for i in range(6):
        os.symlink(MODERN_SYSTEM, org / "results" / f"link-{i}")
    if form == "tree":
        code, out, err = official(run_cli, org)
        refused(code, out, err, "PKG071 x 1")
        assert f"hold {records * 7:,} :::MLLOG lines in all (each counted once per path" in out
    else:  # an archive holds no links: the chair's unpacking step refuses them, nothing reaches the tools
        code, out, err = on(run_cli, tmp_path, org, form, links=True)
        assert code == 1 and "unpack: FAIL" in err and "error PKG042" in out, out + err
        assert "package checker [" not in err
