"""The Streamlit app through AppTest: the Compare page's answers, inputs, uploads and URL parameters."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from calculator.scenario.model import Scenario, list_presets, load_scenario_text

from .apptest import APP, open_page, table_with, text_of
from .named import named_params

SEED_URL = {"preset": "coding-agent", "asof": "2026-10-30", "in": "20000", "pfx": "0.9", "hit": "1.0", "out": "500"}


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
    assert metrics["1,000 turns: reused vs no reuse"] == "$9.68 vs $30.20"  # the label says which is which
    assert any(label.startswith("Serverless API") for label in metrics)
    text = " ".join(m.value for m in at.markdown)
    assert "is the cheapest way to buy this" in text


def test_changing_an_input_changes_the_answer() -> None:
    at = _app(**SEED_URL)
    before = _metrics(at)
    at.text_input(key="out").input("1000").run()
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
    # the input tokens field shows 'lots': no figure is shown for another number of tokens
    assert not _metrics(at)
    at = _app(**{**SEED_URL, "pfx": "2"})
    # the input falls back to the preset's 0.9, so a figure now would be the preset's shown as the link's
    assert not _metrics(at) and "outside 0 to 1" in " ".join(e.value for e in at.error)


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
    assert at.text_input(key="in").value == str(10000)
    # 5,000 x 1.40 + 5,000 x 0.26 + 500 x 4.40 per 1M = $0.0105
    assert _metrics(at)["Reused-prefix turn"] == "$0.0105"


def test_assumptions_table_names_price_versions() -> None:
    at = _app(**SEED_URL)
    table = table_with(at, "Assumption")
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
    from calculator.scenario.model import dump_scenario, load_preset

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
    diff = table_with(at, "Price")
    cached = diff[diff["Price"] == "cached input"].iloc[0]
    assert cached["2026-09-15"] == "$0.44" and cached["2026-10-05"] == "$0.26"
    assert cached["Change"] == "-$0.18 (-40.9%)"


def test_bad_offer_in_the_url_names_the_parameter() -> None:
    at = _app(**{**SEED_URL, "vm": "nowhere/none-such", "asof": "30/10/2026"})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "`vm`" in errors and "nowhere/none-such" in errors
    assert "`asof`" in errors


@pytest.mark.parametrize("preset", list_presets())
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
    from calculator.scenario.model import load_preset

    assert at.text_input(key="in").value == str(load_preset(other).workload.input_tokens)


def test_own_throughput_figures() -> None:
    at = _app(**SEED_URL, own="true", own_rps="0.5", own_gpus="2")
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    table = table_with(at, "Assumption")
    assert table["Value"].str.contains("your engine").any()


# --- pinned scenarios ---------------------------------------------------------------------------------


def _pinned_yaml() -> bytes:
    import datetime as dt

    from calculator.pricing.compare import load_catalogs
    from calculator.pricing.pinning import pin_prices
    from calculator.scenario.model import dump_scenario, load_preset

    scenario = load_preset("coding-agent").model_copy(update={"as_of": dt.date(2026, 10, 4)})
    return dump_scenario(pin_prices(scenario, load_catalogs())).encode()


def test_pinned_upload_says_what_changed_since() -> None:
    import datetime as dt

    at = _app(**SEED_URL)
    at.file_uploader(key="upload").set_value(("q3.yaml", _pinned_yaml(), "application/x-yaml")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.date_input(key="asof").value == dt.date(2026, 10, 4)  # reopening keeps the pinned date
    text = " ".join(m.value for m in at.markdown)
    assert "priced with the sheets of **2026-10-04** at $13,670.00" in text
    assert "it costs **$9,680.00** (29.2% less)" in text  # 1,000,000 seed turns at today's GLM-5.3 prices
    changes = next(d.value for d in at.dataframe if "Then" in d.value.columns)
    glm_input = changes[(changes["Offer"] == "lyceum glm-5.3") & (changes["Price"] == "input per 1M tokens")]
    assert list(glm_input["Then"]) == ["$1.75"] and list(glm_input["Now"]) == ["$1.40"]
    assert list(glm_input["Change"]) == ["-20.0%"]
    # the answers keep the saved date: 0.01367 a turn before the 2026-10-05 price change
    assert _metrics(at)["Reused-prefix turn"] == "$0.0137"


def test_unpinned_upload_shows_no_repricing() -> None:
    from calculator.scenario.model import dump_scenario, load_preset

    at = _app(**SEED_URL)
    plain = dump_scenario(load_preset("coding-agent")).encode()
    at.file_uploader(key="upload").set_value(("plain.yaml", plain, "application/x-yaml")).run()
    assert not at.exception
    assert "priced with the sheets of" not in " ".join(m.value for m in at.markdown)


# --- the Advanced inputs ------------------------------------------------------------------------------

ADVANCED_URL = {
    **SEED_URL,
    "sl": "anthropic/claude-sonnet-4-5",
    "rec": "sglang-llama-3.3-70b-bf16-4xh200-rate8",
    "cws": "0.5",
    "ttl": "1h",
    "batch": "true",
    "tf_sl": "1.1",
    "tf_gpu": "1.2",
    "auto": "true",
    "minr": "0",
    "start": "5",
    "chg": "2",
    "build": "30",
    "pct": "p50",
    "tps": "30",
}
ESTIMATE_URL = {
    **SEED_URL,
    "sl": "google/gemini-2.5-flash",
    "npfx": "10",
    "hold": "300",
    "est": "true",
    "e_model": "llama-3.3-70b",
    "e_prec": "fp8",
    "e_gpus": "2",
    "e_batch": "128",
}


def _expected(update: dict[str, object]) -> Scenario:
    import datetime as dt

    from calculator.scenario.model import load_preset

    data = load_preset("coding-agent").model_dump()
    data["as_of"] = dt.date(2026, 10, 30)
    for path, value in update.items():
        *parents, leaf = path.split(".")
        node = data
        for part in parents:
            node = node[part]
        node[leaf] = value
    return Scenario.model_validate(data)


def _monthly(scenario: Scenario) -> dict[str, str]:
    from calculator.present.money import format_money
    from calculator.pricing.compare import OPTION_LABELS, compare, load_catalogs

    result = compare(scenario, load_catalogs())
    return {OPTION_LABELS[o.option]: format_money(o.monthly, scenario.currency) for o in result.options}


def test_advanced_inputs_from_a_link_reach_the_scenario() -> None:
    at = _app(**ADVANCED_URL)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key="cws").value == 0.5
    assert at.selectbox(key="ttl").value == "1h"
    assert at.toggle(key="batch").value is True
    assert at.selectbox(key="pct").value == "p50"
    assert at.number_input(key="tps").value == 30
    expected = _expected(
        {
            "serverless": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
            "workload.cache_write_share": "0.5",
            "workload.cache_ttl": "1h",
            "workload.batch": True,
            "token_factors": {"claude-sonnet-4-5": "1.1", "llama-3.3-70b": "1.2"},
            "self_hosting.record": "sglang-llama-3.3-70b-bf16-4xh200-rate8",
            "self_hosting.autoscale": True,
            "self_hosting.min_replicas": 0,
            "self_hosting.startup_minutes": 5,
            "self_hosting.model_changes_per_month": 2,
            "self_hosting.build_minutes_per_change": 30,
            "self_hosting.latency_target": {"percentile": "p50", "tokens_per_s_per_user": 30},
        }
    )
    shown = {k: v for k, v in _metrics(at).items() if k in _monthly(expected)}
    assert shown == _monthly(expected)
    assert _monthly(expected) != _monthly(_expected({}))  # the inputs moved the answer
    # the same link opened again shows the same numbers
    assert _metrics(_app(**ADVANCED_URL)) == _metrics(at)


def test_estimate_and_cache_storage_from_a_link() -> None:
    at = _app(**ESTIMATE_URL)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.toggle(key="est").value is True
    assert at.selectbox(key="e_model").value == "llama-3.3-70b"
    assert at.number_input(key="e_gpus").value == 2
    assert at.number_input(key="npfx").value == 10
    expected = _expected(
        {
            "serverless": {
                "provider": "google",
                "model": "gemini-2.5-flash",
                "distinct_prefixes": 10,
                "prefix_hold_hours": 300,
            },
            "self_hosting.estimate": {
                "model": "llama-3.3-70b",
                "precision": "fp8",
                "gpus_per_replica": 2,
                "max_batch": 128,
            },
        }
    )
    shown = {k: v for k, v in _metrics(at).items() if k in _monthly(expected)}
    assert shown == _monthly(expected)
    assert any("ESTIMATE" in i.value for i in at.info)  # labelled an estimate


def test_advanced_values_round_trip_through_yaml_and_the_state_mapping() -> None:
    import datetime as dt

    from app_pages import _state
    from calculator.pricing.compare import load_catalogs
    from calculator.scenario.model import dump_scenario

    cat = load_catalogs()
    expected = _expected(
        {
            "serverless": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
            "workload.cache_write_share": "0.5",
            "workload.cache_ttl": "1h",
            "token_factors": {"claude-sonnet-4-5": "1.1"},
            "self_hosting.min_replicas": 3,
            "self_hosting.latency_target": {"percentile": "p50", "ttft_ms": 150},
        }
    )
    values = _state.scenario_to_state(expected, cat)
    assert {k: values[k] for k in ("cws", "ttl", "tf_sl", "tf_gpu", "minr", "pct", "ttft", "tps", "est")} == {
        "cws": 0.5,
        "ttl": "1h",
        "tf_sl": 1.1,
        "tf_gpu": 1.0,
        "minr": 3,
        "pct": "p50",
        "ttft": 150.0,
        "tps": 0.0,
        "est": False,
    }
    assert _state.state_to_scenario(expected, values, dt.date(2026, 10, 30), cat) == expected
    # a YAML file with them sets the same inputs
    at = _app(**SEED_URL)
    at.file_uploader(key="upload").set_value(("adv.yaml", dump_scenario(expected).encode(), "text/yaml")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="ttl").value == "1h" and at.number_input(key="minr").value == 3
    assert at.number_input(key="tf_sl").value == 1.1 and at.number_input(key="ttft").value == 150


def test_bad_advanced_url_values_are_named() -> None:
    at = _app(**{**SEED_URL, "cws": "3", "ttl": "2d", "tf_sl": "0.1", "est": "maybe"})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "`cws`" in errors and "`ttl`" in errors and "`tf_sl`" in errors and "`est`" in errors


def _rows(at: AppTest) -> dict[str, dict[str, str]]:
    """The assumptions table by assumption name."""
    table = table_with(at, "Assumption")
    return {str(row["Assumption"]): {str(k): v for k, v in row.items()} for _, row in table.iterrows()}


def test_assumptions_list_the_advanced_settings_when_set() -> None:
    from calculator.pricing.compare import load_catalogs

    at = _app(**ADVANCED_URL, ttft="2000")
    assert not at.exception and not at.error, [e.value for e in at.error]
    rows = _rows(at)
    assert rows["Latency target"]["Value"].startswith(
        "p50: time to first token at most 2000 ms and at least 30 tokens/s per user"
    )
    assert rows["Token factor: claude-sonnet-4-5"]["Value"].startswith("x1.1 tokens per workload token")
    assert rows["Token factor: llama-3.3-70b"]["Value"].startswith("x1.2 tokens per workload token")
    assert rows["Cache write share"]["Value"] == "0.5"
    assert rows["Cache lifetime (TTL)"]["Value"] == "1h"
    assert rows["Batch pricing"]["Value"].startswith("yes (")
    assert rows["Autoscale"]["Value"].startswith("yes")
    assert rows["Minimum replicas outside active hours"]["Value"] == "0"
    assert rows["Start-up minutes per scale-up"]["Value"] == "5"
    record = load_catalogs().records.get("sglang-llama-3.3-70b-bf16-4xh200-rate8")
    assert record.source.url
    for name in ("Throughput record", "Throughput record source", "Throughput record measured"):
        assert rows[name]["Source"] == record.source.url
        assert rows[name]["Read"] == record.source.read.isoformat()
    assert rows["Throughput record source"]["Value"].startswith(record.source.url)
    measured = record.measured.isoformat() if record.measured else "not stated in the record"
    assert rows["Throughput record measured"]["Value"] == measured
    assert rows["Sizing"]["Value"] == "measured throughput record"


def test_assumptions_list_the_estimate_and_cache_storage() -> None:
    at = _app(**ESTIMATE_URL)
    assert not at.exception and not at.error, [e.value for e in at.error]
    rows = _rows(at)
    assert rows["Sizing"]["Value"] == "roofline estimate, not a measurement"
    assert rows["Estimate: model"]["Value"] == "llama-3.3-70b (estimate, not a measurement)"
    assert rows["Estimate: precision"]["Value"] == "fp8"
    assert rows["Estimate: GPUs per replica"]["Value"] == "2"
    assert rows["Estimate: max batch"]["Value"] == "128"
    assert "Throughput record" not in rows  # the estimate, not the record, sizes the GPUs
    assert rows["Distinct cached prefixes"]["Value"] == "10"
    assert rows["Hours held per month"]["Value"] == "300"


def test_assumptions_leave_out_settings_not_set_or_not_charged() -> None:
    at = _app(**{**SEED_URL, **named_params("coding-agent")})
    rows = _rows(at)
    for name in ("Latency target", "Minimum replicas outside active hours", "Distinct cached prefixes"):
        assert name not in rows
    assert not any(name.startswith("Token factor") for name in rows)
    # the seed preset's GPU options run GLM-5 (record: auto), sized from its published 8x B200 run: no estimate
    assert "Estimate: GPUs per replica" not in rows and "Throughput record" in rows
    assert rows["Autoscale"]["Value"] == "no (always on for the peak)"


def test_the_token_factor_hint_points_to_the_advanced_inputs() -> None:
    at = _app(**{**SEED_URL, "sl": "anthropic/claude-sonnet-4-5"})
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "another model's tokenizer" in warnings
    assert "**Advanced**" in warnings and "Token counts" in warnings
    assert "token_factors" not in warnings


def test_compare_says_when_auto_estimates_an_mla_model_with_data_parallel_attention() -> None:
    # DeepSeek-V3 (MLA) has no measurement (GPUStack's published runs are of V3.2): auto estimates 8 GPUs, in the
    # layout that serves more
    at = open_page("compare", sl="deepinfra/deepseek-v3-0324", vm="coreweave/h200-sxm-8x", ded="none")
    caption = text_of(at.caption)
    assert "roofline estimate of deepseek-v3" in caption
    assert "with data-parallel attention (it serves more here than tensor parallel)" in caption
