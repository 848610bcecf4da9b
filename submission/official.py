"""`verify --official`: the results chair's own flow, step by step, on the exact bytes a team is about to upload.

The chair opens an archive with mlperf-logging's `scripts/pack_submission.sh --unpack` (the archive's `sha1sum`
against `mlperf_submission_<org>.sha1`, then `openssl enc -d -aes256` with openssl's default key derivation, then
tar), and checks each organisation folder with `scripts/verify_for_v<round>_training.sh`. Those scripts are not in
the mlperf-logging wheel, so their steps are run here as they are written, each in a subprocess with the installed
release (`python -m mlperf_logging.<module>`), never imported:

- 2.0 to 6.1: every newline-ended line of `<org>/package_checker_params` becomes `--<line>` (unquoted, so split on
  blanks), then the package checker, the result summarizer and the repo checker, stopping at the first failure.
- 1.1 (and 1.0, whose round had no such script; its successor's steps are run): the package checker with no flags,
  then the result summarizer; there was no repo checker.

Two reference tools exit 0 whatever they find, so a step's verdict is its exit status *and* its own last word: the
package checker's "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !", the repo checker's "ALL CHECKS PASSED.". The
summarizer is also asked for `--csv`, so the summary it produced can be compared with ours. Everything happens in a
private temporary folder (a tree is copied there first: the package checker writes `scaling.json` into results
folders and the tools write their logs into the current folder); nothing of the user's is written to.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker import is_org
from mlsubmit.submission import archive as arch
from mlsubmit.submission import confine, handover, tool_launcher
from mlsubmit.submission import encryption as enc

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.findings import Finding
from mlsubmit.core.support import jsontext
from mlsubmit.core.support.safe_io import open_regular, read_bounded

PACKAGE_OK = "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !"
REPO_OK = "ALL CHECKS PASSED."
LAST_LINES = 3  # what a step shows of its own output
STEP_TIMEOUT = 3600  # s; the package checker reads every log of the tree: minutes on a big organisation
_QUOTED = 8  # error lines quoted in a failing step's finding
_ARCHIVE_PREFIX, _ARCHIVE_SUFFIX = "mlperf_submission_", ".tar.gz"


@dataclass
class Step:
    """One of the chair's steps: its name, the command (as the chair would type it), verdict and last lines."""

    name: str
    command: str
    passed: bool
    last: list[str] = field(default_factory=list)
    org: str = ""
    errors: list[str] = field(default_factory=list)  # the step's own error lines, quoted by its finding
    refused: str = ""  # what the launcher stopped the tool from reading or doing (submission/tool_launcher.py)

    def to_dict(self) -> dict[str, object]:
        return {"step": self.name, "org": self.org, "command": self.command, "passed": self.passed,
                "last_lines": list(self.last)}  # fmt: skip


@dataclass
class Opened:
    """The archive as the chair unpacked it (or the tree as copied), in `work`."""

    tree: Path
    orgs: list[str]
    steps: list[Step] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    ruleset: str | None = None  # the manifest's, when there is one
    refused: dict[str, list[Finding]] = field(default_factory=dict)  # per organisation: links the copy left out


def round_steps(ruleset: str) -> tuple[str, ...]:
    """The reference modules the round's verify script runs, in order."""
    parts = tuple(int(x) for x in ruleset.split(".")[:2])
    if parts < (2, 0):
        return ("package_checker", "result_summarizer")
    return ("package_checker", "result_summarizer", "repo_checker")


def script_name(ruleset: str) -> str:
    major_minor = ".".join(ruleset.split(".")[:2])
    return f"verify_for_v{'1.1' if major_minor == '1.0' else major_minor}_training.sh"


def org_of_archive(archive: Path) -> str | None:
    name = archive.name
    if name.startswith(_ARCHIVE_PREFIX) and name.endswith(_ARCHIVE_SUFFIX):
        org = name[len(_ARCHIVE_PREFIX) : -len(_ARCHIVE_SUFFIX)]
        return org or None
    return None


# ---- pack_submission.sh --unpack ----------------------------------------------------------------------------


