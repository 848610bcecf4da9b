"""`mlsubmit package` and `mlsubmit verify` end to end, through main(argv)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, tree_digest
from fixtures.demo import Example, repository_systems, write_example

from mlsubmit.core.support.schema_loader import errors as schema_errors
from mlsubmit.core.support.schema_loader import load_schema

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
Cli = Callable[..., tuple[int, str, str]]
OUT = "build/submission"


@pytest.fixture
def example(tmp_path: Path) -> Example:
    return write_example(tmp_path / "work", repository_systems())


def inputs_digest(ex: Example) -> dict[str, str]:
    return {k: v for k, v in tree_digest(ex.root).items() if not k.startswith("build")}


def test_package_builds_the_tree_and_leaves_inputs_alone(example: Example, run_cli: Cli) -> None:
    before = inputs_digest(example)
    code, out, err = run_cli("package", example.config, "--color", "never")
    assert code == 0, out + err
    assert "packaged 15 result file(s)" in err
    assert inputs_digest(example) == before
    org = example.root / OUT / "Graphcore"
    bert = org / "results" / "ipu-pod16-POPART-closed" / "bert"
    assert sorted(p.name for p in bert.iterdir()) == [f"result_{i}.txt" for i in range(10)]
    assert len(list((org / "results" / "ipu-pod64-TF-closed" / "resnet").iterdir())) == 5
    for result in bert.iterdir():  # records only, none of the job's other output, no launcher prefixes
        assert all(line.startswith(b":::MLLOG {") for line in result.read_bytes().splitlines())
    assert sorted(p.name for p in (org / "systems").iterdir()) == ["ipu-pod16-POPART-closed.json",
                                                                   "ipu-pod64-TF-closed.json"]
    impl = org / "benchmarks" / "bert" / "implementations" / "popart"
    assert (impl / "run_and_time.sh").is_file() and os.access(impl / "run_and_time.sh", os.X_OK)
    assert not list(example.root.glob("build/.submission.*"))  # the temporary folder is gone


def test_manifest_records_sources_hashes_and_revisions(example: Example, run_cli: Cli) -> None:
    assert run_cli("package", example.config)[0] == 0
    out = example.root / OUT
    manifest = json.loads((out / "manifest.json").read_text())
    assert schema_errors(manifest, load_schema("manifest.schema.json")) == []
    on_disk = {p.relative_to(out).as_posix() for p in (out / "Graphcore").rglob("*") if p.is_file()}
    assert {f["path"] for f in manifest["files"]} == on_disk
    for f in manifest["files"]:
        data = (out / f["path"]).read_bytes()
        assert (f["sha256"], f["size"]) == (hashlib.sha256(data).hexdigest(), len(data))
    bert = [r for r in manifest["results"] if r["benchmark"] == "bert"]
    # result_<i> follows run-start order, and each names the raw file it came from with that file's hash
    assert [r["run_start_ms"] for r in bert] == sorted(r["run_start_ms"] for r in bert)
    gz = next(r for r in bert if r["source"].endswith(".gz"))
    assert gz["source"] == "runs/pod16-bert/job_03.out.gz" and gz["index"] == 3
    assert gz["source_sha256"] == hashlib.sha256((example.root / gz["source"]).read_bytes()).hexdigest()
    commit = subprocess.run(["git", "rev-parse", "v1.0"], cwd=example.repo, capture_output=True, text=True).stdout
    impls = {i["name"]: i for i in manifest["implementations"]}
    assert impls["popart"]["commit"] == commit.strip() and impls["popart"]["revision"] == "v1.0"
    assert impls["popart"]["repo"] == "ipu-benchmarks" and impls["popart"]["subdir"] == "bert/popart"
    assert manifest["ruleset"] == "1.1.0" and manifest["tool"]["name"] == "mlsubmit"
    assert str(example.root) not in (out / "manifest.json").read_text()  # no absolute paths leak


def test_archive_is_byte_identical_across_builds(example: Example, run_cli: Cli, tmp_path: Path) -> None:
    assert run_cli("package", example.config, "--archive")[0] == 0
    out = example.root / OUT
    names = ("mlperf_submission_Graphcore.tar.gz", "mlperf_submission_Graphcore.tar.gz.sha256",
             "mlperf_submission_Graphcore.sha1", "manifest.json")
    first = {n: (out / n).read_bytes() for n in names}
    # A second build, from a copy of the inputs in another place, replaces the first and gives the same bytes.
    copy = tmp_path / "elsewhere"
    shutil.copytree(example.root, copy, symlinks=True)
    shutil.rmtree(copy / "build")
    assert run_cli("package", copy / "package.toml", "--archive")[0] == 0
    assert run_cli("package", example.config, "--archive")[0] == 0
    for name, data in first.items():
        assert (copy / OUT / name).read_bytes() == data
        assert (out / name).read_bytes() == data
    # pack_submission.sh's names: the archive and sha1sum's line for it (`sha1sum -c` works beside it)
    assert (out / "mlperf_submission_Graphcore.sha1").read_text().endswith("  mlperf_submission_Graphcore.tar.gz\n")
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == sorted([*names, ".mlsubmit-round"])  # the round


def test_errors_keep_the_tree_from_being_finalised(tmp_path: Path, run_cli: Cli) -> None:
    # two runs that did not converge: more than olympic scoring drops, so the folder fails (TREE007); one alone
    # would be a warning of its run, accepted at its folder (TREE008)
    ex = write_example(tmp_path / "w", repository_systems(), non_converged=(6, 7))
    code, out, err = run_cli("package", ex.config, "--archive", "--color", "never")
    assert code == 1 and "TREE007" in out and "PKG006" in out and "was NOT written" in err
    assert not (ex.root / OUT).exists()
    assert list((ex.root / "build").iterdir()) == []
    code, out, err = run_cli("package", ex.config, "--archive", "--allow-findings")
    assert code == 1 and (ex.root / OUT / "mlperf_submission_Graphcore.tar.gz").is_file() and "packaged 15" in err


def test_a_folder_that_is_not_a_previous_build_is_never_replaced(example: Example, run_cli: Cli) -> None:
    precious = example.root / OUT / "notes.txt"
    precious.parent.mkdir(parents=True)
    precious.write_text("mine\n")
    code, _out, err = run_cli("package", example.config)
    assert code == 2 and "is not a previous mlsubmit build" in err
    assert precious.read_text() == "mine\n"


def test_unknown_revision_is_a_usage_error(example: Example, run_cli: Cli) -> None:
    text = example.config.read_text().replace('rev = "v1.0", path = "bert/popart"', 'rev = "v7", path = "bert/popart"')
    example.config.write_text(text)
    code, _out, err = run_cli("package", example.config)
    assert code == 2 and "unknown revision 'v7'" in err
    assert not (example.root / OUT).exists()


def test_passphrase_is_never_taken_from_the_command_line(example: Example, run_cli: Cli) -> None:
    code, _out, err = run_cli("package", example.config, "--archive", "--encrypt", "--passphrase", "hunter2")
    assert code == 2 and "unrecognized arguments" in err
    code, _out, err = run_cli("package", example.config, "--archive", "--encrypt")
    assert code == 2 and "--passphrase-file" in err
    code, _out, err = run_cli("package", example.config, "--encrypt", "--passphrase-file", "x")
    assert code == 2 and "--encrypt needs --archive" in err


def test_encrypted_archive_round_trips_through_openssl_and_verify(example: Example, run_cli: Cli) -> None:
    passfile = example.root / "pass.txt"
    passfile.write_text("correct horse battery staple\n")
    passfile.chmod(0o600)
    code, _out, err = run_cli("package", example.config, "--archive", "--encrypt", "--passphrase-file", passfile)
    assert code == 0, err
    out = example.root / OUT
    # As pack_submission.sh names them: the encrypted archive under the official name, sha1sum's line for it
    enc = out / "mlperf_submission_Graphcore.tar.gz"
    assert enc.read_bytes().startswith(b"Salted__")
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == [
        ".mlsubmit-round", "manifest.json", "mlperf_submission_Graphcore.sha1", "mlperf_submission_Graphcore.tar.gz",
        "mlperf_submission_Graphcore.tar.gz.plain.sha1", "mlperf_submission_Graphcore.tar.gz.plain.sha256",
        "mlperf_submission_Graphcore.tar.gz.sha256"]
    sha1 = hashlib.sha1(enc.read_bytes()).hexdigest()
    assert (out / "mlperf_submission_Graphcore.sha1").read_text() == f"{sha1}  mlperf_submission_Graphcore.tar.gz\n"
    if shutil.which("openssl") and shutil.which("sha1sum"):  # pack_submission.sh --unpack, step by step
        said = subprocess.run(["sha1sum", enc.name], cwd=out, capture_output=True, text=True, check=True).stdout
        assert said.rstrip("\n") == (out / "mlperf_submission_Graphcore.sha1").read_text().rstrip("\n")
        plain = subprocess.run(["openssl", "enc", "-d", "-aes256", "-pass", f"file:{passfile}", "-in", str(enc)],
                               capture_output=True, check=True).stdout
        want = (out / "mlperf_submission_Graphcore.tar.gz.plain.sha256").read_text().split()[0]
        assert hashlib.sha256(plain).hexdigest() == want
    code, _out, err = run_cli("verify", enc, "--passphrase-file", passfile, "--color", "never")
    assert code == 0, err
    assert "OK (" in err and "mlperf_submission_Graphcore.sha1" in err
    assert "mlperf_submission_Graphcore.tar.gz.plain.sha256" in err
    wrong = example.root / "wrong.txt"
    wrong.write_text("not the passphrase\n")
    wrong.chmod(0o600)
    code, out_text, _err = run_cli("verify", enc, "--passphrase-file", wrong, "--color", "never")
    assert code == 1 and "PKG043" in out_text
    code, _out, err = run_cli("verify", enc)
    assert code == 2 and "--passphrase-file" in err


def test_pbkdf2_archive_prints_its_openssl_line_and_a_readable_passphrase_file_warns(
        example: Example, run_cli: Cli) -> None:
    passfile = example.root / "pass.txt"
    passfile.write_text("correct horse battery staple\n")
    passfile.chmod(0o644)
    code, out_text, err = run_cli("package", example.config, "--archive", "--encrypt", "--passphrase-file", passfile,
                                  "--key-derivation", "pbkdf2", "--color", "never")
    assert code == 0, err
    assert "PKG048" in out_text and "--generate-passphrase" in out_text
    line = next(x for x in err.splitlines() if "to open it:" in x).split("to open it: ", 1)[1]
    assert " -pbkdf2 -iter 600000 -md sha256 " in line
    if shutil.which("openssl"):
        subprocess.run(line.split(), cwd=example.root, capture_output=True, check=True)
        assert (example.root / "plain.tar.gz").read_bytes()[:2] == b"\x1f\x8b"
    enc = example.root / OUT / "mlperf_submission_Graphcore.tar.gz"
    code, _out, err = run_cli("verify", enc, "--passphrase-file", passfile, "--color", "never")
    assert code == 0, err


def test_generate_passphrase_writes_a_private_file_and_never_replaces_one(example: Example, run_cli: Cli) -> None:
    passfile = example.root / "new-pass.txt"
    code, out_text, err = run_cli("package", example.config, "--archive", "--encrypt", "--passphrase-file", passfile,
                                  "--generate-passphrase", "--color", "never")
    assert code == 0, err
    assert passfile.stat().st_mode & 0o777 == 0o600 and len(passfile.read_text().strip()) >= 40
    assert "PKG048" not in out_text and "-pbkdf2" not in err
    before = passfile.read_bytes()
    code, _out, err = run_cli("package", example.config, "--archive", "--encrypt", "--passphrase-file", passfile,
                              "--generate-passphrase")
    assert code == 2 and "already exists" in err and passfile.read_bytes() == before


def _rewrite_archive(src: Path, dest: Path, change: Callable[[tarfile.TarInfo, bytes], bytes]) -> None:
    with tarfile.open(src) as tin, tarfile.open(dest, "w:gz") as tout:
        for m in tin.getmembers():
            data = tin.extractfile(m).read() if m.isfile() else None  # type: ignore[union-attr]
            if data is not None:
                data = change(m, data)
                m.size = len(data)
            tout.addfile(m, io.BytesIO(data) if data is not None else None)


def test_verify_fails_on_tampering_where_the_reference_exits_0(example: Example, run_cli: Cli,
                                                               tmp_path: Path) -> None:
    assert run_cli("package", example.config, "--archive")[0] == 0
    built = example.root / OUT / "mlperf_submission_Graphcore.tar.gz"
    assert run_cli("verify", built)[0] == 0

    # 1. a flipped byte: the checksum no longer matches
    bad = tmp_path / "flip" / "Graphcore.tar.gz"
    bad.parent.mkdir()
    data = bytearray(built.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    shutil.copy(built.with_name(f"{built.name}.sha256"), bad.parent / "Graphcore.tar.gz.sha256")
    code, out, _err = run_cli("verify", bad, "--color", "never")
    assert code == 1 and "PKG040" in out

    # 2. a result edited and the checksum files redone to match: the manifest catches it
    edited = tmp_path / "edit" / "Graphcore.tar.gz"
    edited.parent.mkdir()
    _rewrite_archive(built, edited, lambda m, d: d.replace(b"0.724", b"0.999") if m.name.endswith("result_0.txt")
                     else d)
    from mlsubmit.submission.archive import write_checksums

    write_checksums(edited)
    code, out, _err = run_cli("verify", edited, "--color", "never")
    assert code == 1 and "PKG045" in out and "result_0.txt" in out

    # 3. no checksum files at all: a warning, not silence
    lone = tmp_path / "lone" / "Graphcore.tar.gz"
    lone.parent.mkdir()
    shutil.copy(built, lone)
    code, out, _err = run_cli("verify", lone, "--color", "never")
    assert code == 0 and "PKG041" in out
    code, out, _err = run_cli("verify", lone, "--strict", "--color", "never")
    assert code == 1


def test_verify_refuses_a_climbing_member(example: Example, run_cli: Cli, tmp_path: Path) -> None:
    assert run_cli("package", example.config, "--archive")[0] == 0
    built = example.root / OUT / "mlperf_submission_Graphcore.tar.gz"
    evil = tmp_path / "evil" / "Graphcore.tar.gz"
    evil.parent.mkdir()
    shutil.copy(built, tmp_path / "base.tar.gz")
    with tarfile.open(tmp_path / "base.tar.gz") as tin, tarfile.open(evil, "w:gz") as tout:
        for m in tin.getmembers():
            tout.addfile(m, tin.extractfile(m) if m.isfile() else None)
        climb = tarfile.TarInfo("Graphcore/../../../climbed.txt")
        climb.size = 4
        tout.addfile(climb, io.BytesIO(b"evil"))
        link = tarfile.TarInfo("Graphcore/systems/link.json")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tout.addfile(link)
    code, out, _err = run_cli("verify", evil, "--color", "never")
    assert code == 1
    assert out.count("PKG042") == 2 and "climbs out" in out and "symbolic link" in out
    assert not (tmp_path / "climbed.txt").exists() and not Path("/climbed.txt").exists()


KILLER = """
import os, signal, sys
from mlsubmit.submission import archive
real = archive.write_tar_gz
def killed(root, tops, dest):
    real(root, tops, dest)
    dest.write_bytes(dest.read_bytes()[:100])  # half an archive on disk, then the process dies
    os.kill(os.getpid(), signal.SIGKILL)
