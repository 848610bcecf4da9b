"""What `verify --official` hands to mlperf-logging's tools, and what it refuses to.

The reference tools trust the tree they read: the compliance checker joins log values to its rule folder and runs
the file it finds (`submission_division` "../../tree/evil" runs the tree's `evil_common.yaml`), the package checker
writes `scaling.json` through whatever a results folder is, and `package_checker_params` lines become its options
(`log_output=/any/file` appends its log there). So before a tool sees an organisation folder:

- the folder is a private copy (`private_copy`): a link that stays inside it is made again inside the copy, one that
  leaves it or points at nothing is not copied and is a finding (TREE044, TREE043);
- the names the tools take as arguments or join into paths (the organisation, system and benchmark folders) hold no
  control character, do not start with `-` and hold no glob character (`*?[]`: the tools find logs with
  `glob.glob(..., recursive=True)` on a pattern made of them; `{}` in the organisation's name: the summarizer reads
  `a{b,c}` as the organisations `ab` and `ac`) (PKG072);
- the result logs the tools open, found with their own globs (mlsubmit.checker.upstream.reads), are the ones our
  check reads (PKG075), and a record our reader dropped (LOG004-LOG006, LOG010, LOG012) in one of them is one the
  reference skips too (PKG074): the reference judges a record with `"time_ms": NaN`, and its values choose rule
  files;
- each `package_checker_params` argument is an option of the package checker, and `--log_output` names a file
  inside the copy (PKG070);
- the files the tools read stay within the bounds below (PKG071): their memory follows what they read, and their
  time the records they read, counted once per path they open (a link to a folder is read again); a tree's files
  are measured by their apparent size before anything is copied (a sparse file of 2 GiB is refused, not written);
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

from mlsubmit.checker import discover
from mlsubmit.checker.tree import params as org_params
from mlsubmit.checker.upstream import reads
from mlsubmit.submission.handover_params import vetted_arguments

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
# A tree is copied for the tools only up to what an archive may unpack to (submission/archive.py, MAX_UNPACKED),
# counted by apparent size before the first byte is written.
MAX_COPY_BYTES = 16 << 30
TOKEN = b":::MLLOG"
_CHUNK = 1 << 20

_UNSAFE_ORG = re.compile(r"[{}]")


# Codes of our own check that keep a unit from the tools: a log value the rules would turn into a path outside
# their folder, and links (a tree's copy has none that leave it; an archive none at all).
BLOCKING = frozenset({"RULE010", "TREE043", "TREE044"})
# Our reader's codes for a record it does not read (bad JSON, a missing field, a time that is not a finite number, a
# line too long, a log too large): in a result log the tools open, each is weighed against the reference's reading.
DROPPED = frozenset({"LOG004", "LOG005", "LOG006", "LOG010", "LOG012"})


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
    named = unsafe_names(unit, org, shown)
    out = Handover(unit, refused=[*copied, *named, *unlike_ours(unit, org, shown), *over_bounds(unit, org, shown)])
    if with_params:
        out.params, refused = vetted_arguments(unit / org, f"{shown}/{org_params.NAME}", unit)
        out.refused += refused
    return out


def blocking_findings(found: Sequence[Finding], unit: Path | None = None, org: str = "") -> list[Finding]:
    """The findings of our check that keep the unit from the tools: those in BLOCKING, and (given the unit) a
    PKG074 for each record our reader dropped in a result log the tools open and the reference would read."""
    kept = [f for f in found if f.code in BLOCKING]
    return kept + (dropped_but_read(found, unit, org) if unit is not None else [])


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
    inside `src`; a link that leaves `src` or points at nothing is left out and is a finding. Files are measured by
    their apparent size first: one past its bound is not copied (PKG071), and nothing is when all are past
    MAX_COPY_BYTES (a sparse file takes no room on disk but all its bytes in the copy)."""
    root = Path(os.path.realpath(src))
    dest.mkdir(parents=True)
    too_big, total = _apparent_sizes(root, shown)
    if total > MAX_COPY_BYTES:
        return [finding("PKG071", shown, f"its files hold {total:,} bytes (apparent size), past the "
                        f"{MAX_COPY_BYTES >> 30} GiB a tree is copied for the reference tools: not copied, not "
                        "handed to them")]  # fmt: skip
    refused: list[Finding] = list(too_big.values())
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
            elif stat.S_ISREG(mode) and path not in too_big:
                shutil.copyfile(path, into / name, follow_symlinks=False)
    return refused


