"""Proposals from the installed genai-prices package's bundled data, diffed against our sheets.

These run on the real package data (no fixture data): they assert entries that genai-prices and our
curated sheets agree on, and use copies of our sheets in tmp_path for changed prices and writes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import socket
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("genai_prices")

from calculator.catalog import genai_prices as genai_import
from calculator.catalog.datafile import DataFileError
from calculator.catalog.genai_prices import DiffEntry, ImportReport, diff_sheets, load_genai_data, write_proposals
from calculator.catalog.prices import DEFAULT_SHEETS_DIR, PriceCatalog, load_price_sheet, load_price_sheets
from calculator.cli.extras import run_genai_import

AS_OF = dt.date(2026, 11, 29)
TODAY = dt.date(2026, 11, 29)
VERSION = version("genai-prices")


def _entry(report: ImportReport, provider: str, model: str) -> DiffEntry:
    found = [e for e in report.entries if e.provider == provider and e.model == model]
    assert len(found) == 1, [(e.provider, e.model) for e in report.entries]
    return found[0]


@pytest.fixture
def sheets(tmp_path: Path) -> Path:
    """A copy of the bundled sheets, with gpt-4.1's launch price changed from 2.00 to 2.50 input."""
    folder = tmp_path / "sheets"
    shutil.copytree(DEFAULT_SHEETS_DIR, folder)
    path = folder / "openai.yaml"
    shutil.copyfile(Path(__file__).parent / "fixtures" / "price_sheets" / "openai.yaml", path)  # figures fixed
    text = path.read_text()
    launch = "        prices:\n          input: 2.00\n          cached_input: 0.50\n          output: 8.00\n"
    assert text.count(launch) == 1
    path.write_text(text.replace(launch, launch.replace("input: 2.00", "input: 2.50")))
    return folder


def test_the_package_data_is_read_from_the_installed_package() -> None:
    data = load_genai_data()
    assert data.version == VERSION
    assert data.document == f"genai-prices {VERSION} package data"
    openai = data.provider("openai")
    assert openai is not None
    gpt41 = next(m for m in openai.models if m.id == "gpt-4.1")
    assert gpt41.get_prices(dt.datetime(2026, 11, 29, tzinfo=dt.UTC)).input_mtok == Decimal(2)


def test_gpt_4_1_matches_our_sheet(catalog: PriceCatalog) -> None:
    report = diff_sheets(catalog, AS_OF, providers=["openai"], today=TODAY)
    entry = _entry(report, "openai", "gpt-4.1")
    assert entry.status == "same" and entry.changes == []
    assert entry.genai_id == "gpt-4.1"
    assert entry.proposal is not None
    proposed = entry.proposal.version
    assert proposed.prices.input == Decimal("2.00")
    assert proposed.prices.cached_input == Decimal("0.50")
    assert proposed.prices.output == Decimal("8.00")
    assert proposed.batch_discount == Decimal("0.5")
    assert proposed.source.document == f"genai-prices {VERSION} package data"
    assert proposed.source.url is None
    # the latest date genai-prices' comment on gpt-4.1 says its rates were checked ("verified on ...")
    comment = next(m for m in load_genai_data().provider("openai").models if m.id == "gpt-4.1").price_comments  # type: ignore[union-attr]
    assert proposed.source.read == max(
        dt.date.fromisoformat(d) for d in re.findall(r"verified on (\d{4}-\d{2}-\d{2})", comment or "")
    )
    assert "Proposal" in (proposed.note or "") and "Proposal" in (proposed.source.note or "")
    assert _entry(report, "openai", "gpt-4.1").old == catalog.serverless("openai", "gpt-4.1")[1].version_at(AS_OF)


def test_anthropic_cache_writes_by_lifetime_match(catalog: PriceCatalog) -> None:
    report = diff_sheets(catalog, AS_OF, providers=["anthropic"], today=TODAY)
    entry = _entry(report, "anthropic", "claude-sonnet-4-5")
    assert entry.status == "same"
    assert entry.proposal is not None
    prices = entry.proposal.version.prices
    assert prices.cache_write == {"5m": Decimal("3.75"), "1h": Decimal("6")}
    assert entry.proposal.version.long_context[0].above_tokens == 200_000
    assert entry.proposal.version.long_context[0].input == Decimal(6)
    new = {e.model for e in report.by_status("new")}
    assert "claude-opus-4-5" in new  # genai-prices has it, our sheet does not


def test_models_we_have_that_it_lacks_are_listed(catalog: PriceCatalog) -> None:
    report = diff_sheets(catalog, AS_OF, providers=["lyceum", "deepinfra"], today=TODAY)
    missing = report.by_status("missing")
    assert {e.model for e in missing} >= {"GLM-5.3", "zai-org/GLM-4.6"}
    assert all("no provider" in (e.reason or "") for e in missing)
    assert "mistral" in report.providers_without_sheet


def test_a_changed_sheet_shows_old_and_new(sheets: Path) -> None:
    report = diff_sheets(load_price_sheets(sheets), AS_OF, providers=["openai"], today=TODAY)
    entry = _entry(report, "openai", "gpt-4.1")
    assert entry.status == "changed"
    assert [(c.field, c.old, c.new) for c in entry.changes] == [("input", Decimal("2.5"), Decimal(2))]
    assert entry.writable and entry.write_effective == AS_OF


