"""`mlsubmit package`: build the submission tree in a temporary folder beside `out`, check it, then rename it.

Nothing is written outside that temporary folder until the final rename, so an interrupted build (even SIGKILL)
leaves either the previous `out` or none, never a half tree. Inputs (logs, system files, repositories) are only
read. Every output name is a validated config name or a checked git path, joined below the temporary folder.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker import CheckOptions, Profile, Tracker, apply_waivers, no_progress, round_name, run_check
from mlsubmit.checker.policy.check_config import Policy
from mlsubmit.checker.policy.waiver_pass import applied_waivers
from mlsubmit.checker.rounds.detect import ROUND_FILE
from mlsubmit.checker.tree import params as org_params
from mlsubmit.submission import archive as arch
from mlsubmit.submission import encryption as enc
from mlsubmit.submission import manifest as mf
from mlsubmit.submission.buildfolder import MARKER, build_folder, remove_stale_builds
from mlsubmit.submission.bypass import EVIDENCE, write_evidence, write_folder_params
from mlsubmit.submission.export import Exported, export
from mlsubmit.submission.origins import Origins, PlacedLog, config_lines, fold_entry_causes, report_at_inputs
from mlsubmit.submission.package_config import PackageConfig
from mlsubmit.submission.run_selection import Selection, collect

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError
from mlsubmit.core.findings import Finding, Report, has_errors
from mlsubmit.core.support.ledger_url import shown_ledger
from mlsubmit.core.support.names import did_you_mean
from mlsubmit.core.support.safe_io import SMALL_FILE, read_bounded

if TYPE_CHECKING:
    from mlsubmit.checker import CheckRun


@dataclass(frozen=True)
class PackageOptions:
    archive: bool = False
    passphrase: bytes | None = None  # set: the archive is the encrypted one
    kdf: str = enc.KDF_OPENSSL  # the key derivation pack_submission.sh --unpack opens; enc.KDF_PBKDF2 is stronger
    notes: tuple[Finding, ...] = ()  # findings about the options themselves (a passphrase file others can read)
    allow_findings: bool = False
    jobs: int = 0
    strict: bool = False  # warnings block the tree too, as they fail the exit status
    progress: Tracker = no_progress  # the command line's bar over the tree check
    # the project's policy (mlsubmit.toml [check], the flags; default: full), resolved once by the command, with its
    # waivers: those apply at the inputs' paths (the config's folder), after the check of the build folder
    policy: Policy = field(default_factory=Policy)


@dataclass
class PackageResult:
    report: Report
    out: Path
    finalised: bool = False
    results: int = 0
    implementation_files: int = 0
    outputs: list[Path] = field(default_factory=list)  # archive files written, final paths


def not_ours(out: Path) -> str | None:
    """Why `out` may not be replaced, or None: only a missing or empty folder, or a build this tool wrote and that
    is as it wrote it, may go. A stray manifest.json beside the user's notes, raw logs placed inside a previous
    build, or a packaged file edited since are the user's data: refused, never deleted."""
    if not out.exists():
        return None
    if out.is_symlink() or not out.is_dir():
        return "is not a folder"
    names = sorted(p.name for p in out.iterdir())
    if not names:
        return None
    if mf.NAME not in names:
        return f"is not a previous mlsubmit build (no {mf.NAME})"
    data, problems = mf.load(out / mf.NAME, mf.NAME)
    if data is None:
        return f"holds a {mf.NAME} that mlsubmit did not write ({problems[0].message if problems else 'unreadable'})"
    org = str(data["org"])
    stray = [n for n in names if n not in (mf.NAME, org, arch.sha1_name(org), ROUND_FILE, EVIDENCE) and
             not n.startswith(arch.archive_name(org))]  # fmt: skip
    if stray:
        return f"holds {', '.join(stray[:5])}, which no build wrote"
    added = mf.unlisted_entry(out, org, {str(f["path"]) for f in data["files"]})  # before hashing: a link may loop
    changed = [] if added else mf.compare(out, data, mf.NAME)
    if added or changed:
        return (f"holds {added}, which no build wrote (a link or folder added since)" if added else
                f"holds files that differ from what the build wrote: {changed[0].path} {changed[0].message}")
    return None