def sha1_step(archive: Path, display: str) -> tuple[Step, list[Finding]]:
    """`[ "$(sha1sum mlperf_submission_<org>.tar.gz)" = "$(cat mlperf_submission_<org>.sha1)" ]`."""
    org = org_of_archive(archive)
    command = f"sha1sum {archive.name} against {_ARCHIVE_PREFIX}{org or '<org>'}.sha1"
    if org is None:
        words = (f"{archive.name} is not named {_ARCHIVE_PREFIX}<org>{_ARCHIVE_SUFFIX}: pack_submission.sh "
                 "--unpack opens no other name")  # fmt: skip
        return Step("sha1 check", command, False, [words]), [finding("PKG060", display, words)]
    sums = archive.with_name(f"{_ARCHIVE_PREFIX}{org}.sha1")
    try:
        with open_regular(sums) as fh:  # never a FIFO or device, and the first 64 KiB only
            said = fh.read(1 << 16).decode("utf-8", "replace")
    except OSError as exc:
        words = f"cat: {sums.name}: {exc.strerror or exc}"
        return Step("sha1 check", command, False, [words]), [finding("PKG060", display, words)]
    line = f"{arch.digest(archive, 'sha1')}  {archive.name}"
    if said.rstrip("\n") != line:  # $(...) drops trailing newlines on both sides
        words = f"ERROR: sha1sum of {archive.name} does not match contents of {sums.name}"
        return Step("sha1 check", command, False, [words]), [finding("PKG060", display, words)]
    return Step("sha1 check", command, True, ["sha1sum matches."]), []


def decrypt_step(archive: Path, display: str, passphrase_file: Path | None, dest: Path) -> tuple[Step, list[Finding]]:
    """`openssl enc -d -aes256 -pass file:FILE`: openssl's default key derivation only, as the script runs it."""
    command = f"openssl enc -d -aes256 -pass file:PASSPHRASE -in {archive.name}"
    if not enc.is_encrypted(archive):
        words = "bad magic number (the archive is not encrypted: pack_submission.sh --unpack decrypts every archive)"
        return Step("decryption", command, False, [words]), [finding("PKG061", display, words)]
    if passphrase_file is None:
        raise UsageError(f"{archive} is encrypted: give --passphrase-file FILE")
    passphrase = enc.read_passphrase(passphrase_file)
    found = []
    if enc.readable_by_others(passphrase_file):
        found.append(finding("PKG048", str(passphrase_file), "the passphrase file is readable by group or others"))
    try:
        enc.decrypt_file(archive, dest, passphrase, kdf=enc.KDF_OPENSSL)
        with open(dest, "rb") as fh:  # the magic number only, not the whole decrypted archive into memory
            gzip_stream = fh.read(2) == b"\x1f\x8b"
    except enc.CryptoError as exc:
        gzip_stream, why = False, str(exc)
    else:
        why = "the decrypted bytes are not a gzip stream"
    if gzip_stream:
        return Step("decryption", command, True, ["decrypted (openssl's default key derivation)"]), found
    hint = None
    try:
        kdf = enc.decrypt_any(archive, dest, passphrase)
        hint = (f"The archive opens with the {kdf} key derivation, which pack_submission.sh --unpack does not use: "
                "rebuild it with `mlsubmit package --encrypt` (the default derivation).")  # fmt: skip
    except enc.CryptoError:
        pass
    words = f"bad decrypt: {why}"
    return Step("decryption", command, False, [words]), [*found, finding("PKG061", display, words, hint=hint)]


def open_archive(archive: Path, display: str, passphrase_file: Path | None, work: Path) -> Opened:
    """pack_submission.sh --unpack into `work`; the steps stop at the first one that fails, as the script does."""
    opened = Opened(tree=work / "unpacked", orgs=[])
    step, found = sha1_step(archive, display)
    opened.steps.append(step)
    opened.findings += found
    if not step.passed:  # the script says so and stops: nothing is decrypted
        return opened
    plain = work / "plain.tar.gz"
    step, found = decrypt_step(archive, display, passphrase_file, plain)
    opened.steps.append(step)
    opened.findings += found
    if not step.passed:
        return opened
    opened.tree.mkdir()
    unpacked = arch.unpack(plain, opened.tree, display, handover.past_bound)  # a file past it: not even written
    plain.unlink()
    opened.findings += unpacked.findings or []
    ok = not unpacked.findings
    words = f"{unpacked.files} file(s) unpacked" + ("" if ok else f", {len(unpacked.findings or [])} member(s) "
                                                    "refused")  # fmt: skip
    opened.steps.append(Step("unpack", "tar --extract --gzip", ok, [words]))
    opened.orgs = _org_folders(opened.tree)
    manifest = opened.tree / "manifest.json"
    if manifest.is_file():
        opened.ruleset = _manifest_ruleset(manifest)
    return opened


def copy_tree(path: Path, work: Path) -> Opened:
    """A tree given instead of an archive: an organisation folder, or a folder of them, copied into `work` (links
    that leave an organisation folder are not: handover.private_copy)."""
    opened = Opened(tree=work / "unpacked", orgs=[])
    opened.tree.mkdir()
    try:
        sources = [path] if is_org(path) else sorted(p for p in path.iterdir() if p.is_dir() and is_org(p))
        for src in sources:
            shown = os.path.normpath(src)
            opened.refused[src.name] = handover.private_copy(src, opened.tree / src.name, shown)
            opened.orgs.append(src.name)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise FatalError(f"{path}: cannot copy the tree to run the chair's steps on: {where}"
                         f"{exc.strerror or exc}") from None
    return opened


