"""A refresh never makes a sheet worse: the decision rules of ``sheets refresh``, pinned on the recorded lists
in tests/fixtures/price_lists/ (sources in the README there) and on the installed genai-prices package.

Known dates and figures:
- genai-prices' data.json was recorded at commit 47df840a (2026-08-21), so that is its date here.
- deepseek-chat was retired by DeepSeek on 2026-07-24 (deepseek.yaml), Gemini 2.5 Pro and Flash on
  2026-12-01 (google.yaml); both lists still price them.
- Fireworks' gpt-oss-120b cached input was read from Fireworks' page on 2026-11-29 at $0.015; the recorded
  data.json (2026-08-21) says $0.07.
- Anthropic bills Claude Sonnet 4.5 prompts above 200k tokens at $6 input / $22.50 output; LiteLLM's cost map
  gives the entry no long-context tier.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("genai_prices")

from calculator.catalog import genai_prices as genai_import
from calculator.catalog import price_lists
from calculator.catalog.genai_prices import diff_sheets
from calculator.catalog.price_lists import installed_list, parse_list, read_list, refresh
from calculator.catalog.prices import DEFAULT_SHEETS_DIR, load_price_sheets
from calculator.cli import main
from calculator.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "price_lists"
GENAI = FIXTURES / "genai_prices_data.json"
LITELLM = FIXTURES / "litellm_model_prices.json"
GENAI_DATE = dt.date(2026, 8, 21)
TODAY = dt.date(2026, 12, 2)


@pytest.fixture
def sheets(tmp_path: Path) -> Path:
    folder = tmp_path / "sheets"
    shutil.copytree(DEFAULT_SHEETS_DIR, folder)
    return folder


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sheets", "refresh", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.yaml"))}


# --- retired here, still listed there ----------------------------------------------------------------------


def test_an_offer_retired_here_is_reported_never_proposed(sheets: Path) -> None:
    result = refresh(load_price_sheets(sheets), parse_list(read_list(str(GENAI), GENAI_DATE)))
    (chat,) = [e for e in result.retired if e.offer_id == "deepseek-chat"]
    assert chat.reason == (
        "retired here on 2026-07-24, still listed there (genai-prices 'deepseek-chat'); no version proposed"
    )
    assert not chat.writable
    assert "deepseek-chat" not in {e.offer_id for e in result.proposals}
    assert "deepseek-chat" not in {e.offer_id for e in result.writable_report.entries}


def test_an_offer_retired_yesterday_is_not_refreshed_today(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(sheets)
    code, out, _ = _run(
        capsys, "--from", str(LITELLM), "--sheets", str(sheets), "--read-on", TODAY.isoformat(), "--write", "--json"
    )
    assert code == 0
    data = json.loads(out)
    retired = {r["offer_id"]: r["reason"] for r in data["retired"]}
    assert set(retired) >= {"gemini-2.5-pro", "gemini-2.5-flash", "deepseek-chat"}
    assert retired["gemini-2.5-pro"].startswith("retired here on 2026-12-01, still listed there")
    assert not {p["offer_id"] for p in data["proposals"]} & set(retired)
    after = _files(sheets)
    assert after["google.yaml"] == before["google.yaml"] and after["deepseek.yaml"] == before["deepseek.yaml"]


# --- a list older than our reading -----------------------------------------------------------------------------


def test_a_list_older_than_our_reading_proposes_nothing(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(sheets)
    code, out, _ = _run(
        capsys, "--from", str(GENAI), "--sheets", str(sheets), "--read-on", GENAI_DATE.isoformat(), "--write", "--json"
    )
    assert code == 0
    data = json.loads(out)
    (gpt_oss,) = [o for o in data["older"] if (o["provider"], o["offer_id"]) == ("fireworks", "gpt-oss-120b")]
    assert gpt_oss["changes"] == [{"field": "cached_input", "old": 0.015, "new": 0.07}]
    assert gpt_oss["list_read"] == "2026-08-21" and gpt_oss["old_source"]["newest_read"] == "2026-11-29"
    assert "not after our newest reading (2026-11-29)" in gpt_oss["reason"]
    assert "gpt-oss-120b" not in {p["offer_id"] for p in data["proposals"] if p["provider"] == "fireworks"}
    assert _files(sheets)["fireworks.yaml"] == before["fireworks.yaml"]


def test_a_model_check_date_older_than_ours_proposes_nothing_whatever_the_lists_date(sheets: Path) -> None:
    """The list is given as read today, but its comment says Fireworks' prices were checked on 2026-08-20:
    that is the price's date, older than our reading of 2026-11-29."""
    data = json.loads(GENAI.read_text())
    fireworks = next(p for p in data if p["id"] == "fireworks")
    fireworks["price_comments"] = "Prices checked on 2026-08-20 against https://fireworks.ai/pricing"
    path = sheets.parent / "data.json"
    path.write_text(json.dumps(data))
    result = refresh(load_price_sheets(sheets), parse_list(read_list(str(path), TODAY)), providers=["fireworks"])
    (older,) = [e for e in result.older if e.offer_id == "gpt-oss-120b"]
    assert older.proposal is not None and older.proposal.version.source.read == dt.date(2026, 8, 20)
    assert not result.proposals