def _shown(path: Path) -> str:
    return os.path.normpath(path)


def swap_in(tmp: Path, out: Path) -> None:
    """Rename the finished tree to `out`; a previous build is moved aside first and removed after."""
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rename(out, old / "tree")
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out)


def _did_you_mean(system: str, folder: Path) -> str:
    """`; did you mean "X"?` for the closest system description in the folder, or nothing."""
    try:
        names = [p.stem for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]
    except OSError:
        return ""
    return did_you_mean(system, names)


def _copy_systems(cfg: PackageConfig, org_root: Path, origins: Origins) -> list[Finding]:
    findings = []
    done: set[str] = set()
    for entry in cfg.results:
        if entry.system in done:
            continue
        done.add(entry.system)
        src = cfg.systems / f"{entry.system}.json"
        try:
            data = read_bounded(src, SMALL_FILE)
        except OSError as exc:
            findings.append(
                finding("PKG020", str(cfg.path), f"no readable {src} for system {entry.system!r}: "
                        f"{exc.strerror or exc}{_did_you_mean(entry.system, cfg.systems)}",
                        pointer=f"/results/{entry.index}/system")
            )
            continue
        dest = org_root / "systems" / f"{entry.system}.json"
        origins.systems[f"{cfg.org}/systems/{dest.name}"] = Path(os.path.relpath(src, cfg.base)).as_posix()
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        dest.chmod(0o644)
    return findings


def _place_results(sel: Selection, org_root: Path, manifest: dict[str, Any], origins: Origins) -> int:
    entry = sel.entry
    folder = org_root / "results" / entry.system / entry.benchmark
    origins.folders.setdefault((entry.system, entry.benchmark), entry.index)
    folder.mkdir(parents=True, exist_ok=True)
    for i, run in enumerate(sel.chosen):
        dest = folder / f"result_{i}.txt"
        os.replace(run.staged, dest)
        dest.chmod(0o644)
        placed = dest.relative_to(org_root.parent).as_posix()
        origins.logs[placed] = PlacedLog(run.display, tuple(run.raw_lines), entry.index)
        facts = run.facts
        manifest["results"].append(
            {
                "path": dest.relative_to(org_root.parent).as_posix(),
                "system": entry.system,
                "benchmark": entry.benchmark,
                "index": i,
                "source": run.display,
                "source_sha256": run.source_sha256,
                "records": run.records,
                "run_start_ms": run.start_ms,
                "status": facts.status if facts else None,
                "minutes": facts.minutes if facts else None,
                **({"output": run.output} if run.output is not None else {}),
            }
        )
    score = sel.score if sel.score is not None and sel.score != float("inf") else None
    manifest["selections"].append(
        {
            "system": entry.system,
            "benchmark": entry.benchmark,
            "policy": entry.select,
            "required": sel.required,
            "candidates": len(sel.candidates),
            "scored": len(sel.chosen),
            "olympic_minutes": score,
            "run_set": [{"source": run.display, "source_sha256": run.source_sha256, "run_start_ms": run.start_ms}
                        for run in sel.candidates],
            "ledger": None if entry.ledger is None else shown_ledger(entry.ledger),  # a URL without its password
            "excluded": [
                {"source": run.display, "source_sha256": run.source_sha256, "reason": reason}
                for run, reason in sel.excluded
            ],
        }
    )
    return len(sel.chosen)


