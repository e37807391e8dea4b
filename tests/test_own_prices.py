"""Own prices: a customer's negotiated per-token rate, a discount off the listed price, their own GPU-hour price.

Known figures: the seed's coding-agent turn (20,000 input tokens, 18,000 of them repeated and cached, 500
output) at $1.40 / $0.26 / $4.40 per million costs $0.00968 (the seed article), so 1,000,000 turns a month
cost $9,680.00; 10% off every price is $8,712.00. At $1.00 / $0.20 / $4.00 a turn costs
2,000 x 1.00 + 18,000 x 0.20 + 500 x 4.00 = 7,600 millionths of a dollar: $7,600.00 a month.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.cli import main
from calculator.scenario.model import dump_scenario, load_preset, load_scenario_text

AS_OF = "2026-12-02"
HOURS = 730  # the month every GPU bill here uses


def _compare(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = main(["compare", "--preset", "coding-agent", "--as-of", AS_OF, "--json", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def _option(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(o for o in data["options"] if o["option"] == name)


def test_own_serverless_prices_give_the_seeds_month(capsys: pytest.CaptureFixture[str]) -> None:
    serverless = _option(_compare(capsys, "--serverless-price", "1.40,0.26,4.40"), "serverless")
    assert serverless["monthly"] == 9680.00
    (price,) = serverless["price_versions"]
    assert price["price_source"] == "own"
    assert price["source"] == "your own price: negotiated" and price["effective"] == AS_OF


def test_a_discount_on_the_listed_offer(capsys: pytest.CaptureFixture[str]) -> None:
    serverless = _option(_compare(capsys, "--serverless-discount", "10"), "serverless")
    assert serverless["monthly"] == 8712.00
    (price,) = serverless["price_versions"]
    assert price["price_source"] == "own"
    assert price["source"] == "your own price: negotiated, 10% off the listed price"


def test_own_prices_replace_the_listed_ones(capsys: pytest.CaptureFixture[str]) -> None:
    data = _compare(capsys, "--serverless-price", "1.00,0.20,4.00", "--own-price-name", "ACME negotiated, 2026-12")
    serverless = _option(data, "serverless")
    assert serverless["monthly"] == 7600.00
    assert serverless["price_versions"][0]["source"] == "your own price: ACME negotiated, 2026-12"
    assert _option(data, "dedicated")["price_versions"][0]["price_source"] == "sheet"  # the others stay listed


def test_without_own_prices_every_version_is_a_sheets(capsys: pytest.CaptureFixture[str]) -> None:
    data = _compare(capsys)
    assert {p["price_source"] for o in data["options"] for p in o["price_versions"]} == {"sheet"}
    assert _option(data, "serverless")["monthly"] == 9680.00  # the listed price is the seed's


def test_own_gpu_hour_prices_bill_every_gpu_hour(capsys: pytest.CaptureFixture[str]) -> None:
    named = ("--dedicated", "fireworks:on-demand-h200-141gb", "--gpu-vm", "nebius:b200-8x")  # offers named by hand
    listed = _compare(capsys, *named)
    own = _compare(capsys, *named, "--dedicated-hour-price", "5.00", "--gpu-hour-price", "3.50")
    dedicated = _option(own, "dedicated")
    assert dedicated["gpus"] == _option(listed, "dedicated")["gpus"] == 24  # 3 replicas of 8, as listed
    assert dedicated["monthly"] == 24 * HOURS * 5.00
    assert dedicated["price_versions"][0]["price_source"] == "own"
    self_hosted, listed_vm = _option(own, "self_hosted"), _option(listed, "self_hosted")
    gpu_hours = self_hosted["gpu_hours"]
    assert self_hosted["breakdown"]["gpu_hours"] == pytest.approx(gpu_hours * 3.50, abs=0.005)
    assert listed_vm["breakdown"]["gpu_hours"] != self_hosted["breakdown"]["gpu_hours"]


def test_the_text_output_labels_the_price_as_yours(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "--preset", "coding-agent", "--as-of", AS_OF, "--serverless-discount", "10"])
    out = capsys.readouterr().out
    assert code == 0
    (line,) = [line for line in out.splitlines() if line.strip().startswith("serverless: lyceum/glm-5.3")]
    assert "your own price: negotiated, 10% off the listed price" in line
    assert "Why engine benchmarks disagree" not in line  # never cited as the sheet's version


def test_own_prices_in_a_scenario_file_survive_a_reopen(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base = load_preset("coding-agent")
    text = dump_scenario(base).rstrip() + (
        "\nown_prices:\n  name: ACME negotiated\n  date: 2026-11-20\n"
        "  serverless: {input: 1.00, cached_input: 0.20, output: 4.00}\n  gpu_vm_discount: 25\n"
    )
    reopened = load_scenario_text(dump_scenario(load_scenario_text(text)))
    assert reopened.own_prices is not None and reopened.own_prices.name == "ACME negotiated"
    assert str(reopened.own_prices.date) == "2026-11-20"
    path = tmp_path / "acme.yaml"
    path.write_text(dump_scenario(reopened))
    code = main(["compare", "--scenario", str(path), "--as-of", AS_OF, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    serverless = _option(data, "serverless")
    assert serverless["monthly"] == 7600.00 and serverless["price_versions"][0]["read"] == "2026-11-20"
    vm = _option(data, "self_hosted")["price_versions"][0]
    assert vm["price_source"] == "own" and "25% off the listed price" in vm["source"]


def test_a_flag_overrides_the_files_own_price(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(dump_scenario(load_preset("coding-agent")) + "own_prices:\n  serverless_discount: 50\n")
    code = main(["compare", "--scenario", str(path), "--as-of", AS_OF, "--json", "--serverless-price", "1,0.2,4"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and _option(data, "serverless")["monthly"] == 7600.00


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--serverless-price=-1,0.26,4.40"], "--serverless-price: '-1' is negative"),
        (["--serverless-price", "1.40,0.26"], "is not IN,CACHED,OUT"),
        (["--serverless-price", "a,b,c"], "'a' is not a price"),
        (["--serverless-discount", "120"], "'120' is outside 0-100"),
        (["--serverless-discount=-5"], "outside 0-100"),
        (["--gpu-hour-price", "nan"], "is not a price"),
        (["--dedicated-hour-price", "1e12"], "larger than any price"),
        (["--serverless-price", "1,0.2,4", "--serverless-discount", "5"], "give one of them"),
    ],
)
def test_bad_own_prices_name_the_flag(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code = main(["compare", "--preset", "coding-agent", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_a_scenario_file_with_a_price_and_a_discount_for_one_option_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "both.yaml"
    path.write_text(
        dump_scenario(load_preset("coding-agent"))
        + "own_prices:\n  serverless: {input: 1, output: 4}\n  serverless_discount: 5\n"
    )
    code = main(["compare", "--scenario", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "own_prices" in err and "serverless_discount" in err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="0123456789.,-e+ nax%", max_size=16))
def test_any_serverless_price_text_is_read_or_refused_by_name(capsys: pytest.CaptureFixture[str], text: str) -> None:
    code = main(["compare", "--preset", "coding-agent", "--as-of", AS_OF, "--json", f"--serverless-price={text}"])
    out, err = capsys.readouterr()
    if code == 0:
        assert _option(json.loads(out), "serverless")["price_versions"][0]["price_source"] == "own"
    else:
        assert code == 2 and "--serverless-price" in err and "Traceback" not in err
