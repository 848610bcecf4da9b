"""Package checker params at the narrowest scope, and the evidence the rules ask for where an RCP check is bypassed.

The reference package checker (mlperf-logging 4.1.68, `check_training_result_files`) reads a
`package_checker_params` file in a system's results folder and in a benchmark's, besides the organisation's
(training_policies PR #581, mlcommons/training#838). It reads them with `readlines()` and compares each line,
newline included, with "rcp-bypass" or "seed-checker-bypass": only a last line without a newline is ever honoured.
So a folder file holds exactly one flag and no newline, and `rcp-bert-train-samples` cannot be given there. The
organisation's file is read by the verify script instead, one `--<line>` per newline-ended line (build.py).

For every results folder whose RCP check a bypass switches off, `rcp-evidence/<system>/<benchmark>/` beside the
organisation folder gets the evidence of "Handling RCP failures" (checker.tree.rcp_evidence): outside `<org>/`, so
neither the package checker (which warns on unknown files in a results folder), the repo checker nor the archive
sees it; it is for the Submitters' Working Group, by the end of review week 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit.checker.tree import rcp_evidence
from mlsubmit.submission.package_config import PackageConfig

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support import jsontext
from mlsubmit.core.support.safe_io import read_bounded

if TYPE_CHECKING:
    from mlsubmit.checker import CheckRun

NAME = "package_checker_params"
EVIDENCE = "rcp-evidence"


def write_folder_params(cfg: PackageConfig, org_root: Path) -> list[Path]:
    """Each system's and benchmark folder's flag, as the package checker reads it: one line, no newline."""
    wanted = [(org_root / "results" / system / NAME, flags[0]) for system, flags in sorted(cfg.system_params.items())]
    wanted += [(org_root / "results" / e.system / e.benchmark / NAME, e.checker_params[0])
               for e in cfg.results if e.checker_params]  # fmt: skip
    return [_write(path, flag) for path, flag in wanted]


def _write(path: Path, flag: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(flag.encode("ascii"))  # no newline: the reference compares "rcp-bypass\n" and fails it
    return path


def write_evidence(cfg: PackageConfig, run: CheckRun, build: Path, org_root: Path, shown_out: str
                   ) -> tuple[list[Path], list[Finding]]:
    """rcp_convergence.csv and eval_curves.csv for each closed folder whose RCP check is bypassed; one PKG063 per
    folder saying where the bypass is and what the RCP check says without it."""
    written: list[Path] = []
    notes: list[Finding] = []
    for org in run.targets.orgs:
        groups: dict[tuple[str, str], list[str]] = {}
        for ref in org.logs:
            if ref.system and ref.benchmark:
                groups.setdefault((ref.system, ref.benchmark), []).append(ref.display)
        for (system, bench), displays in sorted(groups.items()):
            folder = org_root / "results" / system / bench
            scope = rcp_evidence.bypass_scope(folder, org_root, cfg.ruleset)
            if scope is None or not _closed(org_root / "systems" / f"{system}.json"):
                continue
            facts = [run.results[d].facts for d in sorted(displays, key=_index)]
            shown = f"{cfg.org}/results/{system}/{bench}"
            ev = rcp_evidence.bypass_evidence(shown, system, bench, cfg.ruleset, facts, scope)
            dest = build / EVIDENCE / system / bench
            dest.mkdir(parents=True, exist_ok=True)
            for name, text in ((rcp_evidence.CONVERGENCE_CSV, rcp_evidence.convergence_csv(ev)),
                               (rcp_evidence.CURVES_CSV, rcp_evidence.curves_csv(ev))):  # fmt: skip
                (dest / name).write_text(text, encoding="utf-8")
                written.append(dest / name)
            notes.append(_note(ev, dest.relative_to(build), os.path.join(shown_out, shown)))
    return written, notes


def _closed(system_file: Path) -> bool:
    """The reference checks RCPs where the system file says exactly "closed"."""
    try:  # bounded read and depth, as every JSON we did not write (a FIFO or 1e6-deep file is a miss)
        desc = jsontext.loads(read_bounded(system_file, 1 << 20), finite=False)  # NaN: as the reference reads it
    except (OSError, ValueError):
        return False
    return isinstance(desc, dict) and desc.get("division") == "closed"


def _index(display: str) -> tuple[int, str]:
    stem = os.path.basename(display).removesuffix(".txt").rsplit("_", 1)[-1]
    return (int(stem) if stem.isdigit() else 1 << 30, display)


def _note(ev: rcp_evidence.Evidence, where: Path, path: str) -> Finding:
    return finding("PKG063", path, f"rcp-bypass written at the {ev.scope}; without it the RCP check says: "
                   f"{ev.verdict}. Evidence for the review in {where.as_posix()}/")