archive.write_tar_gz = killed
from mlsubmit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_kill_during_packaging_leaves_no_half_tree(example: Example, run_cli: Cli) -> None:
    def killed_run() -> int:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", KILLER, "package", str(example.config), "--archive"],
                              env=env, capture_output=True, cwd=example.root)
        return done.returncode

    assert killed_run() == -signal.SIGKILL
    assert not (example.root / OUT).exists()  # nothing where the tree goes; only the private build folder remains
    assert [p.name.startswith(".submission.build-") for p in (example.root / "build").iterdir()] == [True]

    assert run_cli("package", example.config)[0] == 0  # a finished build; the killed run's leftovers are removed
    assert sorted(p.name for p in (example.root / "build").iterdir()) == ["submission"]
    assert not (example.root / OUT / ".mlsubmit-build-pid").exists()
    before = tree_digest(example.root / OUT)
    assert killed_run() == -signal.SIGKILL
    assert tree_digest(example.root / OUT) == before  # the previous tree is untouched


def test_verify_without_a_usable_manifest(example: Example, run_cli: Cli, tmp_path: Path) -> None:
    assert run_cli("package", example.config, "--archive")[0] == 0
    built = example.root / OUT / "mlperf_submission_Graphcore.tar.gz"

    def without_manifest(name: str, manifest: bytes | None) -> Path:
        dest = tmp_path / name / "Graphcore.tar.gz"
        dest.parent.mkdir()
        with tarfile.open(built) as tin, tarfile.open(dest, "w:gz") as tout:
            for m in tin.getmembers():
                if m.name == "manifest.json":
                    if manifest is None:
                        continue
                    m.size = len(manifest)
                    tout.addfile(m, io.BytesIO(manifest))
                else:
                    tout.addfile(m, tin.extractfile(m) if m.isfile() else None)
        return dest

    bare = without_manifest("bare", None)
    code, _out, err = run_cli("verify", bare)
    assert code == 2 and "give --ruleset" in err
    code, out, _err = run_cli("verify", bare, "--ruleset", "1.1.0", "--color", "never")
    assert code == 0 and "PKG047" in out and ", 0 failed; 0 error(s)" in out  # over 10 files: no per-file lines
    manifest = json.loads((example.root / OUT / "manifest.json").read_text())
    manifest["ruleset"] = "9.9.9"
    odd = without_manifest("odd", json.dumps(manifest).encode())
    code, out, _err = run_cli("verify", odd, "--color", "never")
    assert code == 1 and "PKG046" in out and "9.9.9" in out


