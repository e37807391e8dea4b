"""The one-page PDF summary without overlaps (issue 25, part 3), read back with pdfplumber: every word stays on
the page and inside the box it was written in, no two words overlap, no word runs into a chart and no chart into
another, nothing is cut short with "…", and the figures, offers and models print whole, for every bundled preset
in dollars, euros and yen, and for the longest offer and model names the price sheets hold."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
from collections.abc import Iterator
from typing import Any

import pdfplumber
import pytest

from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, ServerlessOffer
from calculator.errors import InputError
from calculator.present.money import format_money
from calculator.present.report import summary_pdf
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import Catalogs, Comparison, compare
from calculator.pricing.resolve import resolve
from calculator.scenario.model import Scenario, in_currency, list_presets, load_preset

from .clock import TODAY

EPS = 0.25
"""Points two boxes may share at an edge (a glyph's box touching the next line's) without overlapping."""
Box = tuple[float, float, float, float]  # x0, top, x1, bottom


def _priced(scenario: Scenario, cat: Catalogs) -> Comparison:
    """Priced as the Compare page does: 'cheapest' searched, an option that cannot be priced left out."""
    dated = scenario.model_copy(update={"as_of": scenario.as_of or TODAY})
    with contextlib.suppress(InputError):  # a search that finds nothing leaves the option to resolve, as the page does
        dated, _ = with_cheapest_offers(dated, cat)
    return compare(resolve(dated, cat, drop_unpriceable=True))


def _longest(cat: Catalogs, kind: str) -> tuple[str, Any]:
    """The offer of ``kind`` on sale today with the longest name (its id, and its model for a serverless one)."""
    found = [
        (sheet.provider, offer)
        for sheet, offer in cat.prices.offers(kind)
        if not offer.retired_on(TODAY) and any(v.effective <= TODAY for v in offer.versions)
    ]

    def length(pair: tuple[str, Any]) -> int:
        provider, offer = pair
        return len(provider) + len(offer.id) + len(getattr(offer, "model", None) or "")

    return max(found, key=length)


def _longest_names(cat: Catalogs) -> Scenario:
    seed = load_preset("coding-agent")
    sl_provider, sl = _longest(cat, "serverless")
    ded_provider, ded = _longest(cat, "dedicated")
    vm_provider, vm = _longest(cat, "gpu_vm")
    assert isinstance(sl, ServerlessOffer) and isinstance(ded, DedicatedOffer) and isinstance(vm, GpuVmOffer)
    long_name = "Acme Corporation's customer-support assistant for the EMEA region, priced with their platform team"
    return seed.model_copy(
        update={
            "name": long_name,
            "serverless": seed.serverless.model_copy(update={"provider": sl_provider, "model": sl.id}),  # type: ignore[union-attr]
            "dedicated": seed.dedicated.model_copy(update={"provider": ded_provider, "offer": ded.id}),  # type: ignore[union-attr]
            "gpu_vm": seed.gpu_vm.model_copy(update={"provider": vm_provider, "offer": vm.id}),  # type: ignore[union-attr]
        }
    )


def _cases() -> Iterator[Any]:
    for preset in list_presets():
        for currency in ("USD", "EUR", "JPY"):
            yield pytest.param(preset, currency, id=f"{preset}-{currency}")
    yield pytest.param("longest-names", "EUR", id="longest-offer-and-model-names")


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] - EPS and b[0] < a[2] - EPS and a[1] < b[3] - EPS and b[1] < a[3] - EPS


def _inside(inner: Box, outer: Box) -> bool:
    return (
        inner[0] >= outer[0] - EPS
        and inner[1] >= outer[1] - EPS
        and inner[2] <= outer[2] + EPS
        and inner[3] <= outer[3] + EPS
    )


def _box(item: dict[str, Any]) -> Box:
    return (float(item["x0"]), float(item["top"]), float(item["x1"]), float(item["bottom"]))


def _pairs_overlapping(boxes: list[tuple[Box, str]]) -> list[tuple[str, str]]:
    """Every two boxes that overlap (a sweep down the page: only boxes whose heights meet are compared)."""
    ordered = sorted(boxes, key=lambda b: b[0][1])
    found = []
    for i, (a, label_a) in enumerate(ordered):
        for b, label_b in ordered[i + 1 :]:
            if b[1] >= a[3] - EPS:
                break
            if _overlap(a, b):
                found.append((label_a, label_b))
    return found


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(("preset", "currency"), list(_cases()))
def test_the_summary_keeps_every_text_and_chart_in_its_own_place(
    preset: str, currency: str, catalogs: Catalogs
) -> None:
    scenario = _longest_names(catalogs) if preset == "longest-names" else load_preset(preset)
    result = _priced(in_currency(scenario, currency), catalogs)  # type: ignore[arg-type]
    written = summary_pdf(result, catalogs, generated=TODAY)

    with pdfplumber.open(io.BytesIO(written)) as pdf:
        assert len(pdf.pages) == 1
        page = pdf.pages[0]
        words = page.extract_words(keep_blank_chars=False, use_text_flow=False)
        pictures = [_box(i) for i in page.images]
        frames = [_box(r) for r in page.rects if float(r["width"]) > 20 and float(r["height"]) > 10]
        text = page.extract_text()
        page_box: Box = (0.0, 0.0, float(page.width), float(page.height))

    assert words and len(pictures) == (3 if result.turn is not None else 1)
    boxes = [(_box(w), str(w["text"])) for w in words]
    off_page = [label for box, label in boxes if not _inside(box, page_box)]
    assert not off_page, f"words off the page: {off_page[:10]}"
    assert not _pairs_overlapping(boxes), f"words printed over each other: {_pairs_overlapping(boxes)[:10]}"
    assert not _pairs_overlapping([(p, f"chart {i}") for i, p in enumerate(pictures)]), "charts over each other"
    into_charts = [label for box, label in boxes for p in pictures if _overlap(box, p)]
    assert not into_charts, f"words printed over a chart: {into_charts[:10]}"
    for frame in frames:  # the metric boxes: a word meeting one is wholly inside it
        crossing = [label for box, label in boxes if _overlap(box, frame) and not _inside(box, frame)]
        assert not crossing, f"words running out of their box: {crossing[:10]}"
    assert "…" not in text and "..." not in text

    whole = _squeezed(text)
    expected = [f"LLM inference cost: {result.scenario.name}"]
    for opt in result.options:
        expected += [format_money(opt.monthly, result.scenario.currency), f"{opt.provider} {opt.offer}"]
        expected += [opt.model] if opt.model else []
    missing = [e for e in expected if _squeezed(e) not in whole]
    assert not missing, f"cut short or missing: {missing}"


def test_the_longest_names_are_long_enough_to_wrap(catalogs: Catalogs) -> None:
    """The case above is a real test of wrapping: its names are longer than a metric box is wide."""
    scenario = _longest_names(catalogs)
    assert scenario.serverless is not None and len(scenario.serverless.model) > 20
    assert dt.date.today() == TODAY  # the clock is frozen, so 'on sale today' is the same set on any day
