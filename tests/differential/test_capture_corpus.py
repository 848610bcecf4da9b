"""Differential: the published descriptions of every family `systems capture` completes (Graphcore's IPU-PODs in
v1.0 and v1.1), rebuilt from a capture of their host server and the POD's size, give the counts, accelerator and
status the accepted files state.

The capture is what mlperf-sysinfo would write on one of the system's host servers: the published host fields,
one node, the server's sockets (two EPYC 7742) with the cores and threads of both together. The number of host
servers comes from the published file (number_of_nodes × host_processors_per_node / sockets), as a user gives it
with --host-servers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.capture import FIELDS, capture_document
from mlsubmit.checker.systems.capture import parse_capture
from mlsubmit.checker.systems.completion import Request, build, pod_of, pod_sizes
from mlsubmit.checker.systems.knowledge import knowledge

pytestmark = pytest.mark.corpus
COMPARED = ("number_of_nodes", "accelerators_per_node", "host_processors_per_node", "host_processor_core_count",
            "accelerator_model_name", "accelerator_frequency", "accelerator_memory_capacity", "status")  # fmt: skip
SOCKETS = 2


def completable(corpus: Path) -> list[tuple[Path, str, int]]:
    """(file, ruleset, POD size) of every system file named for a family with completion facts."""
    out = []
    for path in sorted(corpus.glob("training_results_v*/*/systems/*.json")):
        found = knowledge().family_of(path.stem)
        if found and found[0].name in pod_sizes():
            out.append((path, path.parts[-4].removeprefix("training_results_v") + ".0", found[1]))
    return out


def test_every_published_pod_description_is_rebuilt(corpus: Path) -> None:
    cases = completable(corpus)
    assert len(cases) >= 16  # v1.0: 6 Graphcore files, v1.1: 10
    for path, ruleset, size in cases:
        published = json.loads(path.read_text(encoding="utf-8"))
        nodes, per_node = int(published["number_of_nodes"]), int(published["host_processors_per_node"])
        host = {name: published.get(name, "") for name in FIELDS if not name.startswith("accelerator")}
        host.update(status="Available on-premise", number_of_nodes="1", host_processors_per_node=str(SOCKETS),
                    host_processor_core_count=str(int(published["host_processor_core_count"]) * SOCKETS))
        capture, found = parse_capture(json.dumps(capture_document(host)).encode(), path.name)
        assert capture is not None, found
        built = build(capture, Request(path.stem, ruleset, pod_of(size, None),
                                       host_servers=nodes * per_node // SOCKETS))  # fmt: skip
        assert {k: built.data[k] for k in COMPARED} == {k: published[k] for k in COMPARED}, path
        assert not [f for f in built.findings if f.code == "CAP010"], path