# --- long-context tiers the list lacks ---------------------------------------------------------------------------


def test_a_tier_the_list_lacks_is_kept_and_reported(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Our Sonnet 4.5 input (its latest version) altered to $3.30 so LiteLLM's $3.00 is proposed: the proposal
    keeps the >200k tier."""
    path = sheets / "anthropic.yaml"
    text = path.read_text()
    base = "        prices:\n          input: 3.00\n"
    end = text.index("model: claude-sonnet-4-6")  # claude-sonnet-4-5 is the sheet's first offer
    last = text.rindex(base, 0, end)
    path.write_text(text[:last] + base.replace("3.00", "3.30") + text[last + len(base) :])
    code, out, _ = _run(
        capsys,
        "--from",
        str(LITELLM),
        "--sheets",
        str(sheets),
        "--read-on",
        "2026-11-30",
        "--model",
        "claude-sonnet-4-5",
    )
    assert code == 0
    assert "input  3.30 -> 3.00" in " ".join(out.split("\n"))
    assert "long_context" not in out.split("source:")[0]  # no tier field changes, so none is deleted
    assert "Long-context tiers kept from ours (LiteLLM gives none there): anthropic claude-sonnet-4-5" in out
    code, out, _ = _run(
        capsys,
        *("--from", str(LITELLM), "--sheets", str(sheets), "--read-on", "2026-11-30"),
        *("--model", "claude-sonnet-4-5", "--write"),
    )
    assert code == 0
    latest = load_price_sheets(sheets).serverless("anthropic", "claude-sonnet-4-5")[1].versions[-1]
    assert latest.prices.input == Decimal(3)
    (tier,) = latest.long_context
    assert (tier.above_tokens, tier.input, tier.output) == (200_000, Decimal(6), Decimal("22.50"))


# --- the list's date ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", [GENAI, LITELLM])
def test_a_list_without_a_date_is_refused_unless_read_on_is_given(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture: Path
) -> None:
    """A file unpacked from a wheel is dated 1980-01-01: its timestamp is never taken as the list's date."""
    path = tmp_path / fixture.name
    shutil.copyfile(fixture, path)
    os.utime(path, (315532800, 315532800))  # 1980-01-01
    code, out, err = _run(capsys, "--from", str(path), "--sheets", str(sheets))
    assert code == 2 and out == ""
    assert "gives no date of its own" in err and "--read-on DATE" in err
    code, out, _ = _run(capsys, "--from", str(path), "--sheets", str(sheets), "--read-on", "2026-11-30", "--json")
    assert code == 0 and json.loads(out)["list"]["read"] == "2026-11-30"


def test_a_data_json_is_dated_by_the_latest_check_it_names(tmp_path: Path) -> None:
    data = json.loads(GENAI.read_text())
    openai = next(p for p in data if p["id"] == "openai")
    openai["price_comments"] = "Rates verified on 2026-11-20 at https://developers.openai.com/api/docs/pricing"
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data))
    price_list = parse_list(read_list(str(path)))
    assert (price_list.text.read, price_list.text.read_basis) == (dt.date(2026, 11, 20), "the list's data")
    result = refresh(load_price_sheets(DEFAULT_SHEETS_DIR), price_list, providers=["anthropic"])
    assert result.report.as_of == dt.date(2026, 11, 20)


# --- the installed packages' lists -------------------------------------------------------------------------------


