"""Releases a team can pin (CHANGELOG.md, tools/release.py): the pins in the docs and examples, the version in
pyproject.toml and the changelog's newest release are one release, so a pin cannot lag silently; and the tool that
makes a release keeps them so."""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from fixtures.project_tools import load_tool

ROOT = Path(__file__).resolve().parents[3]
ANY_PIN = re.compile(r"(?:\brev: |\bMLSUBMIT_REV: [\"']?)([0-9a-f]{7,40})\b")


@functools.cache
def _tool() -> ModuleType:
    return load_tool("release", "release_tool")


def _version(pyproject_text: str) -> str:
    found = re.search(r'^\[project\]\n(?:.*\n)*?version = "([^"]+)"', pyproject_text, re.MULTILINE)
    assert found, "pyproject.toml's [project] has no version"
    return found.group(1)


def _top_release(changelog: str) -> str:
    found = re.search(r"^## (\d+\.\d+\.\d+)", changelog, re.MULTILINE)
    assert found, "CHANGELOG.md has no released entry"
    return found.group(1)


def _copyable_files() -> list[Path]:
    """Every file a user copies from: the README, the docs, the examples and the hooks' file."""
    return [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "docs").glob("*.md")),
            *sorted(p for p in (ROOT / "examples").rglob("*") if p.is_file())]  # fmt: skip


def _all_pins() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in _copyable_files():
        for commit in ANY_PIN.findall(path.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(path.relative_to(ROOT).as_posix(), set()).add(commit)
    return found


def test_the_package_says_the_same_version_as_pyproject() -> None:
    # mlsubmit/__init__.py keeps the version as a literal (start-up without importlib.metadata)
    import mlsubmit

    assert mlsubmit.__version__ == _version((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_the_changelogs_newest_release() -> None:
    """Needs no git: a source archive holds these two together as well."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert _top_release(changelog) == _version((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert changelog.index("## Unreleased") < changelog.index(f"## {_top_release(changelog)}")
    assert "0.MINOR" in changelog and "### Verdicts" in changelog  # the rule it numbers by, verdicts first


def test_every_pin_names_one_full_commit_in_the_files_the_tool_rewrites() -> None:
    pins = _all_pins()
    assert set(pins) == set(_tool().PIN_FILES), "a file pins a commit that tools/release.py pin would not move"
    commits = set().union(*pins.values())
    assert len(commits) == 1, pins
    assert re.fullmatch(r"[0-9a-f]{40}", commits.pop())  # a full id: a short one may become ambiguous


def test_the_pinned_commit_is_the_current_release() -> None:
    """In the pinned commit, pyproject.toml's version is the changelog's newest release and today's version: a
    release made without moving the pins (tools/release.py pin) fails here."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (a source archive or an installed copy): the pinned commit cannot be read; "
                    "the version and the changelog are still held together above")
    (pin,) = set().union(*_all_pins().values())
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{pin}:pyproject.toml"], capture_output=True, text=True)
    if shown.returncode != 0 and _shallow():
        pytest.skip(f"a shallow clone without the pinned commit {pin[:9]}: fetch its history to check the pin")
    assert shown.returncode == 0, shown.stderr
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    current = _version((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert (_version(shown.stdout), _top_release(changelog)) == (current, current), (
        f"the pins name {pin[:9]}, version {_version(shown.stdout)}; the changelog's newest release is "
        f"{_top_release(changelog)}, pyproject.toml says {current}: run tools/release.py pin on the release commit")
    ancestor = subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", pin, "HEAD"])
    assert ancestor.returncode == 0, f"the pinned commit {pin[:9]} is not in this branch's history"


def _shallow() -> bool:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                          text=True)  # fmt: skip
    return done.stdout.strip() == "true"


def test_version_prints_the_installed_release_and_mlperf_logging(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("--version")
    assert code == 0
    import mlsubmit  # its literal version, held to pyproject.toml above (the wheel's metadata: tests/install)

    wanted = (f"mlsubmit {mlsubmit.__version__} "
              f"(mlperf-logging {importlib.metadata.version('mlperf-logging')})\n")  # fmt: skip
    assert out == wanted


# --- tools/release.py on a made repository ---------------------------------------------------------------------------

CHANGELOG = """# Changelog

## Unreleased

### Verdicts

{verdicts}
### Interfaces

### Fixes

- a message reworded

## 0.1.0 (2026-11-27)

- the first
"""


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()  # fmt: skip


def _made_repo(tmp_path: Path, verdicts: str) -> tuple[Path, str]:
    """A repository at release 0.1.0 whose pin files pin that release's commit."""
    tool = _tool()
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "pyproject.toml").write_text('[project]\nname = "mlsubmit"\nversion = "0.1.0"\n', encoding="utf-8")
    (repo / "mlsubmit").mkdir()
    (repo / "mlsubmit" / "__init__.py").write_text('"""x"""\n\n__version__ = "0.1.0"\n', encoding="utf-8")
    (repo / "CHANGELOG.md").write_text(CHANGELOG.format(verdicts=verdicts), encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release 0.1.0")
    first = _git(repo, "rev-parse", "HEAD")
    for name in tool.PIN_FILES:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(f'  MLSUBMIT_REV: "{first}"   # pinned\n    rev: {first}\n', encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pins")
    return repo, first


def test_a_release_with_verdicts_is_a_minor_step_and_its_pins_move(tmp_path: Path) -> None:
    tool = _tool()
    repo, first = _made_repo(tmp_path, "- TREE999 (new, error): something\n")
    assert tool.problems(repo) == []
    with pytest.raises(tool.ReleaseError, match="patch step"):
        tool.prepare(repo, "0.1.1", datetime.date(2026, 11, 28))  # a new error is not a patch
    assert tool.prepare(repo, None, datetime.date(2026, 11, 28)) == "0.2.0"
    assert '__version__ = "0.2.0"' in (repo / "mlsubmit" / "__init__.py").read_text(encoding="utf-8")
    text = (repo / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.index("## Unreleased") < text.index("## 0.2.0 (2026-11-28)") < text.index("TREE999")
    assert "- a message reworded" not in text.split("## 0.2.0")[0]  # the fresh Unreleased section is empty
    # released but not yet pinned: the pins lag, and the check says so
    _git(repo, "commit", "-q", "-am", "release 0.2.0")
    assert [p for p in tool.problems(repo) if "is version 0.1.0" in p]
    release = _git(repo, "rev-parse", "HEAD")
    assert tool.pin(repo, "HEAD") == release
    assert {p.commit for p in tool.pins(repo)} == {release} and first != release
    assert tool.problems(repo) == []


def test_fixes_alone_are_a_patch_step_and_a_pin_must_name_the_release(tmp_path: Path) -> None:
    tool = _tool()
    repo, first = _made_repo(tmp_path, "")
    assert tool.prepare(repo, None, datetime.date(2026, 11, 28)) == "0.1.1"
    with pytest.raises(tool.ReleaseError, match="pin the release commit"):
        tool.pin(repo, first)  # the old release's commit is 0.1.0, the changelog's newest now 0.1.1
    with pytest.raises(tool.ReleaseError, match="lists nothing"):
        tool.prepare(repo, None, datetime.date(2026, 11, 28))  # Unreleased is empty now
