"""Coverage and age of the bundled API prices: every open-weight model with a spec that public APIs sell has
offers from at least two providers, and a price whose newest public source is old says so.

The models are the ones issue 24 names; the providers that sell them are those genai-prices 0.2.3's data lists
(sources in the sheets). Ages are taken on 2026-12-02, the day the sheets were last re-read.
"""

from __future__ import annotations

import datetime as dt

import pytest

from calculator.catalog.models import load_model_specs
from calculator.catalog.prices import STALE_AFTER_DAYS, ServerlessOffer, load_price_sheets, price_age_days

RE_READ_ON = dt.date(2026, 12, 2)
SOLD_BY_TWO = [
    "qwen3-235b-a22b",
    "qwen3-coder-480b-a35b",
    "deepseek-v3.2",
    "kimi-k2",
    "glm-5",
    "gpt-oss-120b",
    "llama-4-maverick",
    "llama-4-scout",
]


def _sellers() -> dict[str, set[str]]:
    specs = load_model_specs()
    sellers: dict[str, set[str]] = {}
    for sheet, offer in load_price_sheets().offers("serverless"):
        assert isinstance(offer, ServerlessOffer)
        spec = specs.find(offer.base_model or offer.model)
        if spec is not None and not offer.retired_on(RE_READ_ON):
            sellers.setdefault(spec.id, set()).add(sheet.provider)
    return sellers


@pytest.mark.parametrize("model", SOLD_BY_TWO)
def test_each_open_model_has_api_offers_from_two_providers(model: str) -> None:
    assert len(_sellers().get(model, set())) >= 2, _sellers().get(model)


def test_every_api_offer_of_a_spec_model_is_marked_open_weights() -> None:
    specs = load_model_specs()
    for sheet, offer in load_price_sheets().offers("serverless"):
        assert isinstance(offer, ServerlessOffer)
        spec = specs.find(offer.base_model or offer.model)
        if spec is not None and spec.open_weights:
            assert offer.open_weights, f"{sheet.provider}/{offer.id}"


def test_an_old_price_says_its_newest_source_is_still_old() -> None:
    for sheet, offer in load_price_sheets().offers("serverless"):
        if offer.retired_on(RE_READ_ON):
            continue
        newest = max(v.source.read for v in offer.versions)
        if price_age_days(newest, RE_READ_ON) > STALE_AFTER_DAYS:
            assert "STILL OLD" in (offer.notes or ""), f"{sheet.provider}/{offer.id} read {newest}"
