"""`mlsubmit verify ARCHIVE`: what a results chair does with a received archive, failing on any mismatch.

Order: checksums of what was received, decryption, a refusing unpack into a temporary folder, the manifest's file
hashes, then the full check on the unpacked tree. The archive is untrusted: every problem is a finding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker import (
    CheckOptions,
    RulesetError,
    Tracker,
    available_rulesets,
    is_org,
    newer_than_installed,
    no_progress,
    run_check,
    unknown_ruleset,
)
from mlsubmit.submission import archive as arch
from mlsubmit.submission import encryption as enc
from mlsubmit.submission import manifest as mf
from mlsubmit.submission.build import remap

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.findings import Finding, Report, has_errors
from mlsubmit.core.support.safe_io import open_regular
from mlsubmit.core.support.scratch import scratch_folder


@dataclass
class VerifyResult:
    report: Report
    ruleset: str | None = None
    files: int = 0
    checked: list[str] = field(default_factory=list)  # checksum files that matched


def _checksums(target: Path, named: Path, display: str) -> tuple[list[Finding], list[str]]:
    """Compare the bytes of `target` with `<named>.sha256` and `<named>.sha1`, where they exist."""
    findings: list[Finding] = []
    matched: list[str] = []
    present = False
    candidates = [(named.with_name(f"{named.name}.{alg}"), alg) for alg in ("sha256", "sha1")]
    if named.name.endswith(".tar.gz"):  # pack_submission.sh's mlperf_submission_<org>.sha1
        candidates.append((named.with_name(named.name.removesuffix(".tar.gz") + ".sha1"), "sha1"))
    for sums, alg in candidates:
        if not (sums.exists() or sums.is_symlink()):
            continue
        present = True  # a checksum file that cannot be read fails verify: the other one alone is no pass
        if not sums.is_file():
            findings.append(finding("PKG040", str(sums), "cannot be read: not a regular file (a FIFO, a device, a "
                                    "folder, or a link that loops or leads nowhere)"))
            continue
        parsed = arch.read_checksum(sums)
        if parsed is None:
            findings.append(finding("PKG040", str(sums), f"not a {alg}sum line"))
            continue
        want, _name = parsed
        got = arch.digest(target, alg)
        if got != want:
            findings.append(finding("PKG040", display, f"{alg} is {got}, but {sums.name} says {want}"))
        else:
            matched.append(sums.name)
    if not present:
        findings.append(finding("PKG041", display, f"no {named.name}.sha256 or .sha1 beside it"))
    return findings, matched


def verify(archive: Path, passphrase_file: Path | None, ruleset: str | None, jobs: int = 0, *,
           progress: Tracker = no_progress) -> VerifyResult:
    if not archive.is_file():
        raise UsageError(f"{archive}: no such archive")
    try:
        open_regular(archive).close()
    except OSError as exc:
        raise UsageError(f"{archive}: cannot read the archive: {exc.strerror or exc}") from None
    display = os.path.normpath(archive)
    # the decrypted archive and its unpacked tree never outlive the run, a second SIGTERM or SIGINT included
    with scratch_folder("mlsubmit-verify-") as work:
        return _verify(archive, display, passphrase_file, ruleset, jobs, work, progress)


def _verify(
    archive: Path, display: str, passphrase_file: Path | None, ruleset: str | None, jobs: int, work: Path,
    progress: Tracker,
) -> VerifyResult:
    result = VerifyResult(report=Report())
    report = result.report
    tarball = archive
    if enc.is_encrypted(archive):
        if passphrase_file is None:
            raise UsageError(f"{archive} is encrypted: give --passphrase-file FILE")
        passphrase = enc.read_passphrase(passphrase_file)
        if enc.readable_by_others(passphrase_file):
            report.add(finding("PKG048", str(passphrase_file), "the passphrase file is readable by group or others"))
        sums, matched = _checksums(archive, archive, display)
        result.checked += matched
        report.extend(f for f in sums if f.code != "PKG041")  # the .enc sums are optional; the plain ones are not
        plain_name = archive.name.removesuffix(".enc") if archive.name.endswith(".enc") else archive.name + ".plain"
        tarball = work / plain_name
        try:
            enc.decrypt_any(archive, tarball, passphrase)
        except enc.CryptoError as exc:
            report.add(finding("PKG043", display, str(exc)))
            return result
        except OSError as exc:
            raise FatalError(f"cannot decrypt into {work}: {exc.strerror or exc}") from None
        sums, plain_matched = _checksums(tarball, archive.parent / plain_name, f"{display} (decrypted)")
        if matched:  # pack_submission.sh sends only the encrypted file's .sha1: that is enough
            sums = [f for f in sums if f.code != "PKG041"]
        matched = plain_matched
    else:
        sums, matched = _checksums(archive, archive, display)
    result.checked += matched
    report.extend(sums)

    tree = work / "tree"
    tree.mkdir()
    unpacked = arch.unpack(tarball, tree, display)
    result.files = unpacked.files
    report.extend(unpacked.findings or [])
    if any(f.code == "PKG044" for f in report.all_findings()):
        return result
    from_manifest = _manifest_checks(tree, display, report)
    result.ruleset = ruleset or from_manifest
    if result.ruleset is None:
        if has_errors(report.all_findings()):
            return result  # already failing; the check waits for a sound archive or --ruleset
        raise UsageError(f"{archive}: the archive has no manifest naming its ruleset; give --ruleset X.Y.Z")
    _check(tree, display, result.ruleset, jobs, report, progress)
    return result


def _manifest_checks(tree: Path, display: str, report: Report) -> str | None:
    path = tree / mf.NAME
    shown = f"{display}:{mf.NAME}"
    if not path.is_file():
        report.add(finding("PKG047", display, f"no {mf.NAME} in the archive"))
        return None
    data, problems = mf.load(path, shown)
    report.extend(problems)
    if data is None:
        return None
    report.extend(f.with_path(f"{display}:{f.path}") for f in mf.compare(tree, data, mf.NAME))

    ruleset = data.get("ruleset")
    try:
        known = available_rulesets()
    except RulesetError:
        known = ()
    if ruleset not in known:
        newer = isinstance(ruleset, str) and newer_than_installed(ruleset)
        why = unknown_ruleset(str(ruleset)) if newer else "not installed"
        report.add(finding("PKG046", shown, f"the manifest names ruleset {ruleset!r}: {why}"))
        return None
    return str(ruleset)


def _check(tree: Path, display: str, ruleset: str, jobs: int, report: Report, progress: Tracker) -> None:
    orgs = sorted(p for p in tree.iterdir() if is_org(p))
    if not orgs:  # an empty archive, or one of stray files, is no submission: it must not verify as OK
        report.add(finding("PKG049", display, "the archive holds no organisation folder (with results/, systems/ "
                           "or benchmarks/); nothing in it could be checked"))
        return
    run = run_check([str(p) for p in orgs], CheckOptions(ruleset=ruleset, jobs=jobs), progress=progress)
    checked = remap(run.report, str(tree), "")
    for path, findings in checked.files.items():
        report.add_file(path.lstrip(os.sep), [f.with_path(f.path.lstrip(os.sep)) for f in findings])
    report.extend(f.with_path(f.path.lstrip(os.sep)) for f in checked.tree)
