"""Cached loading of the data files for the pages (the cache lives here, in the UI layer)."""

from __future__ import annotations

import streamlit as st

from calculator.catalog.datafile import DATA_DIR, DataFileError
from calculator.pricing.compare import Catalogs, load_catalogs
from calculator.scenario.model import Scenario, list_presets, load_preset


def _fingerprint(*dirs: str) -> str:
    """Sorted (name, mtime) of the data files, so editing a YAML file reloads it."""
    parts = []
    for d in dirs:
        for p in sorted((DATA_DIR / d).glob("*.yaml")):
            parts.append(f"{d}/{p.name}:{p.stat().st_mtime_ns}")
    return "|".join(parts)


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
