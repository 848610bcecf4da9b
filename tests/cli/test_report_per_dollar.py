"""Performance per dollar across submitters (issue #16): price rules, the baseline, every format, the seeds' figures.

The fixture is a small round of two organisations written with mllog: Graphcore (an IPU-POD16 closed BERT and
ResNet-50, an unpriced IPU-POD64 BERT) and NVIDIA (a DGX A100 named by id, priced by its description). NVIDIA's
ResNet-50 passes its RCP check faster than the RCP mean, so its scored time differs from its olympic mean.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from fixtures.per_dollar_round import DGX_BERT, DGX_RESNET, POD16_BERT, POD16_RESNET, RULESET, build_round, olympic

from mlsubmit.core.support.schema_loader import load_schema

PROJECT_PRICES = Path(__file__).resolve().parents[2] / "prices.toml"


@pytest.fixture(scope="module")
def round_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_round(tmp_path_factory.mktemp("per-dollar"))


def report(run_cli, round_dir: Path, *extra: str) -> str:  # type: ignore[no-untyped-def]
    code, out, err = run_cli("report", "--ruleset", RULESET, "--prices", PROJECT_PRICES, *extra,
                             round_dir / "Graphcore", round_dir / "NVIDIA")  # fmt: skip
    assert code in (0, 1), err
    return str(out)


GOLDEN_TEXT_COMPARISON = """\
performance per dollar
closed bert: baseline dgxa100_ngc21.05_pytorch
  ipu-pod16-closed: 1.26x baseline; 11.59 runs/h per million USD; 34.51 min unscaled; 149,995 USD list
  dgxa100_ngc21.05_pytorch: 1.00x baseline; 9.20 runs/h per million USD; 21.74 min unscaled; 300,000 USD estimate
  ipu-pod64-closed: no price: no rule for id 'ipu-pod64-closed' or name 'IPU-POD64', and no description match
closed resnet: baseline dgxa100_ngc21.05_pytorch
  ipu-pod16-closed: 1.55x baseline; 10.78 runs/h per million USD; 37.10 min unscaled; 149,995 USD list
  dgxa100_ngc21.05_pytorch: 1.00x baseline; 6.96 runs/h per million USD; 28.75 min unscaled; 300,000 USD estimate
method: per dollar (perf_per_price_estimate) = time-to-train runs per hour per million USD of price, (60 / minutes) / (price / 1,000,000); minutes = the unscaled olympic mean of the runs (no RCP scaling); price = the list price or estimate in prices.toml, times number_of_nodes for a per-node rule (not a quote: no discounts, support, power or hosting); relative to the baseline (baseline = true in prices.toml).
"""  # noqa: E501 - golden output

GOLDEN_CSV = """\
division,benchmark,system,minutes,runs,rcp,scaling,accelerators,host_processors,framework,price,perf_per_price_estimate,vs_baseline,ppp_time
closed,bert,dgxa100_ngc21.05_pytorch,21.7375,10/10,Interp. Fail,1.0000,8 x NVIDIA A100-SXM4-80GB (400W),2 x AMD EPYC 7742,PyTorch NVIDIA Release 21.05,300000,9.2007,1.0000,olympic
closed,bert,ipu-pod16-closed,34.5125,10/10,Interp. Fail,1.0000,16 x Graphcore IPU GC200,2 x AMD EPYC 7742,PopART Poplar SDK 2.1.0,149995,11.5904,1.2597,olympic
closed,bert,ipu-pod64-closed,11.0750,10/10,Interp. Fail,1.0000,64 x Graphcore IPU GC200,2 x AMD EPYC 7742,PopART Poplar SDK 2.1.0,none,no price,,olympic
closed,resnet,dgxa100_ngc21.05_pytorch,28.8764,5/5,Pass,1.0044,8 x NVIDIA A100-SXM4-80GB (400W),2 x AMD EPYC 7742,PyTorch NVIDIA Release 21.05,300000,6.9565,1.0000,olympic
closed,resnet,ipu-pod16-closed,37.1000,5/5,Pass,1.0000,16 x Graphcore IPU GC200,2 x AMD EPYC 7742,PopART Poplar SDK 2.1.0,149995,10.7820,1.5499,olympic
"""  # noqa: E501 - golden output

GOLDEN_MARKDOWN_TAIL = """\
**Performance per dollar**

