"""The Deploy page through AppTest: the ranked configurations, the Pareto chart, and "use this" into Compare."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from .apptest import metrics, open_page, table_with, text_of
from .test_app_messages import unwritten


def _rows(at: AppTest) -> list[dict[str, object]]:
    frame = table_with(at, "Offer", "Replica")
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def test_the_page_ranks_the_cheapest_meeting_configurations_and_draws_the_front() -> None:
    at = open_page("deploy")
    assert not at.error, [e.value for e in at.error]
    assert "Cheapest meeting the target" in text_of(at.success)
    rows = _rows(at)
    assert 1 <= len(rows) <= 10
    monthly = [float(str(r["Per month"]).replace("$", "").replace(",", "")) for r in rows]
    assert monthly == sorted(monthly)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 1
    spec = json.loads(charts[0].proto.spec)
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert marks == ["circle", "line"]  # every configuration, and the Pareto front through them


def test_use_this_makes_compare_price_the_same_configuration_for_the_same_money() -> None:
    at = open_page("deploy")
    first = _rows(at)[0]  # on the default preset, GLM-5 on 8x H200 with data-parallel attention
    at.button(key="d_use_0").click().run()
    assert not at.exception
    assert "The Compare page now prices" in text_of(at.success)
    offer = str(first["Offer"])
    kind = "ded" if str(first["Kind"]).startswith("Dedicated") else "vm"
    assert at.session_state[kind] == offer
    replica = str(first["Replica"])
    if first["Evidence"] and str(first["Evidence"]).startswith("ESTIMATE"):
        assert at.session_state["est"] is True
        assert f"{at.session_state['e_gpus']}x" == replica.split()[0]
        assert str(at.session_state["e_prec"]).upper() == str(first["Precision"]).split()[0]
        assert at.session_state["e_attn"] == ("dp" if "DP attention" in replica else "tp")
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception
    label = "Dedicated endpoint" if kind == "ded" else "Self-hosted GPUs"
    assert metrics(at)[label] == first["Per month"]  # one bill: the same figure on both pages


def test_an_unmeetable_target_says_what_is_achievable() -> None:
    at = open_page("deploy")
    at.number_input(key="d_tps").set_value(9999.0).run()
    assert not at.exception
    warning = text_of(at.warning)
    assert "No configuration meets the target." in warning
    assert "Best per-user speed:" in warning and "Closest to the target:" in warning


def test_spot_prices_show_only_when_asked() -> None:
    at = open_page("deploy")
    at.toggle(key="d_all").set_value(True).run()
    assert not any("spot" in str(r["Kind"]) for r in _rows(at))
    at.toggle(key="d_spot").set_value(True).run()
    assert any("spot" in str(r["Kind"]) for r in _rows(at))


def test_the_coding_agents_deploy_page_says_why_glm5_and_writes_every_cell() -> None:
    at = open_page("deploy", preset="coding-agent", d_all="true")  # the measured rows rank below the ten cheapest
    assert "GLM-5.3, self-hosted as its nearest spec glm-5" in text_of(at.caption)  # not "the model asked for"
    rows = _rows(at)
    # GLM-5's published B200 run states no latency: its rows say so in words, not an empty None
    measured = [
        row
        for row in rows
        if str(row["Evidence"]).startswith("measured (published by") and " vllm-glm-5" in str(row["Evidence"])
    ]
    assert measured and all(row["TTFT (ms)"] == "not measured" for row in measured)
    assert not unwritten(at)
