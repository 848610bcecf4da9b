"""Make a release of mlsubmit: the version, the changelog and the pinned commit, kept as one.

    python tools/release.py check             # the version, the changelog's top entry and the pins agree (exit 0/1)
    python tools/release.py prepare [X.Y.Z]   # set the version, move CHANGELOG.md's "Unreleased" under it
    git commit -am "release X.Y.Z"
    python tools/release.py pin [COMMIT]      # every pin in the docs and examples names that commit (HEAD)
    git commit -am "pin the docs and examples to release X.Y.Z"

Without X.Y.Z, `prepare` takes the next version by CHANGELOG.md's rule: a minor step when "Unreleased" lists
verdicts or interfaces, a patch step when it lists only fixes; a patch step given by hand over verdicts is refused.
Reinstall afterwards (`pip install -e .`) so the installed metadata, which `mlsubmit --version` prints, says it too.
Exit codes: 0 done, 1 the check found a disagreement, 2 bad usage or a state the step cannot start from.
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = "CHANGELOG.md"
PYPROJECT = "pyproject.toml"
PACKAGE_INIT = "mlsubmit/__init__.py"
# Every file that pins mlsubmit's commit for a user to copy; each holds at least one pin.
PIN_FILES = (".pre-commit-hooks.yaml", "docs/ci.md", "examples/ci/github-actions.yml", "examples/ci/gitlab-ci.yml")
# A pin as written: pre-commit's `rev: <id>` or the CI examples' `MLSUBMIT_REV: "<id>"`, the id in full.
PIN = re.compile(r"(?P<lead>\brev: |\bMLSUBMIT_REV: \")(?P<commit>[0-9a-f]{40})\b")
VERSION_LINE = re.compile(r'^version = "(?P<version>[^"]+)"$', re.MULTILINE)
PACKAGE_VERSION = re.compile(r'^__version__ = "[^"]+"$', re.MULTILINE)
RELEASED = re.compile(r"^## (?P<version>\d+\.\d+\.\d+)\b", re.MULTILINE)
UNRELEASED = "## Unreleased"
# the sections of an entry that make a minor step (before 1.0); "Fixes" alone make a patch step
BREAKING = ("### Verdicts", "### Interfaces")


class ReleaseError(Exception):
    """A state the step cannot start from; said on stderr, exit 2."""


@dataclass(frozen=True)
class Pin:
    path: str
    line: int
    commit: str


def project_version(pyproject_text: str) -> str:
    """[project] version of a pyproject.toml's text (the first `version = "..."` line, which is the project's)."""
    found = VERSION_LINE.search(pyproject_text)
    if not found:
        raise ReleaseError("pyproject.toml has no `version = \"...\"` line")
    return found.group("version")


def top_released(changelog_text: str) -> str | None:
    """The newest released version in the changelog (its first `## X.Y.Z` heading), or None."""
    found = RELEASED.search(changelog_text)
    return found.group("version") if found else None


def pins(root: Path = ROOT) -> list[Pin]:
    """Every pin in the files that hold one, in file order."""
    found = []
    for name in PIN_FILES:
        text = (root / name).read_text(encoding="utf-8")
        found += [Pin(name, text.count("\n", 0, m.start()) + 1, m.group("commit")) for m in PIN.finditer(text)]
    return found


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def problems(root: Path = ROOT) -> list[str]:
    """What keeps the pins, the version and the changelog from being one release; empty when they are."""
    version = project_version((root / PYPROJECT).read_text(encoding="utf-8"))
    top = top_released((root / CHANGELOG).read_text(encoding="utf-8"))
    said = [] if top == version else [f"{CHANGELOG}'s top release is {top}, {PYPROJECT} says {version}"]
    found = pins(root)
    said += [f"{name} pins no commit" for name in PIN_FILES if name not in {p.path for p in found}]
    commits = sorted({p.commit for p in found})
    if len(commits) != 1:
        return [*said, "the pins name more than one commit: " + ", ".join(f"{p.path}:{p.line} {p.commit[:9]}"
                                                                         for p in found)]
    pinned = project_version(git(root, "show", f"{commits[0]}:{PYPROJECT}"))
    if pinned != version:
        said.append(f"the pinned commit {commits[0][:9]} is version {pinned}, {PYPROJECT} says {version}: "
                    "run tools/release.py pin after the release commit")
    return said


def next_version(current: str, unreleased: str) -> str:
    """The next version by CHANGELOG.md's rule: verdicts or interfaces step 0.MINOR (MAJOR from 1.0), else PATCH."""
    major, minor, patch = (int(part) for part in current.split("."))
    if not any(_section_body(unreleased, heading) for heading in BREAKING):
        return f"{major}.{minor}.{patch + 1}"
    return f"{major + 1}.0.0" if major >= 1 else f"{major}.{minor + 1}.0"


