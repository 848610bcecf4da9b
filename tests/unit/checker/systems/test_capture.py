"""The capture reader on any bytes and any JSON (never a traceback, only catalogued codes), and the completion's
pieces: POD facts from the knowledge table, per-round status spelling and field order."""

from __future__ import annotations

import json

import pytest
from fixtures.capture import DUAL_EPYC, capture_document
from hypothesis import given
from hypothesis import strategies as st
from mlsubmit.checker.systems.capture import parse_capture
from mlsubmit.checker.systems.completion import Request, build, field_order, pod_of, status_spelling

from mlsubmit.core.codes import catalogue
from mlsubmit.core.errors import UsageError

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                max_size=4), max_leaves=20)  # fmt: skip


@given(st.binary(max_size=300))
def test_any_bytes_give_findings_never_an_exception(raw: bytes) -> None:
    capture, found = parse_capture(raw, "c.json")
    assert all(f.code in catalogue() for f in found)
    assert capture is not None or found


@given(st.dictionaries(st.sampled_from(["number_of_nodes", "host_processors_per_node", "status", "x",
                                        "host_processor_core_count"]), JSON), JSON)  # fmt: skip
def test_any_fields_and_block_values_are_typed_or_refused(fields: dict[str, object], block: object) -> None:
    doc = {**capture_document(), **fields}
    doc["mlperf_sysinfo"] = block if not isinstance(block, dict) else {**capture_document()["mlperf_sysinfo"], **block}
    capture, found = parse_capture(json.dumps(doc).encode(), "c.json")
    assert all(f.code in catalogue() for f in found)
    if capture is not None:
        assert all(isinstance(v, str) for v in capture.fields.values())
        build(capture, Request("ipu-pod16-x", "6.1.0", pod_of(16, None)))  # never raises on what was accepted


def test_pods_come_from_the_knowledge_table() -> None:
    assert (pod_of(16, None).machines, pod_of(None, 16).size, pod_of(256, 64).nodes) == (4, 64, 4)
    with pytest.raises(UsageError, match="IPU-M2000"):
        pod_of(64, 4)
    with pytest.raises(UsageError, match="16, 64, 128, 256"):
        pod_of(8, None)


@pytest.mark.parametrize(("given_as", "ruleset", "spelled"), [
    ("onprem", "6.1.0", "Available on-premise"), ("Available on-premise", "1.1.0", "onprem"),
    ("cloud", "4.0.0", "Available cloud"), ("Preview", "2.1.0", "preview"), ("rdi", "5.1.0",
    "Research, Development, or Internal (RDI)"), ("banana", "6.1.0", "banana")])  # fmt: skip
def test_status_is_spelled_per_round(given_as: str, ruleset: str, spelled: str) -> None:
    assert status_spelling(given_as, ruleset) == spelled


def test_field_order_is_our_files_order() -> None:
    order = field_order("6.1.0")
    assert order[:5] == ["submitter", "division", "system_type", "status", "system_name"]
    assert order.index("host_network_card_count") == order.index("host_networking") + 1
    assert len(order) == 35


def test_pod128_splits_host_servers_over_its_pod64s() -> None:
    capture, _ = parse_capture(json.dumps(capture_document(DUAL_EPYC)).encode(), "c.json")
    assert capture is not None
    done = build(capture, Request("ipu-pod128-x", "6.1.0", pod_of(128, None), host_servers=2))
    assert [done.data[k] for k in ("number_of_nodes", "accelerators_per_node", "host_processors_per_node")] == \
        ["2", "64", "2"]  # fmt: skip
    odd = build(capture, Request("ipu-pod256-x", "6.1.0", pod_of(256, None), host_servers=3))
    assert [f.code for f in odd.findings if f.code == "CAP010"] == ["CAP010"]  # 6 sockets over 4 POD64s
    assert odd.data["host_processors_per_node"] == "2"  # left as captured, and said


def test_a_stated_status_is_spelled_for_the_round_too() -> None:
    capture, _ = parse_capture(json.dumps(capture_document()).encode(), "c.json")
    assert capture is not None
    done = build(capture, Request("ipu-pod16-x", "6.1.0", None, settings=(("status", "onprem"),)))
    assert done.data["status"] == "Available on-premise"


def test_a_lone_surrogate_in_a_capture_or_a_setting_is_refused() -> None:
    """Issue 49: a lone surrogate (a JSON escape) reached the description's UTF-8 bytes (exit 3)."""
    from mlsubmit.cli.commands.systems import _settings

    doc = capture_document()
    doc["hw_notes"], doc["x\udcff"] = "a\ud800", "b"
    doc["mlperf_sysinfo"]["version"] = "1\udfff"
    capture, found = parse_capture(json.dumps(doc).encode(), "c.json")
    assert capture is None
    assert sorted((f.code, f.pointer) for f in found) == [
        ("CAP007", "/mlperf_sysinfo/version"), ("CAP009", "/hw_notes"), ("CAP009", "/x\udcff")]
    with pytest.raises(UsageError, match="not UTF-8 text"):
        _settings(["hw_notes=a\udcffb"])
