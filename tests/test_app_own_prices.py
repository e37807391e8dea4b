"""The Compare page's own prices: from the link, from the page's inputs, labelled as the user's.

Known figures (the seed article's turn: 20,000 input tokens, 18,000 cached, 500 output; 1,000,000 turns a
month in the coding-agent preset): $1.40 / $0.26 / $4.40 per million give $0.00968 a turn and $9,680.00 a
month; $1.00 / $0.20 / $4.00 give 2,000 x 1.00 + 18,000 x 0.20 + 500 x 4.00 = $0.0076 and $7,600.00; 10% off
the listed price gives $8,712.00.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from streamlit.testing.v1 import AppTest

from calculator.scenario.model import load_scenario_text

from .test_app import SEED_URL, _app, _rows
from .test_app_scenario import _saved
from .test_app_scenario import downloads as downloads  # the fixture that keeps the page's downloads


def _monthly(at: AppTest) -> str:
    return next(m.value for m in at.metric if m.label.startswith("Serverless API"))


def test_a_link_with_own_prices_prices_them_and_says_whose_they_are() -> None:
    at = _app(**SEED_URL, op_sl="true", op_in="1.00", op_ca="0.20", op_out="4.00", op_name="ACME negotiated")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _monthly(at).startswith("$7,600.00")
    sources = {row["Source"] for name, row in _rows(at).items() if name.startswith("lyceum GLM-5.3:")}
    assert sources == {"your own price: ACME negotiated"}


def test_a_link_with_a_discount() -> None:
    at = _app(**SEED_URL, op_sd="10")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _monthly(at).startswith("$8,712.00")


def test_switching_on_own_prices_starts_at_the_listed_ones() -> None:
    at = _app(**SEED_URL)
    listed = _monthly(at)
    at.toggle(key="op_sl").set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.number_input(key="op_in").value == 1.40 and at.number_input(key="op_out").value == 4.40
    assert _monthly(at) == listed and listed.startswith("$9,680.00")
    at.number_input(key="op_in").set_value(1.00).run()
    at.number_input(key="op_ca").set_value(0.20).run()
    at.number_input(key="op_out").set_value(4.00).run()
    assert _monthly(at).startswith("$7,600.00")


def test_the_scenario_file_keeps_the_pages_own_prices(downloads: dict[str, Any]) -> None:
    at = _app(**SEED_URL, op_vm="true", op_vh="3.5", op_dd="20")
    assert not at.exception and not at.error, [e.value for e in at.error]
    saved = _saved(downloads, "started-from-coding-agent-the-seeds-turn.yaml")  # own prices are a change
    scenario = load_scenario_text(saved.decode())
    assert scenario.own_prices is not None
    assert scenario.own_prices.gpu_hour == Decimal("3.5") and scenario.own_prices.dedicated_discount == 20
    assert scenario.own_prices.serverless is None and scenario.own_prices.serverless_discount is None
    reopened = _app(**SEED_URL)
    reopened.file_uploader(key="upload").set_value(("mine.yaml", saved, "application/x-yaml")).run()
    assert not reopened.exception and not reopened.error, [e.value for e in reopened.error]
    assert reopened.toggle(key="op_vm").value is True
    assert reopened.number_input(key="op_vh").value == 3.5 and reopened.number_input(key="op_dd").value == 20