def _export_implementations(
    cfg: PackageConfig, org_root: Path, origins: Origins
) -> tuple[list[Exported], list[Finding]]:
    done: dict[tuple[str, str], Exported] = {}
    findings: list[Finding] = []
    with_code = {e.benchmark for e in cfg.results if e.implementation is not None}
    findings.extend(
        finding("PKG036", str(cfg.path), f"no implementation is given for benchmark {bench!r}")
        for bench in sorted({e.benchmark for e in cfg.results} - with_code)
    )
    for entry in cfg.results:
        impl = entry.implementation
        if impl is None or (entry.benchmark, impl.name) in done:
            continue
        rel = Path("benchmarks", entry.benchmark, "implementations", impl.name)
        shown = posixpath.normpath(posixpath.join(Path(impl.repo_text).as_posix(), impl.path))  # the user's copy
        origins.implementations[f"{cfg.org}/{rel.as_posix()}"] = shown
        exported = export(impl, entry.benchmark, org_root / rel, shown)
        done[(entry.benchmark, impl.name)] = exported
        findings.extend(exported.findings)
    return list(done.values()), findings


def _implementation_record(ex: Exported, root: Path) -> dict[str, Any]:
    return {
        "path": ex.dest.relative_to(root).as_posix(),
        "benchmark": ex.benchmark,
        "name": ex.impl.name,
        "repo": ex.impl.repo_text,
        "revision": ex.impl.rev,
        "commit": ex.revision.commit,
        "subdir": ex.impl.path,
        "files": ex.files,
        "left_out": [{"path": path, "code": code} for path, code in ex.left_out],
    }


def check_tree(org_root: Path, cfg: PackageConfig, options: PackageOptions) -> CheckRun:
    """The check on the build folder; its report is in the build folder's paths (`report_at_inputs` maps them)."""
    policy = replace(options.policy, waivers=())  # its waivers name the inputs' paths: applied there (`_judged`)
    check = CheckOptions(ruleset=cfg.ruleset, jobs=options.jobs, profile=Profile(policy.profile), policy=policy)
    return run_check([str(org_root)], check, progress=options.progress)


def remap(report: Report, old: str, new: str) -> Report:
    """The same report with paths under `old` shown under `new` (`verify` shows an unpacked archive's paths)."""

    def fix(path: str) -> str:
        return new + path[len(old) :] if path == old or path.startswith(old + os.sep) else path

    out = Report(strict=report.strict, meta=dict(report.meta))
    for path, findings in report.files.items():
        out.add_file(fix(path), [f.with_path(fix(f.path)) for f in findings])
    out.tree.extend(f.with_path(fix(f.path)) for f in report.tree)
    return out


def package(cfg: PackageConfig, options: PackageOptions) -> PackageResult:
    out = cfg.out
    if out.parent.is_dir():
        remove_stale_builds(out)
    why = not_ours(out)
    if why is not None:
        raise FatalError(f"{out}: {why}; choose another `out`, or move what you keep out of it")
    with build_folder(out) as tmp:
        try:
            (tmp / MARKER).write_text(str(os.getpid()), encoding="ascii")
            return _build(cfg, options, tmp)
        except OSError as exc:  # a full disk or a permission problem in the build folder: nothing was finalised
            where = f" ({exc.filename})" if exc.filename else ""
            raise FatalError(f"cannot write the build{where}: {exc.strerror or exc}; {out} is unchanged") from None


def _build(cfg: PackageConfig, options: PackageOptions, tmp: Path) -> PackageResult:
    out = cfg.out
    result = PackageResult(report=Report(), out=out)
    org_root = tmp / cfg.org
    staging = tmp / ".staging"
    staging.mkdir()
    manifest = mf.new_manifest(cfg.org, cfg.ruleset)
    origins = Origins(config=str(cfg.path), org=cfg.org)
    config_lines(cfg, origins)
    packaging: list[Finding] = [*options.notes, *_copy_systems(cfg, org_root, origins)]
    for entry in cfg.results:
        sel = collect(cfg, entry, staging)
        packaging.extend(sel.findings)
        result.results += _place_results(sel, org_root, manifest, origins)
    exported, problems = _export_implementations(cfg, org_root, origins)
    packaging.extend(problems)
    manifest["implementations"] = sorted((_implementation_record(ex, tmp) for ex in exported), key=lambda r: r["path"])
    result.implementation_files = sum(ex.files for ex in exported)
    shutil.rmtree(staging)
    org_root.mkdir(exist_ok=True)
    _write_checker_params(cfg, org_root)
    write_folder_params(cfg, org_root)
    _write_round(cfg, tmp)
    manifest["files"] = mf.tree_files(tmp, cfg.org)

    run = check_tree(org_root, cfg, options)
    report = run.report
    packaging += write_evidence(cfg, run, tmp, org_root, _shown(out))[1]
    result.report = _judged(report, packaging, tmp, origins, options)
    blocked = has_errors(result.report.all_findings(), strict=options.strict) and not options.allow_findings
    if not blocked:  # the placed logs' final paths join the findings (related locations only)
        origins.placed_at = _shown(out)
        result.report = _judged(report, packaging, tmp, origins, options)
    waived = applied_waivers(result.report)
    if waived:
        manifest["waivers"] = waived
    mf.write(tmp, manifest)
    if blocked:
        return result
    if options.archive:
        result.outputs = _write_archive(cfg, options, tmp)
    (tmp / MARKER).unlink()
    swap_in(tmp, out)
    result.finalised = True
    result.outputs = [out / p.name for p in result.outputs]
    return result