def test_from_genai_prices_reads_the_installed_package_dated_by_its_data(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib.metadata import version

    price_list = installed_list("genai-prices")
    expected = genai_import.latest_check(price_list.data.providers)
    assert expected is not None and price_list.text.read == expected
    assert price_list.data.document == f"genai-prices {version('genai-prices')} package data"
    code, out, _ = _run(capsys, "--from", "genai-prices", "--sheets", str(sheets), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["list"]["read"] == expected.isoformat() and data["list"]["read_basis"] == "the list's data"
    assert {"deepseek-chat", "gemini-2.5-pro"} <= {r["offer_id"] for r in data["retired"]}
    assert installed_list("genai-prices", TODAY).text.read == TODAY


def test_from_litellm_without_the_package_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(price_lists, "_litellm_folder", lambda: None)
    with pytest.raises(InputError, match="litellm is not installed here") as caught:
        installed_list("litellm", TODAY)
    assert "--from FILE --read-on DATE" in caught.value.message


def test_from_litellm_reads_the_cost_map_the_package_ships(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed litellm stand-in: the package folder with the recorded cost map as its bundled backup."""
    import importlib

    site = tmp_path / "site"
    (site / "litellm").mkdir(parents=True)
    (site / "litellm" / "__init__.py").write_text("")
    shutil.copyfile(LITELLM, site / "litellm" / price_lists.LITELLM_MAP)
    (site / "litellm-1.110.2.dist-info").mkdir()
    (site / "litellm-1.110.2.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: litellm\nVersion: 1.110.2\n"
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    code, _, err = _run(capsys, "--from", "litellm", "--sheets", str(sheets))
    assert code == 2 and "litellm 1.110.2's cost map" in err and "--read-on DATE" in err
    code, out, _ = _run(capsys, "--from", "litellm", "--sheets", str(sheets), "--read-on", "2026-11-30", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["list"]["location"].startswith("litellm 1.110.2 (installed package")
    (glm,) = [p for p in data["proposals"] if p["offer_id"] == "glm-4.6" and p["provider"] == "deepinfra"]
    assert glm["source"]["document"] == "LiteLLM model cost map (litellm 1.110.2 package)"
    assert glm["source"]["read"] == "2026-11-30" and glm["old_source"]["read"] == "2026-11-29"


# --- what is shown is what is written -------------------------------------------------------------------------------


def test_write_adds_exactly_the_changes_shown(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = load_price_sheets(sheets)
    code, out, _ = _run(capsys, "--from", str(LITELLM), "--sheets", str(sheets), "--read-on", "2026-11-30", "--json")
    shown = json.loads(out)["proposals"]
    assert {(p["provider"], p["offer_id"]) for p in shown} == {
        ("deepinfra", "gpt-oss-120b"),
        ("deepinfra", "glm-4.6"),
        ("together", "llama-3.3-70b-instruct-turbo"),
    }
    code, out, _ = _run(
        capsys, "--from", str(LITELLM), "--sheets", str(sheets), "--read-on", "2026-11-30", "--json", "--write"
    )
    assert code == 0
    after = load_price_sheets(sheets)
    for proposal in shown:
        old = before.serverless(proposal["provider"], proposal["offer_id"])[1]
        new = after.serverless(proposal["provider"], proposal["offer_id"])[1]
        assert new.versions[:-1] == old.versions
        expected = genai_import._flat(old.versions[-1])
        expected.update({c["field"]: Decimal(str(c["new"])) for c in proposal["changes"]})
        assert genai_import._flat(new.versions[-1]) == expected
    for sheet in before.providers:  # every other offer of every sheet is unchanged
        shown_here = {p["offer_id"] for p in shown if p["provider"] == sheet}
        olds = {o.id: o for o in before.sheet(sheet).offers if o.id not in shown_here}
        news = {o.id: o for o in after.sheet(sheet).offers if o.id not in shown_here}
        assert olds == news


# --- the genai-prices import lists current models only -----------------------------------------------------------


def test_the_import_lists_current_models_not_long_retired_ones() -> None:
    report = diff_sheets(
        load_price_sheets(DEFAULT_SHEETS_DIR), dt.date(2026, 11, 29), providers=["openai", "anthropic"]
    )
    new = {e.model for e in report.by_status("new")}
    assert not {"ada", "davinci", "babbage", "curie", "claude-2"} & new
    assert {"ada", "davinci"} <= set(report.not_current["openai"])
    assert "claude-2" in report.not_current["anthropic"]
    assert {"gpt-4.1-mini", "gpt-5-mini", "claude-opus-4-5"} <= new  # batch-priced: in the current tables
