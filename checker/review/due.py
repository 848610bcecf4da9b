"""What a Preview result of one round owes the round under review, from the rounds' own data (rounds/history.py):
whether its benchmark is still Compatible there (the same or renamed: compared; retired: submission_rules.adoc
§Preview Systems L753 asks nothing of it in the results table, L757 gives the route), and whether the round is
already the one the Available result is due in (SR L726: "in time for the next submission or in the next
submission after 140 days, whichever is longer")."""

from __future__ import annotations

from dataclasses import dataclass

from mlsubmit.checker.rounds import history
from mlsubmit.checker.rounds.detect import round_name, version

L757 = ("a review-time submission on the retired benchmark at the Preview's smallest and largest scale, shown to "
        "the Results WG and not published (submission_rules.adoc §Preview Systems L757)")


@dataclass(frozen=True)
class Rounds:
    """The Preview's round and the round under review (rulesets "X.Y.0"; None where the trees do not name them)."""

    before: str | None
    now: str | None

    def benchmark_fate(self, benchmark: str) -> history.Fate:
        if self.before is None or self.now is None:
            return history.Fate("unknown", benchmark)
        return history.benchmark_fate(benchmark, self.before, self.now)

    @property
    def due(self) -> history.Due | None:
        return history.due_round(self.before) if self.before is not None else None

    @property
    def early(self) -> bool:
        """The round under review comes before the one the Available result is due in (the 140 days)."""
        due = self.due
        return (due is not None and due.postponed and self.now is not None
                and version(f"{round_name(self.now)}.0") < version(f"{due.round}.0"))

    def in_round(self) -> str:
        return f" in round {round_name(self.now)}" if self.now else ""

    def not_due(self) -> str:
        due = self.due
        if due is None or self.now is None:
            return ""
        return (f"not due in round {round_name(self.now)}: {due.explain()}, so the Available result is due in round "
                f"{due.round} (submission_rules.adoc §Results categories L726, §Preview Systems L753)")

    def retired(self, benchmark: str) -> str:
        now = round_name(self.now or "")
        return (f"{benchmark} is not a benchmark of round {now} (retired): the Available result is asked for on the "
                f"previewed benchmarks that are Compatible in that round (submission_rules.adoc §Preview Systems "
                f"L753), so none is asked for here; the Preview is validated by {L757}")
