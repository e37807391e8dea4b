from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from calculator.catalog.prices import PriceCatalog, load_price_sheets
from calculator.pricing.compare import Catalogs, load_catalogs

SEED_DATE = dt.date(2026, 10, 30)
"""The seed article read its GLM-5.3 prices on 30 October 2026."""


@pytest.fixture(scope="session")
def catalog() -> PriceCatalog:
    return load_price_sheets()


@pytest.fixture(scope="session")
def catalogs() -> Catalogs:
    return load_catalogs()


@pytest.fixture(autouse=True)
def _fresh_streamlit_caches() -> Iterator[None]:
    """Each app test starts from cold caches, so one test's data cannot leak into the next."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
