"""Trees for the review's tests, written with mlperf_logging.mllog (testing.synth_org): our original entry, a donor
of another submitter and our resubmission; and organisations with an IPU-POD<n> system per scale for Preview."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixtures.synth_org import ROUND_MS, runs, system, write_org

OURS = {"opt_base_learning_rate": 0.001, "opt_lamb_beta_1": 0.9, "global_batch_size": 256}
THEIRS = {"opt_base_learning_rate": 0.004, "opt_lamb_beta_1": 0.8, "global_batch_size": 512}


def org_tree(root: Path, org: str, systems: dict[str, dict[str, Any]], hps: dict[str, dict[str, Any]],
         benchmark: str = "bert", ruleset: str = "1.0.0", minutes: float = 20.0) -> Path:
    specs = {(s, benchmark): runs([minutes] * 5, org=org, ruleset=ruleset, hyperparameters=hps[s]) for s in hps}
    return write_org(root, systems, specs)


def trees(tmp: Path, resub: dict[str, Any], *, resub_system: dict[str, Any] | None = None, nodes: str = "1",
           minutes: float = 20.0, benchmark: str = "bert", ruleset: str = "1.0.0") -> dict[str, Path]:
    pod16, pod64 = system(), system(number_of_nodes="4", system_name="IPU-POD64")
    org_tree(tmp / "ours", "Graphcore", {"pod16": pod16, "pod64": pod64}, {"pod16": OURS}, benchmark, ruleset)
    org_tree(tmp / "other", "Other", {"sys": system(submitter="Other")}, {"sys": THEIRS}, benchmark, ruleset)
    resub_sys = resub_system or system(number_of_nodes=nodes)
    org_tree(tmp / "resub", "Graphcore", {"pod16": resub_sys}, {"pod16": resub}, benchmark, ruleset, minutes)
    return {"original": tmp / "ours/results/pod16" / benchmark, "donor": tmp / "other/results/sys" / benchmark,
            "resubmitted": tmp / "resub/results/pod16" / benchmark}

def preview_tree(root: Path, status: str, scales: dict[int, float]) -> str:
    """One organisation: an IPU-POD<n> system per scale (n accelerators), bert in `minutes` per run."""
    systems = {f"pod{n}": system(status=status, system_name=f"IPU-POD{n}", number_of_nodes=str(n // 16))
               for n in scales}
    first = 1_620_000_000_000 + (0 if "preview" in status.lower() else ROUND_MS)  # the next round's runs
    write_org(root, systems, {(f"pod{n}", "bert"): runs([m] * 10, first_ms=first) for n, m in scales.items()})
    return str(root)
