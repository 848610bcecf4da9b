"""checker/tables/rcp-risk.yaml, run planning's priors: schema-checked on load, one row per benchmark the corpus
has sets of, a pooled row for any other (rcp/risk.py prior_for)."""

from __future__ import annotations

import copy
import importlib.resources

import pytest
from mlsubmit.checker.rcp import risk

from mlsubmit.core.support.datafiles import load_yaml
from mlsubmit.core.support.schema_loader import SchemaError, load_schema, validate_or_raise


def _raw() -> dict[str, object]:
    text = importlib.resources.files("mlsubmit.checker").joinpath(risk.TABLE).read_text(encoding="utf-8")
    data: dict[str, object] = load_yaml(text)
    return data


def test_the_shipped_table_follows_its_schema_and_names_the_model() -> None:
    data = _raw()
    validate_or_raise(data, load_schema("rcp-risk.schema.json"), what=risk.TABLE)
    assert risk.table()["model"] == risk.MODEL


def test_a_benchmark_without_sets_takes_the_pooled_prior() -> None:
    pooled = risk.table()["pooled"]
    prior = risk.prior_for("no_such_benchmark")
    assert (prior.alpha, prior.beta, prior.spread) == (pooled["alpha"], pooled["beta"], pooled["spread"])
    assert risk.prior_for("bert") != prior


@pytest.mark.parametrize(("field", "value"), [("alpha", 0), ("spread", -0.1), ("margin_sd", "wide"), ("extra", 1)])
def test_a_bad_row_is_refused(field: str, value: object) -> None:
    data = copy.deepcopy(_raw())
    data["pooled"][field] = value  # type: ignore[index]
    with pytest.raises(SchemaError):
        validate_or_raise(data, load_schema("rcp-risk.schema.json"), what=risk.TABLE)
