"""The `eval-cadence` check: a closed run evaluates its quality at least as often as the reference implementation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlsubmit.checker.base.targets import OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.tree.shared import tree_facts

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.numbers import finite

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

CODES = frozenset({"TREE051"})

# CLOSED: the quality measure "must be evaluated at least as frequently ... as in the reference implementation";
# ResNet-50: "Every 4 epochs with offset 0 or 1 or 2 or 3" (TR1.0 L402 ... TR4.0 L457, section "Quality measure").
# Only a longer gap breaks it: more frequent evaluations are allowed, and where the first one falls is not judged
# (epoch 0 before training, 0- and 1-based numbering all occur in accepted trees).
EVAL_EVERY_EPOCHS = {"resnet": 4.0}


def check_eval_cadence(benchmark: str, runs: list[LogFacts]) -> list[Finding]:
    """TREE051 at a closed run's first evaluation that comes more epochs after the latest earlier one than its
    benchmark allows (evaluations repeated by several ranks, or logged out of order, make no gap)."""
    every = EVAL_EVERY_EPOCHS.get(benchmark)
    if every is None:
        return []
    out: list[Finding] = []
    for facts in runs:
        latest: float | None = None
        for occ in facts.all("eval_accuracy"):
            epoch = finite(occ.metadata.get("epoch_num")) if isinstance(occ.metadata, dict) else None
            if epoch is None:
                continue
            if latest is not None and epoch - latest > every:
                why = (f"evaluated at epoch {epoch:g}, {epoch - latest:g} epochs after the evaluation at epoch "
                       f"{latest:g}: a closed {benchmark} run is evaluated at least every {every:g} epochs")
                out.append(finding("TREE051", facts.path, why, line=occ.line))
                break
            latest = epoch if latest is None else max(latest, epoch)
    return out


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    return [f for folder in tree_facts(org, facts, options).closed()
            for f in check_eval_cadence(folder.folder.name, folder.runs)]
