"""Billing details that move the bill: how batch and cache discounts stack at each provider, cache units,
whole token counts, and no "cached input" on an offer that gives no cache discount.

Every expected figure is computed by hand from the provider's published prices (the batch rates as
genai-prices 0.2.3 records them, "verified on 2026-10-14" on each provider's pricing page), not from the
sheets under test.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal as D

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.prices import RetiredOfferError
from calculator.pricing.compare import Catalogs, compare
from calculator.pricing.turn import TurnShape, compare_turn, price_turn, turn_cost_array
from calculator.scenario.model import ServerlessChoice, load_preset

from .offers import serverless

ON = dt.date(2026, 11, 30)


def _turn(catalogs: Catalogs, provider: str, model: str, *, on: dt.date = ON, **shape: object) -> D:
    """The reused-prefix turn's cost on ``on``."""
    sheet, offer = catalogs.prices.serverless(provider, model)
    cost = compare_turn(sheet, offer, on, TurnShape.model_validate(shape))
    return cost.reused.cost_per_turn


def test_seed_example_stays_exact_with_whole_tokens(catalogs: Catalogs) -> None:
    sheet, offer = catalogs.prices.serverless("lyceum", "GLM-5.3")
    shape = TurnShape(input_tokens=20_000, prefix_share=D("0.9"), output_tokens=500)
    turn = compare_turn(sheet, offer, dt.date(2026, 10, 30), shape)
    assert (turn.no_reuse.cost_per_turn, turn.reused.cost_per_turn) == (D("0.0302"), D("0.00968"))
    assert (turn.reused.cached_tokens, turn.reused.uncached_tokens) == (D(18_000), D(2_000))


def test_openai_gpt5_batch_halves_cached_input_too(catalogs: Catalogs) -> None:
    # Batch: 0.625 in / 0.0625 cached / 5.00 out. 90,000 repeated tokens in 128-token blocks: 703 x 128 = 89,984
    # cached, 10,016 uncached: 10,016 x 0.625 + 89,984 x 0.0625 + 1,000 x 5 = 16,884 per 1M.
    cost = _turn(catalogs, "openai", "gpt-5", input_tokens=100_000, prefix_share="0.9", output_tokens=1000, batch=True)
    assert cost == D("0.016884")  # with cached input at the standard 0.125 it was 0.022508, 33% more


def test_openai_gpt41_batch_keeps_the_standard_cached_price(catalogs: Catalogs) -> None:
    # OpenAI's Batch table publishes no cached rate for gpt-4.1: 10,016 x 1.00 + 89,984 x 0.50 + 1,000 x 4.00
    cost = _turn(
        catalogs, "openai", "gpt-4.1", input_tokens=100_000, prefix_share="0.9", output_tokens=1000, batch=True
    )
    assert cost == D("0.059008")


def test_openai_gpt56_batch_halves_cache_writes_as_well(catalogs: Catalogs) -> None:
    # Batch 1.00 in / 0.10 cached / 1.25 write (1h) / 6.00 out; the 10,000 new tokens are written for the next turn
    cost = _turn(
        catalogs, "openai", "gpt-5.6-terra", input_tokens=100_000, prefix_share="0.9", output_tokens=1000, batch=True
    )
    assert cost == D("0.0275")  # 10,000 x 1.25 + 90,000 x 0.10 + 1,000 x 6.00


def test_anthropic_batch_halves_every_part(catalogs: Catalogs) -> None:
    # Message Batches: 1.50 in / 0.15 read / 1.875 write (5 min) / 7.50 out for Sonnet 4.6
    cost = _turn(
        catalogs,
        "anthropic",
        "claude-sonnet-4-6",
        input_tokens=20_000,
        prefix_share="0.9",
        output_tokens=500,
        batch=True,
    )
    assert cost == D("0.0102")  # 2,000 x 1.875 + 18,000 x 0.15 + 500 x 7.50


def test_gemini_batch_leaves_context_caching_at_the_standard_rate(catalogs: Catalogs) -> None:
    # Batch 0.15 in / 1.25 out, cached input stays 0.03: 5,000 x 0.15 + 5,000 x 0.03 + 100 x 1.25
    cost = _turn(
        catalogs, "google", "gemini-2.5-flash", input_tokens=10_000, prefix_share="0.5", output_tokens=100, batch=True
    )
    assert cost == D("0.001025")
    with pytest.raises(RetiredOfferError, match="gemini-3.5-flash-lite"):  # shut down on 2026-12-01
        _turn(
            catalogs,
            "google",
            "gemini-2.5-flash",
            on=dt.date(2026, 12, 1),
            input_tokens=10,
            prefix_share=0,
            output_tokens=1,
        )


