"""What `verify --official` hands to mlperf-logging's tools, and what it refuses to.

The reference tools trust the tree they read: the compliance checker joins log values to its rule folder and runs
the file it finds (`submission_division` "../../tree/evil" runs the tree's `evil_common.yaml`), the package checker
writes `scaling.json` through whatever a results folder is, and `package_checker_params` lines become its options
(`log_output=/any/file` appends its log there). So before a tool sees an organisation folder:

- the folder is a private copy (`private_copy`): a link that stays inside it is made again inside the copy, one that
  leaves it or points at nothing is not copied and is a finding (TREE044, TREE043);
- the names the tools take as arguments or join into paths (the organisation, system and benchmark folders) hold no
  control character and do not start with `-` (PKG072);
- each `package_checker_params` argument is an option of the package checker, and `--log_output` names a file
  inside the copy (PKG070);
- the files the tools read stay within the bounds below (PKG071): their memory follows what they read;
- our own check passes the log values the tools use as paths (RULE010, the caller's check run).

A finding of any of these keeps the unit from the tools; the flow says why.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker.tree import params as org_params

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

# What the reference tools read is bounded before they read it. The package checker and the summarizer hold one
# result file's records at a time (about 1.8 kB of memory a record: 400,000 took 716 MB), so the bound is per file;
# the corpus's largest result file holds 1,492 records, a 6.1 result file may be 100 MiB of framework output. At
# 49,900 records in one file the tools peaked at 214 MB (the summarizer; the package checker 183 MB).
MAX_RECORDS_PER_FILE = 50_000
# A line (between newlines) of a result file that holds records: our reader skips a longer one (LOG010) where the
# reference reads it, split at CRs too, so past it the two would not read the same records (checker/logs/input.py).
MAX_RECORD_LINE = 16 << 20
MAX_RESULT_BYTES = 128 << 20
MAX_RECORDS_TOTAL = 3_000_000  # time: about 90 s per 400,000 records on one core
# Every other file the tools read (system descriptions, source files the seed checker reads line by line, params):
# the repo checker refuses files over 50 MiB anyway, and the seed checker keeps a file's lines in a list.
MAX_OTHER_BYTES = 50 << 20
MAX_OTHER_LINES = 1_000_000
TOKEN = b":::MLLOG"
_CHUNK = 1 << 20

# The package checker's options (mlperf_logging/package_checker/package_checker.py, get_parser): the flags, and
# the one that takes a value. tests/unit/submission/test_handover.py holds this to the installed release.
FLAGS = ("--werror", "--quiet", "--rcp-bypass", "--rcp-bert-train-samples", "--seed-checker-bypass")
VALUED = ("--log_output",)
_UNKNOWN_OPTION = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*")
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]|^-")


# Codes of our own check that keep a unit from the tools: a log value the rules would turn into a path outside
# their folder, and links (a tree's copy has none that leave it; an archive none at all).
BLOCKING = frozenset({"RULE010", "TREE043", "TREE044"})


@dataclass
class Handover:
    """One organisation folder ready for the tools: its working folder, the params arguments, what was refused."""

    unit: Path  # the tools' working folder, holding the organisation folder and nothing else
    params: list[str] = field(default_factory=list)
    refused: list[Finding] = field(default_factory=list)


def prepare(tree: Path, org: str, shown: str, with_params: bool, copied: Sequence[Finding] = ()) -> Handover:
    """`tree/<org>` moved into a working folder of its own, and every check made before the tools may read it."""
    unit = Path(tempfile.mkdtemp(prefix="unit-", dir=tree.parent))
    os.rename(tree / org, unit / org)
    out = Handover(unit, refused=[*copied, *unsafe_names(unit, org, shown), *over_bounds(unit, org, shown)])
    if with_params:
        out.params, refused = vetted_arguments(unit / org, f"{shown}/{org_params.NAME}", unit)
        out.refused += refused
    return out


def blocking(found: Sequence[Finding]) -> list[Finding]:
    """The findings of our check that keep the unit from the tools."""
    return [f for f in found if f.code in BLOCKING]


def refusal_words(refused: Sequence[Finding]) -> list[str]:
    """What the handover step says: each code that stopped it, how often, and its first place (the findings
    themselves follow in the report)."""
    counts = Counter(f.code for f in refused)
    first: dict[str, Finding] = {}
    for f in refused:
        first.setdefault(f.code, f)
    return [f"not handed to the reference tools: {code} x {counts[code]}, first at {f.path}"
            + (f":{f.line}" if f.line else "") for code, f in first.items()]


# ---- the private copy ---------------------------------------------------------------------------------------


def private_copy(src: Path, dest: Path, shown: str) -> list[Finding]:
    """`src` (an organisation folder) copied to `dest`: files and folders as they are, FIFOs, sockets and devices
    left out (`check` reports them, TREE040), and each link made again inside the copy when what it points at is
    inside `src`; a link that leaves `src` or points at nothing is left out and is a finding."""
    root = Path(os.path.realpath(src))
    refused: list[Finding] = []
    dest.mkdir(parents=True)
    for dirpath, dirnames, filenames in os.walk(root, onerror=_raise):  # never follows a link
        here = Path(dirpath)
        into = dest / here.relative_to(root)
        for name in sorted(dirnames + filenames):
            path = here / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                refused += _link(path, root, into / name, f"{shown}/{path.relative_to(root).as_posix()}")
            elif stat.S_ISDIR(mode):
                (into / name).mkdir()
            elif stat.S_ISREG(mode):
                shutil.copyfile(path, into / name, follow_symlinks=False)
    return refused


def _raise(exc: OSError) -> None:
    raise exc  # a folder the copy cannot list would be missing from what the chair's tools judge: the caller says so


def _link(link: Path, root: Path, copy: Path, shown: str) -> list[Finding]:
    target = os.readlink(link)
    resolved = os.path.realpath(link)
    if not os.path.exists(resolved):
        return [finding("TREE043", shown, f"symbolic link to {target!r} points at nothing: not handed to the "
                        "reference tools (a write through it would create the file wherever it points)")]
    if os.path.commonpath([str(root), resolved]) != str(root):
        return [finding("TREE044", shown, f"symbolic link to {target!r} leaves the tree: not handed to the reference "
                        "tools (they write scaling.json through it)")]
    copy_root = copy.parents[len(link.relative_to(root).parts) - 1]  # as deep below it as the link below root
    os.symlink(os.path.relpath(copy_root / Path(resolved).relative_to(root), copy.parent), copy)
    return []


# ---- names and params ---------------------------------------------------------------------------------------


def unsafe_names(tree: Path, org: str, shown: str) -> list[Finding]:
    """The organisation, system and benchmark names the tools take as an argument or join into a path (PKG072)."""
    root = tree / org
    named = [("organisation folder", org, shown)]
    for sub, what in (("results", "system folder"), ("systems", "system description"), ("benchmarks", "benchmark "
                                                                                                      "folder")):
        folder = root / sub
        if folder.is_dir():
            named += [(what, p.name, f"{shown}/{sub}/{p.name}") for p in sorted(folder.iterdir())]
    for system in sorted((root / "results").iterdir()) if (root / "results").is_dir() else ():
        if system.is_dir():
            named += [("benchmark folder", p.name, f"{shown}/results/{system.name}/{p.name}")
                      for p in sorted(system.iterdir())]
    return [finding("PKG072", where, f"{what} {name!r} {_why(name)}: the reference tools would read it as "
                    f"{'an option' if name.startswith('-') else 'part of a path or a line'}")
            for what, name, where in named if _UNSAFE_NAME.search(name)]


def _why(name: str) -> str:
    return "starts with '-'" if name.startswith("-") else "holds a control character"


def vetted_arguments(root: Path, shown: str, cwd: Path) -> tuple[list[str], list[Finding]]:
    """The package checker arguments the verify script builds from `<root>/package_checker_params`
    (params.script_arguments), and a PKG070 finding for each one not handed over: only the package checker's own
    options (an unknown `--name` too, which it refuses in its own words), and `--log_output` only to a file inside
    `cwd`, the private copy the tools run in."""
    try:
        args = org_params.script_arguments(root)
    except OSError as exc:
        return [], [finding("PKG070", shown, f"cannot be read: {exc.strerror or exc}")]
    refused = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        option = _matching(name) if _UNKNOWN_OPTION.fullmatch(name) else None
        if option in VALUED:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            why = _outside(value, cwd)
            if why:
                refused.append(finding("PKG070", shown, f"{arg} ({option}) {why}: not handed to the package checker"))
        elif option in FLAGS and eq:
            refused.append(finding("PKG070", shown, f"{arg} ({option} takes no value): not handed to the package "
                                   "checker"))
        elif option is None and not _UNKNOWN_OPTION.fullmatch(arg):
            refused.append(finding("PKG070", shown, f"{arg!r} is not an option of the package checker: not handed "
                                   "to it"))
        i += 1
    return args, refused


def _matching(name: str) -> str | None:
    """The option argparse takes `name` for: itself, or the one option it abbreviates; None for no option or an
    ambiguous abbreviation (argparse refuses both)."""
    options = FLAGS + VALUED
    if name in options:
        return name
    found = [o for o in options if o.startswith(name)]
    return found[0] if len(found) == 1 else None


def _outside(value: str, cwd: Path) -> str | None:
    if not value or value.startswith("-"):
        return "has no file name"
    if os.path.isabs(value) or ".." in Path(value).parts or "\x00" in value:
        return f"names {value!r}, outside the private copy"
    target = os.path.realpath(cwd / value)
    if os.path.commonpath([os.path.realpath(cwd), target]) != os.path.realpath(cwd):
        return f"names {value!r}, which leads outside the private copy"
    return None


# ---- what the tools read ------------------------------------------------------------------------------------


def over_bounds(tree: Path, org: str, shown: str) -> list[Finding]:
    """PKG071 for each file the tools would read past what they may be handed, and for the records in all."""
    root = tree / org
    found: list[Finding] = []
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in sorted(files):
            path = Path(dirpath) / name
            if not path.is_file() or path.is_symlink():
                continue
            rel = path.relative_to(root).as_posix()
            records, why = _measure(path, rel.startswith("results/"))
            total += records
            if why:
                found.append(finding("PKG071", f"{shown}/{rel}", f"{why}: not handed to the reference tools"))
    if total > MAX_RECORDS_TOTAL:
        found.append(finding("PKG071", shown, f"the result files hold {total:,} :::MLLOG lines in all, past the "
                             f"{MAX_RECORDS_TOTAL:,} the reference tools are handed: not handed to them"))
    return found


def _measure(path: Path, result: bool) -> tuple[int, str | None]:
    """(:::MLLOG lines, why the file is past its bound or None), read in chunks."""
    size = path.stat().st_size
    limit = MAX_RESULT_BYTES if result else MAX_OTHER_BYTES
    if size > limit:
        return 0, f"{size:,} bytes, past the {limit >> 20} MiB a file may be"
    records = lines = longest = run = 0  # run: the length of the line the last chunk ended in
    tail = b""
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            records += (tail + chunk[: len(TOKEN) - 1]).count(TOKEN) + chunk.count(TOKEN)  # one across the seam
            tail = chunk[-(len(TOKEN) - 1) :]
            pieces = chunk.split(b"\n")
            lines += len(pieces) - 1
            if len(pieces) > 1:
                longest = max(longest, run + len(pieces[0]), *map(len, pieces[1:-1]))
                run = 0
            run += len(pieces[-1])
    longest = max(longest, run)
    # every file: a result file may be a link to any file of the tree (made again inside the copy)
    if records > MAX_RECORDS_PER_FILE:
        return records, f"{records:,} :::MLLOG lines, past the {MAX_RECORDS_PER_FILE:,} one result file may hold"
    if records and longest > MAX_RECORD_LINE:
        return records, f"a line of {longest:,} bytes, past the {MAX_RECORD_LINE >> 20} MiB a record line may be"
    if not result and lines > MAX_OTHER_LINES:
        return 0, f"{lines:,} lines, past the {MAX_OTHER_LINES:,} a file may hold"
    return records, None
