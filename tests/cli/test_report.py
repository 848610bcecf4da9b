"""`mlsubmit report` end to end on a small organisation tree written with mllog (fixtures.synth_org)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import tree_digest
from fixtures.synth_org import runs, system, write_org

from mlsubmit.core.support.schema_loader import load_schema

RULESET = "1.1.0"
BERT_CLOSED = [30.5, 31.0, 29.0, 33.0, 30.0, 31.5, 32.0, 29.5, 30.25, 34.0]
BERT_OPEN = [25.0, 26.0, 24.0, 27.0, 25.5, 26.5, 24.5, 25.25, 26.25, 28.0]
RESNET = [14.0, 14.5, 15.0, 14.25, 14.75]
PROJECT_PRICES = Path(__file__).resolve().parents[2] / "prices.toml"


def build_org(root: Path) -> Path:
    """POD16 closed and open BERT, POD64 ResNet-50 (8 EPYC: four hosts) converging in 35 epochs at batch 3264."""
    pod64 = system(system_name="IPU-POD64", accelerators_per_node="64", host_processors_per_node="8",
                   framework="TensorFlow 1.15 Poplar SDK 2.1.0")  # fmt: skip
    return write_org(
        root / "Graphcore",
        {"ipu-pod16-closed": system(), "ipu-pod16-open": system(division="open"), "ipu-pod64-TF1": pod64},
        {
            ("ipu-pod16-closed", "bert"): runs(BERT_CLOSED, ruleset=RULESET),
            ("ipu-pod16-open", "bert"): runs(BERT_OPEN, ruleset=RULESET, division="open"),
            ("ipu-pod64-TF1", "resnet"): runs(RESNET, ruleset=RULESET, evals=35,
                                              hyperparameters={"global_batch_size": 3264}),
        },
    )


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_org(tmp_path_factory.mktemp("report"))


def olympic(values: list[float]) -> float:
    kept = sorted(values)[1:-1]
    return sum(kept) / len(kept)


def results_by_key(out: str) -> dict[tuple[str, str], dict]:
    return {(r["system"], r["benchmark"]): r for r in json.loads(out)["results"]}


def test_json_matches_schema_and_olympic_means(run_cli, org: Path) -> None:
    before = tree_digest(org)
    code, out, err = run_cli("report", "--ruleset", RULESET, "--format", "json", org)
    assert tree_digest(org) == before  # read-only: no scaling.json, no summary.json
    assert code in (0, 1), err
    data = json.loads(out)
    jsonschema.Draft202012Validator(load_schema("report-results.schema.json")).validate(data)
    res = results_by_key(out)
    assert set(res) == {("ipu-pod16-closed", "bert"), ("ipu-pod16-open", "bert"), ("ipu-pod64-TF1", "resnet")}
    closed = res[("ipu-pod16-closed", "bert")]
    assert closed["division"] == "closed"
    assert closed["time_to_train_minutes"] == pytest.approx(olympic(BERT_CLOSED), abs=1e-6)
    assert closed["rcp"]["status"] == "Interp. Fail"  # synthetic BERT converges in "4 samples": far below the RCP
    assert closed["scaling_factor"] == 1.0  # a failed RCP check never scales
    assert res[("ipu-pod16-open", "bert")]["time_to_train_minutes"] == pytest.approx(olympic(BERT_OPEN), abs=1e-6)
    assert res[("ipu-pod16-open", "bert")]["rcp"]["status"] == ""  # no RCP check in the open division


def reference_rcp_mean(benchmark: str, batch: int) -> float:
    import logging

    from mlperf_logging.rcp_checker import rcp_checker

    logging.disable(logging.INFO)
    try:
        checker = rcp_checker.RCP_Checker("training", RULESET, benchmark, False)
    finally:
        logging.disable(logging.NOTSET)
    return float(checker._find_rcp(batch, "pruned_rcps")["RCP Mean"])


def test_rcp_scaling_is_applied_to_a_faster_passing_result(run_cli, org: Path) -> None:
    """35 epochs against the 1.1.0 RCP for batch 3264 (olympic mean about 35.15): passes, scaled by RCP mean / 35."""
    res = results_by_key(run_cli("report", "--ruleset", RULESET, "--format", "json", org)[1])
    resnet = res[("ipu-pod64-TF1", "resnet")]
    factor = reference_rcp_mean("resnet", 3264) / 35
    assert resnet["rcp"]["status"] == "Pass"
    assert factor > 1.004 and resnet["scaling_factor"] == pytest.approx(factor, rel=1e-9)
    assert resnet["olympic_minutes"] == pytest.approx(olympic(RESNET), abs=1e-4)
    assert resnet["time_to_train_minutes"] == pytest.approx(olympic(RESNET) * factor, abs=1e-4)
    assert resnet["samples_to_converge"] == 35.0


def test_runs_carry_time_convergence_and_throughput(run_cli, org: Path) -> None:
    res = results_by_key(run_cli("report", "--ruleset", RULESET, "--format", "json", org)[1])
    runs_ = res[("ipu-pod64-TF1", "resnet")]["runs"]
    assert [r["minutes"] for r in runs_] == pytest.approx(RESNET, abs=1e-4)
    first = runs_[0]
    assert first["converged"] and first["counted"] and first["to_converge"] == 35.0
    assert first["to_converge_unit"] == "epochs"
    # 35 epochs of ImageNet's 1,281,167 images in 14 minutes.
    assert first["throughput_samples_per_second"] == pytest.approx(35 * 1_281_167 / (14.0 * 60), rel=1e-4)
    assert [r["olympic_dropped"] for r in runs_] == [True, False, True, False, False]  # 14.0 and 15.0


def test_system_facts_come_from_the_systems_summary(run_cli, org: Path) -> None:
    res = results_by_key(run_cli("report", "--ruleset", RULESET, "--format", "json", org)[1])
    facts = res[("ipu-pod64-TF1", "resnet")]["system_facts"]
    assert facts["accelerators"] == 64 and facts["host_processors"] == 8
    assert facts["host_servers"] == 4  # 8 EPYC 7742 in dual-socket servers
    assert facts["framework"] == "TensorFlow 1.15 Poplar SDK 2.1.0"


GOLDEN_CSV = """\
division,benchmark,system,minutes,runs,rcp,scaling,accelerators,host_processors,framework
closed,bert,ipu-pod16-closed,30.9688,10/10,Interp. Fail,1.0000,16 x Graphcore IPU GC200,2 x AMD EPYC 7742,PopART Poplar SDK 2.1.0
closed,resnet,ipu-pod64-TF1,14.5637,5/5,Pass,1.0044,64 x Graphcore IPU GC200,8 x AMD EPYC 7742,TensorFlow 1.15 Poplar SDK 2.1.0
open,bert,ipu-pod16-open,25.7500,10/10,,1.0000,16 x Graphcore IPU GC200,2 x AMD EPYC 7742,PopART Poplar SDK 2.1.0
"""  # noqa: E501 - golden output

GOLDEN_MARKDOWN = """\
| division | benchmark | system | minutes | runs | rcp | scaling | accelerators | host_processors | framework | price | perf_per_price_estimate | vs_baseline |
|---|---|---|---:|---|---|---:|---|---|---|---:|---:|---:|
| closed | bert | ipu-pod16-closed | 30.97 | 10/10 | Interp. Fail | 1.0000 | 16 x Graphcore IPU GC200 | 2 x AMD EPYC 7742 | PopART Poplar SDK 2.1.0 | 149995 | 12.92 | no baseline |
| closed | resnet | ipu-pod64-TF1 | 14.56 | 5/5 | Pass | 1.0044 | 64 x Graphcore IPU GC200 | 8 x AMD EPYC 7742 | TensorFlow 1.15 Poplar SDK 2.1.0 | none | no price |  |
| open | bert | ipu-pod16-open | 25.75 | 10/10 |  | 1.0000 | 16 x Graphcore IPU GC200 | 2 x AMD EPYC 7742 | PopART Poplar SDK 2.1.0 | 149995 | 15.53 | no baseline |