def _section_body(entry: str, heading: str) -> str:
    """The text under `heading` in an entry, up to its next heading of the same or a higher level."""
    found = re.search(rf"^{re.escape(heading)}\n(?P<body>.*?)(?=^#{{2,3}} |\Z)", entry, re.MULTILINE | re.DOTALL)
    return found.group("body").strip() if found else ""


def _unreleased(changelog_text: str) -> tuple[int, int]:
    """Where the "Unreleased" entry's body starts and ends in the changelog."""
    start = changelog_text.find(UNRELEASED + "\n")
    if start < 0:
        raise ReleaseError(f"{CHANGELOG} has no '{UNRELEASED}' section")
    body = start + len(UNRELEASED) + 1
    following = re.compile(r"^## ", re.MULTILINE).search(changelog_text, body)
    return body, following.start() if following else len(changelog_text)


def _is_patch_step(old: str, new: str) -> bool:
    return old.split(".")[:2] == new.split(".")[:2]


def prepare(root: Path, wanted: str | None, today: datetime.date) -> str:
    """Set the version and move "Unreleased" under it; the version set."""
    text = (root / CHANGELOG).read_text(encoding="utf-8")
    body_start, body_end = _unreleased(text)
    unreleased = text[body_start:body_end]
    if not re.search(r"^- ", unreleased, re.MULTILINE):
        raise ReleaseError(f"{CHANGELOG}'s '{UNRELEASED}' section lists nothing: nothing to release")
    pyproject = (root / PYPROJECT).read_text(encoding="utf-8")
    current = project_version(pyproject)
    proposed = next_version(current, unreleased)
    version = wanted or proposed
    if not re.fullmatch(r"\d+\.\d+\.\d+", version) or _key(version) <= _key(current):
        raise ReleaseError(f"{version} is not a version after {current}")
    if _is_patch_step(current, version) and not _is_patch_step(current, proposed):
        raise ReleaseError(f"'{UNRELEASED}' lists verdicts or interfaces: {version} would be a patch step; "
                           f"{proposed} is the step CHANGELOG.md's rule gives")
    fresh = "\n".join(f"{h}\n" for h in (*BREAKING, "### Fixes")) + "\n"
    entry = f"## {version} ({today.isoformat()})\n{unreleased.rstrip()}\n\n"
    text = text[:body_start] + "\n" + fresh + entry + text[body_end:]
    (root / CHANGELOG).write_text(text, encoding="utf-8")
    (root / PYPROJECT).write_text(VERSION_LINE.sub(f'version = "{version}"', pyproject, count=1), encoding="utf-8")
    package = root / PACKAGE_INIT
    if package.is_file():  # the same version as a literal, read at start-up without importlib.metadata
        text = package.read_text(encoding="utf-8")
        package.write_text(PACKAGE_VERSION.sub(f'__version__ = "{version}"', text, count=1), encoding="utf-8")
    return version


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def pin(root: Path, commit: str) -> str:
    """Write `commit` (resolved to its full id) into every pin; it must be the release the changelog names."""
    full = git(root, "rev-parse", "--verify", f"{commit}^{{commit}}").strip()
    at_commit = project_version(git(root, "show", f"{full}:{PYPROJECT}"))
    top = top_released((root / CHANGELOG).read_text(encoding="utf-8"))
    if at_commit != top:
        raise ReleaseError(f"{full[:9]} is version {at_commit}, {CHANGELOG}'s top release is {top}: "
                           "pin the release commit")
    for name in PIN_FILES:
        path = root / name
        text = path.read_text(encoding="utf-8")
        path.write_text(PIN.sub(lambda m: m.group("lead") + full, text), encoding="utf-8")
    return full


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/release.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("check", help="the version, the changelog's top entry and the pins agree")
    sub.add_parser("prepare", help="set the version; move 'Unreleased' under it").add_argument("version", nargs="?")
    sub.add_parser("pin", help="every pin names COMMIT (HEAD)").add_argument("commit", nargs="?", default="HEAD")
    args = parser.parse_args(argv)
    try:
        if args.step == "prepare":
            print(f"version {prepare(ROOT, args.version, datetime.date.today())}; commit, then run: "
                  "tools/release.py pin (and reinstall: pip install -e .)")
        elif args.step == "pin":
            print(f"every pin names {pin(ROOT, args.commit)}; commit the docs and examples")
        else:
            said = problems(ROOT)
            print("\n".join(said) or "the version, the changelog and the pins are one release")
            return 1 if said else 0
    except ReleaseError as exc:
        print(f"tools/release.py: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
