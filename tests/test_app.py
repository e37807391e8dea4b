"""The Streamlit app through AppTest: the Compare page's answers, inputs, uploads and URL parameters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from calculator.scenario import load_scenario_text

APP = str(Path(__file__).resolve().parents[1] / "app.py")
SEED_URL = {"preset": "coding-agent", "asof": "2026-10-30", "in": "20000", "pfx": "0.9", "hit": "1.0", "out": "500"}


@pytest.fixture(autouse=True)
def _clear_caches() -> Iterator[None]:
    st.cache_data.clear()
    st.cache_resource.clear()
    yield


def _app(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_compare_page_shows_the_seed_turn() -> None:
    at = _app(**SEED_URL)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    assert metrics["No-reuse turn"] == "$0.0302"
    assert metrics["Reused-prefix turn"] == "$0.00968"
    assert metrics["1,000 turns"] == "$9.68 vs $30.20"
    assert any(label.startswith("Serverless API") for label in metrics)
    text = " ".join(m.value for m in at.markdown)
    assert "the cheapest is" in text


def test_changing_an_input_changes_the_answer() -> None:
    at = _app(**SEED_URL)
    before = _metrics(at)
    at.number_input(key="out").set_value(1000).run()
    after = _metrics(at)
    assert not at.exception
    assert after["Reused-prefix turn"] == "$0.0119"  # 0.00968 + 500 more output tokens x $4.40 per 1M
    serverless = next(k for k in before if k.startswith("Serverless API"))
    assert after[next(k for k in after if k.startswith("Serverless API"))] != before[serverless]


def test_currency_in_euros() -> None:
    at = _app(**SEED_URL, cur="EUR", fx="1.25")
    assert not at.exception
    assert _metrics(at)["No-reuse turn"] == "€0.0242"  # 0.0302 / 1.25 = 0.02416


def test_bad_url_parameter_shows_an_error_naming_it() -> None:
    at = _app(**{**SEED_URL, "pfx": "2", "in": "lots"})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "`pfx`" in errors and "outside 0 to 1" in errors
    assert "`in`" in errors and "not a number" in errors
    assert _metrics(at)  # the page still answers with valid values


def test_bad_uploaded_yaml_names_the_line_and_field() -> None:
    at = _app(**SEED_URL)
    bad = b"schema_version: 1\nworkload:\n  input_tokens: 20000\n  prefix_share: 1.5\n  output_tokens: 500\n"
    at.file_uploader(key="upload").set_value(("bad.yaml", bad, "application/x-yaml")).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "bad.yaml:4" in errors and "workload.prefix_share" in errors
    assert "traffic" in errors  # the missing section is named too


def test_uploaded_yaml_sets_the_inputs() -> None:
    at = _app(**SEED_URL)
    good = (
        "schema_version: 1\nname: upload\nas_of: 2026-10-30\n"
        "workload: {input_tokens: 10000, prefix_share: 0.5, hit_rate: 1, output_tokens: 500}\n"
        "traffic: {turns_per_month: 50000}\nserverless: {provider: lyceum, model: GLM-5.3}\n"
    )
    at.file_uploader(key="upload").set_value(("mine.yaml", good.encode(), "application/x-yaml")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key="in").value == 10000
    # 5,000 x 1.40 + 5,000 x 0.26 + 500 x 4.40 per 1M = $0.0105
    assert _metrics(at)["Reused-prefix turn"] == "$0.0105"


def test_assumptions_table_names_price_versions() -> None:
    at = _app(**SEED_URL)
    table = at.dataframe[0].value
    glm = table[table["Assumption"].str.contains("GLM-5.3: cached input")]
    assert list(glm["Value"]) == ["$0.26 per 1M tokens"]
    assert list(glm["Price version"]) == ["2026-10-05"]
    labels = [b.label for b in at.download_button]
    assert labels == ["Assumptions (CSV)", "Scenario (YAML)", "One-page summary (PDF)"]


def test_an_early_date_picks_the_older_price_version() -> None:
    at = _app(**{**SEED_URL, "asof": "2026-10-01"})
    assert not at.exception
    # 2,000 x 1.75 + 18,000 x 0.44 + 500 x 4.50 per 1M = $0.01367
    assert _metrics(at)["Reused-prefix turn"] == "$0.0137"


def test_a_date_before_every_price_is_an_error() -> None:
    at = _app(**{**SEED_URL, "asof": "2020-01-01"})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "`asof`" in errors and "GLM-5.3 has no price before 2026-09-15" in errors


def test_scenario_yaml_round_trips() -> None:
    from app_pages._data import catalogs  # noqa: F401 - importable without a running app
    from calculator.scenario import dump_scenario, load_preset

    scenario = load_preset("coding-agent")
    assert load_scenario_text(dump_scenario(scenario)) == scenario


def test_price_sheets_page_renders() -> None:
    at = _app()
    at.switch_page("app_pages/price_sheets.py").run()
    assert not at.exception


def test_price_sheets_page_compares_two_versions() -> None:
    at = _app()
    at.switch_page("app_pages/price_sheets.py").run()
    at.selectbox(key="ps_offer").set_value("lyceum/serverless/glm-5.3").run()
    assert not at.exception
    diff = at.dataframe[1].value
    cached = diff[diff["Price"] == "cached input"].iloc[0]
    assert cached["2026-09-15"] == "$0.44" and cached["2026-10-05"] == "$0.26"
    assert cached["Change"] == "-$0.18 (-40.9%)"


def test_bad_offer_in_the_url_names_the_parameter() -> None:
    at = _app(**{**SEED_URL, "vm": "nowhere/none-such", "asof": "30/10/2026"})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "`vm`" in errors and "nowhere/none-such" in errors
    assert "`asof`" in errors


@pytest.mark.parametrize("preset", sorted(p.stem for p in (Path(APP).parent / "scenarios").glob("*.yaml")))
def test_every_preset_renders(preset: str) -> None:
    at = _app(preset=preset)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.metric) >= 2


def test_switching_preset_applies_its_values() -> None:
    at = _app(**SEED_URL)
    names = at.selectbox(key="preset").options
    other = next(n for n in names if n != "coding-agent")
    at.selectbox(key="preset").set_value(other).run()
    assert not at.exception
    from calculator.scenario import load_preset

    assert at.number_input(key="in").value == load_preset(other).workload.input_tokens


def test_own_throughput_figures() -> None:
    at = _app(**SEED_URL, own="true", own_rps="0.5", own_gpus="2")
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    table = at.dataframe[0].value
    assert table["Value"].str.contains("your engine").any()
