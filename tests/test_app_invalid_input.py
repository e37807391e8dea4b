"""Invalid input never leaves an answer standing (issue 25, part 6): a value the page cannot take, typed or from a
link, replaces every figure with the message naming the field and what it takes; set right, the answer comes back."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from .apptest import APP, metrics, text_of

pytestmark = pytest.mark.app

SEED_MONTH = "$9,680.00"  # the seed's coding agent, 1,000,000 turns a month of $0.00968 with the prefix reused


def _app(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_a_share_typed_out_of_its_range_replaces_the_figures_with_what_it_takes() -> None:
    at = _app(preset="coding-agent")
    assert metrics(at)["Serverless API"] == SEED_MONTH
    at.number_input(key="pfx").set_value(90).run()  # 90 meant as 90%
    assert not at.exception
    assert metrics(at) == {}
    said = text_of(at.error)
    assert "Prefix share" in said and "90 is outside 0 to 1" in said and "0.9 for 90%" in said
    at.number_input(key="pfx").set_value(0.9).run()
    assert not at.error and metrics(at)["Serverless API"] == SEED_MONTH


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"pfx": "1.5"}, "URL parameter `pfx` (Prefix share): '1.5' is outside 0 to 1"),
        ({"hit": "-0.2"}, "URL parameter `hit` (Cache hit rate)"),
        ({"vol": "abc"}, "URL parameter `vol` (Turns): 'abc' is not a number"),
        ({"cur": "XYZ"}, "URL parameter `cur`: 'XYZ' is not one of"),
    ],
)
def test_a_links_bad_value_shows_its_message_and_no_figure(params: dict[str, str], says: str) -> None:
    at = _app(preset="coding-agent", **params)
    assert not at.exception
    assert says in text_of(at.error)
    assert metrics(at) == {}, "a figure stands beside the message (the preset's, not the link's)"


def test_a_links_bad_value_set_right_on_the_page_brings_the_answer_back() -> None:
    at = _app(preset="coding-agent", pfx="1.5")
    assert metrics(at) == {}
    at.number_input(key="pfx").set_value(0.9).run()
    assert not at.error, [e.value for e in at.error]
    assert metrics(at)["Serverless API"] == SEED_MONTH


def test_a_bad_region_or_name_leaves_the_answer_and_says_so() -> None:
    at = _app(preset="coding-agent", region="atlantis")
    assert "URL parameter `region`" in text_of(at.error)
    assert metrics(at)["Serverless API"] == SEED_MONTH
