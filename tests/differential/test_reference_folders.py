"""Differential test, folder by folder: every results folder of every corpus tree, judged alone.

tools/reference_folders.py makes one small organisation per results folder (the folder and its system file);
mlperf-logging's package checker judges each (tools/reference_package_batch.py, one process, each on a copy), and
`mlsubmit check --profile reference` judges them all in one run. For every folder the verdicts must be equal, and
the folder must fail for the same reasons (file count, olympic tolerance, seeds, RCP, system file). A tree added
to the corpus later is covered without a change here.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.differential import our_kinds

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


@pytest.fixture(scope="module")
def judged(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path, dict[str, object]]]:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from reference_folders import split
    finally:
        sys.path.pop(0)
    made = split(corpus, tmp_path_factory.mktemp("folders"))
    jobs = "".join(f"{ruleset}\t{org}\n" for ruleset, _, org in made)
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "reference_package_batch.py"), "--stdin"],
                          input=jobs, capture_output=True, text=True, check=True, timeout=1200)  # fmt: skip
    refs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [(ruleset, org, ref) for (ruleset, _, org), ref in zip(made, refs, strict=True)]


def test_every_folder_gets_the_reference_verdict_for_the_same_reasons(
    judged: list[tuple[str, Path, dict[str, object]]], run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    rounds = sorted({org.parent for _, org, _ in judged})
    code, out, err = run_cli("check", "--profile", "reference", "--format", "json", *rounds)
    assert code in (0, 1), err
    data = json.loads(out)
    errors: dict[str, list[dict[str, object]]] = collections.defaultdict(list)
    for f in data["findings"] + [f for e in data["files"] for f in e["findings"]]:
        org = next((str(o) for _, o, _ in judged if str(f["path"]).startswith(f"{o}/")), None)
        assert org is not None, f["path"]
        errors[org].append(f)
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for _, org, ref in judged:
        mine = errors[str(org)]
        ours_ok = not any(f["severity"] == "error" for f in mine)
        rnd = org.parent.name
        if ref["crash"]:
            assert not ours_ok and any(f["code"] == "TREE024" for f in mine), (org.name, ref["crash"])
            table[rnd]["crash"] += 1
            continue
        assert ours_ok == ref["ok"], (org.name, ref["error_lines"], [(f["code"], f["message"]) for f in mine])
        assert our_kinds(mine) == ref["kinds"], org.name
        table[rnd]["agree"] += 1
    print({rnd: dict(counts) for rnd, counts in sorted(table.items())})  # the per-round table of the closing note
    assert sum(sum(c.values()) for c in table.values()) == len(judged) > 0
