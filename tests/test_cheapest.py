"""``offer: cheapest``: Compare prices the configurations the deployment search ranks first, at Deploy's bill."""

from __future__ import annotations

import json
from typing import Literal

import pytest

from calculator.cli import main
from calculator.errors import InputError
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import Catalogs, compare
from calculator.pricing.deployments import find_deployments
from calculator.scenario.model import CHEAPEST, DedicatedChoice, GpuVmChoice, list_presets, load_preset

OPTION: dict[str, Literal["dedicated", "self_hosted"]] = {"dedicated": "dedicated", "gpu_vm": "self_hosted"}


@pytest.mark.parametrize("preset", list_presets())
def test_deploys_first_row_of_each_kind_is_comparees_option_at_the_same_monthly_cost(
    preset: str, catalogs: Catalogs
) -> None:
    scenario = load_preset(preset)
    assert scenario.dedicated is not None and scenario.dedicated.cheapest  # the presets follow the search
    assert scenario.gpu_vm is not None and scenario.gpu_vm.cheapest
    search = find_deployments(scenario, catalogs)
    ranked = search.meeting or search.deployments
    priced, picks = with_cheapest_offers(scenario, catalogs)
    result = compare(priced, catalogs)
    costs = {o.option: o for o in result.options}
    for kind in ("dedicated", "gpu_vm"):
        first = next(d for d in ranked if d.kind == kind)
        option = costs[OPTION[kind]]
        assert (option.provider, option.offer) == (first.provider, first.offer)
        assert option.monthly == first.monthly  # to the cent: one bill
        assert option.replicas == first.replicas and option.gpus == first.gpus
        pick = next(p for p in picks if p.kind == kind)
        assert pick.deployment == first and pick.rank == ranked.index(first) + 1
    # the cheapest configuration overall is one of the two options
    overall = ranked[0]
    assert costs[OPTION[overall.kind]].monthly == overall.monthly


def test_a_named_offer_is_still_honoured(catalogs: Catalogs) -> None:
    named = load_preset("coding-agent").model_copy(update={"gpu_vm": GpuVmChoice(provider="nebius", offer="b200-8x")})
    priced, picks = with_cheapest_offers(named, catalogs)
    assert priced.gpu_vm == named.gpu_vm and [p.kind for p in picks] == ["dedicated"]
    option = next(o for o in compare(priced, catalogs).options if o.option == "self_hosted")
    assert (option.provider, option.offer) == ("nebius", "b200-8x")


def test_a_library_caller_gets_the_picks_from_compare_itself(catalogs: Catalogs) -> None:
    scenario = load_preset("rag-chatbot")
    direct = compare(scenario, catalogs)
    picked = compare(with_cheapest_offers(scenario, catalogs)[0], catalogs)
    assert [o.monthly for o in direct.options] == [o.monthly for o in picked.options]
    assert direct.resolved is not None and {p.kind for p in direct.resolved.picks} == {"dedicated", "gpu_vm"}


def test_a_sizing_the_user_chose_picks_the_cheapest_offer_that_runs_it(catalogs: Catalogs) -> None:
    """A named record is never replaced by the search's evidence: 'cheapest' then only chooses the offer."""
    scenario = load_preset("rag-chatbot")
    record = "sglang-llama-3.3-70b-bf16-4xh200-rate4"
    pinned = scenario.model_copy(update={"self_hosting": scenario.self_hosting.model_copy(update={"record": record})})
    priced, picks = with_cheapest_offers(pinned, catalogs)
    assert all("offers that run your record" in p.reason and p.deployment is None for p in picks)
    result = compare(priced, catalogs)
    assert result.resolved is not None and result.resolved.self_hosted is not None
    # sized from the run the user named (its busiest level that keeps up: the series is read as one curve)
    assert result.resolved.self_hosted.record.id.startswith(record.removesuffix("-rate4"))
    # the preset's former offers run the same record and cost no less than the pick
    for kind, provider, offer in (("gpu_vm", "nebius", "h200-sxm-1x"), ("dedicated", "together", "h200-141gb")):
        choice = (GpuVmChoice if kind == "gpu_vm" else DedicatedChoice)(provider=provider, offer=offer)
        other = compare(pinned.model_copy(update={kind: choice}), catalogs)
        pick = next(p for p in picks if p.kind == kind)
        assert pick.monthly <= next(o.monthly for o in other.options if o.option == OPTION[kind])


def test_a_search_that_finds_nothing_is_a_named_error(catalogs: Catalogs) -> None:
    from dataclasses import replace

    from calculator.catalog.prices import PriceCatalog

    prices = PriceCatalog(sheets=tuple(s for s in catalogs.prices.sheets if s.provider == "lyceum"))
    with pytest.raises(InputError, match="the price sheets hold no GPU VM or dedicated") as caught:
        compare(load_preset("coding-agent"), replace(catalogs, prices=prices))
    assert caught.value.field == "as_of"  # said as the search's own finding, not as an offer's
    # a model no offer can hold is said as the option's
    from calculator.scenario.model import ServerlessChoice

    tiny = load_preset("coding-agent").model_copy(
        update={"workload": load_preset("coding-agent").workload.model_copy(update={"input_tokens": 1_000_000})}
    )
    with pytest.raises(InputError) as caught:
        compare(tiny.model_copy(update={"serverless": ServerlessChoice(provider="lyceum", model="GLM-5.3")}), catalogs)
    assert caught.value.field.endswith(".offer") or caught.value.field.startswith("workload")


def test_an_offer_needs_its_provider_unless_it_is_cheapest() -> None:
    assert DedicatedChoice(offer=CHEAPEST).cheapest
    with pytest.raises(ValueError, match="name its provider too"):
        DedicatedChoice(offer="h200-141gb")


def test_the_command_line_says_which_configuration_it_chose(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--preset", "coding-agent", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    chosen = {c["option"]: c for c in data["offers_chosen"]}
    assert set(chosen) == {"dedicated", "self_hosted"}
    for option in data["options"]:
        if option["option"] in chosen:
            c = chosen[option["option"]]
            assert (option["provider"], option["offer"]) == (c["provider"], c["offer"])
            assert option["monthly"] == c["monthly"] and c["rank"] >= 1 and c["reason"]
    assert main(["compare", "--preset", "coding-agent"]) == 0
    text = capsys.readouterr().out
    assert "Self-hosted GPUs (offer: cheapest): " in text and "the deployment search ranks for glm-5" in text


def test_the_saved_file_keeps_cheapest_with_the_prices_it_was_priced_at(tmp_path: object) -> None:
    from pathlib import Path

    from calculator.scenario.model import load_scenario

    out = Path(str(tmp_path)) / "saved.yaml"
    assert main(["compare", "--preset", "rag-chatbot", "--save", str(out)]) == 0
    saved = load_scenario(out)
    assert saved.gpu_vm is not None and saved.gpu_vm.cheapest
    assert {p.option for p in saved.prices_used} == {"serverless", "dedicated", "self_hosted"}
