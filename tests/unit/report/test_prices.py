"""Price rules (prices.toml): by id, by system_name, by a match on the description, times number_of_nodes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from mlsubmit.checker.systems.descriptions import summarize

from mlsubmit.core.errors import FatalError
from mlsubmit.report.inputs import Price, PriceBook, SystemFacts, load_prices, parse_prices, performance_per_price

PROJECT = Path(__file__).resolve().parents[3]
DGX = {"system_name": "dgxa100_ngc21.05_mxnet", "number_of_nodes": "1", "accelerators_per_node": "8",
       "accelerator_model_name": "NVIDIA A100-SXM4-80GB (400W)",
       "host_processor_model_name": "AMD EPYC 7742"}  # fmt: skip
POD16 = {"system_name": "IPU-POD16", "number_of_nodes": "1", "accelerators_per_node": "16",
         "accelerator_model_name": "Graphcore IPU GC200"}  # fmt: skip
RULES = """\
currency = "USD"
[systems."IPU-POD16"]
price = 149995
basis = "list"
source = "list"
date = "2021-06"
[systems."pod128"]
price = 1000000
per = "system"
source = "whole system"
date = "2021-11"
[[match]]
label = "DGX A100 640GB"
where = { accelerator_model_name = "a100-sxm4-80gb", accelerators_per_node = 8 }
price = 300000
source = "about"
date = "2021-06"
baseline = true
"""


def system(system_id: str, **fields: str) -> SystemFacts:
    return SystemFacts(id=system_id, path=f"systems/{system_id}.json", fields=tuple(fields.items()),
                       summary=summarize(fields, system_id))  # fmt: skip


@pytest.fixture
def book(tmp_path: Path) -> PriceBook:
    path = tmp_path / "prices.toml"
    path.write_text(RULES, encoding="utf-8")
    return parse_prices(path)


def test_by_name_and_by_description(book: PriceBook) -> None:
    pod16 = book.resolve(system("ipu-pod16-TF1", **POD16), "ipu-pod16-TF1")
    assert isinstance(pod16, Price) and (pod16.amount, pod16.matched_by, pod16.nodes) == (149995, "name", 1)
    dgx = book.resolve(system("dgxa100_ngc21.05_mxnet", **DGX), "dgxa100_ngc21.05_mxnet")
    assert isinstance(dgx, Price) and dgx.matched_by == "description" and dgx.baseline and dgx.amount == 300000
    assert (dgx.rule, dgx.source, dgx.date) == ("DGX A100 640GB", "about", "2021-06")


def test_per_node_price_times_number_of_nodes(book: PriceBook) -> None:
    four = book.resolve(system("dgx-x4", **{**DGX, "number_of_nodes": "4"}), "dgx-x4")
    assert isinstance(four, Price) and four.amount == 1_200_000 and four.nodes == 4
    whole = book.resolve(system("pod128", **{**POD16, "number_of_nodes": "2"}), "pod128")
    assert isinstance(whole, Price) and whole.amount == 1_000_000 and whole.nodes is None  # per = "system"


def test_a_system_without_a_price_says_why(book: PriceBook) -> None:
    other = {**DGX, "accelerators_per_node": "4"}  # a match needs every field of `where`
    why = book.resolve(system("dgx-half", **other), "dgx-half")
    assert why == "no price: no rule for id 'dgx-half' or name 'dgxa100_ngc21.05_mxnet', and no description match"
    nodes = book.resolve(system("x", **{**POD16, "number_of_nodes": "many"}), "x")
    assert nodes == "rule 'IPU-POD16' prices a node, but number_of_nodes is 'many'"
    loose = book.resolve(None, "IPU-POD16")  # loose logs: no description, so no node count
    assert loose == "rule 'IPU-POD16' prices a node, but number_of_nodes is unknown (no description)"
    assert book.lookup(None, "IPU-POD16") is None


def test_id_wins_over_name_and_given_book_over_tree(book: PriceBook, tmp_path: Path) -> None:
    given = tmp_path / "given.toml"
    given.write_text('[systems."ipu-pod16-TF1"]\nprice = 1\nsource = "s"\ndate = "2022-01"\n', encoding="utf-8")
    merged = parse_prices(given).merged(book)
    pod16 = merged.lookup(system("ipu-pod16-TF1", **POD16), "ipu-pod16-TF1")
    assert pod16 is not None and pod16.amount == 1 and pod16.matched_by == "id"
    dgx = merged.lookup(system("d", **DGX), "d")  # falls through to the tree's rules
    assert dgx is not None and dgx.amount == 300000
    assert book.merged(PriceBook()) is book and PriceBook().merged(book) is book


def test_project_prices_price_both_seeds_systems() -> None:
    book = load_prices(PROJECT / "prices.toml")
    pod16 = book.lookup(system("ipu-pod16-POPART-closed", **POD16), "ipu-pod16-POPART-closed")
    assert pod16 is not None and pod16.amount == 149995 and pod16.basis == "list" and pod16.date == "2021-06"
    dgx = book.lookup(system("dgxa100_ngc21.05_pytorch", **DGX), "dgxa100_ngc21.05_pytorch")
    assert dgx is not None and dgx.amount == 300000 and dgx.baseline and dgx.basis == "estimate"
    assert book.lookup(system("p", **{**POD16, "system_name": "IPU-POD64"}), "p") is None
    xeon = {**DGX, "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8350C"}  # Baidu's v1.1 8 x A100 nodes
    assert book.lookup(system("1_node_8_A100_NGC21.05_MXNet", **xeon), "1_node_8_A100_NGC21.05_MXNet") is None
    assert performance_per_price(30.0, pod16) == pytest.approx(2 / 0.149995)
    assert performance_per_price(None, pod16) is None and performance_per_price(30.0, None) is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[systems."X"]\nprice = -5\nsource = "s"\ndate = "2021-06"\n', "/systems/X/price"),
        ('[systems."X"]\nprice = 5\nsource = "s"\ndate = "2021-06"\ncolour = "red"\n', "colour"),
        ('[systems."X"]\nprice = 5\nsource = "s"\n', "'date' is a required property"),
        ('[systems."X"]\nprice = 5\ndate = "2021-06"\n', "'source' is a required property"),
        ('[systems."X"]\nprice = 5\nsource = "s"\ndate = "June 2021"\n', "/systems/X/date"),
        ('[systems."X"]\nprice = 5\nsource = "s"\ndate = "2021-06"\nper = "rack"\n', "/systems/X/per"),
        ('[[match]]\nlabel = "l"\nprice = 5\nsource = "s"\ndate = "2021-06"\n', "'where' is a required property"),
        ('[[match]]\nlabel = "l"\nwhere = {}\nprice = 5\nsource = "s"\ndate = "2021-06"\n', "/match/0/where"),
        ('[[match]]\nlabel = "l"\nwhere = { accelerator_model = "A100" }\nprice = 5\nsource = "s"\ndate = "2021-06"\n',
         "did you mean 'accelerator_model_name'?"),
        ('[[match]]\nlabel = "l"\nwhere = { accelerators_per_node = true }\nprice = 5\nsource = "s"\n'
         'date = "2021-06"\n', "/match/0/where/accelerators_per_node"),
        ('currency = "dollars"\n', "/currency"),
        ("[systems\n", "cannot read prices"),
        ('[systems."X"]\nprice = nan\nsource = "s"\ndate = "2021-06"\n', "finite"),
        ('[systems."X"]\nprice = inf\nsource = "s"\ndate = "2021-06"\n', "finite"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("a = " + "[" * 100 + "]" * 100 + "\n", "nested too deeply"),
        ("x = 1\n" + "# padding\n" * 500_000, "larger than"),
        ('[systems."X"]\nprice = 1' + "0" * 400 + '\nsource = "s"\ndate = "2021-06"\n', "finite"),
        ('[systems."X"]\nprice = 1' + "0" * 4400 + '\nsource = "s"\ndate = "2021-06"\n', "cannot hold"),
    ],
)
def test_bad_prices_files(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FatalError) as info:
        load_prices(path)
    assert needle in str(info.value)


@pytest.mark.parametrize("amount", [1e-320, 5e-324, 1e308])
def test_extreme_prices_give_no_figure_rather_than_a_crash(amount: float) -> None:
    price = Price(amount=amount, currency="USD", basis="list", source="s", date="2021-06")
    value = performance_per_price(1e-300, price)
    assert value is None or math.isfinite(value)
    assert performance_per_price(float("inf"), price) is None
