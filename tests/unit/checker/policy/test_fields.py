"""A profile's levels per field of a file (the finding's JSON pointer) and per case the check names there: the
default profile's table for system descriptions, how it is applied, and what `explain` shows of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlsubmit.checker.policy import profiles
from mlsubmit.checker.policy.severity import Layer, Policy, field_of

from mlsubmit.cli import main
from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Report, Severity

PATH = "org/systems/a.json"


def _level(code: str, field: str, case: str | None = None, policy: Policy | None = None) -> Severity:
    report = Report()
    report.add_file(PATH, [finding(code, PATH, f"{field} here", pointer=f"/{field}", case=case)])
    (policy or Policy("full")).apply(report, "5.1")
    return report.all_findings()[0].severity


@pytest.mark.parametrize(("code", "field", "case", "want"), [
    ("SYS016", "submitter", None, Severity.ERROR),  # the row's submitter and its links
    ("SYS016", "accelerator_model_name", None, Severity.ERROR),
    ("SYS016", "framework", None, Severity.WARNING),  # one published v6.0 description leaves it empty
    ("SYS016", "host_networking_topology", None, Severity.WARNING),  # descriptive: the code's own level
    ("SYS017", "system_name", None, Severity.ERROR),
    ("SYS017", "accelerator_model_name", None, Severity.WARNING),  # CPU-only systems write N/A
    ("SYS012", "number_of_nodes", None, Severity.ERROR), ("SYS012", "number_of_nodes", "zero", Severity.ERROR),
    ("SYS012", "accelerators_per_node", None, Severity.ERROR),
    ("SYS012", "accelerators_per_node", "zero", Severity.WARNING),
    ("SYS012", "host_network_card_count", None, Severity.WARNING),
    ("SYS012", "host_processor_vcpu_count", "zero", Severity.WARNING),
    ("SYS020", "accelerators_per_node", None, Severity.ERROR), ("SYS020", "number_of_nodes", None, Severity.INFO),
    ("SYS013", "division", None, Severity.ERROR),  # no table takes another division: the catalogue's error
])  # fmt: skip
def test_the_default_levels_system_description_codes_field_by_field(code: str, field: str, case: str | None,
                                                                    want: Severity) -> None:
    assert _level(code, field, case) is want


def test_a_milder_field_names_its_practice_and_a_layer_still_wins() -> None:
    report = Report()
    report.add_file(PATH, [finding("SYS012", PATH, "host_network_card_count is '1x 10GbE'",
                                   pointer="/host_network_card_count")])
    Policy("full").apply(report, "6.0")
    (found,) = report.all_findings()
    assert found.severity is Severity.WARNING
    assert "accepted in practice: accepted trees write free text" in found.message
    flags = Policy("full", (Layer("--severity", levels=(("SYS016", Severity.WARNING),)),))
    assert _level("SYS016", "submitter", policy=flags) is Severity.WARNING


def test_the_field_is_the_pointers_first_name() -> None:
    def at(pointer: str | None) -> str | None:
        return field_of(finding("SYS016", PATH, "x", pointer=pointer))

    assert at("/accelerator_on-chip_memories") == "accelerator_on-chip_memories"
    assert at("/other_software_stack/0") == "other_software_stack" and at("/a~1b") == "a/b"
    assert at(None) is None and at("/") == ""


def test_every_field_level_has_its_source() -> None:
    for name in profiles.SHIPPED:
        for code, level in profiles.load(name).levels().items():
            assert all(f.source for f in level.fields), code


def test_explain_shows_the_field_table(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "SYS012"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "per field of the file" in out and "- number_of_nodes: error; why: the result summarizer" in out
    assert "- accelerators_per_node (zero): warning" in out and "23 descriptions in 4 accepted trees" in out