def _org_folders(tree: Path) -> list[str]:
    return sorted(p.name for p in tree.iterdir() if p.is_dir() and not p.is_symlink() and is_org(p))


def _manifest_ruleset(path: Path) -> str | None:
    try:  # the archive's own manifest: untrusted, read within bounds
        data = jsontext.loads(read_bounded(path, 64 << 20))
    except (OSError, ValueError):
        return None
    value = data.get("ruleset") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


# ---- verify_for_v<round>_training.sh ------------------------------------------------------------------------


def reads_params(ruleset: str) -> bool:
    """The rounds whose verify script passes package_checker_params on (2.0 on: those with a repo checker)."""
    return round_steps(ruleset)[-1] == "repo_checker"


def org_steps(tree: Path, org: str, ruleset: str, summary_csv: Path, params: list[str]) -> list[Step]:
    """The round's verify script on `tree/<org>`, run from `tree` as the chair runs it after unpacking; `params`:
    the package checker arguments of package_checker_params, vetted (submission/handover.py)."""
    steps: list[Step] = []
    for module in round_steps(ruleset):
        args = [org, "training", ruleset]
        if module == "package_checker" and reads_params(ruleset):
            args += params
        if module == "result_summarizer":
            args += ["--csv", str(summary_csv)]
        step = _run_module(module, args, tree)
        step.org = org
        steps.append(step)
        if not step.passed:
            break
    return steps


def _run_module(module: str, args: list[str], cwd: Path) -> Step:
    """One reference tool on the private copy in `cwd`, confined and limited (submission/confine.py)."""
    argv = confine.available_confinement().wrap(confine.tool_command(f"mlperf_logging.{module}", args), cwd)
    shown = [os.path.basename(a) if os.path.isabs(a) else a for a in args]  # our temporary folder says nothing
    command = " ".join(["python", "-m", f"mlperf_logging.{module}", *shown])
    name = module.replace("_", " ")
    try:
        done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              env=confine.environment(cwd), timeout=STEP_TIMEOUT, check=False,
                              start_new_session=True)  # fmt: skip
    except subprocess.TimeoutExpired:
        return Step(name, command, False, [f"did not finish in {STEP_TIMEOUT} s"])
    except OSError as exc:
        return Step(name, command, False, [f"could not start: {exc.strerror or exc}"])
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    passed = done.returncode == 0
    if module == "package_checker":
        passed = passed and any(PACKAGE_OK in line for line in lines)
    elif module == "repo_checker":
        passed = passed and any(REPO_OK in line for line in lines)
    refused = launcher_refusal(lines, done.returncode)
    step = Step(name, command, passed and not refused, _last(lines, module))
    if done.returncode != 0:
        step.last.append(f"(exit status {done.returncode})")
    step.errors = _errors(lines) if not step.passed else []
    step.refused = refused.replace(str(cwd) + os.sep, "")  # the tree's own names, not our temporary folder's
    return step


def launcher_refusal(lines: list[str], status: int) -> str:
    """What the launcher refused the tool, from its marker line (or its exit status alone), else ""."""
    said = [ln.split(tool_launcher.MARKER, 1)[1].strip() for ln in lines if tool_launcher.MARKER in ln]
    if said:
        return said[-1]
    if status == tool_launcher.REFUSED_EXIT:
        return f"the launcher stopped the tool (exit status {status}) without saying what it read"
    return ""


def _last(lines: list[str], module: str) -> list[str]:
    """The step's last lines, without the package checker's closing divider and log-file notice."""
    if module == "package_checker":
        lines = [ln for ln in lines if not ln.startswith("** Detailed log output") and not ln.endswith("-" * 30)]
    return lines[-LAST_LINES:]


def _errors(lines: list[str]) -> list[str]:
    picked = [ln for ln in lines if ln.startswith(("ERROR", "CRITICAL")) or "error:" in ln or "Error" in ln]
    unique = list(dict.fromkeys(picked))  # a message repeated per folder is quoted once
    return unique[:_QUOTED]


def step_finding(step: Step, display: str) -> Finding:
    """A failing reference step, in its own words: its error lines, else its last lines; a step the launcher
    stopped is PKG073, naming what it refused."""
    where = f"{display}:{step.org}" if step.org and os.path.basename(display) != step.org else display
    if step.refused:
        return finding("PKG073", where, f"{step.name} ({step.command}) was stopped: the reference tried "
                       f"{step.refused}")  # fmt: skip
    words = step.errors or step.last
    return finding("PKG062", where, f"{step.name} failed ({step.command}): " + " | ".join(words))
