"""The turn's cost: the seed's worked example, each cache billing rule by hand, and invariants."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.prices import PriceCatalog, ServerlessOffer
from calculator.pricing.option import cents
from calculator.pricing.serverless import serverless_monthly_array, serverless_option
from calculator.pricing.turn import TurnShape, compare_turn, price_turn, turn_cost_array
from calculator.scenario.inputs import Fx, Traffic

from .conftest import SEED_DATE
from .offers import serverless

D = Decimal
SEED_TURN = TurnShape(input_tokens=20_000, prefix_share=D("0.9"), hit_rate=D(1), output_tokens=500)


def test_seed_worked_example_is_exact(catalog: PriceCatalog) -> None:
    sheet, offer = catalog.serverless("lyceum", "GLM-5.3")
    result = compare_turn(sheet, offer, SEED_DATE, SEED_TURN)
    assert result.no_reuse.cost_per_turn == D("0.0302")
    assert result.reused.cost_per_turn == D("0.00968")
    assert cents(result.no_reuse.cost_per_turn * 1000) == D("30.20")
    assert cents(result.reused.cost_per_turn * 1000) == D("9.68")
    # the seed's table, part by part
    assert result.reused.parts.uncached_input == D("0.0028")
    assert result.reused.parts.cached_input == D("0.00468")
    assert result.reused.parts.output == D("0.0022")
    assert result.reused.cached_tokens == 18_000 and result.reused.uncached_tokens == 2_000


def test_price_change_on_2026_10_05_applies_from_that_day(catalog: PriceCatalog) -> None:
    sheet, offer = catalog.serverless("lyceum", "GLM-5.3")
    before = compare_turn(sheet, offer, dt.date(2026, 10, 4), SEED_TURN)
    on_the_day = compare_turn(sheet, offer, dt.date(2026, 10, 5), SEED_TURN)
    # before: 1.75 input, 0.44 cached, 4.50 output
    assert before.no_reuse.cost_per_turn == D("0.03725")  # 20,000 x 1.75 + 500 x 4.50
    assert before.reused.cost_per_turn == D("0.01367")  # 2,000 x 1.75 + 18,000 x 0.44 + 500 x 4.50
    assert before.price.effective < dt.date(2026, 10, 5)
    assert on_the_day.reused.cost_per_turn == D("0.00968")
    assert on_the_day.price.effective == dt.date(2026, 10, 5)


def test_automatic_caching_bills_cached_tokens_at_the_discount_with_no_write_fee() -> None:
    offer = serverless({"input": 2, "cached_input": D("0.5"), "output": 8})
    cost = price_turn(offer, offer.versions[0], SEED_TURN)
    # 2,000 x 2 + 18,000 x 0.5 + 500 x 8, per million
    assert cost.cost_per_turn == D("0.017")
    assert cost.parts.cache_write == 0 and cost.written_tokens == 0


def test_cache_increments_round_the_cached_prefix_down() -> None:
    offer = serverless({"input": 2, "cached_input": D("0.5"), "output": 8}, cache_increment_tokens=128)
    cost = price_turn(offer, offer.versions[0], SEED_TURN)
    assert cost.cached_tokens == 17_920  # 140 whole blocks of 128
    assert cost.cost_per_turn == D("0.01712")  # 2,080 x 2 + 17,920 x 0.5 + 500 x 8


def test_prompts_below_the_minimum_cacheable_prefix_are_not_cached() -> None:
    offer = serverless({"input": 3, "cached_input": D("0.3"), "output": 15}, min_cacheable_tokens=1024)
    short = TurnShape(input_tokens=1000, prefix_share=D("0.9"), output_tokens=500)
    cost = price_turn(offer, offer.versions[0], short)
    assert cost.cached_tokens == 0
    assert cost.cost_per_turn == D("0.0105")  # 1,000 x 3 + 500 x 15


ANTHROPIC_LIKE = {"input": 3, "cached_input": D("0.30"), "cache_write": {"5m": D("3.75"), "1h": 6}, "output": 15}


def test_explicit_cache_writes_bill_the_new_tail_at_the_write_price() -> None:
    offer = serverless(ANTHROPIC_LIKE)
    cost = price_turn(offer, offer.versions[0], SEED_TURN)
    # the 2,000 new tokens are written for the next turn: 2,000 x 3.75 + 18,000 x 0.30 + 500 x 15
    assert cost.written_tokens == 2_000
    assert cost.cost_per_turn == D("0.0204")


def test_one_hour_ttl_costs_twice_the_input_price_to_write() -> None:
    offer = serverless(ANTHROPIC_LIKE)
    cost = price_turn(offer, offer.versions[0], SEED_TURN.model_copy(update={"cache_ttl": "1h"}))
    assert cost.parts.cache_write == D("0.012")  # 2,000 x 6
    assert cost.cost_per_turn == D("0.0249")


def test_misses_rewrite_the_prefix_with_explicit_caching() -> None:
    offer = serverless(ANTHROPIC_LIKE)
    half = SEED_TURN.model_copy(update={"hit_rate": D("0.5")})
    cost = price_turn(offer, offer.versions[0], half)
    # cached 9,000; uncached 11,000, all written (at most the 18,000-token prefix)
    assert (cost.cached_tokens, cost.uncached_tokens, cost.written_tokens) == (D(9_000), D(11_000), D(11_000))
    assert cost.cost_per_turn == D("0.05145")  # 11,000 x 3.75 + 9,000 x 0.30 + 500 x 15


def test_unknown_ttl_is_refused_naming_what_is_sold() -> None:
    offer = serverless(ANTHROPIC_LIKE)
    with pytest.raises(ValueError, match="5m, 1h"):
        price_turn(offer, offer.versions[0], SEED_TURN.model_copy(update={"cache_ttl": "24h"}))


def test_long_context_tier_is_a_cliff_over_the_whole_request() -> None:
    tier = {"above_tokens": 200_000, "input": 6, "cached_input": D("0.6"), "output": D("22.5")}
    offer = serverless({"input": 3, "cached_input": D("0.3"), "output": 15}, version={"long_context": [tier]})
    at = TurnShape(input_tokens=200_000, prefix_share=0, output_tokens=1000)
    past = TurnShape(input_tokens=200_001, prefix_share=0, output_tokens=1000)
    assert price_turn(offer, offer.versions[0], at).cost_per_turn == D("0.615")  # 200,000 x 3 + 1,000 x 15
    cost = price_turn(offer, offer.versions[0], past)
    assert cost.tier == 0
    assert cost.cost_per_turn == D("1.222506")  # 200,001 x 6 + 1,000 x 22.5: output too


def test_long_context_threshold_counts_cached_tokens() -> None:
    tier = {"above_tokens": 200_000, "input": 6, "cached_input": D("0.6"), "output": D("22.5")}
    offer = serverless({"input": 3, "cached_input": D("0.3"), "output": 15}, version={"long_context": [tier]})
    mostly_cached = TurnShape(input_tokens=250_000, prefix_share=D("0.9"), output_tokens=0)
    cost = price_turn(offer, offer.versions[0], mostly_cached)
    assert cost.tier == 0
    assert cost.cost_per_turn == D("0.285")  # 25,000 x 6 + 225,000 x 0.6


def test_batch_discount_applies_only_to_the_prices_it_covers() -> None:
    offer = serverless(
        {"input": 2, "cached_input": D("0.5"), "output": 8},
        version={"batch_discount": D("0.5"), "batch_applies_to": ["input", "output"]},
    )
    batch = SEED_TURN.model_copy(update={"batch": True})
    cost = price_turn(offer, offer.versions[0], batch)
    # input and output halved, cached input not: 2,000 x 1 + 18,000 x 0.5 + 500 x 4
    assert cost.cost_per_turn == D("0.013")


def test_array_sweep_matches_the_exact_turn() -> None:
    offer = serverless(ANTHROPIC_LIKE, cache_increment_tokens=128, min_cacheable_tokens=1024)
    rates = np.linspace(0, 1, 11)
    swept = turn_cost_array(offer, offer.versions[0], SEED_TURN, hit_rate=rates)
    for rate, value in zip(rates, swept, strict=True):
        exact = price_turn(offer, offer.versions[0], SEED_TURN.model_copy(update={"hit_rate": D(str(rate))}))
        assert value == pytest.approx(float(exact.cost_per_turn), rel=1e-12)


# --- invariants over every bundled serverless offer ----------------------------------------------

shapes = st.builds(
    TurnShape,
    input_tokens=st.integers(0, 400_000),
    prefix_share=st.decimals(0, 1, places=3),
    hit_rate=st.decimals(0, 1, places=3),
    output_tokens=st.integers(0, 50_000),
    cache_write_share=st.decimals(0, 1, places=2),
)


def _offers(catalog: PriceCatalog) -> list[ServerlessOffer]:
    return [o for _, o in catalog.offers("serverless") if isinstance(o, ServerlessOffer)]


@settings(max_examples=150, deadline=None)
@given(shape=shapes, data=st.data())
def test_cost_is_never_negative(catalog: PriceCatalog, shape: TurnShape, data: st.DataObject) -> None:
    offer = data.draw(st.sampled_from(_offers(catalog)))
    for version in offer.versions:
        cost = price_turn(offer, version, shape)
        assert min(cost.parts.model_dump().values()) >= 0


@settings(max_examples=150, deadline=None)
@given(shape=shapes, data=st.data())
def test_reused_equals_no_reuse_at_prefix_share_zero(
    catalog: PriceCatalog, shape: TurnShape, data: st.DataObject
) -> None:
    offer = data.draw(st.sampled_from(_offers(catalog)))
    version = offer.versions[-1]
    zero = shape.model_copy(update={"prefix_share": D(0)})
    assert (
        price_turn(offer, version, zero).cost_per_turn == price_turn(offer, version, zero.without_reuse()).cost_per_turn
    )


@settings(max_examples=150, deadline=None)
@given(shape=shapes, low=st.decimals(0, 1, places=3), high=st.decimals(0, 1, places=3), data=st.data())
def test_cost_falls_as_hit_rate_rises_when_cached_input_is_cheaper(
    catalog: PriceCatalog, shape: TurnShape, low: Decimal, high: Decimal, data: st.DataObject
) -> None:
    offer = data.draw(st.sampled_from(_offers(catalog)))
    version = offer.versions[-1]
    prices = version.prices_for_prompt(shape.input_tokens)
    cached = prices.cached_input if prices.cached_input is not None else prices.input
    sold_write = prices.write_price()  # None when no cache write is sold
    write = sold_write if sold_write is not None else prices.input
    if cached >= min(prices.input, write):
        return
    low, high = min(low, high), max(low, high)
    at_low = price_turn(offer, version, shape.model_copy(update={"hit_rate": low}))
    at_high = price_turn(offer, version, shape.model_copy(update={"hit_rate": high}))
    assert at_high.cost_per_turn <= at_low.cost_per_turn


@settings(max_examples=100, deadline=None)
@given(shape=shapes, turns=st.integers(0, 10_000_000), data=st.data())
def test_monthly_serverless_cost_is_linear_in_turns(
    catalog: PriceCatalog, shape: TurnShape, turns: int, data: st.DataObject
) -> None:
    sheet, offer = data.draw(st.sampled_from([(s, o) for s, o in catalog.offers("serverless")]))
    assert isinstance(offer, ServerlessOffer)
    as_of = offer.versions[-1].effective

    def monthly(n: int) -> Decimal:
        traffic = Traffic(turns_per_month=n)
        return serverless_option(sheet, offer, as_of, shape, traffic, sheet.currency, Fx()).monthly

    one, two = monthly(turns), monthly(2 * turns)
    assert abs(two - 2 * one) <= D("0.01")  # exact up to rounding each total to the cent
    swept = serverless_monthly_array(offer, as_of, shape, np.array([turns, 2 * turns], float), 1.0, 0.0)
    assert swept[1] == pytest.approx(2 * swept[0])
