"""Price sheets: every bundled sheet loads, as-of lookups, and each kind of malformed sheet fails clearly."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from calculator.catalog.datafile import DataFileError
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.prices import (
    DEFAULT_SHEETS_DIR,
    GpuVmOffer,
    PriceCatalog,
    ServerlessOffer,
    load_price_sheet,
    load_price_sheets,
)
from calculator.errors import InputError

from .clock import TODAY

SHEETS = sorted(DEFAULT_SHEETS_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", SHEETS, ids=[p.stem for p in SHEETS])
def test_every_bundled_sheet_loads_and_every_price_names_a_dated_source(path: Path) -> None:
    sheet = load_price_sheet(path)
    for offer in sheet.offers:
        for version in offer.versions:
            assert version.source.url or version.source.document
            assert version.source.read <= TODAY


def test_bundled_sheets_cover_what_the_issue_asks_for(catalog: PriceCatalog) -> None:
    serverless = [(s, o) for s, o in catalog.offers("serverless")]
    assert len({s.provider for s, _ in serverless} - {"lyceum"}) >= 6
    assert len([o for s, o in serverless if s.provider != "lyceum"]) >= 12
    versions = [v for _, o in serverless if isinstance(o, ServerlessOffer) for v in o.versions]
    assert any(v.prices.cache_write and {"5m", "1h"} <= set(v.prices.cache_write) for v in versions)
    assert any(v.prices.cache_storage_per_hour for v in versions)
    assert any(v.long_context for v in versions)
    assert any(v.batch_discount for v in versions)
    assert any(v.prices.cached_input is not None and not v.prices.cache_write for v in versions)
    vms = list(catalog.offers("gpu_vm"))
    assert len(vms) >= 8 and len({s.provider for s, _ in vms}) >= 4
    gpus = {o.gpu for _, o in vms if isinstance(o, GpuVmOffer)}
    assert {"h100-sxm", "h200-sxm", "l40s", "b200"} <= gpus and any(g.startswith("a100") for g in gpus)
    assert len(list(catalog.offers("dedicated"))) >= 3


def test_every_gpu_an_offer_names_has_a_spec(catalog: PriceCatalog) -> None:
    known = set(load_gpu_specs().ids)
    for sheet, offer in catalog.offers():
        gpu = getattr(offer, "gpu", None)
        assert gpu is None or gpu in known, f"{sheet.provider}/{offer.id} names unknown GPU {gpu}"


def test_as_of_before_the_first_version_names_the_dates_that_exist(catalog: PriceCatalog) -> None:
    _, offer = catalog.serverless("lyceum", "GLM-5.3")
    with pytest.raises(InputError, match=r"2026-09-15, 2026-10-05") as info:
        offer.version_at(dt.date(2026, 1, 1))
    assert info.value.field == "as_of"


def test_unknown_provider_and_model_name_what_exists(catalog: PriceCatalog) -> None:
    with pytest.raises(InputError, match="known: .*lyceum"):
        catalog.sheet("nobody")
    with pytest.raises(InputError, match="it offers: GLM-5.3"):
        catalog.serverless("lyceum", "GPT-9")


GOOD = """\
schema_version: 1
provider: acme
name: Acme
currency: USD
offers:
  - kind: serverless
    model: Acme-1
    open_weights: true
    versions:
      - effective: 2026-01-01
        source: {url: https://acme.example/prices, read: 2026-01-02}
        prices: {input: 1.0, cached_input: 0.1, output: 2.0}
      - effective: 2026-06-01
        source: {url: https://acme.example/prices, read: 2026-06-02}
        prices: {input: 0.8, cached_input: 0.1, output: 2.0}
"""


def _load(tmp_path: Path, text: str) -> str:
    path = tmp_path / "acme.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError) as info:
        load_price_sheets(tmp_path)
    return str(info.value)


def test_a_good_sheet_loads(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text(GOOD)
    assert load_price_sheets(tmp_path).serverless("acme", "Acme-1")[1].versions[-1].prices.input == Decimal("0.8")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("    open_weights: true\n", ""), r"acme.yaml:6: offers.0\[Acme-1\].open_weights: required field is missing"),
        (
            ("open_weights: true", "open_weights: true\n    colour: red"),
            r"acme.yaml:\d+: offers.0\[Acme-1\].colour: unknown",
        ),
        (
            ("input: 0.8", "input: -0.8"),
            r"acme.yaml:15: offers.0\[Acme-1\].versions.1\[2026-06-01\].prices.input: .*greater than or equal to 0",
        ),
        (
            ("effective: 2026-06-01", "effective: 2025-06-01"),
            r"acme.yaml:10: offers.0\[Acme-1\].versions: .*out of order",
        ),
        (("effective: 2026-06-01", "effective: 2026-01-01"), r"versions: .*on the same date"),
        (
            ("effective: 2026-06-01", "effective: 01/06/2026"),
            r"acme.yaml:13: offers.0\[Acme-1\].versions.1.*effective: .*valid date",
        ),
        (("name: Acme", "name: [Acme"), r"acme.yaml:\d+: YAML syntax error"),
        (
            ("currency: USD", "currency: USD\ncurrency: EUR"),
            r"acme.yaml:\d+: YAML syntax error: found duplicate key 'currency'",
        ),
        (
            ("currency: USD", "currency: CHF"),
            r"acme.yaml:4: currency: Input should be 'USD', 'EUR', 'GBP', 'JPY' or 'INR'",
        ),
        (("provider: acme", "provider: other"), r"acme.yaml:1: provider: 'other' must match the file name"),
    ],
    ids=[
        "missing-field",
        "unknown-field",
        "negative-price",
        "versions-out-of-order",
        "versions-same-date",
        "bad-date-format",
        "yaml-syntax",
        "duplicate-key",
        "bad-currency",
        "provider-not-file-name",
    ],
)
def test_malformed_sheet_names_file_line_offer_and_field(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    old, new = change
    assert old in GOOD
    message = _load(tmp_path, GOOD.replace(old, new, 1))
    assert pytest.importorskip("re").search(expected, message), message


def test_every_broken_sheet_is_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text(GOOD.replace("input: 0.8", "input: -1"))
    (tmp_path / "beta.yaml").write_text(GOOD.replace("provider: acme", "provider: beta").replace("name: Acme", ""))
    message = _load(tmp_path, (tmp_path / "acme.yaml").read_text())
    assert "acme.yaml" in message and "beta.yaml" in message


def test_yaml_python_tags_are_refused_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = GOOD.replace("name: Acme", f"name: !!python/object/apply:os.system ['touch {marker}']")
    message = _load(tmp_path, text)
    assert "acme.yaml:3: YAML syntax error" in message and not marker.exists()