def _judged(report: Report, packaging: list[Finding], tmp: Path, origins: Origins,
            options: PackageOptions) -> Report:
    """The check's and packaging's findings at the inputs' paths, with the waivers applied: a waived error does
    not stop the build."""
    at_inputs = report_at_inputs(report, tmp.as_posix(), origins)
    at_inputs.extend(packaging)
    at_inputs = fold_entry_causes(at_inputs, origins)  # a wrong name of an entry is one cause, one suggestion
    policy = options.policy
    return apply_waivers(at_inputs, policy.waivers, today=policy.today, anchor=Path(origins.config).parent)


def _write_round(cfg: PackageConfig, tmp: Path) -> None:
    """The tree's round where `check --ruleset auto` and `report` find it (rounds/detect.py): beside `<org>/` in
    `out`, which a check of `out/<org>` finds in the folder above. Not in `<org>/` itself: the chair's repo checker
    reports every name that starts with a dot ("Files with git-unfriendly name", then "CHECKS FAILED."), which
    `verify --official` showed on every packaged archive. It wins over a repository's mlsubmit.toml above the tree."""
    (tmp / ROUND_FILE).write_bytes(f"{round_name(cfg.ruleset)}\n".encode("ascii"))
    (tmp / ROUND_FILE).chmod(0o644)


def _write_checker_params(cfg: PackageConfig, org_root: Path) -> None:
    """What the verify scripts read (checker/tree/params.py): one flag a line, every line ended, since `read`
    drops a last line without its newline."""
    if cfg.checker_params:
        (org_root / org_params.NAME).write_bytes("".join(f"{flag}\n" for flag in cfg.checker_params).encode("ascii"))


def _write_archive(cfg: PackageConfig, options: PackageOptions, tmp: Path) -> list[Path]:
    """The names the results chair expects from the MLCommons pack_submission.sh: `mlperf_submission_<org>.tar.gz`
    (the encrypted archive, with --encrypt) and `mlperf_submission_<org>.sha1`, sha1sum's line for that file. Our
    extras: its `.tar.gz.sha256`, and with --encrypt the plain archive's `.tar.gz.plain.sha256`/`.sha1`, which
    `verify` checks after decrypting (the plain archive itself is not kept: `<org>/` beside it is the same tree)."""
    final = tmp / arch.archive_name(cfg.org)
    official_sha1 = tmp / arch.sha1_name(cfg.org)
    if options.passphrase is None:
        arch.write_tar_gz(tmp, [cfg.org, mf.NAME], final)
        return [final, *arch.write_checksums(final, ("sha256",)), arch.write_sha1(final, official_sha1)]
    plain = tmp / f".{final.name}.plain"
    arch.write_tar_gz(tmp, [cfg.org, mf.NAME], plain)
    plain_sums = arch.write_checksums(plain, named=f"{final.name}.plain")
    enc.encrypt_file(plain, final, options.passphrase, kdf=options.kdf)
    plain.unlink()
    return [final, *arch.write_checksums(final, ("sha256",)), arch.write_sha1(final, official_sha1), *plain_sums]