**Performance per dollar**

- closed bert: no baseline
  - ipu-pod16-closed: 12.92 runs/h per million USD; 30.97 min unscaled; 149,995 USD list
- closed resnet: no baseline
  - ipu-pod64-TF1: no price: no rule for id 'ipu-pod64-TF1' or name 'IPU-POD64', and no description match
- open bert: no baseline
  - ipu-pod16-open: 15.53 runs/h per million USD; 25.75 min unscaled; 149,995 USD list

method: per dollar (perf\\_per\\_price\\_estimate) = time-to-train runs per hour per million USD of price, (60 / minutes) / (price / 1,000,000); minutes = the unscaled olympic mean of the runs (no RCP scaling); price = the list price or estimate in prices.toml, times number\\_of\\_nodes for a per-node rule (not a quote: no discounts, support, power or hosting); no baseline chosen.
"""  # noqa: E501 - golden output


def test_csv_golden(run_cli, org: Path) -> None:
    code, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "csv", org)
    assert code in (0, 1) and out == GOLDEN_CSV


def test_markdown_golden_with_prices(run_cli, org: Path) -> None:
    """The project's prices.toml prices IPU-POD16, not POD64: its row says so. No DGX A100 here: no baseline."""
    code, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "markdown", "--prices", PROJECT_PRICES, org)
    assert code in (0, 1) and out == GOLDEN_MARKDOWN
    # 60 / 30.96875 runs per hour for USD 0.149995 M
    assert f"{(60 / olympic(BERT_CLOSED)) / 0.149995:.2f}" == "12.92"


