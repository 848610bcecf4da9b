"""The codes the `run-sets` check may emit (checker/engine/checks.py registers it): its own, and those of the
results-folder checks it judges a run set with. A module of its own: the check itself (tree/runset.py) is imported
when it first runs (SQLite, numpy), its declaration whenever the registry is."""

from __future__ import annotations

CODES = frozenset({"POW001", "POW002", "POW003", "POW004", "RUN001", "RUN002", "RUN003", "RUN004", "RUN005",
                   "RUN006", "RUN007", "RUN009", "TREE003", "TREE007", "TREE008", "TREE014", "TREE015", "TREE016",
                   "TREE017", "TREE018", "TREE019", "TREE020", "TREE021", "TREE023", "TREE024", "TREE051"})
