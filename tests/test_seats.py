"""Cost per user and per year: users as part of the traffic, on the command line and on Compare.

The seed's reused turn costs $0.00968 on GLM-5.3 (20,000 input tokens, 18,000 cached, 500 output at
$1.40 / $0.26 / $4.40 per million), so the coding-agent preset's 1,000,000 turns a month cost $9,680.00,
$116,160.00 a year, and $48.40 a month for each of its 200 developers.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pandas as pd
import pytest

from calculator.cli import main
from calculator.scenario.inputs import DAYS_PER_MONTH, Traffic, monthly_turns

from .apptest import metrics, open_page, text_of
from .pdf_cells import record_pdf

SEED_REUSED = Decimal("0.00968")
PRESET = ("compare", "--preset", "coding-agent", "--as-of", "2026-10-30", "--json")


def _compare(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_volume_per_user_a_day_is_users_times_turns_times_the_days_of_a_month() -> None:
    assert monthly_turns(10, "user", 100) == round(10 * 100 * 365 / 12) == 30_417
    assert monthly_turns(1000, "day") == 30_417
    assert monthly_turns(30_417) == 30_417
    with pytest.raises(ValueError, match="users"):
        monthly_turns(10, "user", None)


def test_turns_per_user_a_day_come_back_from_the_traffic() -> None:
    traffic = Traffic(turns_per_month=1_000_000, users=200)
    assert traffic.turns_per_user_per_day == pytest.approx(1_000_000 / 200 / DAYS_PER_MONTH)
    assert Traffic(turns_per_month=1_000_000).turns_per_user_per_day is None


def test_compare_json_gives_the_year_and_the_cost_per_user(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _compare(capsys, *PRESET)
    data = json.loads(out)
    serverless = next(o for o in data["options"] if o["option"] == "serverless")
    assert code == 0 and data["users"] == 200
    assert serverless["monthly"] == float(SEED_REUSED * 1_000_000) == 9680.0
    assert serverless["annual"] == 116_160.0
    assert serverless["monthly_per_user"] == 48.4
    for option in data["options"]:
        assert option["annual"] == pytest.approx(option["monthly"] * 12)


def test_compare_takes_the_volume_as_users_and_turns_per_user(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _compare(capsys, *PRESET, "--users", "100", "--turns-per-user-per-day", "10")
    data = json.loads(out)
    serverless = next(o for o in data["options"] if o["option"] == "serverless")
    assert code == 0 and data["turns_per_month"] == 30_417 and data["users"] == 100
    assert Decimal(str(serverless["monthly"])) == (SEED_REUSED * 30_417).quantize(Decimal("0.01"))  # $294.44


def test_compare_takes_a_fraction_of_a_turn_a_day_as_the_page_shows_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _compare(capsys, *PRESET, "--turns-per-day", "82.2")
    assert code == 0 and json.loads(out)["turns_per_month"] == 2_500  # 82.2 x 365 / 12 = 2,500.25


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--turns-per-user-per-day", "10", "--users", "0"), "--users"),
        (("--turns-per-user-per-day", "10", "--turns-per-month", "5"), "--turns-per-month"),
        (("--users", "many"), "--users"),
    ],
)
def test_a_volume_per_user_without_users_is_one_line(
    capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], said: str
) -> None:
    code, out, err = _compare(capsys, *PRESET, *extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and said in err


def test_compare_text_says_the_year_and_the_cost_per_user(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _compare(capsys, *PRESET[:-1])
    assert code == 0
    assert "Serverless API: $116,160.00 a year, $48.40 per user a month" in out


@pytest.mark.app
def test_the_compare_page_shows_the_year_the_cost_per_user_and_the_cheapest() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30")
    captions = text_of(at.caption)
    assert "$116,160.00 a year · $48.40 per user a month" in captions
    cheapest = [m for m in at.metric if m.delta == "cheapest"]
    assert [m.label for m in cheapest] == ["Serverless API"] and cheapest[0].value == "$9,680.00"
    assert at.title[0].value == "Coding agent (the seed's turn)"


@pytest.mark.app
def test_the_compare_page_prices_users_times_turns_per_user() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30", per="user", users="100", vol="10")
    assert not at.error, [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Serverless API"] == "$294.44"  # 30,417 x $0.00968
    assert "$2.94 per user a month" in text_of(at.caption)


@pytest.mark.app
def test_a_volume_per_user_with_no_users_says_so_instead_of_pricing() -> None:
    at = open_page("compare", preset="multi-turn-chat", per="user", users="0", vol="10")
    assert "needs the number of users" in text_of(at.error)
    assert not [m for m in at.metric if m.label == "Serverless API"]


@pytest.mark.app
def test_switching_to_volume_per_user_keeps_the_months_turns() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30")
    at.segmented_control(key="per").set_value("user").run()
    assert float(at.text_input(key="vol").value or "nan") == pytest.approx(1_000_000 / 200 / DAYS_PER_MONTH, abs=0.01)
    assert {m.label: m.value for m in at.metric}["Serverless API"] == "$9,680.00"


def test_the_pdf_says_the_year_and_the_cost_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    from calculator.present import report
    from calculator.pricing.compare import compare, load_catalogs
    from calculator.scenario.model import load_preset

    cells = record_pdf(monkeypatch)
    cat = load_catalogs()
    result = compare(load_preset("coding-agent").model_copy(update={"as_of": date(2026, 10, 30)}), cat)
    table = pd.DataFrame([{"Section": "Turn", "Assumption": "Input tokens", "Value": "20,000"}])
    assert report.summary_pdf(result, cat, table).startswith(b"%PDF")
    assert "A year: Serverless API $116,160.00 ($48.40 per user a month)" in cells.text


@pytest.mark.app
def test_users_are_typed_as_people_type_them() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30")
    at.text_input(key="users").input("2.5k").run()
    assert "$3.87 per user a month" in text_of(at.caption)  # $9,680.00 / 2,500


@pytest.mark.app
def test_too_many_users_is_said_and_prices_nothing_else() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30")
    at.text_input(key="users").input("99999999999").run()
    assert "Users" in text_of(at.error)
    assert not [m for m in at.metric if m.label == "Serverless API"]


@pytest.mark.app
def test_switching_a_day_volume_to_users_shows_a_round_figure() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30", per="day", vol="50000")
    at.segmented_control(key="per").set_value("user").run()
    assert at.text_input(key="vol").value == "250"  # 50,000 a day over the preset's 200 users


@pytest.mark.app
def test_switching_a_month_volume_to_per_day_and_back_keeps_the_month() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30", vol="2500")
    month = metrics(at)
    at.segmented_control(key="per").set_value("day").run()
    # the shortest figure giving the same month: 82.2 x 365 / 12 = 2,500.25, so 2,500; a whole 82 gives 2,494
    assert at.text_input(key="vol").value == "82.2"
    assert metrics(at) == month
    at.segmented_control(key="per").set_value("month").run()
    assert at.text_input(key="vol").value == "2500"


@pytest.mark.app
def test_a_typed_value_is_named_by_its_field_not_as_a_url_parameter() -> None:
    at = open_page("compare", preset="coding-agent", asof="2026-10-30")
    at.text_input(key="vol").input("1.5").run()
    errors = text_of(at.error)
    assert "Turns" in errors and "URL parameter" not in errors


def test_the_assumptions_csv_holds_the_users_the_year_and_the_cost_per_user() -> None:
    from app_pages._assumptions import assumptions_frame
    from calculator.pricing.compare import compare, load_catalogs
    from calculator.scenario.model import load_preset

    cat = load_catalogs()
    result = compare(load_preset("coding-agent").model_copy(update={"as_of": date(2026, 10, 30)}), cat)
    rows = {(r["Section"], r["Assumption"]): r["Value"] for r in assumptions_frame(result, cat).to_dict("records")}
    assert rows[("Traffic", "Users")] == "200"
    assert rows[("Result: Serverless API", "A year")] == "$116,160.00"
    assert rows[("Result: Serverless API", "Per user a month")] == "$48.40"