def test_price_column_absent_without_prices(run_cli, org: Path) -> None:
    _, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "markdown", org)
    assert "perf_per_price" not in out
    _, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "json", org)
    assert all("price" not in r and "performance_per_price" not in r for r in json.loads(out)["results"])


def test_prices_toml_beside_systems_is_used(run_cli, tmp_path: Path) -> None:
    org = build_org(tmp_path)
    (org / "prices.toml").write_text('[systems."IPU-POD64"]\nprice = 600000\nbasis = "estimate"\nsource = "s"\n'
                                     'date = "2021-06"\n', encoding="utf-8")  # fmt: skip
    _, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "json", org)
    resnet = results_by_key(out)[("ipu-pod64-TF1", "resnet")]
    assert resnet["price"] == {"amount": 600000.0, "currency": "USD", "basis": "estimate", "source": "s",
                               "date": "2021-06", "rule": "IPU-POD64", "matched_by": "name", "nodes": 1,
                               "baseline": False}  # fmt: skip
    assert resnet["performance_per_price"]["estimate"] is True
    # The unscaled olympic mean by default (the method that reproduces Graphcore's v1.0 comparison).
    assert resnet["performance_per_price"]["value"] == pytest.approx(60 / resnet["olympic_minutes"] / 0.6)
    assert resnet["performance_per_price"]["time"] == "olympic"
    _, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "json", "--per-dollar-time", "scored", org)
    resnet = results_by_key(out)[("ipu-pod64-TF1", "resnet")]
    assert resnet["performance_per_price"]["value"] == pytest.approx(60 / resnet["time_to_train_minutes"] / 0.6)


def test_broken_prices_file_is_a_usage_error(run_cli, org: Path, tmp_path: Path) -> None:
    bad = tmp_path / "prices.toml"
    bad.write_text('[systems."IPU-POD16"]\nprice = "cheap"\nsource = "s"\ndate = "2021-06"\n', encoding="utf-8")
    code, out, err = run_cli("report", "--ruleset", RULESET, "--prices", bad, org)
    assert code == 2 and out == "" and "/systems/IPU-POD16/price" in err and "Traceback" not in err