def _apparent_sizes(root: Path, shown: str) -> tuple[dict[Path, Finding], int]:
    """The regular files under `root` past their bound (by `st_size`, nothing read), each with its PKG071, and the
    apparent size of all."""
    too_big: dict[Path, Finding] = {}
    total = 0
    for dirpath, _dirs, filenames in os.walk(root, onerror=_raise):
        for name in filenames:
            path = Path(dirpath) / name
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            total += info.st_size
            rel = path.relative_to(root).as_posix()
            why = _past_size(rel, info.st_size)
            if why:
                too_big[path] = finding("PKG071", f"{shown}/{rel}", why)
    return too_big, total


def past_bound(name: str, size: int) -> str | None:
    """Why an archive's member `<org>/<path>` of `size` bytes (its header's word) is not unpacked for the tools."""
    parts = name.split("/", 1)
    return _past_size(parts[1] if len(parts) == 2 else name, size)


def _past_size(rel: str, size: int) -> str | None:
    limit = MAX_RESULT_BYTES if rel.startswith("results/") else MAX_OTHER_BYTES
    if size <= limit:
        return None
    return (f"{size:,} bytes (apparent size), past the {limit >> 20} MiB a file may be: not written, not handed to "
            "the reference tools")


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


# ---- names ----------------------------------------------------------------------------------------------


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
    found = []
    for what, name, where in named:
        unsafe = _unsafe(name, what == "organisation folder")
        if unsafe:
            found.append(finding("PKG072", where, f"{what} {name!r} {unsafe[0]}: the reference tools would read it "
                                 f"as {unsafe[1]}"))
    return found


def _unsafe(name: str, org: bool) -> tuple[str, str] | None:
    """(why, what the tools would take it for), or None for a name they read as it is."""
    if name.startswith("-"):
        return "starts with '-'", "an option"
    if re.search(r"[\x00-\x1f\x7f]", name):
        return "holds a control character", "part of a path or a line"
    if re.search(r"[*?[\]]", name):
        return ("holds a glob character (*?[])", "part of the glob pattern that finds result logs (recursive=True: "
                "'**' reaches files at any depth)")  # fmt: skip
    if org and _UNSAFE_ORG.search(name):
        return "holds '{' or '}'", "a list of organisations (the summarizer's 'a{b,c}')"
    return None


def _globbing(tree: Path, org: str) -> bool:
    """Whether a name that goes into the tools' glob patterns holds a glob character (PKG072 says which)."""
    folders = reads.benchmark_folders(str(tree), org)
    return any(re.search(r"[*?[\]]", part) for folder in folders for part in folder.split("/")) or bool(
        re.search(r"[*?[\]]", org))



# ---- what the tools read ------------------------------------------------------------------------------------


_NAMED = 20  # files a PKG075 names one by one; the rest are counted


def opened_logs(tree: Path, org: str) -> list[str] | None:
    """The result logs the tools open (relative to `tree`, where they run), found with their own globs; None when a
    folder name would make those globs patterns of the tree's choosing (PKG072 refuses the unit then)."""
    if _globbing(tree, org):
        return None
    return reads.result_files(str(tree), org)


def unlike_ours(tree: Path, org: str, shown: str) -> list[Finding]:
    """PKG075 for each result log the tools open that our check does not read, and each one we read that they do
    not open: past that, our verdict would not be about what they judge."""
    theirs = opened_logs(tree, org)
    if theirs is None:
        return []
    found = discover([str(tree / org)]).orgs
    ours = {os.path.relpath(ref.path, tree) for ref in found[0].logs} if found else set()
    only_theirs = sorted(set(theirs) - ours)
    only_ours = sorted(ours - set(theirs))
    out = [finding("PKG075", _shown(path, org, shown), "the reference tools open this as a result log (their "
                   "glob), and our check does not read it: not handed to them") for path in only_theirs[:_NAMED]]
    out += [finding("PKG075", _shown(path, org, shown), "our check reads this as a result log, and the reference "
                    "tools do not open it: not handed to them") for path in only_ours[:_NAMED]]
    rest = len(only_theirs[_NAMED:]) + len(only_ours[_NAMED:])
    if rest:
        out.append(finding("PKG075", shown, f"{rest:,} more result logs that only one of the reference tools and "
                           "our check reads: not handed to them"))
    return out


