"""The answer first (issue 25, part 5): the headline a product manager reads, from ``calculator/present/headline.py``,
and where the Compare page puts it and the engineer's detail.

The seed's worked example: a coding-agent turn of 20,000 input tokens (18,000 repeated) and 500 output tokens on
lyceum GLM-5.3 costs $0.0302 with nothing reused and $0.00968 with the start reused; at the coding-agent
preset's 1,000,000 turns a month that is $30,200 beside $9,680."""

from __future__ import annotations

import datetime as dt

import pytest

from calculator.present.headline import headline
from calculator.pricing.compare import Catalogs, Comparison, Crossing, compare
from calculator.scenario.model import Scenario

from .apptest import metrics, open_page, text_of

SEED_URL = {"preset": "coding-agent", "asof": "2026-10-30", "in": "20000", "pfx": "0.9", "hit": "1.0", "out": "500"}


def _seed(volume: int = 1_000_000) -> Scenario:
    return Scenario.model_validate(
        {
            "name": "seed",
            "as_of": dt.date(2026, 10, 30),
            "workload": {"input_tokens": 20000, "prefix_share": "0.9", "hit_rate": "1", "output_tokens": 500},
            "traffic": {"turns_per_month": volume},
            "serverless": {"provider": "lyceum", "model": "GLM-5.3"},
            "gpu_vm": {"provider": "nebius", "offer": "h200-sxm-1x"},
            "self_hosting": {"record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"},
        }
    )


@pytest.fixture(scope="module")
def seed(catalogs: Catalogs) -> Comparison:
    return compare(_seed(), catalogs)


def test_the_headline_gives_the_cheapest_month_and_both_turns_with_their_months(seed: Comparison) -> None:
    said = headline(seed)
    assert said.cheapest.startswith("**Serverless API** (lyceum glm-5.3) is the cheapest way to buy this")
    assert "**$9,680.00 a month** for 1,000,000 turns (32,877 a day)" in said.cheapest
    assert said.turn is not None
    assert "20,000 input tokens (18,000 of them repeating" in said.turn
    assert "**$0.0302** with nothing reused, **$30,200.00 a month**" in said.turn
    assert "**$0.00968** with the repeated start read from the cache, **$9,680.00 a month** (68% less)" in said.turn


def test_the_break_even_is_one_sentence_saying_what_it_means(seed: Comparison) -> None:
    above = Crossing(a="serverless", b="self_hosted", turns_per_month=13_000_000, cheaper_above="self_hosted")
    said = headline(seed.model_copy(update={"crossings": (above,), "cheapest": "serverless"})).break_even
    assert said == (
        "Break-even: above **13 million turns a month** (13.0 times this volume), Self-hosted GPUs would cost less "
        "than Serverless API; below it, Serverless API stays cheaper."
    )
    below = Crossing(a="serverless", b="self_hosted", turns_per_month=400_000, cheaper_above="serverless")
    said = headline(seed.model_copy(update={"crossings": (below,), "cheapest": "serverless"})).break_even
    assert said is not None and said.startswith("Break-even: Serverless API became cheaper than Self-hosted GPUs")
    none = headline(seed.model_copy(update={"crossings": (), "cheapest": "serverless"})).break_even
    assert none is not None and none.startswith("No break-even: Serverless API is the cheapest at every volume")


@pytest.mark.app
def test_the_compare_page_puts_the_answer_first_and_the_sizing_in_an_expander() -> None:
    at = open_page("compare", 90, **SEED_URL)
    assert not at.error, [e.value for e in at.error]
    first = at.markdown[1].value if at.markdown[0].value.startswith("An agent loop") else at.markdown[0].value
    assert first.startswith("**Serverless API** (lyceum glm-5.3) is the cheapest way to buy this")
    assert "**$30,200.00 a month**" in first and "**$9,680.00 a month**" in first
    assert metrics(at)["1,000 turns: reused vs no reuse"] == "$9.68 vs $30.20"
    sizing = next(e for e in at.expander if e.label.startswith("How the GPUs were sized"))
    inside = {i.value for i in sizing.info} | {c.value for c in sizing.caption}
    assert any(c.startswith("GPU options sized from") for c in inside)
    # the engineer's caveats (a lower bound, a roofline estimate, a minimum) are all in the expander
    caveats = [i.value for i in at.info if "lower bound" in i.value or "estimate" in i.value.lower()]
    assert caveats and set(caveats) <= inside
    assert "lower bound" in text_of(sizing.info) or "estimate" in text_of(sizing.info).lower()
