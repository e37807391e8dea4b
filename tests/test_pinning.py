"""Saved scenarios keep the prices they used; reopening says what changed since and by how much."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from calculator.cli import main
from calculator.errors import InputError
from calculator.present.report import repricing_sentences
from calculator.pricing.compare import Catalogs, compare
from calculator.pricing.pinning import pin_prices, reprice
from calculator.pricing.resolve import resolve
from calculator.scenario.model import dump_scenario, load_preset, load_scenario_text

D = Decimal


def test_pinned_scenario_round_trips_through_yaml(catalogs: Catalogs) -> None:
    pinned = pin_prices(load_preset("coding-agent").model_copy(update={"as_of": dt.date(2026, 10, 4)}), catalogs)
    assert load_scenario_text(dump_scenario(pinned)) == pinned
    glm = next(p for p in pinned.prices_used if p.option == "serverless")
    assert glm.effective == dt.date(2026, 9, 15) and glm.prices["input"] == D("1.75")


def test_reprice_names_each_changed_price_and_the_new_total(catalogs: Catalogs) -> None:
    pinned = pin_prices(load_preset("coding-agent").model_copy(update={"as_of": dt.date(2026, 10, 4)}), catalogs)
    result = reprice(pinned, catalogs, dt.date(2026, 10, 30))
    changed = {(c.offer, c.field): (c.before, c.after) for c in result.changes}
    assert changed[("glm-5.3", "input")] == (D("1.75"), D("1.40"))
    assert changed[("glm-5.3", "cached_input")] == (D("0.44"), D("0.26"))
    # 1,000,000 seed turns: 0.01367 before the engine change, 0.00968 after
    assert result.monthly_then["serverless"] == D("13670.00") and result.monthly_now["serverless"] == D("9680.00")
    assert "(29.2% less)" in repricing_sentences(result, pinned)[0]


def test_reprice_of_an_unpinned_scenario_is_a_named_error(catalogs: Catalogs) -> None:
    with pytest.raises(InputError, match="prices_used"):
        reprice(load_preset("coding-agent"), catalogs)


def test_compare_save_then_reopen_reports_the_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "q3.yaml"
    assert main(["compare", "--preset", "coding-agent", "--as-of", "2026-10-04", "--save", str(saved)]) == 0
    capsys.readouterr()
    assert main(["compare", "--scenario", str(saved), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["as_of"] == "2026-10-04"  # the saved estimate reopens as it was
    assert data["repricing"]["monthly_then"]["serverless"] == 13670.0
    assert {"option": "serverless", "field": "input", "before": 1.75, "after": 1.4}.items() <= next(
        c for c in data["repricing"]["changes"] if c["field"] == "input"
    ).items()


def test_token_factor_scales_the_turn_for_an_option_with_another_tokenizer(catalogs: Catalogs) -> None:
    preset = load_preset("coding-agent").model_copy(update={"as_of": dt.date(2026, 10, 30)})
    plain = compare(preset, catalogs)
    scaled = compare(preset.model_copy(update={"token_factors": {"GLM-5.3": D("1.2")}}), catalogs)
    assert plain.turn is not None and scaled.turn is not None
    assert scaled.turn.reused.shape.input_tokens == 24_000 and scaled.turn.reused.shape.output_tokens == 600
    # every part of the bill grows by the factor: 0.00968 x 1.2
    assert scaled.turn.reused.cost_per_turn == D("0.011616")
    # the GPU options run the same model (GLM-5 for GLM-5.3): the same tokenizer, so their turn grows too
    assert not any("Token counts scaled" in w.message for w in scaled.warnings)
    same = resolve(preset.model_copy(update={"token_factors": {"GLM-5.3": D("1.2")}}), catalogs).self_hosted
    assert same is not None and same.shape.input_tokens == 24_000
    # against a record of another model the factor is the serverless model's only, and said so
    hosting = preset.self_hosting.model_copy(update={"record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"})
    other = preset.model_copy(update={"self_hosting": hosting, "token_factors": {"GLM-5.3": D("1.2")}})
    assert any("Token counts scaled" in w.message for w in compare(other, catalogs).warnings)


def test_token_factor_outside_a_sane_range_is_refused() -> None:
    with pytest.raises(ValueError, match="outside 0.2..5"):
        load_preset("coding-agent").model_validate(
            {**load_preset("coding-agent").model_dump(), "token_factors": {"x": 9}}
        )
