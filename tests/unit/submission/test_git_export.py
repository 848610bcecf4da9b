"""Implementation export: from the named revision only, junk and secrets left out, links that escape refused."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures.repo import commit_example
from mlsubmit.submission.export import export
from mlsubmit.submission.package_config import Implementation

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support import git as _git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid", "GIT_AUTHOR_DATE": "2021-05-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_DATE": "2021-05-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
}  # fmt: skip
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x2k3j4h5g6f7d8s9a0qwertyuiopasdfghjklzxcvbnm12345\n"
    "-----END RSA PRIVATE KEY-----\n"
)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def make_repo(root: Path, files: dict[str, str], links: dict[str, str] | None = None, tag: str = "v1") -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if name.endswith(".sh"):
            p.chmod(0o755)
    for name, target in (links or {}).items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, p)
    git(root, "add", "-A", "-f")
    git(root, "commit", "-q", "-m", "code")
    git(root, "tag", tag)
    return root


def impl(repo: Path, rev: str = "v1", path: str = "bert") -> Implementation:
    return Implementation(repo=repo, repo_text=repo.name, rev=rev, path=path, name="popart")


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_exports_the_tagged_revision_not_the_working_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {"bert/README.md": "v1\n", "bert/run_and_time.sh": "#!/bin/sh\n",
                                         "other/x.py": "x\n"})
    tagged = git(repo, "rev-parse", "v1")
    (repo / "bert" / "README.md").write_text("edited after the tag\n")
    (repo / "bert" / "untracked.py").write_text("not committed\n")
    out = export(impl(repo), "bert", tmp_path / "dest", "dest")
    assert files_under(tmp_path / "dest") == {"README.md": b"v1\n", "run_and_time.sh": b"#!/bin/sh\n"}
    assert out.revision.commit == tagged and out.files == 2
    assert os.access(tmp_path / "dest" / "run_and_time.sh", os.X_OK)
    assert not os.access(tmp_path / "dest" / "README.md", os.X_OK)
    assert [f.code for f in out.findings] == ["PKG034"]  # the dirty working tree is a warning


def test_a_later_commit_is_not_exported_and_a_clean_tree_is_silent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {"bert/a.py": "old\n"})
    (repo / "bert" / "a.py").write_text("new\n")
    git(repo, "commit", "-q", "-am", "later")
    out = export(impl(repo), "bert", tmp_path / "dest", "dest")
    assert files_under(tmp_path / "dest") == {"a.py": b"old\n"} and out.findings == []
    out = export(impl(repo, rev="main"), "bert", tmp_path / "dest2", "dest2")
    assert files_under(tmp_path / "dest2") == {"a.py": b"new\n"}


def test_unknown_revision_missing_folder_and_non_repo_are_fatal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {"bert/a.py": "x\n"})
    with pytest.raises(FatalError, match="unknown revision 'v9'"):
        export(impl(repo, rev="v9"), "bert", tmp_path / "d1", "d1")
    with pytest.raises(FatalError, match="no folder 'resnet'"):
        export(impl(repo, path="resnet"), "bert", tmp_path / "d2", "d2")
    (tmp_path / "plain").mkdir()
    with pytest.raises(FatalError, match="not a git repository"):
        export(impl(tmp_path / "plain"), "bert", tmp_path / "d3", "d3")
    with pytest.raises(FatalError, match="not found"):
        export(impl(tmp_path / "absent"), "bert", tmp_path / "d4", "d4")


def test_junk_and_secrets_are_left_out_with_a_finding_each(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {
        "bert/train.py": "print(1)\n",
        "bert/.train.py.swp": "b0VIM 8.2 user host /home/user/bert/train.py\n",
        "bert/__pycache__/train.cpython-311.pyc": "compiled\n",
        "bert/.DS_Store": "mac\n",
        "bert/train.py~": "backup\n",
        "bert/keys/deploy_key": PRIVATE_KEY,
    })  # fmt: skip
    out = export(impl(repo), "bert", tmp_path / "dest", "shown/popart")
    assert files_under(tmp_path / "dest") == {"train.py": b"print(1)\n"}
    got = sorted((f.code, f.path) for f in out.findings)
    assert got == [
        ("PKG030", "shown/popart/.DS_Store"),
        ("PKG030", "shown/popart/.train.py.swp"),
        ("PKG030", "shown/popart/__pycache__"),
        ("PKG030", "shown/popart/train.py~"),
        ("PKG031", "shown/popart/keys/deploy_key"),
    ]
    assert out.files == 1
    assert sorted(out.left_out) == sorted((p.removeprefix("shown/popart/"), c) for c, p in got)


def test_links_inside_are_copied_links_out_are_refused(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "code",
        {"bert/real.py": "real\n", "common/util.py": "util\n"},
        links={
            "bert/alias.py": "real.py",
            "bert/chain.py": "alias.py",
            "bert/util.py": "../common/util.py",
            "bert/passwd": "/etc/passwd",
            "bert/escape": "../../../outside.txt",
            "bert/dangling": "nothing.py",
            "bert/loop": "loop",
        },
    )
    out = export(impl(repo), "bert", tmp_path / "dest", "d")
    exported = files_under(tmp_path / "dest")
    assert exported == {"alias.py": b"real\n", "chain.py": b"real\n", "real.py": b"real\n"}
    assert not any(p.is_symlink() for p in (tmp_path / "dest").rglob("*"))
    refused = {f.path: f.message for f in out.findings}
    assert all(f.code == "PKG032" for f in out.findings)
    assert set(refused) == {"d/util.py", "d/passwd", "d/escape", "d/dangling", "d/loop"}
    assert "absolute path" in refused["d/passwd"]
    assert "outside the repository" in refused["d/escape"]
    assert "outside the exported folder" in refused["d/util.py"]


def test_tree_names_are_checked_before_they_become_paths() -> None:
    from mlsubmit.submission.export import safe_parts

    assert safe_parts(("a", "b.py")) and safe_parts((".gitignore",))
    for bad in (("..", "x"), ("a", ".git", "config"), ("a\\..\\b",), ("",), ("a\nb",), ()):
        assert not safe_parts(bad)


def test_commit_example_is_reproducible(tmp_path: Path) -> None:
    one = commit_example(tmp_path / "a", {"x.txt": b"1\n"}, "m", tag="t")
    two = commit_example(tmp_path / "b", {"x.txt": b"1\n"}, "m", tag="t")
    assert one == two and _git.resolve(tmp_path / "a", "t").commit == one


def test_a_damaged_repository_is_fatal_not_a_crash(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {"bert/a.py": "print(1)\n"})
    blob = git(repo, "rev-parse", "v1:bert/a.py")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(FatalError, match=r"cannot be read|could not read"):
        export(impl(repo), "bert", tmp_path / "dest", "dest")


def test_no_program_named_in_the_repositorys_config_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {"bert/a.py": "print(1)\n", ".gitattributes": "* filter=evil\n"})
    marker = tmp_path / "RAN"
    git(repo, "config", "core.fsmonitor", f"touch {marker}.fsmonitor; false")
    git(repo, "config", "filter.evil.clean", f"touch {marker}.clean; cat")
    git(repo, "config", "core.hooksPath", str(tmp_path / "hooks"))
    (repo / "bert" / "a.py").write_text("print(2)\n")  # a modified file: git status would consult both
    out = export(impl(repo), "bert", tmp_path / "dest", "dest")
    assert [f.code for f in out.findings] == ["PKG034"] and "a.py" in out.findings[0].message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code", "dest"]


def test_ignored_files_are_not_uncommitted_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "code", {"bert/a.py": "x\n", ".gitignore": "*.log\ncheckpoints/\n"})
    (repo / "bert" / "train.log").write_text("noise\n")
    (repo / "bert" / "checkpoints").mkdir()
    (repo / "bert" / "checkpoints" / "step1.ckpt").write_text("weights\n")
    assert export(impl(repo), "bert", tmp_path / "d1", "d1").findings == []
    (repo / "bert" / "helper.py").write_text("forgotten\n")
    (repo / "bert" / "a.py").unlink()
    out = export(impl(repo), "bert", tmp_path / "d2", "d2")
    assert [f.code for f in out.findings] == ["PKG034"]
    assert "1 file(s) differ (a.py)" in out.findings[0].message
    assert "1 file(s) are not committed (helper.py)" in out.findings[0].message
