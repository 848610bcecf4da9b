"""Finding the donor: among the round's trees, the entries of other submitters for the same benchmark whose
hyperparameters the resubmission matches, best match first (never the original submitter's own, under any system
name). Only each candidate's first run is read: a results folder's runs log the same hyperparameters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mlsubmit.checker.review.borrow import hyperparameter_keys, same_value
from mlsubmit.checker.review.borrowing_rules import BorrowRules
from mlsubmit.checker.review.entries import Entry, entry_folders, log_names, read_entry
from mlsubmit.checker.review.identity import hardware, same_submitter


@dataclass(frozen=True)
class Candidate:
    entry: Entry
    matched: int  # hyperparameters (outside the batch-size family and the kept settings) with the same value
    compared: int  # hyperparameters either logs

    @property
    def share(self) -> float:
        return self.matched / self.compared if self.compared else 0.0


def scored_candidate(resubmitted: Entry, candidate: Entry, rules: BorrowRules, ruleset: str) -> Candidate:
    keys = (hyperparameter_keys(resubmitted, rules, ruleset) | hyperparameter_keys(candidate, rules, ruleset))
    keys -= rules.batch | rules.kept
    matched = 0
    for key in keys:
        mine, theirs = resubmitted.value(key), candidate.value(key)
        if mine is not None and theirs is not None and same_value(mine.value, theirs.value):
            matched += 1
    return Candidate(candidate, matched, len(keys))


def is_own_entry(entry: Entry, original: Entry) -> bool:
    """The original's submitter's entry, under any system name: by the log's submission_org, or by the system
    descriptions' submitter (review/identity.py, one identity with review preview and since)."""
    if entry.org is not None and entry.org == original.org:
        return True
    mine = hardware(original.system_data, original.system, org=original.org)
    return same_submitter(mine, hardware(entry.system_data, entry.system, org=entry.org))


def rank_donors(original: Entry, resubmitted: Entry, trees: list[str], rules: BorrowRules,
                ruleset: str) -> list[Candidate]:
    """Other submitters' entries of the benchmark in `trees`, best match first (then by path, for a stable order)."""
    seen = {original.folder.resolve(), resubmitted.folder.resolve()}
    out: list[Candidate] = []
    for tree in trees:
        for folder in entry_folders(Path(tree), resubmitted.benchmark):
            if folder.resolve() in seen or not log_names(folder):
                continue
            seen.add(folder.resolve())
            entry = read_entry(folder, limit=1)
            if is_own_entry(entry, original):
                continue
            out.append(scored_candidate(resubmitted, entry, rules, ruleset))
    return sorted(out, key=lambda c: (-c.share, -c.matched, str(c.entry.folder)))
