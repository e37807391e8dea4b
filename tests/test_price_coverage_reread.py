"""Issue 24 part 3, second pass: every model spec sold by two public APIs has offers from both, the prices
re-read from LiteLLM's cost map as the litellm 1.110.2 package ships it, and ``sheets --older-than`` before and
after that re-reading on the frozen day (2026-12-02).

The source figures are LiteLLM's per-token prices in ``tests/fixtures/price_lists/litellm_1.110.2_our_offers.json``
(the entries of the wheel's ``model_prices_and_context_window_backup.json`` that match our offers, copied
unchanged; see tests/fixtures/README.md), times one million. PyPI's upload time puts the package on 2026-11-20
(``pip index versions litellm --uploaded-prior-to``: listed before 2026-11-21T00:00Z, not before 2026-11-20T00:00Z),
the read date every one of those versions carries. Together's dedicated prices are the stored copy of
https://docs.together.ai/docs/dedicated-endpoints/overview (1x H100 80GB $3.99, 1x B200 180GB $9.95), read
2026-12-02.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from calculator.catalog.models import load_model_specs
from calculator.catalog.prices import (
    DEFAULT_SHEETS_DIR,
    DedicatedOffer,
    ServerlessOffer,
    load_price_sheets,
)
from calculator.cli import main

from .clock import TODAY

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "price_lists" / "litellm_1.110.2_our_offers.json"
LITELLM_READ = dt.date(2026, 11, 20)
LITELLM_DOCUMENT = "LiteLLM model cost map (litellm 1.110.2 package)"
MILLION = Decimal(1_000_000)


def _litellm() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def _per_million(entry: dict[str, Any], key: str) -> Decimal | None:
    value = entry.get(key)
    return None if value is None else (Decimal(str(value)) * MILLION).normalize()


def _serverless(provider: str, offer_id: str) -> ServerlessOffer:
    _, offer = load_price_sheets().offer(provider, offer_id, "serverless")
    assert isinstance(offer, ServerlessOffer)
    return offer


# (provider, offer id, the LiteLLM entry it was read from, input, cached input or None, output), the figures as
# LiteLLM gives them per token times one million.
NEW_OFFERS = [
    ("deepinfra", "deepseek-v3-0324", "deepinfra/deepseek-ai/DeepSeek-V3-0324", "0.24", "0.135", "0.90"),
    ("deepinfra", "mixtral-8x7b-instruct", "deepinfra/mistralai/Mixtral-8x7B-Instruct-v0.1", "0.40", None, "0.40"),
    (
        "deepinfra",
        "qwen3-coder-480b-a35b-instruct",
        "deepinfra/Qwen/Qwen3-Coder-480B-A35B-Instruct",
        "0.40",
        None,
        "1.60",
    ),
    ("deepinfra", "qwen3-235b-a22b", "deepinfra/Qwen/Qwen3-235B-A22B", "0.18", None, "0.54"),
    ("deepinfra", "kimi-k2-instruct", "deepinfra/moonshotai/Kimi-K2-Instruct", "0.50", None, "2.00"),
    (
        "deepinfra",
        "llama-4-maverick",
        "deepinfra/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        "0.20",
        None,
        "0.80",
    ),
    ("deepinfra", "llama-4-scout", "deepinfra/meta-llama/Llama-4-Scout-17B-16E-Instruct", "0.10", None, "0.30"),
    ("deepinfra", "glm-5", "deepinfra/zai-org/GLM-5", "0.60", "0.12", "2.08"),
    ("fireworks", "deepseek-v3-0324", "fireworks_ai/accounts/fireworks/models/deepseek-v3-0324", "0.90", None, "0.90"),
    ("aws-bedrock", "mixtral-8x7b", "mistral.mixtral-8x7b-instruct-v0:1", "0.45", None, "0.70"),
]


@pytest.mark.parametrize(("provider", "offer_id", "entry", "inp", "cached", "out"), NEW_OFFERS)
def test_each_new_offer_is_litellms_price_read_on_the_packages_upload_day(
    provider: str, offer_id: str, entry: str, inp: str, cached: str | None, out: str
) -> None:
    source = _litellm()[entry]
    assert _per_million(source, "input_cost_per_token") == Decimal(inp)
    assert _per_million(source, "cache_read_input_token_cost") == (None if cached is None else Decimal(cached))
    assert _per_million(source, "output_cost_per_token") == Decimal(out)
    offer = _serverless(provider, offer_id)
    version = offer.version_at(TODAY)
    assert (version.prices.input, version.prices.cached_input, version.prices.output) == (
        Decimal(inp),
        None if cached is None else Decimal(cached),
        Decimal(out),
    )
    assert offer.open_weights
    assert version.source.document == LITELLM_DOCUMENT and version.source.read == LITELLM_READ
    assert entry in (version.source.note or "")


# offers LiteLLM lists at the prices we had: each got a version read 2026-11-20, its prices unchanged
RE_READ = [
    ("anthropic", "claude-sonnet-4-6", "claude-sonnet-4-6"),
    ("anthropic", "claude-opus-4-6", "claude-opus-4-6"),
    ("anthropic", "claude-haiku-4-5", "claude-haiku-4-5"),
    ("deepinfra", "llama-3.3-70b-instruct-turbo", "deepinfra/meta-llama/Llama-3.3-70B-Instruct-Turbo"),
    ("deepinfra", "deepseek-v3.2", "deepinfra/deepseek-ai/DeepSeek-V3.2"),
    ("fireworks", "qwen3-235b-a22b", "fireworks_ai/accounts/fireworks/models/qwen3-235b-a22b"),
    (
        "fireworks",
        "llama4-maverick-instruct-basic",
        "fireworks_ai/accounts/fireworks/models/llama4-maverick-instruct-basic",
    ),
    ("fireworks", "gpt-oss-20b", "fireworks_ai/accounts/fireworks/models/gpt-oss-20b"),
    ("groq", "gpt-oss-120b", "groq/openai/gpt-oss-120b"),
    ("groq", "gpt-oss-20b", "groq/openai/gpt-oss-20b"),
    ("openai", "gpt-4.1", "gpt-4.1"),
    ("openai", "gpt-5", "gpt-5"),
    ("openai", "gpt-5.6-terra", "gpt-5.6-terra"),
    ("together", "gpt-oss-120b", "together_ai/openai/gpt-oss-120b"),
    ("zai", "glm-4.6", "zai/glm-4.6"),
    ("zai", "glm-5.3", "zai/glm-5.3"),
    ("zai", "glm-5.3-flash", "zai/glm-5.3-flash"),
    ("zai", "glm-5", "zai/glm-5"),
    ("zai", "glm-4.7", "zai/glm-4.7"),
]


@pytest.mark.parametrize(("provider", "offer_id", "entry"), RE_READ)
def test_a_re_read_version_keeps_the_prices_and_matches_litellm(provider: str, offer_id: str, entry: str) -> None:
    offer = _serverless(provider, offer_id)
    newest, before = offer.versions[-1], offer.versions[-2]
    assert newest.source.document == LITELLM_DOCUMENT and newest.source.read == LITELLM_READ
    assert newest.effective == LITELLM_READ and before.source.read < LITELLM_READ
    assert newest.prices == before.prices  # a re-read, not a repricing
    assert (newest.batch_discount, newest.long_context) == (before.batch_discount, before.long_context)
    source = _litellm()[entry]
    assert newest.prices.input == _per_million(source, "input_cost_per_token")
    assert newest.prices.output == _per_million(source, "output_cost_per_token")
    assert newest.prices.cached_input == _per_million(source, "cache_read_input_token_cost")


def test_refreshing_from_litellms_list_proposes_nothing_for_what_was_read_from_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["sheets", "refresh", "--from", str(FIXTURE), "--read-on", LITELLM_READ.isoformat(), "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    same = {f"{e['provider']}/{e['offer_id']}" for e in data["same"]}
    read_from_it = {f"{p}/{o}" for p, o, *_ in NEW_OFFERS if p != "aws-bedrock"} | {f"{p}/{o}" for p, o, _ in RE_READ}
    assert read_from_it <= same
    # the one price LiteLLM gives differently is an offer it marks deprecated, kept here (its note says why)
    assert [f"{e['provider']}/{e['offer_id']}" for e in data["proposals"]] == ["together/llama-3.3-70b-instruct-turbo"]
    assert "LiteLLM" in (_serverless("together", "llama-3.3-70b-instruct-turbo").notes or "")


@pytest.mark.parametrize(("offer_id", "per_gpu_hour"), [("h100-80gb", "3.99"), ("b200-180gb", "9.95")])
def test_togethers_dedicated_prices_are_re_read_and_say_the_dated_figures_disagree(
    offer_id: str, per_gpu_hour: str
) -> None:
    _, offer = load_price_sheets().offer("together", offer_id, "dedicated")
    assert isinstance(offer, DedicatedOffer)
    newest = offer.version_at(TODAY)
    assert newest.per_gpu_hour == Decimal(per_gpu_hour)
    assert newest.source.read == TODAY
    assert newest.source.url == "https://docs.together.ai/docs/dedicated-endpoints/overview"
    # the June and July 2026 figures of togethercomputer/skills are named, so nobody takes the price as certain
    assert "UNCERTAIN" in (newest.note or "") and "$5.40" in (newest.note or "") and "$6.49" in (newest.note or "")


# Every model spec and the providers that sell it here (each at least two). Dropping an offer, or a spec losing
# its second provider, fails this.
SELLERS = {
    "deepseek-v3": {"deepinfra", "fireworks"},
    "deepseek-v3.2": {"deepinfra", "fireworks", "openrouter"},
    "glm-4.6": {"deepinfra", "zai"},
    "glm-4.7": {"fireworks", "zai"},
    "glm-5": {"deepinfra", "novita", "openrouter", "zai"},
    "gpt-oss-120b": {"deepinfra", "fireworks", "groq", "together"},
    "gpt-oss-20b": {"fireworks", "groq"},
    "kimi-k2": {"deepinfra", "groq", "novita", "openrouter"},
    "llama-3.1-8b": {"groq", "together"},
    "llama-3.2-3b": {"aws-bedrock", "novita"},
    "llama-3.3-70b": {"deepinfra", "groq", "together"},
    "llama-4-maverick": {"aws-bedrock", "deepinfra", "fireworks", "groq", "novita", "together"},
    "llama-4-scout": {"aws-bedrock", "deepinfra", "groq", "novita", "together"},
    "mixtral-8x7b": {"aws-bedrock", "deepinfra"},
    "qwen3-235b-a22b": {"deepinfra", "fireworks", "openrouter"},
    "qwen3-32b": {"groq", "openrouter"},
    "qwen3-coder-480b-a35b": {"aws-bedrock", "deepinfra", "openrouter"},
}


def _sellers_on(day: dt.date) -> dict[str, set[str]]:
    specs = load_model_specs()
    sellers: dict[str, set[str]] = {}
    for sheet, offer in load_price_sheets().offers("serverless"):
        assert isinstance(offer, ServerlessOffer)
        spec = specs.find(offer.base_model or offer.model)
        if spec is not None and not offer.retired_on(day):
            sellers.setdefault(spec.id, set()).add(sheet.provider)
    return sellers


def test_every_model_spec_is_listed_with_the_providers_that_sell_it() -> None:
    assert set(SELLERS) == set(load_model_specs().ids)  # a new spec needs its API offers here too
    sellers = _sellers_on(TODAY)
    for model, expected in SELLERS.items():
        assert len(expected) >= 2
        assert expected <= sellers.get(model, set()), f"{model}: {sellers.get(model)}"


# --- --older-than before and after, on the frozen day -------------------------------------------------------

RETIRED = {"deepseek/deepseek-chat", "google/gemini-2.5-pro", "google/gemini-2.5-flash"}
AWS_GPUS = {
    f"aws/{o}"
    for o in (
        "h100-sxm-8x",
        "h100-sxm-1x",
        "h200-sxm-8x",
        "h200-sxm-8x-spot",
        "a100-40gb-8x",
        "a100-80gb-sxm-8x",
        "b200-8x",
        "l40s-1x",
    )
}
HYPERSTACK_GPUS = {
    f"hyperstack/{o}"
    for o in (
        "h100-sxm-8x",
        "h100-sxm-8x-reserved",
        "h100-pcie-1x",
        "h100-pcie-1x-reserved",
        "h100-pcie-1x-spot",
        "h200-sxm-8x",
        "h200-sxm-8x-reserved",
        "b200-8x",
        "b200-8x-reserved",
        "a100-80gb-sxm-8x",
        "a100-80gb-pcie-1x",
        "a100-80gb-pcie-1x-spot",
    )
}
TOGETHER_DEDICATED = {"together/h100-80gb", "together/b200-180gb"}


def _older_than(capsys: pytest.CaptureFixture[str], days: int, sheets: Path | None = None) -> set[str]:
    folder = [] if sheets is None else ["--sheets", str(sheets)]
    assert main(["sheets", *folder, "--older-than", str(days), "--json"]) == 0  # today: the frozen 2026-12-02
    return {f"{r['provider']}/{r['id']}" for r in json.loads(capsys.readouterr().out)}


def _without_this_re_reading(tmp_path: Path) -> Path:
    """The bundled sheets as they were before this re-reading: every version read from litellm 1.110.2 and
    Together's dedicated versions read 2026-12-02 dropped, and offers left with no version dropped."""
    folder = tmp_path / "before"
    shutil.copytree(DEFAULT_SHEETS_DIR, folder)
    for path in folder.glob("*.yaml"):
        sheet = yaml.safe_load(path.read_text())
        offers = []
        for offer in sheet["offers"]:
            kept = [
                v
                for v in offer["versions"]
                if v["source"].get("document") != LITELLM_DOCUMENT
                and not (
                    sheet["provider"] == "together" and offer["kind"] == "dedicated" and v["source"]["read"] == TODAY
                )
            ]
            if kept:
                offers.append({**offer, "versions": kept})
        path.write_text(yaml.safe_dump({**sheet, "offers": offers}, sort_keys=False, allow_unicode=True))
    return folder


def test_older_than_180_lists_only_retired_offers_after_the_re_reading(capsys: pytest.CaptureFixture[str]) -> None:
    assert _older_than(capsys, 180) == RETIRED


def test_older_than_90_lists_the_gpu_vms_no_dated_list_re_priced(capsys: pytest.CaptureFixture[str]) -> None:
    assert _older_than(capsys, 90) == RETIRED | AWS_GPUS | HYPERSTACK_GPUS


def test_the_re_reading_took_older_than_180_from_six_offers_to_three(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = _without_this_re_reading(tmp_path)
    stale = {"deepinfra/deepseek-v3.2"} | TOGETHER_DEDICATED
    assert _older_than(capsys, 180, before) == RETIRED | stale
    assert _older_than(capsys, 90, before) == (
        RETIRED | stale | AWS_GPUS | HYPERSTACK_GPUS | {"deepinfra/llama-3.3-70b-instruct-turbo"}
    )
    assert _older_than(capsys, 180) == RETIRED
