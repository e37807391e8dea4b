"""Several serverless offers side by side: ``compare --serverless PROVIDER/MODEL`` given several times.

Known figures, the seed's coding-agent turn (20,000 input tokens, 18,000 of them cached, 500 output) at
1,000,000 turns a month: Lyceum's and Z.ai's GLM-5.3 at $1.40 / $0.26 / $4.40 per million cost $0.00968 a turn
and $9,680.00 a month; OpenRouter's GLM-5 at $1.00 / $0.20 / $3.20 costs 2,000 x 1.00 + 18,000 x 0.20 + 500 x
3.20 = $0.0072 a turn ($7,200.00 a month) and 20,000 x 1.00 + 500 x 3.20 = $0.0216 without reuse.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from calculator.cli import main

AS_OF = "2026-12-02"
THREE = ["--serverless", "lyceum/GLM-5.3", "--serverless", "zai/glm-5.3", "--serverless", "openrouter/glm-5"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = main(["compare", "--preset", "coding-agent", "--as-of", AS_OF, "--json", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_each_offer_is_an_option_of_kind_serverless(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, *THREE)
    serverless = {o["option"]: o for o in data["options"] if o["kind"] == "serverless"}
    assert list(serverless) == ["serverless", "serverless:zai/glm-5.3", "serverless:openrouter/glm-5"]
    assert [o["monthly"] for o in serverless.values()] == [9680.00, 9680.00, 7200.00]
    assert serverless["serverless:openrouter/glm-5"]["turn"] == {
        "no_reuse": 0.0216,
        "reused": 0.0072,
        "currency": "USD",
    }
    assert [o["same_model"] for o in serverless.values()] == [True, True, False]
    assert data["cheapest"] == data["cheapest_serverless"] == "serverless:openrouter/glm-5"
    assert {o["kind"] for o in data["options"]} == {"serverless", "dedicated", "self_hosted"}


def test_each_offer_has_its_break_evens_with_the_owned_options(capsys: pytest.CaptureFixture[str]) -> None:
    """With your own dedicated price of $0.05 per GPU-hour, one 8-GPU replica costs 8 x 730 x 0.05 = $292 a
    month: a $0.00968 turn reaches it at 292 / 0.00968 = 30,165 turns, a $0.0072 turn at 292 / 0.0072 = 40,556."""
    data = _json(
        capsys, "--serverless", "lyceum/GLM-5.3", "--serverless", "openrouter/glm-5", "--dedicated-hour-price", "0.05"
    )
    crossings = {
        o["option"]: {c["b"]: c["turns_per_month"] for c in o["break_even"] if c["a"] == "serverless"}
        for o in data["options"]
        if o["kind"] == "serverless"
    }
    assert crossings["serverless"]["dedicated"] == pytest.approx(292 / 0.00968, abs=1)
    assert crossings["serverless:openrouter/glm-5"]["dedicated"] == pytest.approx(292 / 0.0072, abs=1)


def test_the_table_marks_the_cheapest_and_other_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--preset", "coding-agent", "--as-of", AS_OF, *THREE]) == 0
    out = capsys.readouterr().out
    block = out[out.index("Serverless offers side by side:") :]
    lines = {line.split()[0]: line for line in block.splitlines()[3:6]}
    assert "$7,200.00" in lines["openrouter/glm-5"] and "(another model)" in lines["openrouter/glm-5"]
    assert "openrouter/glm-5 *" in block
    assert "$0.0216" in lines["openrouter/glm-5"] and "$0.00720" in lines["openrouter/glm-5"]
    assert "(another model)" not in lines["zai/glm-5.3"]


def test_the_first_offer_is_the_scenarios_and_takes_the_own_price(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys, "--serverless", "zai/glm-5.3", "--serverless", "openrouter/glm-5", "--serverless-discount", "50"
    )
    first = next(o for o in data["options"] if o["option"] == "serverless")
    other = next(o for o in data["options"] if o["option"] == "serverless:openrouter/glm-5")
    assert (first["provider"], first["monthly"]) == ("zai", 4840.00)  # half of $9,680.00
    assert first["price_versions"][0]["price_source"] == "own"
    assert other["monthly"] == 7200.00 and other["price_versions"][0]["price_source"] == "sheet"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--serverless", "lyceum/GLM-5.3", "--serverless", "openrouter/nomodel"], "--serverless: openrouter/nomodel"),
        (["--serverless", "nosuch/GLM-5.3"], "--serverless: nosuch/GLM-5.3: unknown provider"),
        (["--serverless", "lyceum"], "should be PROVIDER/MODEL"),
        (
            ["--serverless", "lyceum/GLM-5.3", "--provider", "zai", "--model", "glm-5.3"],
            "--serverless PROVIDER/MODEL or",
        ),
    ],
)
def test_a_bad_offer_names_the_flag(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code = main(["compare", "--preset", "coding-agent", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
