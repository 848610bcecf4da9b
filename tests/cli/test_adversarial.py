"""Adversarial inputs end to end, through `main(argv)`: the uploader controls the log, the tree beside it, the
archive and the package config. Nothing they plant is run, nothing outside the output is written, nothing is read
through a link out of the tree without a finding.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import tree_digest
from fixtures.synth import RunSpec, write_run

RunCLI = Callable[..., tuple[int, str, str]]

EVIL_RULES = """
- BEGIN:
    CODE: " open(MARKER, 'w').write('pwned') "
- KEY:
    NAME: submission_org
    CHECK: " open(MARKER, 'w').write('pwned') "
"""


def _plant(tmp_path: Path, where: Path) -> tuple[str, Path]:
    """Plant `<where>/evil_common.yaml` whose code writes a marker; return the division value that reaches it."""
    marker = tmp_path / "MARKER-ran"
    where.mkdir(parents=True, exist_ok=True)
    (where / "evil_common.yaml").write_text(EVIL_RULES.replace("MARKER", repr(str(marker))))
    # enough ../ to climb from mlperf-logging's rules folder to /, then down to the planted file
    return "../" * 40 + str(where / "evil").lstrip("/"), marker


def _division_line(log: Path) -> int:
    for n, line in enumerate(log.read_text().splitlines(), 1):
        if '"submission_division"' in line:
            return n
    raise AssertionError("no submission_division record")


def _findings(out: str) -> list[dict[str, object]]:
    report = json.loads(out)
    return [f for entry in report["files"] for f in entry["findings"]] + list(report["findings"])


@pytest.mark.parametrize("ruleset", ["1.0.0", "1.1.0", "4.1.0"])
def test_traversal_exploit_in_a_loose_log_runs_nothing(tmp_path: Path, run_cli: RunCLI, ruleset: str) -> None:
    division, marker = _plant(tmp_path, tmp_path / "some" / "dir")
    log = write_run(tmp_path / "upload" / "result_0.txt", RunSpec(division=division))
    before = tree_digest(tmp_path)
    code, out, err = run_cli("check", "--ruleset", ruleset, "--format", "json", log)
    assert code == 1, err
    rule010 = [f for f in _findings(out) if f["code"] == "RULE010"]  # a path: RULE010 since issue 49
    assert [(f["path"], f["line"]) for f in rule010] == [(str(log), _division_line(log))]
    assert not marker.exists()
    assert tree_digest(tmp_path) == before


def test_traversal_exploit_planted_inside_an_uploaded_tree(tmp_path: Path, run_cli: RunCLI) -> None:
    """The CI case: the uploader adds the YAML to their own tree and points the log at it."""
    org = tmp_path / "closed" / "Evil"
    division, marker = _plant(tmp_path, org / "benchmarks" / "bert" / "implementations" / "x")
    logs = [write_run(org / "results" / "sys" / "bert" / f"result_{i}.txt", RunSpec(division=division, seed=i))
            for i in range(3)]
    before = tree_digest(tmp_path)
    for fmt in ("json", "sarif", "github", "junit", "text"):
        code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", fmt, tmp_path / "closed")
        assert code == 1, err
        assert "RULE010" in out
        assert "internal error" not in err
    code, out, _ = run_cli("check", "--ruleset", "1.0.0", "--format", "json", tmp_path / "closed")
    rule010 = sorted((f["path"], f["line"], f["severity"]) for f in _findings(out) if f["code"] == "RULE010")
    shown = [str(tmp_path / "closed" / "Evil" / log.relative_to(org)) for log in logs]
    assert rule010 == sorted((p, _division_line(log), "error") for p, log in zip(shown, logs, strict=True))
    assert not marker.exists()
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("command", ["advise", "report"])
def test_other_commands_do_not_follow_the_traversal_either(tmp_path: Path, run_cli: RunCLI, command: str) -> None:
    division, marker = _plant(tmp_path, tmp_path / "some" / "dir")
    log = write_run(tmp_path / "upload" / "result_0.txt", RunSpec(division=division))
    code, _, err = run_cli(command, "--ruleset", "1.0.0", "--format", "json", log)
    assert code in (0, 1), err
    assert "internal error" not in err
    assert not marker.exists()


# --- symlinks out of a tree --------------------------------------------------------------------------------------


def _org_with_links(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    write_run(outside / "someone_elses_run.txt", RunSpec(seed=99))
    (outside / "secret.txt").write_text("AWS_SECRET_ACCESS_KEY=abc\n")
    org = tmp_path / "round" / "Evil"
    bench = org / "results" / "sys" / "bert"
    write_run(bench / "result_0.txt", RunSpec(seed=1))
    (bench / "result_1.txt").symlink_to(outside / "someone_elses_run.txt")  # a run borrowed from outside
    (bench / "result_2.txt").symlink_to(tmp_path / "nowhere.txt")  # dangling
    (bench / "result_3.txt").symlink_to("/dev/zero")  # endless bytes: must not be read
    impl = org / "benchmarks" / "bert" / "implementations" / "x"
    impl.mkdir(parents=True)
    (impl / "README.md").write_text("x\n")
    (impl / "run_and_time.sh").write_text("#!/bin/sh\n")
    (impl / "etc").symlink_to("/etc")  # a folder out of the tree
    (impl / "creds").symlink_to(outside / "secret.txt")
    (impl / "loop").symlink_to(impl / "loop")  # a link to itself
    (impl / "up").symlink_to(org)  # a cycle back into the tree
    (org / "systems").mkdir()
    (org / "systems" / "sys.json").symlink_to(outside / "secret.txt")
    return org, outside


def test_symlinks_out_of_a_tree_are_findings_and_never_followed_for_writing(tmp_path: Path, run_cli: RunCLI) -> None:
    org, _ = _org_with_links(tmp_path)
    before = tree_digest(tmp_path)
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", org)
    assert code == 1, err
    assert "internal error" not in err
    found = _findings(out)
    by_code: dict[str, set[str]] = {}
    for f in found:
        by_code.setdefault(str(f["code"]), set()).add(os.path.relpath(str(f["path"]), org) if f["path"] else "")
    outward = by_code.get("TREE044", set())
    for link in ("results/sys/bert/result_1.txt", "benchmarks/bert/implementations/x/etc",
                 "benchmarks/bert/implementations/x/creds", "systems/sys.json"):
        assert link in outward, (link, by_code)
    assert "results/sys/bert/result_2.txt" in by_code.get("TREE043", set()), by_code
    assert not any("abc" in json.dumps(f) for f in found)  # the secret's value is never echoed
    assert tree_digest(tmp_path) == before


def test_check_of_a_link_to_a_device_does_not_hang(tmp_path: Path, run_cli: RunCLI) -> None:
    (tmp_path / "result_0.txt").symlink_to("/dev/zero")
    code, _, err = run_cli("check", "--ruleset", "1.0.0", tmp_path / "result_0.txt")
    assert code == 2
    assert "not a regular file" in err


# --- archives with hostile members ---------------------------------------------------------------------------------


def _member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x\n", link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.linkname = link
    info.mode = 0o644
    return info


HOSTILE_MEMBERS: dict[str, tarfile.TarInfo] = {
    "dotdot": _member("Graphcore/../../escaped.txt"),
    "leading-dotdot": _member("../escaped.txt"),
    "absolute": _member("/tmp/mlsubmit-absolute-escape.txt"),
    "symlink-out": _member("Graphcore/link", tarfile.SYMTYPE, link="/etc/passwd"),
    "symlink-relative-out": _member("Graphcore/link", tarfile.SYMTYPE, link="../../../../etc"),
    "hardlink-out": _member("Graphcore/hard", tarfile.LNKTYPE, link="/etc/passwd"),
    "char-device": _member("Graphcore/dev", tarfile.CHRTYPE),
    "block-device": _member("Graphcore/blk", tarfile.BLKTYPE),
    "fifo": _member("Graphcore/fifo", tarfile.FIFOTYPE),
    "a-thousand-deep": _member("Graphcore/benchmarks/" + "d/" * 1100 + "train.py"),
}


def _archive(path: Path, hostile: tarfile.TarInfo) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        ok = _member("Graphcore/results/readme.txt")
        tar.addfile(ok, io.BytesIO(b"x\n"))
        tar.addfile(hostile, io.BytesIO(b"x\n") if hostile.type == tarfile.REGTYPE else None)
    path.write_bytes(buf.getvalue())
    path.with_name(path.name + ".sha256").write_text(f"{hashlib.sha256(buf.getvalue()).hexdigest()}  {path.name}\n")
    return path


@pytest.mark.parametrize("kind", sorted(HOSTILE_MEMBERS))
def test_verify_refuses_hostile_archive_members(
    tmp_path: Path, run_cli: RunCLI, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the refusing unpack happens under here
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    box = tmp_path / "inbox"
    box.mkdir()
    archive = _archive(box / "Graphcore.tar.gz", HOSTILE_MEMBERS[kind])
    before = tree_digest(tmp_path)
    code, out, err = run_cli("verify", "--ruleset", "1.0.0", "--format", "json", archive)
    assert code == 1, err
    assert "internal error" not in err
    refused = [f for f in _findings(out) if f["code"] == "PKG042"]
    assert len(refused) == 1, _findings(out)
    assert tree_digest(tmp_path) == before  # nothing escaped, and the temporary unpack folder is gone
    assert not Path("/tmp/mlsubmit-absolute-escape.txt").exists()


# --- package configs whose names climb out of `out` ----------------------------------------------------------------


def _config_example(tmp_path: Path) -> Path:
    from fixtures.demo import write_example

    return write_example(tmp_path / "ex").config


CLIMBS = {
    "org": ('org = "Graphcore"', 'org = "../../escaped"'),
    "org-absolute": ('org = "Graphcore"', 'org = "/tmp/escaped"'),
    "system": ('system = "ipu-pod16-POPART-closed"', 'system = "../../../escaped"'),
    "benchmark": ('benchmark = "bert"', 'benchmark = "../../escaped"'),
    "implementation-name": ('name = "popart"', 'name = "../../../../escaped"'),
    "implementation-path": ('path = "bert/popart"', 'path = "../../../../etc"'),
    "implementation-path-absolute": ('path = "bert/popart"', 'path = "/etc"'),
    "dot-name": ('org = "Graphcore"', 'org = ".."'),
}


@pytest.mark.parametrize("case", sorted(CLIMBS))
def test_package_config_names_cannot_climb_out_of_out(tmp_path: Path, run_cli: RunCLI, case: str) -> None:
    config = _config_example(tmp_path)
    old, new = CLIMBS[case]
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new, 1))
    before = tree_digest(tmp_path)
    code, _, err = run_cli("package", config)
    assert code == 2, err
    assert "schema" in err or "not allowed" in err or "outside" in err, err
    assert "internal error" not in err
    assert tree_digest(tmp_path) == before  # not even `out` or a build folder was created


def test_package_refuses_a_symlink_out_of_the_implementation_repo(tmp_path: Path, run_cli: RunCLI) -> None:
    from fixtures.demo import implementation_files
    from fixtures.repo import commit_example

    config = _config_example(tmp_path)
    repo = config.parent / "ipu-benchmarks"
    files = implementation_files()
    commit_example(repo, files, "again", tag="v1.0-link")
    import git

    g = git.Repo(repo)
    (repo / "bert" / "popart" / "passwd").symlink_to("/etc/passwd")
    (repo / "bert" / "popart" / "up").symlink_to("../../..")
    g.git.add("--all")
    g.git.commit("-m", "links out", "--no-verify")
    g.git.tag("-f", "v1.0")
    code, out, err = run_cli("package", config, "--format", "json")
    found = _findings(out) if out.strip().startswith("{") else []
    assert code in (0, 1), err
    assert "internal error" not in err
    links = [f for f in found if f["code"] == "PKG032"]
    assert len(links) == 2, found
    built = config.parent / "build" / "submission"
    if built.exists():
        assert not any(p.is_symlink() for p in built.rglob("*"))


def test_package_runs_no_command_from_the_implementation_repos_git_config(tmp_path: Path, run_cli: RunCLI) -> None:
    import git

    config = _config_example(tmp_path)
    marker = tmp_path / "FSMONITOR-ran"
    with git.Repo(config.parent / "ipu-benchmarks").config_writer() as cw:
        cw.set_value("core", "fsmonitor", f"touch {marker}; false")
    run_cli("package", config)
    assert not marker.exists()


def test_fifos_in_a_tree_do_not_hang_the_check(tmp_path: Path) -> None:
    import subprocess
    import sys

    org = tmp_path / "Org"
    write_run(org / "results" / "s" / "bert" / "result_0.txt", RunSpec())
    impl = org / "benchmarks" / "bert" / "implementations" / "x"
    impl.mkdir(parents=True)
    (org / "systems").mkdir()
    os.mkfifo(org / "systems" / "s.json")
    os.mkfifo(impl / "train.py")
    os.mkfifo(org / "results" / "s" / "bert" / "result_1.txt")
    # a generous guard against a hang, not a timing assertion: the check itself takes well under a second
    done = subprocess.run([sys.executable, "-m", "mlsubmit", "check", "--ruleset", "1.0.0", str(org)],
                          capture_output=True, text=True, timeout=15, check=False)
    assert done.returncode == 1, done.stderr


def test_changed_since_runs_no_filter_command_from_the_repository(tmp_path: Path, run_cli: RunCLI) -> None:
    import git

    repo_dir = tmp_path / "repo"
    repo = git.Repo.init(repo_dir)
    log = write_run(repo_dir / "logs" / "result_0.txt", RunSpec())
    repo.index.add([str(log.relative_to(repo_dir))])
    repo.index.commit("base")
    marker = tmp_path / "CLEAN-FILTER-ran"
    (repo_dir / ".gitattributes").write_text("*.txt filter=planted\n")
    with repo.config_writer() as cw:
        cw.set_value('filter "planted"', "clean", f"sh -c 'touch {marker}; cat'")
    with log.open("a") as fh:
        fh.write("job finished\n")  # the log changed since HEAD, so git compares it through the filter
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--changed-since", "HEAD", repo_dir / "logs")
    assert code in (0, 1), err
    assert not marker.exists()


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="needs Linux /proc")
def test_links_to_kernel_pseudo_files_are_findings_not_a_hang(tmp_path: Path) -> None:
    """/proc/self/pagemap says 'regular file, size 0' and reads for hundreds of GiB (issue 26)."""
    import subprocess
    import sys

    org = tmp_path / "Org"
    results = org / "results" / "s" / "bert"
    write_run(results / "result_0.txt", RunSpec())
    (org / "systems").mkdir()
    for link in (results / "result_1.txt", org / "systems" / "s.json", org / ".mlsubmit-round"):
        link.symlink_to("/proc/self/pagemap")
    # a generous guard against a hang, not a timing assertion: the check takes a few seconds at most
    done = subprocess.run([sys.executable, "-m", "mlsubmit", "check", "--ruleset", "1.0.0", "--format", "json",
                           str(org)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    codes = {(Path(str(f["path"])).name, f["code"]) for f in _findings(done.stdout)}
    assert {("result_1.txt", "LOG001"), ("s.json", "SYS001")} <= codes
    loose = subprocess.run([sys.executable, "-m", "mlsubmit", "check", "--ruleset", "1.0.0",
                            str(results / "result_1.txt")], capture_output=True, text=True, timeout=60, check=False)
    assert loose.returncode == 1 and "LOG001" in loose.stdout and "pseudo-file" in loose.stdout


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="needs Linux /proc")
def test_verify_of_a_link_to_a_kernel_pseudo_file_is_exit_2(tmp_path: Path, run_cli: RunCLI) -> None:
    archive = tmp_path / "mlperf_submission_Org.tar.gz"
    archive.symlink_to("/proc/self/pagemap")
    code, _, err = run_cli("verify", archive)
    assert code == 2 and "pseudo-file" in err


@pytest.mark.parametrize("members", [{}, {"hello.txt": b"hello\n"}, {"notes/readme.md": b"# x\n"}])
def test_verify_fails_an_archive_without_a_submission(tmp_path: Path, run_cli: RunCLI,
                                                      members: dict[str, bytes]) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            tar.addfile(_member(name, data=data), io.BytesIO(data))
    archive = tmp_path / "mlperf_submission_Org.tar.gz"
    archive.write_bytes(buf.getvalue())
    archive.with_name(archive.name + ".sha256").write_text(f"{hashlib.sha256(buf.getvalue()).hexdigest()}  "
                                                           f"{archive.name}\n")
    code, out, err = run_cli("verify", "--ruleset", "1.0.0", archive)
    assert code == 1, err
    assert "PKG049" in out and "OK" not in err


def test_package_of_an_implementation_holding_a_git_submodule_is_a_finding(tmp_path: Path, run_cli: RunCLI) -> None:
    """A submodule is a commit id in the tree, not files: it was an AttributeError (exit 3) in support/git.py."""
    import git

    config = _config_example(tmp_path)
    repo = config.parent / "ipu-benchmarks"
    g = git.Repo(repo)
    head = g.head.commit.hexsha
    # a gitlink entry (mode 160000) pointing at a commit, as `git submodule add` records it
    g.git.update_index("--add", "--cacheinfo", f"160000,{head},bert/popart/third_party")
    g.git.commit("-m", "a submodule", "--no-verify")
    g.git.tag("-f", "v1.0")
    code, out, err = run_cli("package", config, "--format", "json")
    assert code in (0, 1), err
    assert "internal error" not in err
    submodules = [str(f["path"]) for f in _findings(out) if f["code"] == "PKG033"]
    # named in the user's repository, where the submodule is (issue 27: findings at the user's inputs)
    assert len(submodules) == 1 and submodules[0].endswith("/bert/popart/third_party"), submodules


@pytest.mark.parametrize("kind", ["fifo", "proc"])
def test_a_passphrase_file_that_would_block_is_exit_2(tmp_path: Path, kind: str) -> None:
    import subprocess
    import sys

    archive = tmp_path / "mlperf_submission_Org.tar.gz"
    archive.write_bytes(b"Salted__" + b"\0" * 40)
    passfile = tmp_path / "pass"
    if kind == "fifo":
        os.mkfifo(passfile)
    else:
        passfile.symlink_to("/proc/self/status")
    # a generous guard against a hang, not a timing assertion
    done = subprocess.run([sys.executable, "-m", "mlsubmit", "verify", str(archive), "--passphrase-file",
                           str(passfile)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "passphrase" in done.stderr
