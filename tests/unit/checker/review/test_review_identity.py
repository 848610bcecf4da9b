"""review preview on the published rounds' cases (issue 41), on trees written with mllog: a Preview's successor
by what the system is, whatever its name; the closest of several; a CPU system's chips; a benchmark retired or
renamed by the round; the 140-day clause; and the same identity in review since and review borrow."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fixtures.synth_org import ROUND_MS, runs, system, write_org
from mlsubmit.checker.review.donors import is_own_entry
from mlsubmit.checker.review.entries import read_entry
from mlsubmit.checker.review.identity import chips, hardware, match, name_stem, processor
from mlsubmit.checker.review.preview import check_preview, status_of
from mlsubmit.checker.review.since import check_since, since_counts
from mlsubmit.checker.rounds import benchmarks

from mlsubmit.report.review_html import render_preview

H100 = {"submitter": "NVIDIA", "accelerator_model_name": "NVIDIA H100-SXM5-80GB", "accelerators_per_node": "8",
        "host_processor_model_name": "Intel Xeon", "accelerator_interconnect": "NVLINK", "host_networking": "IB"}
SAPPHIRE = "Intel(R) Xeon(R) code named Sapphire Rapids"
PLATINUM = "Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz"
SPR = {"submitter": "Intel", "accelerators_per_node": "0", "accelerator_model_name": "N/A",
       "host_processors_per_node": "2", "accelerator_interconnect": ""}


def _org(root: Path, systems: dict[str, dict[str, Any]], entries: dict[tuple[str, str], float],
         ruleset: str = "1.0.0", org: str | None = None) -> str:
    """An organisation tree: each (system, benchmark) with the benchmark's run count at `minutes` per run; the
    logs' submission_org is `org`, else the first system's submitter."""
    org = org or next(iter(systems.values())).get("submitter", "Graphcore")
    later = any("preview" not in str(d.get("status", "")).lower() for d in systems.values())
    first = 1_620_000_000_000 + (ROUND_MS if later else 0)  # an Available tree's runs are of a later round
    specs = {(s, b): runs([m] * (benchmarks.runs(b) or 5), org=org, ruleset=ruleset, first_ms=first)
             for (s, b), m in entries.items()}
    write_org(root, systems, specs)
    return str(root)


def _round(tmp: Path, version: str, org: str = "NVIDIA") -> Path:
    return tmp / f"training_results_v{version}" / org


def _found(previous: str, current: str) -> list[Any]:
    return check_preview([previous], [current])[1]


def test_a_renamed_successor_is_found_by_its_hardware(tmp_path: Path) -> None:
    # NVIDIA v2.1 dgxh100_preview (system_name dgxh100_preview) -> v3.0 dgxh100_ngc23.04_pytorch (dgxh100)
    preview = system(**H100, status="preview", system_name="dgxh100_preview")
    available = system(**H100, status="Available on-premise", system_name="dgxh100")
    before = _org(tmp_path / "a", {"dgxh100_preview": preview}, {("dgxh100_preview", "bert"): 6.4})
    now = _org(tmp_path / "b", {"dgxh100_ngc23.04_pytorch": available}, {("dgxh100_ngc23.04_pytorch", "bert"): 5.0})
    found = _found(before, now)
    assert [f.code for f in found] == ["REV020"]
    assert "dgxh100_ngc23.04_pytorch" in found[0].message
    said = "the same system by submitter, division, accelerator NVIDIA H100-SXM5-80GB x 8 per node"
    assert said in found[0].message
    page = render_preview(*check_preview([before], [now]))
    assert "the same system by" in page and "accelerator NVIDIA H100-SXM5-80GB x 8 per node" in page


def test_other_hardware_is_no_successor_and_the_message_says_what_was_looked_for(tmp_path: Path) -> None:
    before = _org(tmp_path / "a", {"p": system(**H100, status="preview")}, {("p", "bert"): 6.4})
    other = {**H100, "accelerator_model_name": "NVIDIA H100-PCIe-80GB"}
    now = _org(tmp_path / "b", {"q": system(**other, status="onprem"), "r": system(**H100, status="onprem")},
               {("q", "bert"): 5.0, ("r", "resnet"): 9.0})
    found = _found(before, now)
    assert [f.code for f in found] == ["REV021"]
    assert "NVIDIA H100-SXM5-80GB x 8 per node" in found[0].message
    assert "without it: r" in found[0].message  # the same hardware, no bert result


def test_the_closest_of_several_candidates_is_compared(tmp_path: Path) -> None:
    # same accelerator and count; the one with the Preview's interconnect is the successor, though the other is faster
    before = _org(tmp_path / "a", {"p": system(**H100, status="preview")}, {("p", "bert"): 6.0})
    far = {**H100, "accelerator_interconnect": "PCIe", "host_networking": "Ethernet"}
    now = _org(tmp_path / "b", {"near": system(**H100, status="onprem"), "far": system(**far, status="onprem")},
               {("near", "bert"): 6.5, ("far", "bert"): 5.0})
    found = _found(before, now)
    assert [f.code for f in found] == ["REV022"]
    assert "Available near" in found[0].message and "interconnect, host networking" in found[0].message


def test_a_cpu_systems_chips_are_its_host_processors(tmp_path: Path) -> None:
    # Intel v2.1: "code named Sapphire Rapids" -> v3.0 "Platinum 8480+", accelerators_per_node 0
    preview = system(**SPR, status="preview", number_of_nodes="8", host_processor_model_name=SAPPHIRE)
    available = system(**SPR, status="available", number_of_nodes="4", host_processor_model_name=PLATINUM)
    before = _org(tmp_path / "a", {"8-nodes-SPR": preview}, {("8-nodes-SPR", "bert"): 86.0})
    now = _org(tmp_path / "b", {"4-nodes-SPR": available}, {("4-nodes-SPR", "bert"): 170.0})
    found = _found(before, now)
    assert [f.code for f in found] == ["REV020"]  # 8 x 170 <= 16 x 86 x 1.02 chip-minutes
    assert "16 chips: host processors, as accelerators_per_node is 0" in found[0].message
    assert "time x chips 1360.000" in found[0].message
    assert chips(system(**SPR, number_of_nodes="3"), "x").count == 6


def test_a_point_held_at_another_scale_says_its_own_scale_did_not(tmp_path: Path) -> None:
    # Intel v2.1 8-node SPR bert 85.907 min: v3.0's 8-node 88.103 misses 87.625, the 16-node 47.929 holds (L755)
    preview = system(**SPR, status="preview", number_of_nodes="8", host_processor_model_name=SAPPHIRE)
    before = _org(tmp_path / "a", {"8n": preview}, {("8n", "bert"): 85.907})
    now = _org(tmp_path / "b", {"8n": system(**SPR, status="available", number_of_nodes="8",
                                               host_processor_model_name=PLATINUM),
                                "16n": system(**SPR, status="available", number_of_nodes="16",
                                              host_processor_model_name=PLATINUM)},
               {("8n", "bert"): 88.103, ("16n", "bert"): 47.929})
    found = _found(before, now)
    assert [f.code for f in found] == ["REV020"] and "Available 16n" in found[0].message
    assert "at the Preview's own scale 8n (88.103 min, at most 87.625) does not hold" in found[0].message


def test_a_benchmark_retired_by_the_round_is_an_info_with_l757s_route(tmp_path: Path) -> None:
    # Google v4.1 Trillium gpt3 Previews: v5.0 has no gpt3
    trillium = {"submitter": "Google", "accelerator_model_name": "TPU-trillium", "accelerators_per_node": "4"}
    before = _org(_round(tmp_path, "4.1", "Google"), {"t512": system(**trillium, status="Preview",
                                                                       number_of_nodes="128")},
                  {("t512", "gpt3"): 102.0}, "4.1.0")
    now = _org(_round(tmp_path, "5.0", "Google"), {"t256": system(**trillium, status="Available cloud",
                                                                    number_of_nodes="64")},
               {("t256", "stable_diffusion"): 30.0}, "5.0.0")
    found = _found(before, now)
    assert [(f.code, f.severity) for f in found] == [("REV059", "info")]
    assert "retired" in found[0].message and "L757" in found[0].message and "L753" in found[0].message


def test_a_renamed_benchmark_is_compared_under_its_new_name(tmp_path: Path) -> None:
    # NVIDIA v4.1 b200_preview_pytorch ssd -> v5.0 nyx_n1_ngc25.04_pytorch retinanet
    before = _org(_round(tmp_path, "4.1"), {"b200_preview_pytorch": system(**H100, status="Preview")},
                  {("b200_preview_pytorch", "ssd"): 22.5}, "4.1.0")
    now = _org(_round(tmp_path, "5.0"), {"nyx_n1": system(**H100, status="Available on-premise")},
               {("nyx_n1", "retinanet"): 22.0}, "5.0.0")
    found = _found(before, now)
    assert [f.code for f in found] == ["REV020"] and "Available nyx_n1" in found[0].message


@pytest.mark.parametrize(("minutes", "code"), [(None, "REV058"), (7.0, "REV058"), (6.0, "REV020")])
def test_a_round_under_140_days_after_is_not_the_due_one(tmp_path: Path, minutes: float | None, code: str) -> None:
    # v3.0 -> v3.1: 134 days apart by the rounds' dates, so the Available result is due in v4.0
    before = _org(_round(tmp_path, "3.0", "Azure"), {"nd": system(**{**H100, "submitter": "Azure"},
                                                                     status="preview")}, {("nd", "bert"): 6.0}, "3.0.0")
    entries = {("nd", "bert"): minutes} if minutes is not None else {("nd", "resnet"): 9.0}
    now = _org(_round(tmp_path, "3.1", "Azure"), {"nd": system(**{**H100, "submitter": "Azure"},
                                                                  status="Available cloud")}, entries, "3.1.0")
    found = _found(before, now)
    assert [(f.code, f.severity) for f in found] == [(code, "info")]
    if code == "REV058":
        assert "134 days" in found[0].message and "due in round 4.0" in found[0].message


def test_the_due_round_itself_judges(tmp_path: Path) -> None:
    before = _org(_round(tmp_path, "3.0", "Azure"), {"nd": system(**{**H100, "submitter": "Azure"},
                                                                     status="preview")}, {("nd", "bert"): 6.0}, "3.0.0")
    now = _org(_round(tmp_path, "4.0", "Azure"), {"nd": system(**{**H100, "submitter": "Azure"},
                                                                  status="onprem")}, {("nd", "bert"): 7.0}, "4.0.0")
    assert [f.code for f in _found(before, now)] == ["REV022"]


@pytest.mark.parametrize("spelling", ["preview", "Preview", '"Preview"', " PREVIEW "])
def test_preview_spellings_of_every_round(spelling: str) -> None:
    assert status_of(_entry_with_status(spelling)) == "Preview"


@pytest.mark.parametrize("spelling", ["onprem", "available", "Available on-premise", "Available on premise",
                                      "available on premise", "cloud", "Cloud", "Available cloud",
                                      "Available Cloud", "Available in cloud"])
def test_available_spellings_of_every_round(spelling: str) -> None:
    assert status_of(_entry_with_status(spelling)) == "Available"


def _entry_with_status(status: str) -> Any:
    return SimpleNamespace(system_data={"status": status})  # all status_of reads of an entry


def test_a_huge_hostile_processor_name_is_read_in_bounded_time() -> None:
    assert processor("xeon " * 200_000) == processor(("xeon " * 60)[:256])  # only the first 256 characters count


def test_identity_pieces() -> None:
    assert name_stem("dgxh100_n4_preview") == name_stem("dgxh100_ngc23.04_pytorch") == "dgxh100"
    assert name_stem("D74H-7U_preview") == name_stem("D74H-7U")
    assert processor("Intel(R) Xeon(R) code named Sapphire Rapids") == processor("Intel(R) Xeon(R) Platinum 8480+")
    assert processor("Intel(R) Xeon(R) Platinum 8581C") != processor("Intel(R) Xeon(R) Platinum 8480C")
    a, b = hardware(system(**H100), "a"), hardware(system(**H100, division="open"), "b")
    assert match(a, b) is None  # a result counts against one of its own division only
    assert match(a, hardware(system(**{**H100, "submitter": "Dell"}), "c")) is None


def test_since_pairs_a_renamed_system_and_its_entries(tmp_path: Path) -> None:
    before = _round(tmp_path, "4.1")
    now = _round(tmp_path, "5.0")
    write_org(before, {"b200_preview_nemo": system(**H100, status="Preview", system_name="b200_preview")},
              {("b200_preview_nemo", "ssd"): runs([20.0] * 5, org="NVIDIA", ruleset="4.1.0",
                                                 hyperparameters={"opt_base_learning_rate": 0.1})})
    write_org(now, {"nyx_n1_nemo": system(**H100, status="Available on-premise", system_name="nyx_n1")},
              {("nyx_n1_nemo", "retinanet"): runs([20.0] * 5, org="NVIDIA", ruleset="5.0.0",
                                                  hyperparameters={"opt_base_learning_rate": 0.2})})
    found = check_since(str(before), str(now), ("4.1.0", "5.0.0"))
    codes = sorted(f.code for f in found)
    assert "REV057" in codes and "REV032" not in codes and "REV034" not in codes and "REV033" not in codes
    moved = [f for f in found if f.code == "REV035"]
    assert moved and "b200_preview_nemo/ssd -> nyx_n1_nemo/retinanet" in moved[0].message
    assert all(f.message.startswith("b200_preview_nemo/ssd -> nyx_n1_nemo/retinanet: ") for f in moved)
    assert any(f.message.endswith(": opt_base_learning_rate moved since the previous round: 0.1 -> 0.2")
               for f in moved)  # one finding per moved hyperparameter (issue 39)
    assert since_counts(str(before), str(now), ("4.1.0", "5.0.0")) == (1, 1, 2)  # systems, entries, benchmarks


def test_borrow_never_takes_the_submitters_own_entry_under_another_org_folder(tmp_path: Path) -> None:
    ours = _org(tmp_path / "NVIDIA", {"a": system(**H100)}, {("a", "bert"): 5.0})
    theirs = _org(tmp_path / "NVIDIA_CoreWeave", {"b": system(**H100, system_name="other")}, {("b", "bert"): 5.0},
                  org="NVIDIA_CoreWeave")
    original, candidate = read_entry(Path(ours) / "results/a/bert"), read_entry(Path(theirs) / "results/b/bert")
    # the descriptions' submitter: NVIDIA
    assert candidate.org == "NVIDIA_CoreWeave" and is_own_entry(candidate, original)
    other = _org(tmp_path / "Dell", {"c": system(**{**H100, "submitter": "Dell"})}, {("c", "bert"): 5.0})
    assert not is_own_entry(read_entry(Path(other) / "results/c/bert"), original)


def test_an_available_result_that_is_the_previews_own_runs_is_a_warning(tmp_path: Path) -> None:
    # Azure v3.1 ND_H100_v5 bert, maskrcnn, resnet are byte for byte its v3.0 Preview logs
    azure = {**H100, "submitter": "Azure"}
    before, now = tmp_path / "a", tmp_path / "b"
    write_org(before, {"nd": system(**azure, status="preview")}, {("nd", "bert"): runs([6.0] * 10, org="Azure")})
    write_org(now, {"nd": system(**azure, status="Available cloud")}, {("nd", "bert"): runs([6.0] * 10, org="Azure")})
    found = _found(str(before), str(now))
    assert [(f.code, f.severity) for f in found] == [("REV020", "info"), ("REV056", "warning")]
    assert "the Preview's own runs" in found[1].message and "L757" in found[1].message


@pytest.mark.parametrize(("in_31", "in_40", "code"), [(None, 6.0, "REV020"), (6.0, 7.0, "REV020"),
                                                       (None, 7.0, "REV022"), (7.0, None, "REV021")])
def test_current_may_hold_every_round_up_to_the_due_one(tmp_path: Path, in_31: float | None, in_40: float | None,
                                                        code: str) -> None:
    """v3.0's Previews are due in v4.0 (140 days): one that held in v3.1 or v4.0 held; otherwise v4.0 judges."""
    azure = {**H100, "submitter": "Azure"}
    before = _org(_round(tmp_path, "3.0", "Azure"), {"nd": system(**azure, status="preview")},
                  {("nd", "bert"): 6.0}, "3.0.0")
    trees = []
    for version, minutes in (("3.1", in_31), ("4.0", in_40)):
        entries = {("nd", "bert"): minutes} if minutes is not None else {("nd", "resnet"): 9.0}
        trees.append(_org(_round(tmp_path, version, "Azure"), {"nd": system(**azure, status="onprem")}, entries,
                          f"{version}.0"))
    found = check_preview([before], trees)[1]
    assert [f.code for f in found] == [code]


def test_a_current_round_not_after_the_previous_is_a_usage_error(tmp_path: Path) -> None:
    from mlsubmit.core.errors import UsageError

    before = _org(_round(tmp_path, "3.0"), {"p": system(**H100, status="preview")}, {("p", "bert"): 6.0}, "3.0.0")
    same = _org(tmp_path / "x" / "training_results_v3.0" / "NVIDIA", {"q": system(**H100)}, {("q", "bert"): 6.0},
                "3.0.0")
    later = _org(_round(tmp_path, "3.1"), {"q": system(**H100)}, {("q", "bert"): 6.0}, "3.1.0")
    with pytest.raises(UsageError, match="not earlier than"):
        check_preview([before], [later, same])
