"""Money as text: half-up to the cent on every path, per-turn figures to three significant figures, and the
scenario's currency in the tables, the app, the charts and the PDF."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculator.cli import main
from calculator.present import charts, money, report
from calculator.present.money import format_money, format_price, format_small, money_title
from calculator.pricing.compare import Catalogs, compare, cost_curves
from calculator.pricing.turn import TurnShape, compare_turn
from calculator.scenario.model import Scenario
from tests.chart_rows import chart_rows

from .apptest import metrics, open_page

SEED_DATE = dt.date(2026, 10, 30)
SEED_WORKLOAD = {"input_tokens": 20000, "prefix_share": "0.9", "hit_rate": "1", "output_tokens": 500}

# GLM-5.3 at $1.40 input / $4.40 output per 1M, nothing reused: per 1,000 turns = (1.40 I + 4.40 O) / 1,000.
# 1,891 in + 4 out -> $2.665; 1,895 in + 5 out -> $2.675; per turn 3,562 in + 3 out -> $0.005.
HALF_CENT_TURNS = {"2.665": ("1891", "4"), "2.675": ("1895", "5")}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2.665", "$2.67"),  # half-even would say $2.66
        ("2.675", "$2.68"),  # the float 2.675 is 2.67499..., which rounds down unless read as typed
        ("0.005", "$0.01"),
        ("-2.665", "-$2.67"),
        ("1234567.125", "$1,234,567.13"),
        ("-0.004", "$0.00"),  # no minus on an amount that shows as zero
    ],
)
def test_amounts_round_half_up_to_the_cent_from_decimals_and_floats(value: str, text: str) -> None:
    assert format_money(Decimal(value)) == text
    assert format_money(float(value)) == text


def test_the_seeds_turn_keeps_three_significant_figures_and_1000_turns_the_cent(catalogs: Catalogs) -> None:
    sheet, offer = catalogs.prices.serverless("lyceum", "GLM-5.3")
    turn = compare_turn(sheet, offer, SEED_DATE, TurnShape.model_validate(SEED_WORKLOAD))
    assert format_small(turn.reused.cost_per_turn) == "$0.00968"  # not $0.01
    assert format_small(turn.no_reuse.cost_per_turn) == "$0.0302"
    assert format_money(turn.reused.cost_per_turn * 1000) == "$9.68"
    assert format_money(turn.no_reuse.cost_per_turn * 1000) == "$30.20"


@pytest.mark.parametrize(
    ("value", "text"),
    [(Decimal("0.5"), "$0.500"), (Decimal("1234.5"), "$1,234.50"), (0, "$0.00"), (-0.0123456, "-$0.0123")],
)
def test_small_figures_show_at_least_three_significant_figures_and_the_cents(value: Decimal, text: str) -> None:
    assert format_small(value) == text


def test_prices_keep_every_stated_digit_and_changes_their_sign() -> None:
    assert format_price(Decimal("0.26")) == "$0.26"
    assert format_price(Decimal("0.035")) == "$0.035"
    assert format_price(1.4, "EUR") == "€1.40"
    assert format_price(Decimal("-0.35"), plus=True) == "-$0.35"
    assert format_money(Decimal("1.5"), "EUR", plus=True) == "+€1.50"


def test_the_symbol_comes_from_the_currency_and_an_unknown_code_is_written_out() -> None:
    assert format_money(Decimal("12.345"), "EUR") == "€12.35"
    assert format_money(Decimal("-12.5"), "CHF") == "-CHF 12.50"
    assert money_title("Cost per turn", "EUR") == "Cost per turn (€)"
    assert money_title("Monthly cost", "USD", "log scale") == "Monthly cost ($, log scale)"
    assert money_title("Monthly cost", "CHF") == "Monthly cost (CHF)"


def test_a_currency_without_cents_shows_whole_units() -> None:
    assert money.CURRENCIES["JPY"] == money.Currency("¥", 0)
    assert format_money(Decimal("1234.5"), "JPY") == "¥1,235"
    assert format_small(Decimal("0.5"), "JPY") == "¥0.500"  # still three significant figures
    assert format_price(Decimal("150"), "JPY") == "¥150"


def _parse(text: str, currency: str) -> Decimal:
    sign = -1 if text.startswith("-") else 1
    body = text.removeprefix("-").removeprefix(money.currency_of(currency).symbol)
    return sign * Decimal(body.replace(",", ""))


@given(
    st.decimals(min_value=Decimal("-1e12"), max_value=Decimal("1e12"), places=6),
    st.sampled_from(["USD", "EUR", "CHF"]),
)
def test_formatted_money_reads_back_as_the_half_up_rounded_amount(amount: Decimal, currency: str) -> None:
    assert _parse(format_money(amount, currency), currency) == amount.quantize(Decimal("0.01"), ROUND_HALF_UP)


@given(st.decimals(min_value=Decimal("1e-9"), max_value=Decimal("1e9"), places=12))
def test_small_figures_read_back_within_half_their_last_digit(amount: Decimal) -> None:
    shown = _parse(format_small(amount), "USD")
    exponent = shown.as_tuple().exponent
    assert isinstance(exponent, int)
    assert abs(shown - amount) <= Decimal(5).scaleb(exponent - 1)  # rounded at its last shown digit
    assert len(shown.as_tuple().digits) >= 3  # $0.00968, $0.500, $1.00: never $0.01


# --- the command line and the app agree to the cent --------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("amount", "shown"), [("2.665", "$2.67"), ("2.675", "$2.68")])
def test_command_line_shows_half_cents_rounded_up(capsys: pytest.CaptureFixture[str], amount: str, shown: str) -> None:
    in_tokens, out_tokens = HALF_CENT_TURNS[amount]
    out = _cli(
        capsys,
        *("compare", "--provider", "lyceum", "--model", "GLM-5.3", "--as-of", "2026-10-30"),
        *("--input-tokens", in_tokens, "--prefix-share", "0", "--output-tokens", out_tokens),
        *("--turns-per-month", "1000"),
    )
    row = next(line for line in out.splitlines() if line.startswith("Serverless API"))
    assert row.split()[-4:-2] == [shown, shown]  # per month and per 1,000 turns, the same amount


def test_command_line_turn_total_of_half_a_cent_is_a_cent(capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli(
        capsys,
        *("turn", "--provider", "lyceum", "--model", "GLM-5.3", "--as-of", "2026-10-30"),
        *("--input-tokens", "3562", "--prefix-share", "0", "--output-tokens", "3", "--turns", "1"),
    )
    row = next(line for line in out.splitlines() if line.startswith("Nothing reused"))
    assert row.split()[-2:] == ["$0.00500", "$0.01"]


@pytest.mark.app
@pytest.mark.parametrize(("amount", "shown"), [("2.665", "$2.67"), ("2.675", "$2.68")])
def test_app_shows_half_cents_rounded_up_like_the_command_line(amount: str, shown: str) -> None:
    in_tokens, out_tokens = HALF_CENT_TURNS[amount]
    url = {"preset": "coding-agent", "asof": "2026-10-30", "in": in_tokens, "out": out_tokens, "pfx": "0", "hit": "1"}
    at = open_page("compare", 60, **url)
    assert metrics(at)["1,000 turns: reused vs no reuse"] == f"{shown} vs {shown}"


# --- a scenario in euros shows euros everywhere ----------------------------------------------------


@pytest.fixture(scope="module")
def euro_seed(catalogs: Catalogs) -> Scenario:
    return Scenario.model_validate(
        {
            "name": "seed in euros",
            "as_of": SEED_DATE,
            "currency": "EUR",
            "fx": {"usd_per_eur": "1.25"},
            "workload": SEED_WORKLOAD,
            "traffic": {"turns_per_month": 1_000_000},
            "serverless": {"provider": "lyceum", "model": "GLM-5.3"},
            "gpu_vm": {"provider": "runpod", "offer": "h200-community"},
            "self_hosting": {"record": "sglang-llama-3.3-70b-bf16-4xh200-rate8"},
        }
    )


def test_turn_chart_of_a_euro_scenario_is_in_euros(euro_seed: Scenario, catalogs: Catalogs) -> None:
    result = compare(euro_seed, catalogs)
    assert result.turn is not None and result.turn.price.currency == "USD"  # the sheet is in dollars
    spec = charts.turn_parts_chart(result.turn, euro_seed).to_dict()
    assert spec["encoding"]["x"]["title"] == "Cost per turn (€)"
    rows = chart_rows(spec)
    # $0.0302 and $0.00968 at 1.25 dollars a euro
    assert {r["case"]: r["total_label"] for r in rows} == {"No reuse": "€0.0242", "Reused prefix": "€0.00774"}
    volume = charts.volume_chart(cost_curves(euro_seed, catalogs), 1e6, result, "EUR").to_dict()
    assert volume["layer"][0]["encoding"]["y"]["title"] == "Monthly cost (€, log scale)"


def test_pdf_of_a_euro_scenario_says_euros_in_its_text_and_charts(
    euro_seed: Scenario, catalogs: Catalogs, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[str] = []
    specs: list[dict[str, Any]] = []
    cell, multi_cell, png = report._Pdf.cell, report._Pdf.multi_cell, report._png

    def record_cell(self: report._Pdf, *args: Any, **kwargs: Any) -> Any:
        written.append(str(kwargs.get("text", args[2] if len(args) > 2 else "")))
        return cell(self, *args, **kwargs)

    def record_multi_cell(self: report._Pdf, *args: Any, **kwargs: Any) -> Any:
        written.append(str(kwargs.get("text", args[2] if len(args) > 2 else "")))
        return multi_cell(self, *args, **kwargs)

    def record_png(chart: Any, scale: float = 2.0) -> Any:
        specs.append(chart.to_dict())
        return png(chart, scale)

    monkeypatch.setattr(report._Pdf, "cell", record_cell)
    monkeypatch.setattr(report._Pdf, "multi_cell", record_multi_cell)
    monkeypatch.setattr(report, "_png", record_png)
    table = pd.DataFrame([{"Section": "Turn", "Assumption": "Input tokens", "Value": "20,000"}])
    pdf = report.summary_pdf(compare(euro_seed, catalogs), catalogs, table, generated=SEED_DATE)
    assert pdf.startswith(b"%PDF")
    text = " ".join(written)
    assert "€0.0242 no reuse · €0.00774 reused" in text  # the turn pair, converted like the page's
    assert "€" in text and "$" not in text
    titles = [layer.get("encoding", {}).get("x", {}).get("title") for s in specs for layer in [s, *s.get("layer", [])]]
    assert "Cost per turn (€)" in titles
