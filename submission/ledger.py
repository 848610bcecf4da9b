"""A result entry's runs taken from the run ledger (`ledger = "FILE"` in [[results]]): every run `check --ledger`
recorded for the entry's system and benchmark, at the path it was read from, while its file is still as recorded
(the latest entry per path; a replaced file's earlier entries stay in the ledger, and the manifest's `run_set` lists
the hashes of every run the selection chose from)."""

from __future__ import annotations

from pathlib import Path

from mlsubmit.checker.base.ledger import Entry as LedgerEntry
from mlsubmit.checker.base.ledger import read as read_ledger
from mlsubmit.submission.config import PackageConfig, ResultEntry

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.safe_io import sha256_file


def ledger_runs(cfg: PackageConfig, entry: ResultEntry) -> tuple[list[Path], list[Finding]]:
    """The recorded runs' files (sorted by path) and a finding for each recorded run that is gone or changed."""
    if entry.ledger is None:
        return [], []
    latest: dict[str, LedgerEntry] = {}
    for e in read_ledger(cfg.base / entry.ledger):  # exit 2 for a ledger that is not ours or not whole
        if e.system == entry.system and e.benchmark == entry.benchmark:
            latest[e.path] = e  # rows are in the order they were added: a later entry for the path wins
    where = f"/results/{entry.index}/ledger"
    paths, findings = [], []
    for path, e in sorted(latest.items()):
        try:
            now = sha256_file(Path(path))
        except OSError as exc:
            findings.append(finding("RUN008", str(cfg.path), f"{e.shown}: recorded in {entry.ledger}, but cannot "
                                    f"be read now ({exc.strerror or exc}); left out", pointer=where))
            continue
        if now != e.sha256:
            findings.append(finding("RUN008", str(cfg.path), f"{e.shown}: changed since {entry.ledger} recorded it "
                                    f"(sha256 {e.sha256[:12]}, now {now[:12]}); left out until a check --ledger "
                                    "records it", pointer=where))
            continue
        paths.append(Path(path))
    return paths, findings
