"""A result entry's runs taken from the run ledger (`ledger = "FILE"` in [[results]]): every run `check --ledger`
recorded for the entry's system and benchmark, at the path it was read from, while its file is still as recorded
(the latest entry per path; a replaced file's earlier entries stay in the ledger, and the manifest's `run_set` lists
the hashes of every run the selection chose from).

What is packaged is the recorded run set or nothing: a recorded file that is gone or changed, or a ledger row that
cannot be read as an entry (it might be one of the set's runs), is an error (RUN008) naming it, so the build stops
instead of packaging another set (a window moved by one run) without a word."""

from __future__ import annotations

from pathlib import Path

from mlsubmit.checker.base.ledger import Entry as LedgerEntry
from mlsubmit.checker.base.ledger_rows import Reader
from mlsubmit.submission.package_config import PackageConfig, ResultEntry

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.ledger_url import location, shown_ledger
from mlsubmit.core.support.safe_io import sha256_file


def ledger_runs(cfg: PackageConfig, entry: ResultEntry) -> tuple[list[Path], list[Finding]]:
    """The recorded runs' files (sorted by path) and a finding for each recorded run that is gone or changed."""
    if entry.ledger is None:
        return [], []
    latest: dict[str, LedgerEntry] = {}
    with Reader(location(entry.ledger, cfg.base)) as reader:  # exit 2 for a ledger that is not ours or not whole
        for e in reader.entries():
            if e.system == entry.system and e.benchmark == entry.benchmark:
                latest[e.path] = e  # rows are in the order they were added: a later entry for the path wins
    where, ledger = f"/results/{entry.index}/ledger", shown_ledger(entry.ledger)  # a URL's password never shown
    paths, findings = [], []
    findings += [finding("RUN008", str(cfg.path), f"{ledger}: {note} (not a ledger entry; it may be one of "
                         "this set's runs)", pointer=where) for note in reader.notes()]
    for path, e in sorted(latest.items()):
        try:
            now = sha256_file(Path(path))
        except OSError as exc:
            findings.append(finding("RUN008", str(cfg.path), f"{e.path}: recorded in {ledger}, but cannot "
                                    f"be read now ({exc.strerror or exc}): the recorded run set cannot be "
                                    "packaged", pointer=where))
            continue
        if now != e.sha256:
            findings.append(finding("RUN008", str(cfg.path), f"{e.path}: changed since {ledger} recorded it "
                                    f"(sha256 {e.sha256[:12]}, now {now[:12]}): the recorded run set cannot be "
                                    "packaged", pointer=where))
            continue
        paths.append(Path(path))
    return paths, findings
