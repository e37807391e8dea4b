"""The spec a page draws a chart from (built without Altair's schema check), and the key the pages keep
their priced results under: both must say exactly what Altair and the scenario say."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import altair as alt
import numpy as np
import pytest
from jsonschema import ValidationError  # type: ignore[import-untyped]

from app_pages._data import catalogs as app_catalogs
from app_pages._data import priced_key
from app_pages._state import own_record
from calculator.catalog.catalogs import Catalogs
from calculator.catalog.measurements import RecordCatalog
from calculator.present import charts
from calculator.present.chart_spec import Spec, vega_lite_spec
from calculator.pricing.compare import OPTION_LABELS, compare, curves
from calculator.scenario.model import Scenario

SEED_DATE = dt.date(2026, 10, 30)
SEED = Scenario.model_validate(
    {
        "name": "seed",
        "as_of": SEED_DATE,
        "workload": {"input_tokens": 20000, "prefix_share": "0.9", "hit_rate": "1", "output_tokens": 500},
        "traffic": {"turns_per_month": 1_000_000},
        "serverless": {"provider": "lyceum", "model": "GLM-5.3"},
        "gpu_vm": {"provider": "runpod", "offer": "h200-community"},
        "self_hosting": {"record": "sglang-llama-3.3-70b-bf16-4xh200-rate8"},
    }
)


def _by_content(spec: dict[str, Any], rows_of: dict[str, list[dict[str, Any]]]) -> str:
    """The spec as JSON with each dataset name replaced by its rows, so two namings compare equal."""
    text = json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True)
    for name, rows in rows_of.items():
        text = text.replace(json.dumps(name), json.dumps(json.dumps(rows, sort_keys=True)))
    return text


@pytest.mark.parametrize("which", ["sweep", "sensitivity"])
def test_the_spec_a_page_draws_is_altairs_own_with_the_same_rows(catalogs: Catalogs, which: str) -> None:
    result = compare(SEED, catalogs)
    assert result.turn is not None and result.cheapest is not None
    built: dict[str, alt.TopLevelMixin] = {
        "sweep": charts.share_sweep_chart(charts.share_sweep_frame(SEED, catalogs, "hit_rate"), "hit_rate", 1.0),
        "sensitivity": charts.sensitivity_chart(*charts.sensitivity_frame(SEED, catalogs, result.cheapest)),
    }
    chart = built[which]
    with alt.theme.enable("none"):  # the page's spec leaves out Altair's default 300x300 view size
        checked = chart.to_dict()  # validated against the Vega-Lite schema
    drawn = vega_lite_spec(chart)
    drawn_rows = {name: frame.to_dict("records") for name, frame in drawn["datasets"].items()}
    assert drawn_rows, "the data frames travel with the spec"
    assert _by_content(drawn, drawn_rows) == _by_content(checked, checked["datasets"])


def test_the_turn_and_volume_charts_are_valid_vega_lite_drawn_as_checked_with_the_seed_figures(
    catalogs: Catalogs,
) -> None:
    result = compare(SEED, catalogs)
    assert result.turn is not None
    turn = charts.turn_parts_chart(result.turn, SEED)
    cost_by_volume = curves(result.resolution)
    volume = charts.volume_chart(cost_by_volume, 1e6, result)
    for chart in (turn, volume):
        checked = chart.to_dict()  # validated against the Vega-Lite schema Altair ships
        assert vega_lite_spec(chart) == checked
        json.loads(chart.to_json())  # strict JSON: no NaN reaches the browser or the PDF
    # the seed's turn: its parts add up to $0.0302 without reuse and $0.00968 with it
    by_case: dict[str, float] = {}
    for row in turn.to_dict()["data"]["values"]:
        by_case[row["case"]] = by_case.get(row["case"], 0.0) + row["cost"]
    assert by_case == pytest.approx({"No reuse": 0.0302, "Reused prefix": 0.00968})
    # each option's line is its cost function at the chart's volumes
    lines = [layer for layer in volume.to_dict()["layer"] if layer["mark"]["type"] == "line"]
    assert len(lines) == len(cost_by_volume)
    for name, line in zip(cost_by_volume, lines, strict=True):
        values = line["data"]["values"]
        turns = np.array([v["turns"] for v in values])
        assert [v["monthly"] for v in values] == pytest.approx(cost_by_volume[name](turns).tolist())
        assert {v["option"] for v in values} == {OPTION_LABELS[name]}


def test_a_spec_the_schema_refuses_fails_its_check() -> None:
    broken = Spec({"mark": {"type": "bar"}, "encoding": {"x": {"field": "a", "type": "a number"}}})
    with pytest.raises(ValidationError):
        broken.to_dict()


def test_a_priced_key_names_the_scenario_the_day_and_the_records_the_page_added(catalogs: Catalogs) -> None:
    cat = app_catalogs()
    key = priced_key(SEED, cat, SEED_DATE)
    assert key is not None and key == priced_key(SEED, cat, SEED_DATE)
    busier = SEED.model_copy(update={"traffic": SEED.traffic.model_copy(update={"turns_per_month": 2_000_000})})
    assert priced_key(busier, cat, SEED_DATE) != key
    assert priced_key(SEED, cat, SEED_DATE + dt.timedelta(days=1)) != key
    # the user's own throughput figures are a record the page adds: other figures, another key
    with_own = [
        Catalogs(
            cat.prices,
            cat.gpus,
            RecordCatalog(records=(*cat.records.records, own_record(cat, SEED, rps, 1))),
            cat.models,
        )
        for rps in (2.0, 3.0)
    ]
    own_keys = {priced_key(SEED, c, SEED_DATE) for c in with_own}
    assert len(own_keys) == 2 and key not in own_keys
    # catalogues loaded apart from the page's (the fixture's own load): nothing is kept under them
    assert catalogs.prices is not cat.prices
    assert priced_key(SEED, catalogs, SEED_DATE) is None
