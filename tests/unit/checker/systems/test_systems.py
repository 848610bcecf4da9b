"""checker/systems/descriptions.py: per-round schemas, IPU-POD semantics from data, and the summary for the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mlsubmit.checker.systems.descriptions import check_system_file, summarize, validate
from mlsubmit.checker.systems.jsonfile import parse_json
from mlsubmit.checker.systems.knowledge import knowledge

from mlsubmit.core.codes import code_info
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support.schema_loader import load_schema

ROOT = Path(__file__).resolve().parents[4]
SYSTEMS = ROOT / "systems"
POD16 = "ipu-pod16-POPART-closed"
POD64_TF = "ipu-pod64-TF-closed"
SCHEMAS = ["system-defs.schema.json", "system-1.0.schema.json", "system-2.1.schema.json", "system-4.0.schema.json",
           "systems-knowledge.schema.json"]


def base(name: str = POD16) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SYSTEMS / f"{name}.json").read_text())
    return data


def check(data: dict[str, Any], *, ruleset: str = "1.1.0", system_id: str = POD16) -> list[Finding]:
    """One key per line (json.dumps indent=2): the key at index i of the dict sits on line i + 2."""
    doc = parse_json(json.dumps(data, indent=2).encode(), f"{system_id}.json")
    return doc.findings + validate(doc, ruleset, system_id)


def line_of(data: dict[str, Any], key: str) -> int:
    return list(data).index(key) + 2


def found(findings: list[Finding]) -> list[tuple[str, str | None]]:
    return sorted((f.code, f.pointer) for f in findings if f.severity is not Severity.INFO)


@pytest.mark.parametrize("name", SCHEMAS)
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_every_code_named_by_the_schemas_is_catalogued() -> None:
    def tags(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = node.get("x-finding")
            out = [own] if isinstance(own, str) else list(own.values()) if isinstance(own, dict) else []
            return out + [t for v in node.values() for t in tags(v)]
        return [t for v in node for t in tags(v)] if isinstance(node, list) else []

    for name in SCHEMAS[:4]:
        for code in tags(load_schema(name)):
            assert code_info(code).family == "SYS"


def test_knowledge_file_loads_and_maps_rulesets_to_schemas() -> None:
    kb = knowledge()
    assert kb.schema_name("1.0.0") == kb.schema_name("1.1.0") == "system-1.0.schema.json"
    assert kb.schema_name("3.1.0") == "system-2.1.schema.json"
    assert kb.schema_name("6.1.0") == "system-4.0.schema.json"


@pytest.mark.parametrize("ruleset", ["1.0.0", "1.1.0"])
@pytest.mark.parametrize("name", sorted(p.stem for p in SYSTEMS.glob("*.json")))
def test_own_system_descriptions_are_clean(name: str, ruleset: str) -> None:
    _, findings = check_system_file(SYSTEMS / f"{name}.json", name, ruleset)
    assert [f for f in findings if f.severity is not Severity.INFO] == []


def test_own_pod64_resnet_system_has_four_servers() -> None:
    _, findings = check_system_file(SYSTEMS / f"{POD64_TF}.json", POD64_TF, "1.1.0")
    assert [(f.code, f.pointer) for f in findings] == [("SYS033", "/host_processors_per_node")]
    assert "4 host servers per node" in findings[0].message


# ---- mutations: each breaks one thing and must give exactly the expected finding, at its line


def test_wrong_pod_size() -> None:
    data = base()
    data["accelerators_per_node"] = "8"
    findings = check(data)
    assert found(findings) == [("SYS030", "/number_of_nodes"), ("SYS030", "/system_name")]
    by_name = next(f for f in findings if f.pointer == "/system_name")
    assert by_name.line == line_of(data, "system_name")
    assert "1 × 8 = 8" in by_name.message
    assert {r.pointer for r in by_name.related} == {"/number_of_nodes", "/accelerators_per_node"}


def test_a_pod_size_of_thousands_of_digits_is_sys030_not_a_crash() -> None:
    """Issue 49: int() of the 5,000 digits after IPU-POD raised in check, report and review (exit 3)."""
    data = base()
    data["system_name"] = "IPU-POD" + "9" * 5000
    assert summarize(data, "x").stated_size is None
    by_name = next(f for f in check(data) if f.code == "SYS030" and f.pointer == "/system_name")
    assert "states size beyond any, but" in by_name.message and len(by_name.message) < 400


def test_pod_size_holds_over_several_nodes() -> None:
    data = base()
    data.update(system_name="IPU-POD128", number_of_nodes="2", accelerators_per_node="64")
    assert found(check(data, system_id="ipu-pod128-POPART-closed")) == []


def test_wrong_core_count() -> None:
    data = base()
    data["host_processor_core_count"] = "48"
    findings = check(data)
    assert found(findings) == [("SYS032", "/host_processor_core_count")]
    assert findings[-1].line == line_of(data, "host_processor_core_count")


def test_per_node_core_total_is_accepted() -> None:
    data = base()
    data["host_processor_core_count"] = "128"  # 2 × 64
    assert found(check(data)) == []


def test_accelerator_must_fit_the_family() -> None:
    data = base()
    data["accelerator_model_name"] = "NVIDIA A100-SXM4-80GB"
    assert found(check(data)) == [("SYS031", "/accelerator_model_name")]


def test_bow_pod_naming_is_data_not_code() -> None:
    data = base()
    data.update(system_name="Bow-Pod64", accelerators_per_node="64", accelerator_model_name="Graphcore Bow IPU")
    assert found(check(data, system_id="bow-pod64-closed")) == []
    data["accelerator_model_name"] = "Graphcore IPU GC200"
    assert found(check(data, system_id="bow-pod64-closed")) == [("SYS031", "/accelerator_model_name")]


@pytest.mark.parametrize("key", ["host_memory_capacity", "accelerator_memory_capacity"])
def test_a_memory_capacity_without_a_unit_is_a_warning(key: str) -> None:
    data = base()
    data[key] = "512"
    assert found(check(data)) == [("SYS049", f"/{key}")]
    data[key] = "3200 MT/s"  # a speed is no capacity
    assert found(check(data)) == [("SYS049", f"/{key}")]
    assert check(data)[0].severity is Severity.WARNING and check(data)[0].line == line_of(data, key)


@pytest.mark.parametrize("value", ["32GB", "2.0 TB", "183359 MiB", "24 x 32GB RDIMM, 3200MT/s", "512 gb", "N/A",
                                   "25G", "1.0T"])
def test_a_memory_capacity_with_a_unit_or_no_number_is_fine(value: str) -> None:
    data = base()
    data["host_memory_capacity"] = value
    assert "SYS049" not in {f.code for f in check(data)}


def test_servers_that_do_not_fill_sockets() -> None:
    data = base()
    data["host_processors_per_node"] = "3"
    assert found(check(data)) == [("SYS034", "/host_processors_per_node")]


@pytest.mark.parametrize("value", ["close", "Closed", "banana", ""])
def test_bad_division(value: str) -> None:
    data = base()
    data["division"] = value
    findings = check(data)
    assert found(findings) == [("SYS013", "/division")]
    assert findings[0].line == line_of(data, "division")


@pytest.mark.parametrize(("ruleset", "value", "code", "severity"), [
    ("1.1.0", "banana", "SYS014", Severity.ERROR),
    ("1.1.0", "Available on premise", "SYS015", Severity.WARNING),
    ("1.1.0", "onprem", None, None),
    ("4.0.0", "onprem", "SYS015", Severity.ERROR),
    ("4.0.0", "Available on-premise", None, None),
])
def test_status_vocabulary_follows_the_round(ruleset: str, value: str, code: str | None,
                                             severity: Severity | None) -> None:
    data = base()
    data["status"] = value
    findings = [f for f in check(data, ruleset=ruleset) if f.pointer == "/status"]
    assert [(f.code, f.severity) for f in findings] == ([(code, severity)] if code else [])


@pytest.mark.parametrize("value", ["", "   "])
def test_empty_required_field(value: str) -> None:
    data = base()
    data["accelerator_memory_capacity"] = value
    assert found(check(data)) == [("SYS016", "/accelerator_memory_capacity")]


@pytest.mark.parametrize("value", ["TODO", "TBD", "N/A", "-", "n/a", "TODO: ask IT", "<fill me in>"])
def test_placeholder_in_required_field(value: str) -> None:
    data = base()
    data["operating_system"] = value
    findings = check(data)
    assert found(findings) == [("SYS017", "/operating_system")]
    assert findings[0].line == line_of(data, "operating_system")


def test_todo_in_optional_field_is_a_warning_but_na_is_fine() -> None:
    data = base()
    data["hw_notes"] = "TODO"
    assert [(f.code, f.severity) for f in check(data)] == [("SYS018", Severity.WARNING)]
    data["hw_notes"] = "N/A"
    assert check(data) == []


def test_duplicate_key_is_reported_with_both_lines() -> None:
    data = base()
    first = line_of(data, "host_storage_type")
    text = json.dumps(data, indent=2).replace('"host_storage_type": "NVMe SSD",',
                                                '"host_storage_type": "NVMe SSD",\n  "host_storage_type": "SATA",')
    doc = parse_json(text.encode(), "x.json")
    dup = [f for f in doc.findings if f.code == "SYS005"]
    assert [(f.line, f.related[0].line, f.severity) for f in dup] == [(first + 1, first, Severity.ERROR)]


def test_truncated_file_is_one_finding() -> None:
    text = json.dumps(base(), indent=2)
    doc = parse_json(text[: len(text) // 2].encode(), "x.json")
    assert [f.code for f in doc.findings + validate(doc, "1.1.0", "x")] == ["SYS003"]


def test_integers_in_place_of_digit_strings_are_accepted() -> None:
    data = base()
    data.update(number_of_nodes=1, accelerators_per_node=16, host_processors_per_node=2, host_processor_core_count=64)
    findings = check(data)
    assert found(findings) == []
    assert sorted(f.pointer or "" for f in findings if f.code == "SYS020") == [
        "/accelerators_per_node", "/host_processor_core_count", "/host_processors_per_node", "/number_of_nodes"]
    assert all(f.severity is Severity.INFO for f in findings)


@pytest.mark.parametrize("value", ["8.0", "eight", "", 8.5, 0, "0", True, None])
def test_counts_must_be_whole_numbers(value: Any) -> None:
    data = base()
    data["accelerators_per_node"] = value
    assert ("SYS012", "/accelerators_per_node") in found(check(data))


def test_core_or_vcpu_count_is_enough_but_not_neither() -> None:
    data = base()
    data["host_processor_core_count"] = ""
    assert found(check(data)) == []
    data["host_processor_vcpu_count"] = ""
    assert found(check(data)) == [("SYS022", "/")]


def test_other_software_stack_may_be_text_object_or_list() -> None:
    data = base()
    for value in ({"POD-SW": "2.3.0"}, ["POD-SW 2.3.0"]):
        data["other_software_stack"] = value
        assert found(check(data)) == []
    for value, code in (({}, "SYS016"), ([], "SYS016"), (3, "SYS011"), ("", "SYS016")):
        data["other_software_stack"] = value
        assert found(check(data)) == [(code, "/other_software_stack")]


def test_every_error_is_reported_with_pointer_and_line() -> None:
    data = base()
    del data["cooling"]
    del data["sw_notes"]
    data.update(division="banana", framework="", operating_system="TBD", number_of_nodes="x", hw_notes=7)
    findings = check(data)
    assert found(findings) == sorted([
        ("SYS010", "/cooling"), ("SYS010", "/sw_notes"), ("SYS013", "/division"), ("SYS016", "/framework"),
        ("SYS017", "/operating_system"), ("SYS012", "/number_of_nodes"), ("SYS011", "/hw_notes")])
    for f in findings:
        assert f.line is not None and f.hint
        if f.code != "SYS010":
            assert f.line == line_of(data, f.pointer.lstrip("/"))  # type: ignore[union-attr]


def test_policy_fields_and_typos() -> None:
    data = base()
    del data["system_type"]
    data["system-type"] = "datacenter"
    findings = check(data)
    assert sorted((f.code, f.severity) for f in findings) == [("SYS019", Severity.WARNING), ("SYS021", Severity.INFO)]
    # from round 2.1 the 2022 fields are required to be meaningful, and host_network_card_count is asked for
    data = base()
    data["cooling"] = ""
    assert ("SYS016", "/cooling") in found(check(data, ruleset="3.0.0"))
    assert ("SYS019", "/host_network_card_count") in found(check(data, ruleset="3.0.0"))
    assert found(check(data, ruleset="1.0.0")) == []


def test_summary_totals_for_the_report() -> None:
    s = summarize(base(POD64_TF), POD64_TF)
    assert (s.family, s.stated_size, s.accelerators, s.host_processors, s.host_servers, s.host_cores) == (
        "Graphcore IPU-POD", 64, 64, 8, 4, 512)
    s = summarize({"system_name": "IPU-POD256", "number_of_nodes": "4", "accelerators_per_node": "64",
                   "host_processors_per_node": "8", "host_processor_model_name": "AMD EPYC 7742"}, "ipu-pod256-TF1")
    assert (s.accelerators, s.host_processors, s.servers_per_node, s.host_servers) == (256, 32, 4, 16)
    unknown = summarize({"host_processor_model_name": "Kunpeng 920", "number_of_nodes": "2",
                         "host_processors_per_node": "4"})
    assert (unknown.processor, unknown.host_processors, unknown.host_servers) == (None, 8, None)
    assert summarize([1, 2]).accelerators is None  # any shape, never raises
