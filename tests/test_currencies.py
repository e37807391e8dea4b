"""Currencies: USD, EUR, GBP, JPY and INR, each with a dated, sourced default rate; every figure of a scenario
(the page's metrics, the charts' axes, the PDF, the command line) in its currency, converted through the
dollar at the scenario's rate.

The cross-checks price the seed's turn ($0.0302 no reuse, $0.00968 reused) at round rates whose
conversions are worked out by hand below, independently of the code.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from streamlit.testing.v1 import AppTest

from calculator.catalog.datafile import DataFileError
from calculator.catalog.fx import CODES, FX_FILE, default_rate, default_rates, load_rates, quote_unit, unquoted
from calculator.cli import main
from calculator.errors import InputError
from calculator.present import charts, report
from calculator.present.money import axis_format, format_money, format_small
from calculator.pricing.compare import Catalogs, compare
from calculator.scenario.inputs import Fx
from calculator.scenario.model import Scenario, dump_scenario, in_currency, load_scenario_text
from tests.chart_rows import chart_rows

from .apptest import APP, metrics, open_page, table_with
from .pdf_cells import record_pdf

SEED_URL = {"preset": "coding-agent", "asof": "2026-10-30", "in": "20000", "pfx": "0.9", "hit": "1.0", "out": "500"}
SEED_WORKLOAD = {"input_tokens": 20000, "prefix_share": "0.9", "hit_rate": "1", "output_tokens": 500}

# Per currency: (URL parameter of its rate, a round rate in US dollars per unit, and the seed's figures at that
# rate worked out by hand, half-up: no-reuse turn, reused turn, "1,000 turns" reused vs no reuse).
SEED_AT = {
    "USD": (None, None, "$0.0302", "$0.00968", "$9.68 vs $30.20"),
    # 0.0302 / 1.25 = 0.02416; 0.00968 / 1.25 = 0.007744
    "EUR": ("fx", "1.25", "€0.0242", "€0.00774", "€7.74 vs €24.16"),
    # 0.0302 / 1.6 = 0.018875; 0.00968 / 1.6 = 0.00605; x 1,000 = 6.05 and 18.875 -> 18.88
    "GBP": ("fx_gbp", "1.6", "£0.0189", "£0.00605", "£6.05 vs £18.88"),
    # 125 yen a dollar: 0.0302 x 125 = 3.775 -> 3.78; 0.00968 x 125 = 1.21; x 1,000 = 1,210 and 3,775 (no sen)
    "JPY": ("jpy_per_usd", "125", "¥3.78", "¥1.21", "¥1,210 vs ¥3,775"),
    # 80 rupees a dollar: 0.0302 x 80 = 2.416; 0.00968 x 80 = 0.7744; x 1,000 = 774.40 and 2,416.00
    "INR": ("inr_per_usd", "80", "₹2.42", "₹0.774", "₹774.40 vs ₹2,416.00"),
}
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}


def _seed(currency: str, rate: str | None) -> Scenario:
    fx = {} if rate is None else {f"usd_per_{currency.lower()}": str(unquoted(currency, Decimal(rate)))}
    return Scenario.model_validate(
        {
            "name": f"seed in {currency}",
            "as_of": "2026-10-30",
            "currency": currency,
            "fx": fx,
            "workload": SEED_WORKLOAD,
            "traffic": {"turns_per_month": 1_000_000},
            "serverless": {"provider": "lyceum", "model": "GLM-5.3"},
            "gpu_vm": {"provider": "nebius", "offer": "h200-sxm-1x"},
            "self_hosting": {"record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"},
        }
    )


# --- the rates: dated, sourced, as the source publishes them -------------------------------------------------


def test_every_currency_has_a_dated_sourced_default_or_says_it_is_an_assumption() -> None:
    rates = default_rates()
    assert set(rates) == set(CODES) == {"USD", "EUR", "GBP", "JPY", "INR"}
    for code, rate in rates.items():
        if code == "USD":
            assert rate.usd_per_unit == 1
            continue
        assert rate.assumption or (rate.source and rate.source.startswith("https://") and rate.date and rate.read)
        assert rate.date is None or rate.read is None or rate.date <= rate.read


def test_defaults_are_the_ecb_figures_of_their_day_turned_into_dollars_per_unit() -> None:
    # The ECB's reference rates of 2026-05-08: 1 EUR = 1.1761 USD = 0.86410 GBP = 184.37 JPY = 111.1285 INR.
    usd_per_eur = 1.1761
    assert default_rate("EUR") == Decimal("1.1761")
    for code, per_eur in (("GBP", 0.86410), ("JPY", 184.37), ("INR", 111.1285)):
        assert float(default_rate(code)) == pytest.approx(usd_per_eur / per_eur, rel=1e-5)
    assert 1 / float(default_rate("JPY")) == pytest.approx(156.76, abs=0.01)  # yen a dollar that day


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("- {code: USD, name: d, usd_per_unit: 1}\n", "list each of USD, EUR, GBP, JPY, INR once"),
        (
            "{rest}  - {code: GBP, name: p, usd_per_unit: 1.3, units_per_eur: 0.8, date: 2026-05-08,"
            " source: 'https://x', read: 2026-11-30}\n",
            "exactly one of",
        ),
        ("{rest}  - {code: GBP, name: p, usd_per_unit: 1.3}\n", "or an assumption"),
        ("{rest}  - {code: GBP, name: p, usd_per_unit: !!python/object:os.system x, assumption: a}\n", "python/object"),
    ],
)
def test_a_broken_rates_file_is_refused_with_its_line(tmp_path: Path, body: str, problem: str) -> None:
    rest = (
        "  - {code: USD, name: d, usd_per_unit: 1}\n  - {code: EUR, name: e, usd_per_unit: 1.1, assumption: a}\n"
        "  - {code: JPY, name: y, units_per_usd: 150, assumption: a}\n"
        "  - {code: INR, name: r, units_per_usd: 90, assumption: a}\n"
    )
    path = tmp_path / "fx_rates.yaml"
    text = "schema_version: 1\ncurrencies:\n" + (body.replace("{rest}", rest) if "{rest}" in body else "  " + body)
    path.write_text(text)
    with pytest.raises(DataFileError, match="fx_rates.yaml") as info:
        load_rates(path)
    assert problem in str(info.value)


def test_a_rate_the_wrong_way_round_in_the_rates_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "fx_rates.yaml"
    path.write_text(FX_FILE.read_text().replace("units_per_eur: 184.37", "usd_per_unit: 156.76"))
    with pytest.raises(DataFileError, match=r"currencies\[JPY\]: 156.76 is more than 1 US dollars per yen"):
        load_rates(path)


def test_a_rate_stated_per_dollar_or_per_euro_becomes_dollars_per_unit(tmp_path: Path) -> None:
    path = tmp_path / "fx_rates.yaml"
    path.write_text(
        "schema_version: 1\ncurrencies:\n"
        "  - {code: USD, name: d, usd_per_unit: 1}\n"
        "  - {code: EUR, name: e, usd_per_unit: 1.2, assumption: round}\n"
        "  - {code: GBP, name: p, units_per_eur: 0.8, assumption: round}\n"
        "  - {code: JPY, name: y, units_per_usd: 125, assumption: round}\n"
        "  - {code: INR, name: r, units_per_usd: 80, assumption: round}\n"
    )
    rates = load_rates(path)
    assert {c: rates[c].usd_per_unit for c in ("GBP", "JPY", "INR")} == {
        "GBP": Decimal("1.5"),  # 1.2 / 0.8
        "JPY": Decimal("0.008"),
        "INR": Decimal("0.0125"),
    }
    assert rates["GBP"].origin == "an assumption: round"


def test_the_bundled_file_is_read_with_the_safe_reader() -> None:
    assert FX_FILE.name == "fx_rates.yaml" and FX_FILE.is_file()
    assert load_rates(FX_FILE) == default_rates()


# --- conversion through the dollar ---------------------------------------------------------------------------


def test_any_currency_converts_to_any_other_through_the_dollar() -> None:
    fx = Fx(usd_per_eur=Decimal("1.25"), usd_per_gbp=Decimal("1.6"), usd_per_jpy=Decimal("0.008"))
    assert fx.convert(Decimal(100), "EUR", "JPY") == Decimal(15625)  # 125 dollars at 125 yen a dollar
    assert fx.convert(Decimal(16), "GBP", "EUR") == Decimal("20.48")  # 25.6 dollars / 1.25
    assert fx.convert(Decimal(5), "JPY", "JPY") == 5
    with pytest.raises(InputError, match="'CHF' is not a currency"):
        fx.convert(Decimal(1), "CHF", "USD")


@settings(max_examples=60, deadline=None)
@given(
    st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1e9"), places=2),
    st.sampled_from(CODES),
    st.sampled_from(CODES),
)
def test_converting_there_and_back_returns_the_amount(amount: Decimal, src: str, dst: str) -> None:
    fx = Fx()
    back = fx.convert(fx.convert(amount, src, dst), dst, src)
    assert abs(back - amount) <= amount * Decimal("1e-20")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("usd_per_jpy", 156, "not yen per dollar"),
        ("usd_per_inr", 90, "not rupees per dollar"),
        ("usd_per_gbp", 0, "less than 0.01"),
        ("usd_per_jpy", float("nan"), "finite number"),
    ],
)
def test_a_rate_the_wrong_way_round_or_impossible_is_refused_by_name(field: str, value: float, words: str) -> None:
    with pytest.raises(ValidationError, match=words) as info:
        Fx.model_validate({field: value})
    assert field in str(info.value)


# --- formatting -----------------------------------------------------------------------------------------------


def test_each_currency_has_its_symbol_and_minor_unit_and_one_thousands_grouping() -> None:
    amount = Decimal("1234567.505")
    assert [format_money(amount, c) for c in CODES] == [
        "$1,234,567.51",
        "€1,234,567.51",
        "£1,234,567.51",
        "¥1,234,568",  # no sen
        "₹1,234,567.51",  # grouped in thousands like every figure, not 12,34,567.51
    ]
    assert format_small(Decimal("0.5"), "JPY") == "¥0.500"  # a per-turn figure keeps three significant figures


@given(st.decimals(min_value=Decimal("-1e12"), max_value=Decimal("1e12"), places=3))
def test_yen_amounts_read_back_as_the_whole_yen_rounded_half_up(amount: Decimal) -> None:
    text = format_money(amount, "JPY")
    sign = -1 if text.startswith("-") else 1
    assert "." not in text
    assert sign * Decimal(text.lstrip("-").removeprefix("¥").replace(",", "")) == amount.quantize(
        Decimal(1), "ROUND_HALF_UP"
    )


def test_a_money_axis_shows_three_figures_of_its_largest_value_and_the_minor_unit() -> None:
    assert axis_format(Decimal("0.0302"), "USD") == ",.4f"
    assert axis_format(Decimal("3.775"), "JPY") == ",.2f"
    assert axis_format(Decimal(3775), "JPY") == ",.0f"
    assert axis_format(Decimal(3775), "INR") == ",.2f"


# --- the seed's turn in every currency: the core, the chart, the PDF, the page, the command line -------------


@pytest.mark.parametrize("currency", list(SEED_AT))
def test_the_seed_turn_in_each_currency_matches_a_hand_conversion(currency: str, catalogs: Catalogs) -> None:
    _, rate, no_reuse, reused, _ = SEED_AT[currency]
    scenario = _seed(currency, rate)
    result = compare(scenario, catalogs)
    assert result.turn is not None and result.turn.price.currency == "USD"
    code, convert = charts.turn_currency(result.turn, scenario)
    assert code == currency
    assert format_small(convert(result.turn.no_reuse.cost_per_turn), code) == no_reuse
    assert format_small(convert(result.turn.reused.cost_per_turn), code) == reused
    spec = charts.turn_parts_chart(result.turn, scenario).to_dict()
    assert spec["encoding"]["x"]["title"] == f"Cost per turn ({SYMBOLS[currency]})"
    rows = chart_rows(spec)
    assert {r["case"]: r["total_label"] for r in rows} == {"No reuse": no_reuse, "Reused prefix": reused}


def _pdf_text(result: Any, catalogs: Catalogs, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    """The PDF's text, as written into its cells, and its charts' axis titles."""
    cells = record_pdf(monkeypatch)
    table = pd.DataFrame([{"Section": "Turn", "Assumption": "Input tokens", "Value": "20,000"}])
    assert report.summary_pdf(result, catalogs, table).startswith(b"%PDF")
    return cells.text, cells.titles


@pytest.mark.parametrize("currency", list(SEED_AT))
def test_the_pdf_says_the_turn_and_every_amount_in_the_scenarios_currency(
    currency: str, catalogs: Catalogs, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rate, no_reuse, reused, _ = SEED_AT[currency]
    result = compare(_seed(currency, rate), catalogs)
    text, titles = _pdf_text(result, catalogs, monkeypatch)
    assert f"{no_reuse} no reuse · {reused} reused" in text  # which is which, said beside each
    assert all(o in text for o in (format_money(opt.monthly, currency) for opt in result.options))
    others = [s for c, s in SYMBOLS.items() if c != currency]
    assert not [s for s in others if s in text], text
    assert f"Cost per turn ({SYMBOLS[currency]})" in titles
    assert all(SYMBOLS[currency] in t for t in titles if "cost" in t.lower())


def test_the_pdf_without_its_font_writes_a_symbol_it_lacks_as_the_code() -> None:
    pdf = report._Pdf()
    pdf.close_fonts()
    pdf.family = "Helvetica"
    assert pdf.text_ok("₹2.42 and €0.0242, £0.0189, ¥3.78") == "INR 2.42 and EUR 0.0242, £0.0189, ¥3.78"


@pytest.mark.app
@pytest.mark.parametrize("currency", list(SEED_AT))
def test_the_page_shows_the_seed_turn_in_each_currency_as_the_pdf_does(currency: str) -> None:
    key, rate, no_reuse, reused, thousand = SEED_AT[currency]
    params = {**SEED_URL, "cur": currency, **({key: rate} if key and rate else {})}
    at = open_page("compare", 60, **params)
    assert not at.error, [e.value for e in at.error]
    shown = metrics(at)
    assert (shown["No-reuse turn"], shown["Reused-prefix turn"], shown["1,000 turns: reused vs no reuse"]) == (
        no_reuse,
        reused,
        thousand,
    )
    monthly = [v for label, v in shown.items() if label.startswith(("Serverless", "Dedicated", "Self-hosted"))]
    assert monthly and all(v.startswith(SYMBOLS[currency]) for v in monthly)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    titles = [
        layer.get("encoding", {}).get(axis, {}).get("title")
        for s in specs
        for layer in [s, *s.get("layer", [])]
        for axis in ("x", "y")
    ]
    assert f"Cost per turn ({SYMBOLS[currency]})" in titles
    table = table_with(at, "Assumption")  # the assumptions, as the CSV download writes them
    values = dict(zip(table["Assumption"], table["Value"], strict=False))
    assert values["Currency"] == currency and values["Engineer monthly cost"].startswith(SYMBOLS[currency])
    if rate is not None:
        assert f"{rate} {quote_unit(currency)}" in set(table["Value"])
    money_titles = [t for t in titles if isinstance(t, str) and ("cost" in t.lower() or "per 1m" in t.lower())]
    assert money_titles and all(f"({SYMBOLS[currency]}" in t for t in money_titles), money_titles


@pytest.mark.app
def test_an_old_euro_link_still_opens_in_euros_at_its_rate() -> None:
    at = open_page("compare", 60, **SEED_URL, cur="EUR", fx="1.1")
    assert metrics(at)["No-reuse turn"] == "€0.0275"  # 0.0302 / 1.1 = 0.027454...
    assert at.number_input(key="fx").value == 1.1


@pytest.mark.app
def test_a_rate_given_the_wrong_way_round_in_a_link_is_named_and_the_page_still_answers() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in {**SEED_URL, "cur": "JPY", "fx_jpy": "156"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "`fx_jpy`" in errors
    assert metrics(at)["No-reuse turn"].startswith("¥")  # priced at the default rate, and said so above


@pytest.mark.app
def test_switching_currency_on_the_page_converts_the_engineer_cost() -> None:
    at = open_page("compare", 60, **SEED_URL)
    dollars = at.number_input(key="engcost").value
    at.segmented_control(key="cur").set_value("JPY").run()
    assert not at.exception
    assert not [w.value for w in at.warning if "Session State" in w.value]
    expected = round(Decimal(str(dollars)) / default_rate("JPY"))
    assert at.number_input(key="engcost").value == pytest.approx(float(expected), abs=1)
    assert at.number_input(key="jpy_per_usd").value == pytest.approx(1 / float(default_rate("JPY")), rel=1e-5)
    assert any("1 JPY = $0.006379" in c.value for c in at.caption)


@pytest.mark.app
def test_the_yen_is_typed_as_markets_quote_it_and_an_old_link_in_dollars_per_yen_still_opens() -> None:
    """156.8 yen a dollar is what a finance team reads off a screen; links made before held 1/156.8."""
    typed = open_page("compare", 60, **SEED_URL, cur="JPY")
    typed.number_input(key="jpy_per_usd").set_value(125.0).run()
    assert not typed.exception and not typed.error, [e.value for e in typed.error]
    old = open_page("compare", 60, **SEED_URL, cur="JPY", fx_jpy="0.008")
    assert not old.error, [e.value for e in old.error]
    for at in (typed, old):  # 125 yen a dollar: 0.0302 x 125 = 3.775 -> 3.78
        assert metrics(at)["No-reuse turn"] == "¥3.78"
        assert at.number_input(key="jpy_per_usd").value == 125.0
    assert old.query_params.get("jpy_per_usd") == "125" and "fx_jpy" not in old.query_params


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


SEED_CLI = ("compare", "--preset", "coding-agent", "--as-of", "2026-10-30")


@pytest.mark.parametrize("currency", ["GBP", "JPY", "INR"])
def test_the_command_line_shows_the_seed_turn_at_the_rate_of_fx(
    currency: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, rate, no_reuse, reused, _ = SEED_AT[currency]
    code, out, _ = _cli(capsys, *SEED_CLI, "--currency", currency, "--fx", f"{currency.lower()}={rate}")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("Per turn on"))
    assert f"no reuse {no_reuse}, reused prefix {reused}" in line
    table = out.split("* cheapest")[0]
    assert SYMBOLS[currency] in table and "$" not in table


def test_usd_per_eur_and_fx_eur_are_the_same_rate(capsys: pytest.CaptureFixture[str]) -> None:
    old = _cli(capsys, *SEED_CLI, "--currency", "EUR", "--usd-per-eur", "1.25")
    new = _cli(capsys, *SEED_CLI, "--currency", "EUR", "--fx", "EUR=1.25")
    assert old == new and old[0] == 0
    assert "no reuse €0.0242, reused prefix €0.00774" in old[1]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("JPY", "should be CUR=RATE, RATE as markets quote it"),
        ("CHF=1.1", "CUR one of EUR, GBP, JPY, INR"),
        ("JPY=0.0064", "give yen per dollar, about 150"),
        ("INR=0.0106", "give rupees per dollar, about 90"),
        ("GBP=lots", "GBP"),
        ("=1", "should be CUR=RATE"),
    ],
)
def test_a_bad_fx_is_one_line_naming_the_flag_and_the_form(
    value: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, *SEED_CLI, "--fx", value)
    assert code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--fx" in lines[0] and words in lines[0], err


# --- scenario files --------------------------------------------------------------------------------------------


def test_an_old_scenario_file_with_only_the_euro_rate_reads_and_new_rates_are_saved() -> None:
    old = (
        "schema_version: 1\ncurrency: EUR\nfx: {usd_per_eur: 1.1}\n"
        "workload: {input_tokens: 20000, prefix_share: 0.9, output_tokens: 500}\ntraffic: {turns_per_month: 1000}\n"
    )
    scenario = load_scenario_text(old)
    assert scenario.fx.usd_per_eur == Decimal("1.1") and scenario.fx.usd_per_jpy == default_rate("JPY")
    changed = in_currency(
        scenario.model_copy(update={"fx": Fx(usd_per_eur=Decimal("1.1"), usd_per_jpy=Decimal("0.008"))}), "JPY"
    )
    again = load_scenario_text(dump_scenario(changed))
    assert again == changed
    assert again.currency == "JPY" and again.fx.usd_per_jpy == Decimal("0.008")


def test_showing_a_scenario_in_another_currency_converts_its_own_amounts() -> None:
    scenario = _seed("USD", None)
    scenario = scenario.model_copy(
        update={
            "fx": Fx(usd_per_jpy=Decimal("0.008")),
            "self_hosting": scenario.self_hosting.model_copy(update={"engineer_monthly_cost": Decimal(12500)}),
        }
    )
    in_yen = in_currency(scenario, "JPY")
    assert in_yen.self_hosting.engineer_monthly_cost == Decimal(1_562_500)  # 12,500 x 125
    assert in_currency(in_yen, "USD").self_hosting.engineer_monthly_cost == Decimal(12500)


@pytest.mark.app
def test_a_link_in_yen_prices_the_engineer_as_the_command_line_does(capsys: pytest.CaptureFixture[str]) -> None:
    at = open_page("compare", 60, **SEED_URL, cur="JPY")
    shown = {label.removesuffix(" (cheapest)"): value for label, value in metrics(at).items()}
    code, out, _ = _cli(capsys, *SEED_CLI, "--currency", "JPY")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("Self-hosted GPUs"))
    assert shown["Self-hosted GPUs"] in row.split()  # engineer and GPUs converted alike, not 12,500 yen


@pytest.mark.app
def test_an_engineer_cost_the_user_typed_is_converted_too_and_survives_the_link() -> None:
    at = open_page("compare", 60, **SEED_URL)
    at.number_input(key="engcost").set_value(20000).run()
    at.segmented_control(key="cur").set_value("GBP").run()
    assert not at.exception
    pounds = at.number_input(key="engcost").value
    assert pounds == pytest.approx(float(round(Decimal(20000) / default_rate("GBP"))), abs=1)  # about 14,694
    # AppTest leaves a segmented control's bound value out of its query parameters (a browser writes it:
    # clicking INR there gave ?asof=2026-10-30&cur=INR), so the link gets it here
    link = {**{k: str(v) for k, v in at.query_params.items()}, "cur": "GBP"}
    assert "engcost" in link  # not the default of a preset shown in pounds: it travels
    assert isinstance(pounds, int) and link["engcost"] == str(pounds)  # whole pounds in the link, not "14694.0"
    again = open_page("compare", 60, **link)
    assert again.number_input(key="engcost").value == pytest.approx(pounds)
    assert metrics(again) == metrics(at)