def test_strict_warnings_also_keep_the_tree_back(example: Example, run_cli: Cli) -> None:
    (example.repo / "bert" / "popart" / "notes.txt").write_text("uncommitted\n")  # a dirty tree: PKG034 warning
    code, out, err = run_cli("package", example.config, "--strict", "--color", "never")
    assert code == 1 and "PKG034" in out and "--strict" in err and not (example.root / OUT).exists()
    code, out, _err = run_cli("package", example.config, "--color", "never")
    assert code == 0 and "PKG034" in out and (example.root / OUT / "manifest.json").is_file()
    assert not (example.root / OUT / "Graphcore/benchmarks/bert/implementations/popart/notes.txt").exists()


def test_a_misspelt_system_name_gets_a_did_you_mean(example: Example, run_cli: Cli) -> None:
    text = example.config.read_text()
    assert 'system = "ipu-pod16-POPART-closed"' in text
    example.config.write_text(text.replace('system = "ipu-pod16-POPART-closed"', 'system = "ipu-pod16-popart-clsoed"'))
    code, out, _err = run_cli("package", example.config, "--color", "never")
    assert code == 1 and "PKG020" in out
    assert 'did you mean "ipu-pod16-POPART-closed"?' in out


def test_full_output_on_request_before_61_with_redaction_recorded_in_the_manifest(
        example: Example, run_cli: Cli) -> None:
    with example.config.open("a", encoding="utf-8") as fh:
        fh.write('\n[result_files]\nfull_output = true\nredact_paths = ["IPU-POD16"]\nredact_env = ["SECRET"]\n')
    code, out, err = run_cli("package", example.config, "--color", "never")
    assert code == 0, out + err
    result = example.root / OUT / "Graphcore" / "results" / "ipu-pod16-POPART-closed" / "bert" / "result_0.txt"
    raw = example.bert_runs[0].read_bytes()
    data = result.read_bytes()
    assert data.startswith(b"poprun: launching bert on <redacted>\n") and b"job finished\n" in data
    assert [x for x in data.splitlines() if b":::MLLOG" in x] == [x for x in raw.splitlines() if b":::MLLOG" in x]
    manifest = json.loads((example.root / OUT / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["results"][0]["output"] == {"kept": "full", "lines": raw.count(b"\n"), "truncated": None,
                                                "redacted": [{"rule": "path:IPU-POD16", "lines": 1}]}
    assert not schema_errors(manifest, load_schema("manifest.schema.json"))
    example.config.write_text(example.config.read_text(encoding="utf-8") + 'redact_pathz = ["x"]\n',
                              encoding="utf-8")
    code, _out, err = run_cli("package", example.config)
    assert code == 2 and "/result_files" in err


def test_a_previous_build_is_replaced_only_as_it_was_written(example: Example, run_cli: Cli) -> None:
    """Issue 26: its own build (manifest and digests) is replaced; with the user's files in it, it is refused."""
    code, _out, err = run_cli("package", example.config, "--allow-findings")
    assert code in (0, 1), err
    out = example.root / OUT
    assert (out / "manifest.json").is_file()
    code, _out, err = run_cli("package", example.config, "--allow-findings")
    assert code in (0, 1), err  # an untouched build of ours is replaced
    notes = out / "notes.txt"
    notes.write_text("mine\n")
    raw = out / "raw" / "result_0.txt"
    raw.parent.mkdir()
    raw.write_text("raw logs\n")
    code, _out, err = run_cli("package", example.config, "--allow-findings")
    assert code == 2 and "which no build wrote" in err and "notes.txt" in err
    assert notes.read_text() == "mine\n" and raw.read_text() == "raw logs\n"
    notes.unlink()
    shutil.rmtree(raw.parent)
    edited = next(p for p in sorted(out.rglob("result_*.txt")))
    edited.write_text(edited.read_text() + "# a note of the user's\n")
    code, _out, err = run_cli("package", example.config, "--allow-findings")
    assert code == 2 and "differ" in err
    assert edited.read_text().endswith("# a note of the user's\n")


TERMINATED = """
import os, signal, sys
from mlsubmit.submission import archive
real = archive.unpack
def terminated(tarball, dest, display):
    os.kill(os.getpid(), signal.SIGTERM)  # the archive is decrypted by now: a plaintext copy sits in the temp folder
    return real(tarball, dest, display)
archive.unpack = terminated
from mlsubmit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_verify_ended_by_sigterm_leaves_no_plaintext(example: Example, run_cli: Cli, tmp_path: Path) -> None:
    passfile = example.root / "pass.txt"
    passfile.write_text("correct horse battery staple\n")
    passfile.chmod(0o600)
    assert run_cli("package", example.config, "--archive", "--encrypt", "--passphrase-file", passfile)[0] == 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    done = subprocess.run([sys.executable, "-c", TERMINATED, "verify", str(example.root / OUT /
                           "mlperf_submission_Graphcore.tar.gz"), "--passphrase-file", str(passfile)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("added", ["link-to-folder", "link-for-a-file", "empty-folder", "link-loop"])
def test_links_and_folders_added_inside_a_previous_build_are_never_deleted(example: Example, run_cli: Cli,
                                                                           added: str) -> None:
    """Issue 35: the manifest compares files; a link or an empty folder the user added inside Graphcore/ was
    deleted with the old build, exit 0."""
    code, _out, err = run_cli("package", example.config, "--allow-findings")
    assert code in (0, 1), err
    org = example.root / OUT / "Graphcore"
    mine = example.root / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine\n")
    planted = org / "results" / "mine"
    if added == "link-to-folder":
        planted.symlink_to(mine, target_is_directory=True)
    elif added == "link-for-a-file":
        planted = next(p for p in sorted(org.rglob("result_*.txt")))
        (mine / "copy.txt").write_bytes(planted.read_bytes())
        planted.unlink()
        planted.symlink_to(mine / "copy.txt")
    elif added == "empty-folder":
        planted.mkdir()
    else:
        planted.symlink_to(planted)
    code, _out, err = run_cli("package", example.config, "--allow-findings")
    assert code == 2 and "which no build wrote" in err, err
    assert planted.is_symlink() or planted.is_dir()
    assert (mine / "keep.txt").read_text() == "mine\n"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-loop"])
def test_verify_fails_when_the_sha256_file_cannot_be_read(example: Example, run_cli: Cli, tmp_path: Path,
                                                          kind: str) -> None:
    """Issue 35: an unreadable .tar.gz.sha256 was passed over, and verify said OK on the .sha1 alone."""
    assert run_cli("package", example.config, "--archive")[0] == 0
    built = example.root / OUT / "mlperf_submission_Graphcore.tar.gz"
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in (built.name, "mlperf_submission_Graphcore.sha1"):
        shutil.copy(built.with_name(name), copy / name)
    sums = copy / f"{built.name}.sha256"
    if kind == "fifo":
        os.mkfifo(sums)
    elif kind == "dev-zero":
        sums.symlink_to("/dev/zero")
    else:
        sums.symlink_to(sums)
    code, out, _err = run_cli("verify", copy / built.name, "--color", "never")
    assert code == 1 and "PKG040" in out and "sha256" in out
