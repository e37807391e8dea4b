"""Price lifecycle: an offer that is retired cannot be priced after its end, is listed with a mark, and a
scenario saved with it says so when reopened; every price carries its age, by one rule."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from calculator.catalog.prices import (
    STALE_AFTER_DAYS,
    PriceSheet,
    RetiredOfferError,
    ServerlessOffer,
    is_stale,
    price_age_days,
    price_age_text,
)
from calculator.cli import main
from calculator.present.report import price_age_line, price_changes_frame, repricing_sentences, stale_price_warnings
from calculator.pricing.compare import Catalogs, compare
from calculator.pricing.pinning import pin_prices, reprice
from calculator.scenario.model import GpuVmChoice, Scenario, ServerlessChoice, dump_scenario, load_preset

from .apptest import open_page, table_with, text_of
from .clock import TODAY
from .named import named_params
from .pdf_cells import record_pdf

SOURCE = {"document": "hand-made test sheet", "read": "2026-01-10"}


def _sheet(retired: dict[str, Any] | None, successor_exists: bool = True) -> PriceSheet:
    def offer(offer_id: str, retired: dict[str, Any] | None = None) -> dict[str, Any]:
        version = {"effective": "2026-01-01", "source": SOURCE, "prices": {"input": 1, "output": 2}}
        data = {"kind": "serverless", "id": offer_id, "model": offer_id, "open_weights": True, "versions": [version]}
        return data | ({"retired": retired} if retired else {})

    offers = [offer("old", retired)] + ([offer("new")] if successor_exists else [])
    return PriceSheet.model_validate(
        {"schema_version": 1, "provider": "test", "name": "Test", "currency": "USD", "offers": offers}
    )


END = {
    "date": "2026-06-01",
    "successor": "new",
    "source": {"url": "https://example.com/deprecations", "read": "2026-05-02"},
}


def test_a_retired_offer_prices_until_the_day_before_its_end_and_then_names_its_successor() -> None:
    old = _sheet(END).offers[0]
    assert isinstance(old, ServerlessOffer)
    assert old.version_at(dt.date(2026, 5, 31)).prices.input == D(1)
    with pytest.raises(RetiredOfferError, match=r"old was retired on 2026-06-01 \(successor: new\)") as caught:
        old.version_at(dt.date(2026, 6, 1))
    assert "a price date before 2026-06-01" in caught.value.message
    assert old.listed_version(dt.date(2026, 6, 1)).effective == dt.date(2026, 1, 1)  # still listed


def test_a_successor_the_sheet_does_not_list_is_refused_by_name() -> None:
    with pytest.raises(ValidationError, match=r"retired.successor 'new' is not a serverless offer of this sheet"):
        _sheet(END, successor_exists=False)


def test_an_end_before_the_first_price_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"retired.date 2025-12-01 must come after the first price version"):
        _sheet(END | {"date": "2025-12-01"})


def test_the_cli_refuses_deepseek_chat_after_its_retirement_with_exit_2_naming_the_replacement(
    capsys: pytest.CaptureFixture[str],
) -> None:
    turn = ["turn", "--provider", "deepseek", "--model", "deepseek-chat", "--input-tokens", "20000"]
    turn += ["--prefix-share", "0.9", "--output-tokens", "500"]
    assert main([*turn, "--as-of", "2026-11-30"]) == 2
    err = capsys.readouterr().err
    assert "retired on 2026-07-24" in err and "deepseek-v4-flash" in err
    assert main([*turn, "--as-of", "2026-07-23", "--json"]) == 0  # the day before its end it is priced
    assert json.loads(capsys.readouterr().out)["price_version"]["effective"] == "2025-09-29"


def test_sheets_list_a_retired_offer_with_its_mark_and_every_price_with_its_age(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["sheets", "--provider", "deepseek", "--as-of", "2026-11-30", "--json", "--history"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["retired"]["in_force"] is True and row["retired"]["successor_model"] == "deepseek-v4-flash"
    assert row["read"] == "2026-04-13" and row["age_days"] == 231  # 2026-04-13 -> 2026-11-30
    assert [h["age_days"] for h in row["history"]] == [1, 231]  # read 2026-11-29 and 2026-04-13
    assert main(["sheets", "--provider", "deepseek", "--as-of", "2026-07-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["retired"]["in_force"] is False
    assert main(["sheets", "--provider", "deepseek", "--as-of", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert "deepseek-chat (retired)" in out and "231 d" in out
    assert main(["sheets", "--provider", "lyceum", "--as-of", "2026-11-30"]) == 0
    assert "(retired)" not in capsys.readouterr().out


def test_the_price_age_is_days_since_it_was_read_on_the_date_asked_for() -> None:
    read = dt.date(2026, 10, 20)
    assert price_age_days(read, dt.date(2026, 11, 30)) == 41
    assert price_age_text(read, dt.date(2026, 11, 30), today=dt.date(2026, 11, 30)) == "read 41 days ago"
    assert price_age_text(read, dt.date(2026, 11, 1), today=dt.date(2026, 11, 30)) == "read 12 days before 2026-11-01"
    assert price_age_text(read, read, today=read) == "read today"
    assert price_age_days(read, dt.date(2026, 10, 1)) == 0  # read after the date it prices: as fresh as can be
    assert not is_stale(read, read + dt.timedelta(days=STALE_AFTER_DAYS))
    assert is_stale(read, read + dt.timedelta(days=STALE_AFTER_DAYS + 1))


@settings(max_examples=40, deadline=None)
@given(st.dates(dt.date(2020, 1, 1), dt.date(2035, 1, 1)), st.integers(-3000, 3000))
def test_an_age_is_never_negative_and_grows_a_day_a_day(read: dt.date, offset: int) -> None:
    on = read + dt.timedelta(days=offset)
    assert price_age_days(read, on) == max(0, offset)
    assert price_age_days(read, on + dt.timedelta(days=1)) == max(0, offset + 1)


def test_compare_and_turn_json_give_each_price_its_age(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--preset", "coding-agent", "--as-of", "2026-11-30", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ages = {o["option"]: o["price_versions"][0]["age_days"] for o in data["options"]}
    assert ages["serverless"] == 31  # the seed article, read 2026-10-30
    # gpt-4.1's launch price was read 2025-07-04: 61 days before 2025-09-03, a date in the past whenever this runs
    turn = ["turn", "--provider", "openai", "--model", "gpt-4.1", "--input-tokens", "20000", "--prefix-share", "0.9"]
    assert main([*turn, "--output-tokens", "500", "--as-of", "2025-09-03", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["price_version"]["age_days"] == 61
    assert main([*turn, "--output-tokens", "500", "--as-of", "2025-09-03"]) == 0
    out = capsys.readouterr().out
    assert "read 61 days before 2025-09-03" in out and "older than 60 days" in out
    assert main([*turn, "--output-tokens", "500", "--as-of", "2025-09-02"]) == 0
    assert "older than 60 days" not in capsys.readouterr().out  # 60 days is not yet stale


def _deepseek_and_gpus(as_of: dt.date) -> Scenario:
    return load_preset("coding-agent").model_copy(
        update={
            "as_of": as_of,
            "serverless": ServerlessChoice(provider="deepseek", model="deepseek-chat"),
            "gpu_vm": GpuVmChoice(provider="nebius", offer="h200-sxm-1x"),
            "dedicated": None,
        }
    )


def test_a_reopened_scenario_reports_the_retirement_and_prices_the_rest(catalogs: Catalogs) -> None:
    pinned = pin_prices(_deepseek_and_gpus(dt.date(2026, 6, 1)), catalogs)
    repricing = reprice(pinned, catalogs, dt.date(2026, 11, 30))
    (gone,) = repricing.retired
    assert (gone.option, gone.offer, gone.date) == ("serverless", "deepseek-chat", dt.date(2026, 7, 24))
    assert "deepseek-v4-flash" in gone.successor
    assert set(repricing.monthly_now) == {"self_hosted"}  # the GPUs are still priced today
    sentences = " ".join(repricing_sentences(repricing, pinned))
    assert "retired on 2026-07-24" in sentences and "not priced today" in sentences
    rows = price_changes_frame(repricing, pinned)
    retired = rows[rows["Change"] == "retired"]
    assert list(retired["Offer"]) == ["deepseek deepseek-chat"]
    assert list(retired["Now"]) == ["retired on 2026-07-24"]


def test_a_reopened_file_of_only_retired_offers_still_opens(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = _deepseek_and_gpus(dt.date(2026, 6, 1)).model_copy(update={"gpu_vm": None})
    path = tmp_path / "saved.yaml"
    path.write_text(dump_scenario(scenario))
    assert main(["compare", "--scenario", str(path), "--save", str(path)]) == 0  # pinned on 2026-06-01
    capsys.readouterr()
    assert main(["compare", "--scenario", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["repricing"]["monthly_now"] == {}
    assert data["repricing"]["retired"][0]["date"] == "2026-07-24"


def test_the_pdf_names_each_price_with_its_age(monkeypatch: pytest.MonkeyPatch, catalogs: Catalogs) -> None:
    from calculator.present import report

    cells = record_pdf(monkeypatch)
    result = compare(load_preset("coding-agent").model_copy(update={"as_of": dt.date(2027, 1, 5)}), catalogs)
    table = pd.DataFrame([{"Section": "Turn", "Assumption": "Input tokens", "Value": "20,000"}])
    assert report.summary_pdf(result, catalogs, table, generated=dt.date(2027, 1, 5)).startswith(b"%PDF")
    # the seed article was read 2026-10-30: 67 days before 2027-01-05, older than 60
    assert "lyceum glm-5.3: version of 2026-10-05, read 67 days ago" in cells.text
    assert "was read 67 days ago (on 2026-10-30), more than 60 days" in cells.text
    assert price_age_line(result, dt.date(2027, 1, 5)) in cells.written
    # the API's and the GPUs' prices are over 60 days old then; the dedicated endpoint's (together b200-180gb,
    # re-read 2026-12-02 from Together's docs page) is 34 days old, so it gets no warning
    warnings = stale_price_warnings(result, dt.date(2027, 1, 5))
    assert [w.split(":")[0] for w in warnings] == ["Serverless API", "Self-hosted GPUs"]
    assert not any("together b200-180gb" in w for w in warnings)


@pytest.mark.app
def test_the_compare_page_leaves_a_retired_offer_out_of_its_list_and_says_why_a_linked_one_is_not_priced() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-11-30")
    assert "deepseek/deepseek-chat" not in at.selectbox(key="sl").options
    assert "lyceum glm-5.3: version of 2026-10-05, read 31 days" in text_of(at.caption)
    linked = open_page("compare", preset="coding-agent", asof="2026-11-30", sl="deepseek/deepseek-chat")
    assert linked.selectbox(key="sl").value == "deepseek/deepseek-chat"
    said = text_of([*linked.warning, *linked.error]) + text_of(linked.caption)
    assert "retired on 2026-07-24" in said and "deepseek-v4-flash" in said
    assert "RETIRED on 2026-07-24" in text_of(linked.caption)


@pytest.mark.app
def test_the_compare_page_warns_when_a_chosen_price_is_older_than_60_days() -> None:
    at = open_page("compare", preset="coding-agent", asof="2025-09-03", sl="openai/gpt-4.1")
    warned = text_of(at.warning)
    assert "openai gpt-4.1 was read 61 days before 2025-09-03" in warned and "more than 60 days" in warned
    fresh = open_page("compare", 60, **named_params("coding-agent"), asof="2026-11-30")
    assert "more than 60 days" not in text_of(fresh.warning)


@pytest.mark.app
def test_the_price_sheets_page_shows_each_offers_age_and_a_retired_status() -> None:
    at = open_page("price_sheets", ps_provider="DeepSeek", ps_offer="deepseek/serverless/deepseek-chat")
    (row,) = table_with(at, "Status").to_dict("records")
    assert row["Status"].startswith("retired on 2026-07-24") and "deepseek-v4-flash" in row["Status"]
    assert row["Age (days)"] == (TODAY - dt.date(2026, 4, 13)).days
    assert "retired on 2026-07-24" in text_of(at.error)
    lyceum = open_page("price_sheets", ps_provider="Lyceum")
    assert set(table_with(lyceum, "Status")["Status"]) == {""}