def test_nothing_is_written_without_write(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p.name: p.read_bytes() for p in sheets.glob("*.yaml")}
    args = argparse.Namespace(provider="openai", write=False, json=True, sheets=sheets, as_of=AS_OF)
    assert run_genai_import(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert {p.name: p.read_bytes() for p in sheets.glob("*.yaml")} == before
    assert data["written"] is None
    assert data["package"]["version"] == VERSION
    gpt41 = next(e for e in data["entries"] if e["model"] == "gpt-4.1")
    assert gpt41["status"] == "changed"
    assert gpt41["changes"] == [{"field": "input", "old": 2.5, "new": 2.0}]
    assert gpt41["new"]["input"] == 2.0 and gpt41["old"]["input"] == 2.5


def _is_subsequence(old: list[str], new: list[str]) -> bool:
    it = iter(new)
    return all(line in it for line in old)


def test_write_appends_a_version_and_the_sheet_loads(sheets: Path) -> None:
    path = sheets / "openai.yaml"
    old_text = path.read_text()
    old_sheet = load_price_sheet(path)
    report = diff_sheets(load_price_sheets(sheets), AS_OF, providers=["openai"], models=["gpt-4.1"], today=TODAY)
    (written,) = write_proposals(report, sheets)
    assert written.versions_added == ("gpt-4.1",) and written.offers_added == ()
    new_text = path.read_text()
    assert _is_subsequence(old_text.splitlines(), new_text.splitlines())  # no existing line touched
    new_sheet = load_price_sheet(path)
    _, offer = load_price_sheets(sheets).serverless("openai", "gpt-4.1")
    _, old_offer = next((s, o) for s, o in [(None, o) for o in old_sheet.offers] if o.id == "gpt-4.1")
    assert offer.versions[:-1] == old_offer.versions
    assert offer.versions[-1].effective == AS_OF
    assert offer.version_at(AS_OF).prices.input == Decimal(2)
    assert offer.version_at(dt.date(2025, 5, 1)).prices.input == Decimal("2.5")  # the curated version is kept
    assert offer.versions[-1].source.document == f"genai-prices {VERSION} package data"
    assert [o.id for o in new_sheet.offers] == [o.id for o in old_sheet.offers]
    assert not [p for p in sheets.iterdir() if p.name.startswith(".genai-import-")]  # temp files cleaned up
    again = diff_sheets(load_price_sheets(sheets), AS_OF, providers=["openai"], models=["gpt-4.1"], today=TODAY)
    assert _entry(again, "openai", "gpt-4.1").status == "same"


def test_write_appends_a_new_offer(sheets: Path) -> None:
    report = diff_sheets(
        load_price_sheets(sheets), AS_OF, providers=["anthropic"], models=["claude-opus-4-5"], today=TODAY
    )
    (entry,) = report.entries
    assert entry.status == "new" and entry.writable
    (written,) = write_proposals(report, sheets)
    assert written.offers_added == ("claude-opus-4-5",)
    _, offer = load_price_sheets(sheets).serverless("anthropic", "claude-opus-4-5")
    assert offer.open_weights is False
    prices = offer.version_at(AS_OF).prices
    assert (prices.input, prices.cache_write) == (Decimal(5), {"5m": Decimal("6.25"), "1h": Decimal(10)})


def test_cli_write(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(provider="openai", write=True, json=False, sheets=sheets, as_of=AS_OF)
    assert run_genai_import(args) == 0
    out = capsys.readouterr().out
    assert "Wrote" in out and "gpt-4.1" in out
    sheet = load_price_sheet(sheets / "openai.yaml")
    assert len(sheet.offers) > 4  # new offers appended too
    assert load_price_sheets(sheets).serverless("openai", "gpt-4.1")[1].version_at(AS_OF).prices.input == 2


def test_no_version_before_our_latest(sheets: Path) -> None:
    report = diff_sheets(load_price_sheets(sheets), dt.date(2025, 4, 14), models=["gpt-4.1"], today=TODAY)
    entry = _entry(report, "openai", "gpt-4.1")
    assert entry.status == "changed" and not entry.writable
    assert "later" in (entry.reason or "")
    assert write_proposals(report, sheets) == []


def test_a_sheet_that_fails_validation_is_not_replaced(sheets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = sheets / "openai.yaml"
    before = path.read_bytes()
    real = genai_import._version_dict

    def broken(*a: Any) -> dict[str, Any]:
        data = real(*a)
        data["prices"]["input"] = Decimal(-1)
        return data

    monkeypatch.setattr(genai_import, "_version_dict", broken)
    report = diff_sheets(load_price_sheets(sheets), AS_OF, models=["gpt-4.1"], today=TODAY)
    with pytest.raises(DataFileError, match="input"):
        write_proposals(report, sheets)
    assert path.read_bytes() == before
    assert not [p for p in sheets.iterdir() if p.name.startswith(".genai-import-")]


def test_only_the_bundled_data_is_read(catalog: PriceCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """No network, and an auto-updated snapshot (genai_prices.UpdatePrices) is never consulted."""
    from genai_prices import data_snapshot

    def no_network(*a: object, **k: object) -> None:
        raise AssertionError("genai-prices import tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(data_snapshot, "_custom_snapshot", data_snapshot.DataSnapshot([], from_auto_update=True))
    report = diff_sheets(catalog, AS_OF, providers=["openai"], models=["gpt-4.1"], today=TODAY)
    assert _entry(report, "openai", "gpt-4.1").status == "same"


def test_time_of_day_prices_are_named(catalog: PriceCatalog) -> None:
    report = diff_sheets(catalog, AS_OF, providers=["deepseek"], models=["deepseek-chat"], today=TODAY)
    (entry,) = report.entries
    assert entry.proposal is not None
    assert "time-of-day" in (entry.proposal.version.note or "")


def test_unknown_provider_is_an_input_error(catalog: PriceCatalog) -> None:
    from calculator.errors import InputError

    with pytest.raises(InputError, match="unknown provider"):
        diff_sheets(catalog, AS_OF, providers=["nosuch"], today=TODAY)
