"""Build small organisation trees for the tree-check tests: system files from the project's own systems/, runs
written with mllog through fixtures.synth, implementation code with README.md and run_and_time.sh."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from fixtures.synth import RunSpec, write_run

ROOT = Path(__file__).resolve().parents[1]
RCP_BATCH = 3264  # resnet batch size with an exact RCP in 1.0.0 and 1.1.0 (mean 35.15 epochs)


def system_json(name: str, division: str = "closed") -> dict[str, object]:
    data: dict[str, object] = json.loads((ROOT / "systems" / "ipu-pod16-POPART-closed.json").read_text("utf-8"))
    data["division"] = division
    return data


def resnet_runs(epochs: list[int], *, ruleset: str = "1.0.0", division: str = "closed") -> list[RunSpec]:
    """One closed ResNet-50 run per entry, converging at that epoch, each with its own seed."""
    return [
        RunSpec(benchmark="resnet", ruleset=ruleset, division=division, seed=100 + i, evals=e,
                hyperparameters={"global_batch_size": RCP_BATCH}, start_ms=1_620_000_000_000 + i * 10_000_000)
        for i, e in enumerate(epochs)
    ]  # fmt: skip


def build_org(
    root: Path,
    runs: dict[tuple[str, str], list[RunSpec]],
    *,
    systems: dict[str, str] | None = None,
    code: tuple[str, ...] | None = None,
) -> Path:
    """root/results/<system>/<bench>/result_<i>.txt for each (system, bench); systems/<system>.json with the given
    division (default: one closed file per system used); benchmarks/<bench>/implementations/ipu/ for `code`
    (default: every benchmark with runs)."""
    root.mkdir(parents=True, exist_ok=True)
    if systems is None:
        systems = {system: "closed" for system, _ in runs}
    for name, division in systems.items():
        path = root / "systems" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(system_json(name, division), indent=2) + "\n", encoding="utf-8")
    for (system, bench), specs in runs.items():
        folder = root / "results" / system / bench
        folder.mkdir(parents=True, exist_ok=True)
        for i, spec in enumerate(specs):
            write_run(folder / f"result_{i}.txt", replace(spec))
    for bench in code if code is not None else sorted({b for _, b in runs}):
        impl = root / "benchmarks" / bench / "implementations" / "ipu"
        impl.mkdir(parents=True, exist_ok=True)
        (impl / "README.md").write_text("# Run\n\n`./run_and_time.sh`\n", encoding="utf-8")
        (impl / "run_and_time.sh").write_text("#!/bin/bash\npython train.py --seed \"$RANDOM\"\n", encoding="utf-8")
    return root
