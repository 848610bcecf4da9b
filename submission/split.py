"""`uploads = N` in package.toml: one organisation packaged as N uploads `<org>_1` ... `<org>_N`.

The submission UI keeps only the latest upload per submission id, so a team that uploads in parts asks for extra
ids and folders named `<org>_<number>` (mlcommons/training#877). Each upload is a whole `package` build of its
share of `[[results]]` (its systems, implementations, the organisation's package_checker_params, its own archive
`mlperf_submission_<org>_<n>.tar.gz` and manifest) in `out/<org>_<n>/`, checked alone. Then the uploads are put
together as the one organisation the chair publishes and checked as the whole: a file two uploads both hold must
be the same bytes (PKG064), and the whole tree gets the full check. The N builds and the whole are one build:
`out` is replaced only when every upload and the whole pass (or with --allow-findings).
"""

from __future__ import annotations

import dataclasses
import filecmp
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker import apply_waivers
from mlsubmit.submission import build
from mlsubmit.submission.buildfolder import build_folder
from mlsubmit.submission.package_config import PackageConfig

from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError
from mlsubmit.core.findings import Finding, Report, has_errors

WHOLE = ".whole"  # where the uploads are put together in the build folder, removed before it is finalised


@dataclass
class SplitResult:
    report: Report
    out: Path
    uploads: list[build.PackageResult] = field(default_factory=list)
    finalised: bool = False

    @property
    def outputs(self) -> list[Path]:
        return [p for r in self.uploads for p in r.outputs]


def upload_name(org: str, number: int) -> str:
    return f"{org}_{number}"


def upload_config(cfg: PackageConfig, number: int, out: Path) -> PackageConfig:
    """The config of one upload: its entries, the system params of its systems, the organisation's params."""
    results = tuple(e for e in cfg.results if e.upload == number)
    systems = {e.system for e in results}
    return dataclasses.replace(cfg, org=upload_name(cfg.org, number), results=results, out=out, uploads=1,
                               system_params={k: v for k, v in cfg.system_params.items() if k in systems})


def not_ours(out: Path, org: str) -> str | None:
    """A split's `out` may be replaced when it is missing, empty, or holds only builds of this organisation's
    uploads, each as package wrote it."""
    if not out.exists():
        return None
    if out.is_symlink() or not out.is_dir():
        return "is not a folder"
    pattern = re.compile(rf"^{re.escape(org)}_[0-9]+$")
    for entry in sorted(out.iterdir()):
        if not pattern.match(entry.name):
            return f"holds {entry.name}, which is not an upload {org}_<n> of a previous build"
        why = build.not_ours(entry)
        if why is not None:
            return f"{entry.name} {why}"
    return None


def package_split(cfg: PackageConfig, options: build.PackageOptions) -> SplitResult:
    out = cfg.out
    why = not_ours(out, cfg.org)
    if why is not None:
        raise FatalError(f"{out}: {why}; choose another `out`, or move what you keep out of it")
    with build_folder(out) as tmp:
        return _split(cfg, options, tmp)


def _split(cfg: PackageConfig, options: build.PackageOptions, tmp: Path) -> SplitResult:
    result = SplitResult(report=Report(), out=cfg.out)
    for number in range(1, cfg.uploads + 1):
        done = build.package(upload_config(cfg, number, tmp / upload_name(cfg.org, number)), options)
        result.uploads.append(done)
        _merge(result.report, build.remap(done.report, str(tmp), os.path.normpath(cfg.out)))
    if not all(r.finalised for r in result.uploads):
        return result  # an upload was refused: its own findings say why, and nothing is written
    whole = tmp / WHOLE / cfg.org
    result.report.extend(_put_together(cfg, tmp, whole))
    checked = build.check_tree(whole, cfg, options)
    shown = build.remap(checked.report, str(whole), os.path.join(os.path.normpath(cfg.out), cfg.org))
    policy = options.policy
    _merge(result.report, apply_waivers(shown, policy.waivers, today=policy.today, anchor=cfg.path.parent))
    shutil.rmtree(tmp / WHOLE)
    if has_errors(result.report.all_findings(), strict=options.strict) and not options.allow_findings:
        return result
    build.swap_in(tmp, cfg.out)
    result.finalised = True
    for done in result.uploads:
        done.outputs = [cfg.out / p.relative_to(tmp) for p in done.outputs]
    return result


def _merge(into: Report, part: Report) -> None:
    for path, findings in part.files.items():
        into.add_file(path, findings)
    into.tree.extend(part.tree)


def _put_together(cfg: PackageConfig, tmp: Path, whole: Path) -> list[Finding]:
    """Every upload's tree copied into one organisation folder; a path two uploads hold with other bytes is
    PKG064 (the chair's copy would keep whichever came last)."""
    problems: list[Finding] = []
    owner: dict[str, int] = {}
    for number in range(1, cfg.uploads + 1):
        tree = tmp / upload_name(cfg.org, number) / upload_name(cfg.org, number)
        for src in sorted(p for p in tree.rglob("*") if p.is_file()):
            rel = src.relative_to(tree).as_posix()
            dest = whole / rel
            if rel in owner:
                if not filecmp.cmp(dest, src, shallow=False):
                    problems.append(finding("PKG064", os.path.join(os.path.normpath(cfg.out), cfg.org, rel),
                                            f"upload {owner[rel]} and upload {number} hold different files here"))
                continue
            owner[rel] = number
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    return problems