- closed bert: baseline dgxa100\\_ngc21.05\\_pytorch
  - ipu-pod16-closed: 1.26x baseline; 11.59 runs/h per million USD; 34.51 min unscaled; 149,995 USD list
  - dgxa100\\_ngc21.05\\_pytorch: 1.00x baseline; 9.20 runs/h per million USD; 21.74 min unscaled; 300,000 USD estimate
  - ipu-pod64-closed: no price: no rule for id 'ipu-pod64-closed' or name 'IPU-POD64', and no description match
- closed resnet: baseline dgxa100\\_ngc21.05\\_pytorch
  - ipu-pod16-closed: 1.55x baseline; 10.78 runs/h per million USD; 37.10 min unscaled; 149,995 USD list
  - dgxa100\\_ngc21.05\\_pytorch: 1.00x baseline; 6.96 runs/h per million USD; 28.75 min unscaled; 300,000 USD estimate
"""


def test_text_golden(run_cli, round_dir: Path) -> None:
    out = report(run_cli, round_dir)
    start = out.index("performance per dollar\n")
    assert out[start : out.index("\n\n", start) + 1] == GOLDEN_TEXT_COMPARISON
    header = out.splitlines()[0].split()
    assert header[-3:] == ["price", "perf_per_price_estimate", "vs_baseline"]
    pod64 = next(line for line in out.splitlines() if line.startswith("closed    bert       ipu-pod64-closed"))
    assert pod64.split()[-3:] == ["none", "no", "price"]  # said, never blank


def test_csv_golden(run_cli, round_dir: Path) -> None:
    assert report(run_cli, round_dir, "--format", "csv") == GOLDEN_CSV
    # The ratios by hand: (60 / olympic) / (price / 1e6), relative to the DGX A100's.
    bert = (olympic(DGX_BERT) * 300000) / (olympic(POD16_BERT) * 149995)
    resnet = (olympic(DGX_RESNET) * 300000) / (olympic(POD16_RESNET) * 149995)
    assert (f"{bert:.4f}", f"{resnet:.4f}") == ("1.2597", "1.5499")


def test_markdown_golden(run_cli, round_dir: Path) -> None:
    out = report(run_cli, round_dir, "--format", "markdown")
    assert out.splitlines()[0].endswith("| price | perf_per_price_estimate | vs_baseline |")
    assert "| none | no price |  |" in out
    start = out.index("**Performance per dollar**")
    assert out[start : out.index("\n\nmethod: ", start) + 1] == GOLDEN_MARKDOWN_TAIL
    assert "unscaled olympic mean" in out[start:]


def test_json_golden_and_schema(run_cli, round_dir: Path) -> None:
    data = json.loads(report(run_cli, round_dir, "--format", "json"))
    jsonschema.Draft202012Validator(load_schema("report-results.schema.json")).validate(data)
    comparison = data["comparison"]
    assert (comparison["time"], comparison["currency"], comparison["baseline_from"]) == (
        "olympic", "USD", "baseline = true in prices.toml")  # fmt: skip
    assert "unscaled olympic mean" in comparison["method"]
    rounded = [
        (g["division"], g["benchmark"], g["baseline"],
         [(s["system"], s["price"], None if s["relative_to_baseline"] is None else round(s["relative_to_baseline"], 4),
           s["baseline"], s["note"]) for s in g["systems"]])
        for g in comparison["groups"]
    ]  # fmt: skip
    assert rounded == [
        ("closed", "bert", "dgxa100_ngc21.05_pytorch", [
            ("dgxa100_ngc21.05_pytorch", 300000.0, 1.0, True, None),
            ("ipu-pod16-closed", 149995.0, 1.2597, False, None),
            ("ipu-pod64-closed", None, None, False,
             "no price: no rule for id 'ipu-pod64-closed' or name 'IPU-POD64', and no description match"),
        ]),
        ("closed", "resnet", "dgxa100_ngc21.05_pytorch", [
            ("dgxa100_ngc21.05_pytorch", 300000.0, 1.0, True, None),
            ("ipu-pod16-closed", 149995.0, 1.5499, False, None),
        ]),
    ]  # fmt: skip
    results = {(r["system"], r["benchmark"]): r for r in data["results"]}
    dgx = results[("dgxa100_ngc21.05_pytorch", "resnet")]
    assert dgx["price"]["matched_by"] == "description" and dgx["price"]["nodes"] == 1
    assert dgx["performance_per_price"]["value"] == pytest.approx(60 / olympic(DGX_RESNET) / 0.3)
    pod64 = results[("ipu-pod64-closed", "bert")]
    assert pod64["price"] is None and pod64["price_note"].startswith("no price:")
    assert "performance_per_price" not in pod64


def test_html_golden_section(run_cli, round_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    report(run_cli, round_dir, "--html", str(page))
    html = page.read_text(encoding="utf-8")
    section = html[html.index('<h2 id="per-dollar">') : html.index('<h2 id="charts">')]
    assert section.count("<svg") == 2  # one chart per group with a baseline
    assert "performance per dollar, relative to the baseline (= 1)" in section
    assert "dgxa100_ngc21.05_pytorch (baseline)" in section
    assert "1.26x" in section and "1.55x" in section  # the bars' labels
    items = section.split("<li>")[1:]
    assert [i[: i.index("</li>")] for i in items] == [
        "ipu-pod16-closed: 1.26x baseline; 11.59 runs/h per million USD; 34.51 min unscaled; 149,995 USD list",
        "dgxa100_ngc21.05_pytorch: 1.00x baseline; 9.20 runs/h per million USD; "
        "21.74 min unscaled; 300,000 USD estimate",
        "ipu-pod64-closed: no price: no rule for id &#x27;ipu-pod64-closed&#x27; or name &#x27;IPU-POD64&#x27;, "
        "and no description match",
        "ipu-pod16-closed: 1.55x baseline; 10.78 runs/h per million USD; 37.10 min unscaled; 149,995 USD list",
        "dgxa100_ngc21.05_pytorch: 1.00x baseline; 6.96 runs/h per million USD; "
        "28.75 min unscaled; 300,000 USD estimate",
    ]
    assert "unscaled olympic mean" in section and '<a href="#per-dollar">' in html


def test_scored_time_is_a_choice_and_is_stated(run_cli, round_dir: Path) -> None:
    data = json.loads(report(run_cli, round_dir, "--format", "json", "--per-dollar-time", "scored"))
    assert data["comparison"]["time"] == "scored" and "RCP scaling factor" in data["comparison"]["method"]
    resnet = next(g for g in data["comparison"]["groups"] if g["benchmark"] == "resnet")
    pod16 = next(s for s in resnet["systems"] if s["system"] == "ipu-pod16-closed")
    dgx_scored = next(s for s in resnet["systems"] if s["baseline"])["minutes"]
    assert dgx_scored > olympic(DGX_RESNET)  # the DGX's RCP factor
    assert pod16["relative_to_baseline"] == pytest.approx((dgx_scored * 300000) / (olympic(POD16_RESNET) * 149995))
    assert report(run_cli, round_dir, "--format", "csv", "--per-dollar-time", "scored").splitlines()[1].endswith(
        ",scored")


def test_baseline_option_overrides_the_file(run_cli, round_dir: Path) -> None:
    data = json.loads(report(run_cli, round_dir, "--format", "json", "--baseline", "IPU-POD16"))
    assert data["comparison"]["baseline_from"] == "--baseline IPU-POD16"
    bert = next(g for g in data["comparison"]["groups"] if g["benchmark"] == "bert")
    assert bert["baseline"] == "ipu-pod16-closed"
    dgx = next(s for s in bert["systems"] if s["system"] == "dgxa100_ngc21.05_pytorch")
    assert dgx["relative_to_baseline"] == pytest.approx(1 / 1.2597, abs=1e-4)


def test_unknown_baseline_is_a_usage_error(run_cli, round_dir: Path) -> None:
    code, _, err = run_cli("report", "--ruleset", RULESET, "--prices", PROJECT_PRICES, "--baseline",
                             "ipu-pod16-closd", round_dir / "Graphcore")  # fmt: skip
    assert code == 2 and "names no system in the report" in err and "ipu-pod16-closed" in err


def test_no_prices_no_comparison(run_cli, round_dir: Path) -> None:
    _, out, _ = run_cli("report", "--ruleset", RULESET, "--format", "json", round_dir / "Graphcore")
    assert "comparison" not in json.loads(out)