def _shown(path: str, org: str, shown: str) -> str:
    return shown + path[len(org) :] if path.startswith(org + "/") else f"{shown}/{path}"


def dropped_but_read(found: Sequence[Finding], unit: Path, org: str) -> list[Finding]:
    """PKG074 for each record our reader dropped (DROPPED) in a result log the tools open that the reference would
    read as a record and judge, values and all (`"time_ms": NaN` is one); a finding folded with others (past the
    log's cap, its lines not all named), a skipped line or a log read in part counts as one whole."""
    opened = set(opened_logs(unit, org) or ())
    inside = str(unit) + "/"
    lines: dict[str, list[Finding]] = {}
    out = []
    for f in found:
        rel = f.path[len(inside) :] if f.path.startswith(inside) else None
        if f.code not in DROPPED or rel not in opened:
            continue
        if f.code in ("LOG010", "LOG012") or f.repeats or f.line is None:
            out.append(finding("PKG074", f.path, f"our reader did not read all of this result log ({f.code}: "
                               f"{f.message}), and the reference reads it whole: not handed to the reference tools",
                               line=f.line))  # fmt: skip
        else:
            lines.setdefault(f.path, []).append(f)
    for path, dropped in lines.items():
        taken = _taken_lines(Path(path), {f.line for f in dropped if f.line is not None})
        out += [finding("PKG074", path, f"our reader dropped this record ({f.code}: {f.message}), and the reference "
                        "reads it and judges its values (a value may choose the rule file it loads): not handed to "
                        "the reference tools", line=f.line) for f in dropped if f.line in taken]  # fmt: skip
    return out


def _taken_lines(path: Path, wanted: set[int]) -> set[int]:
    """Which of the `wanted` lines (numbered from 1, split at newlines as our reader numbers them) hold a record the
    reference reads (split at CRs too, as its text-mode reader splits them)."""
    taken = set()
    last = max(wanted, default=0)
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if number > last:
                break
            if number in wanted and any(reads.reference_takes(piece.decode("latin-1"))
                                        for piece in raw.rstrip(b"\n").split(b"\r")):  # fmt: skip
                taken.add(number)
    return taken


def over_bounds(tree: Path, org: str, shown: str) -> list[Finding]:
    """PKG071 for each file the tools would read past what they may be handed, and for the records in all, counted
    once per path the tools open (a link to a folder of logs is read again through the link)."""
    root = tree / org
    found: list[Finding] = []
    records_of: dict[tuple[int, int], int] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in sorted(files):
            path = Path(dirpath) / name
            if not path.is_file() or path.is_symlink():
                continue
            rel = path.relative_to(root).as_posix()
            records, why = _measure(path, rel.startswith("results/"))
            info = path.stat()
            records_of[(info.st_dev, info.st_ino)] = records
            if why:
                found.append(finding("PKG071", f"{shown}/{rel}", f"{why}: not handed to the reference tools"))
    logs = opened_logs(tree, org) or []
    total = 0
    for rel in [*logs, *reads.power_files(str(tree), org, logs)]:
        try:
            info = (tree / rel).stat()
        except OSError:  # a link to nothing: TREE043 refuses the unit
            continue
        total += records_of.get((info.st_dev, info.st_ino), 0)
    if total > MAX_RECORDS_TOTAL:
        found.append(finding("PKG071", shown, f"the result logs the reference tools open hold {total:,} :::MLLOG "
                             f"lines in all (each counted once per path they open it by), past the "
                             f"{MAX_RECORDS_TOTAL:,} they are handed: not handed to them"))  # fmt: skip
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
