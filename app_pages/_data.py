"""Cached loading of the data files for the pages (the cache lives here, in the UI layer)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import streamlit as st

from calculator.catalog.datafile import DATA_DIR, DataFileError
from calculator.pricing.compare import Catalogs, load_catalogs
from calculator.scenario.model import Scenario, list_presets, load_preset

if TYPE_CHECKING:  # the search is imported when a scenario asks for it, not before the first costs show
    from calculator.pricing.cheapest import OfferPick

T = TypeVar("T")


_LOOKED: dict[tuple[str, ...], tuple[float, str]] = {}
_LOOK_AGAIN_AFTER_S = 2.0
"""A fingerprint is taken again after this long: listing four folders was read three times on every rerun,
and an edited data file that shows two seconds later is as good as one that shows at once."""


def _fingerprint(*dirs: str) -> str:
    """Sorted (name, mtime) of the data files, so editing a YAML file reloads it."""
    now = time.monotonic()
    seen = _LOOKED.get((str(DATA_DIR), *dirs))
    if seen is not None and now - seen[0] < _LOOK_AGAIN_AFTER_S:
        return seen[1]
    parts = []
    for d in dirs:
        for p in sorted((DATA_DIR / d).glob("*.yaml")):
            parts.append(f"{d}/{p.name}:{p.stat().st_mtime_ns}")
    found = "|".join(parts)
    _LOOKED[(str(DATA_DIR), *dirs)] = (now, found)
    return found


@st.cache_resource(show_spinner=False)
def _catalogs(fingerprint: str) -> Catalogs:
    return load_catalogs()


def catalogs() -> Catalogs:
    """The price sheets, GPU specs and throughput records; a broken file stops the page with file:line."""
    try:
        return _catalogs(_fingerprint("price_sheets", "gpu_specs", "measurements", "models"))
    except DataFileError as exc:
        st.error("A data file could not be read. Fix it and reload the page:")
        st.code("\n".join(exc.lines), language=None)
        st.stop()


@st.cache_resource(show_spinner=False)
def _presets(fingerprint: str) -> dict[str, Scenario]:
    found = {}
    for name in list_presets():
        try:
            found[name] = load_preset(name)
        except (DataFileError, ValueError):
            continue
    return found


def presets() -> dict[str, Scenario]:
    return _presets(_fingerprint("scenarios"))


def priced_key(scenario: Scenario, work_cat: Catalogs, today: dt.date) -> str | None:
    """Everything a priced scenario's results depend on, as text: the scenario, the data files, the
    measurement records the page added to the bundled ones, and today (the price date when none is set).
    None when the catalogues are not the bundled ones plus added records: then nothing is kept."""
    cat = catalogs()
    if not (work_cat.prices is cat.prices and work_cat.gpus is cat.gpus and work_cat.models is cat.models):
        return None
    bundled = {id(r) for r in cat.records.records}
    added = [r.model_dump_json() for r in work_cat.records.records if id(r) not in bundled]
    files = _fingerprint("price_sheets", "gpu_specs", "measurements", "models")
    return "\n".join([scenario.model_dump_json(), *added, files, today.isoformat()])


@st.cache_data(max_entries=64, show_spinner=False)
def _kept(name: str, key: str, _make: Callable[[], Any]) -> Any:
    return _make()


def kept(name: str, key: str | None, make: Callable[[], T]) -> T:
    """``make()``, computed once for each ``key`` and kept for the next reruns (any session's) while it is
    among the 64 latest; ``key`` must name every input of ``make`` (None: computed every time). What comes
    back is a copy, so a caller may change it."""
    if key is None:
        return make()
    return cast(T, _kept(name, key, make))


_PICKS: dict[str, tuple[dict[str, Any], tuple[OfferPick, ...]]] = {}
_PICKS_KEPT = 64


def cheapest_picked(
    scenario: Scenario, work_cat: Catalogs, today: dt.date, key: str | None = None
) -> tuple[Scenario, tuple[OfferPick, ...]]:
    """The scenario as priced: each ``offer: cheapest`` the deployment search's pick (Deploy's ranking).

    The picks are kept in this process for the next reruns (any session's, the 64 latest) under everything
    the search reads: the scenario without its serverless offer when that offer runs the same model (a
    sales engineer trying another API for GLM-5.3 does not move the GPU options), the data files and today.
    Frozen models, so shared rather than copied. ``key``: the page's :func:`priced_key`, when it has one."""
    asked = [k for k in ("dedicated", "gpu_vm") if (c := getattr(scenario, k)) is not None and c.cheapest]
    if not asked:
        return scenario, ()
    from calculator.pricing.cheapest import with_cheapest_offers

    base = key if key is not None else priced_key(scenario, work_cat, today)
    if base is None:
        return with_cheapest_offers(scenario, work_cat)
    found = _PICKS.get(base)
    if found is None:
        priced, picks = with_cheapest_offers(scenario, work_cat)
        found = ({k: getattr(priced, k) for k in asked}, picks)
        if len(_PICKS) >= _PICKS_KEPT:
            _PICKS.pop(next(iter(_PICKS)))
        _PICKS[base] = found
    return scenario.model_copy(update=found[0]), found[1]
