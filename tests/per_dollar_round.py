"""A small round of two organisations for the per-dollar comparison (issue #16), written with mllog.

Graphcore: an IPU-POD16 closed BERT and ResNet-50, an unpriced IPU-POD64 BERT. NVIDIA: a DGX A100 named by id and
priced by its description; its ResNet-50 passes its RCP check faster than the RCP mean, so its scored time differs
from its olympic mean.
"""

from __future__ import annotations

from pathlib import Path

from fixtures.synth_org import runs, system, write_org

RULESET = "1.1.0"
PROJECT_PRICES = Path(__file__).resolve().parents[2] / "prices.toml"
DGX = {"submitter": "NVIDIA", "system_name": "dgxa100_ngc21.05_pytorch", "accelerators_per_node": "8",
       "accelerator_model_name": "NVIDIA A100-SXM4-80GB (400W)",
       "framework": "PyTorch NVIDIA Release 21.05"}  # fmt: skip
POD16_BERT = [34.0, 34.5, 35.0, 33.5, 34.25, 34.75, 35.5, 33.0, 34.6, 36.0]
POD64_BERT = [11.0, 11.1, 10.9, 11.2, 11.05, 10.95, 11.15, 11.3, 10.8, 11.25]
DGX_BERT = [21.5, 21.7, 21.9, 21.6, 21.8, 21.4, 22.0, 21.65, 21.75, 22.2]
POD16_RESNET = [37.0, 37.2, 36.9, 37.3, 37.1]
DGX_RESNET = [28.7, 28.8, 28.75, 28.9, 28.6]


def olympic(values: list[float]) -> float:
    kept = sorted(values)[1:-1]
    return sum(kept) / len(kept)


def build_round(root: Path) -> Path:
    """Graphcore and NVIDIA organisation folders under root; returns root."""
    write_org(
        root / "Graphcore",
        {"ipu-pod16-closed": system(), "ipu-pod64-closed": system(system_name="IPU-POD64", accelerators_per_node="64")},
        {
            ("ipu-pod16-closed", "bert"): runs(POD16_BERT, ruleset=RULESET),
            ("ipu-pod64-closed", "bert"): runs(POD64_BERT, ruleset=RULESET, platform="IPU-POD64"),
            ("ipu-pod16-closed", "resnet"): runs(POD16_RESNET, ruleset=RULESET, evals=44,
                                                 hyperparameters={"global_batch_size": 1920}),
        },
    )  # fmt: skip
    write_org(
        root / "NVIDIA",
        {"dgxa100_ngc21.05_pytorch": system(**DGX)},
        {
            ("dgxa100_ngc21.05_pytorch", "bert"): runs(DGX_BERT, ruleset=RULESET, org="NVIDIA",
                                                       platform="dgxa100_ngc21.05_pytorch"),
            ("dgxa100_ngc21.05_pytorch", "resnet"): runs(DGX_RESNET, ruleset=RULESET, org="NVIDIA", evals=35,
                                                         platform="dgxa100_ngc21.05_pytorch",
                                                         hyperparameters={"global_batch_size": 3264}),
        },
    )  # fmt: skip
    return root