def test_text_table_and_notes(run_cli, org: Path) -> None:
    code, out, _ = run_cli("report", "--ruleset", RULESET, org)
    assert code in (0, 1)
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["division", "benchmark", "system", "minutes"]
    assert lines[1].split()[:5] == ["closed", "bert", "ipu-pod16-closed", "30.97", "10/10"]
    assert lines[-1].startswith("3 result(s); findings:")


def test_html_and_output_files(run_cli, org: Path, tmp_path: Path) -> None:
    page, table = tmp_path / "report.html", tmp_path / "table.csv"
    code, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "csv", "-o", table, "--html", page, org)
    assert code in (0, 1) and out == "" and table.read_text(encoding="utf-8") == GOLDEN_CSV
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 3  # bert closed+open, resnet closed
    assert "ipu-pod64-TF1" in text


def test_non_converging_runs_stand_in_for_the_slowest(run_cli, tmp_path: Path) -> None:
    """One failed run: the olympic mean drops only the fastest. Two: no score (TR1.1 §"Benchmark results")."""
    minutes = [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]
    one = runs(minutes, ruleset=RULESET)
    one[9].converge = False
    two = runs(minutes, ruleset=RULESET)
    two[8].converge = two[9].converge = False
    org = write_org(tmp_path / "Org", {"a": system(division="open"), "b": system(division="open")},
                    {("a", "bert"): one, ("b", "bert"): two})  # fmt: skip
    res = results_by_key(run_cli("report", "--ruleset", RULESET, "--format", "json", org)[1])
    a, b = res[("a", "bert")], res[("b", "bert")]
    assert a["runs_counted"] == 9
    assert a["time_to_train_minutes"] == pytest.approx(sum(minutes[1:9]) / 8)
    assert a["runs"][9]["counted"] is False and a["runs"][9]["reason"] == "fails the round's log rules"
    assert b["time_to_train_minutes"] is None and "no score" in b["notes"][0]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["report", "--ruleset", "9.9.9", "."], "unknown ruleset"),
        (["report", "--ruleset", RULESET, "/no/such/tree"], "no such file"),
        (["report", "--ruleset", RULESET, "--format", "xml", "."], "invalid choice"),
    ],
)
def test_usage_errors(run_cli, argv: list[str], needle: str) -> None:
    code, _, err = run_cli(*argv)
    assert code == 2 and needle in err


def test_loose_logs_are_grouped_by_platform(run_cli, tmp_path: Path) -> None:
    org = build_org(tmp_path)
    folder = org / "results" / "ipu-pod16-open" / "bert"
    res = results_by_key(run_cli("report", "--ruleset", RULESET, "--format", "json", folder)[1])
    assert list(res) == [("IPU-POD16", "bert")]  # the logs' submission_platform; no system file to name it
    assert res[("IPU-POD16", "bert")]["division"] == "open"


def test_broken_prices_toml_in_the_tree_is_a_finding(run_cli, tmp_path: Path) -> None:
    org = build_org(tmp_path)
    (org / "prices.toml").write_text('currency = "USD"\n[systems."IPU-POD16"\nprice = 1\n', encoding="utf-8")
    page = tmp_path / "r.html"
    code, out, err = run_cli("report", "--ruleset", RULESET, "--format", "json", "--html", page, org)
    assert code in (0, 1) and "Traceback" not in err
    assert all("price" not in r for r in json.loads(out)["results"])  # written, without the broken prices
    html = page.read_text(encoding="utf-8")
    assert '<tr data-severity="warning" data-family="REP">' in html
    assert "prices.toml:2</code>" in html  # the TOML error's line
    (org / "prices.toml").write_text('[systems."IPU-POD16"]\nprice = 0\nsource = "s"\ndate = "2021-06"\n',
                                     encoding="utf-8")  # fmt: skip
    run_cli("report", "--ruleset", RULESET, "--format", "json", "--html", page, org)
    assert "<code>prices.toml#/<wbr>systems/<wbr>IPU-POD16/<wbr>price</code>" in page.read_text(encoding="utf-8")