def test_groq_batch_does_not_stack_with_caching(catalogs: Catalogs) -> None:
    # Groq: cached input in a batch is billed at the halved input rate, 0.075, the same as its cached price:
    # the repeated start saves nothing on a batch turn
    reused = _turn(
        catalogs, "groq", "openai/gpt-oss-120b", input_tokens=10_000, prefix_share="0.9", output_tokens=0, batch=True
    )
    fresh = _turn(
        catalogs, "groq", "openai/gpt-oss-120b", input_tokens=10_000, prefix_share="0", output_tokens=0, batch=True
    )
    assert reused == fresh == D("0.00075")


def test_deepseek_caches_whole_64_token_units(catalogs: Catalogs) -> None:
    on = dt.date(2026, 7, 1)  # before deepseek-chat was retired: 0.28 miss / 0.028 hit
    # 500 repeated tokens -> 7 units of 64 = 448 cached, 552 missed
    assert _turn(
        catalogs, "deepseek", "deepseek-chat", on=on, input_tokens=1000, prefix_share="0.5", output_tokens=0
    ) == D("0.000167104")
    # 50 repeated tokens: less than one unit, nothing cached
    assert _turn(
        catalogs, "deepseek", "deepseek-chat", on=on, input_tokens=100, prefix_share="0.5", output_tokens=0
    ) == D("0.000028")


def test_cached_tokens_are_whole_tokens_not_a_fraction() -> None:
    offer = serverless({"input": 3, "cached_input": D("0.3"), "cache_write": {"5m": D("3.75")}, "output": 15})
    turn = price_turn(
        offer,
        offer.versions[0],
        TurnShape(input_tokens=200_001, prefix_share=D("0.9"), hit_rate=D("0.7"), output_tokens=0),
    )
    # prefix 180,000.9 -> 180,000 whole tokens; x 0.7 = 126,000 cached; 74,001 uncached, all of them written
    assert (turn.cached_tokens, turn.uncached_tokens, turn.written_tokens) == (D(126_000), D(74_001), D(74_001))


def test_an_offer_without_a_cache_discount_bills_no_cached_input(catalogs: Catalogs) -> None:
    sheet, offer = catalogs.prices.serverless("groq", "llama-3.3-70b-versatile")
    turn = compare_turn(sheet, offer, ON, TurnShape(input_tokens=10_000, prefix_share=D("0.9"), output_tokens=100))
    reused = turn.reused
    assert (reused.cached_tokens, reused.uncached_tokens, reused.parts.cached_input) == (D(0), D(10_000), D(0))
    assert reused.parts.uncached_input == D("0.0059")  # 10,000 x 0.59: all of it input, named as input
    scenario = load_preset("coding-agent").model_copy(
        update={"as_of": ON, "serverless": ServerlessChoice(provider="groq", model="llama-3.3-70b-versatile")}
    )
    option = compare(scenario, catalogs).option("serverless")
    assert option is not None and option.breakdown["cached_input"] == 0


UNITS = st.sampled_from([1, 64, 128])
SHARES = st.decimals(0, 1, places=4)


@settings(max_examples=60, deadline=None)
@given(
    unit=UNITS,
    minimum=st.sampled_from([0, 1024]),
    tokens=st.integers(1, 300_000),
    share=SHARES,
    hit=SHARES,
    write=SHARES,
)
def test_token_counts_are_whole_in_cache_units_on_both_paths(
    unit: int, minimum: int, tokens: int, share: D, hit: D, write: D
) -> None:
    offer = serverless(
        {"input": 2, "cached_input": D("0.2"), "cache_write": {"5m": D("2.5")}, "output": 8},
        cache_increment_tokens=unit,
        min_cacheable_tokens=minimum,
    )
    version = offer.versions[0]
    shape = TurnShape(input_tokens=tokens, prefix_share=share, hit_rate=hit, cache_write_share=write, output_tokens=10)
    turn = price_turn(offer, version, shape)
    for count in (turn.cached_tokens, turn.uncached_tokens, turn.written_tokens):
        assert count == count.to_integral_value() and count >= 0
    assert turn.cached_tokens % unit == 0 and turn.cached_tokens <= tokens * share * hit
    assert turn.cached_tokens + turn.uncached_tokens == tokens
    swept = turn_cost_array(offer, version, shape, hit_rate=np.array([float(hit)]))[0]
    assert swept == pytest.approx(float(turn.cost_per_turn), rel=1e-9, abs=1e-12)
