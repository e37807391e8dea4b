from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from calculator.catalog.parse_cache import CACHE_ENV
from calculator.catalog.prices import PriceCatalog, load_price_sheets
from calculator.pricing.compare import Catalogs, load_catalogs

_OWN_CACHE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """The parsed-catalogue cache of this run (and of the commands it starts) lives in a folder of its own,
    not the user's ~/.cache, and is removed at the end."""
    if CACHE_ENV not in os.environ:
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="inference-calc-cache-")
        config.stash[_OWN_CACHE] = os.environ[CACHE_ENV]


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_OWN_CACHE, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(CACHE_ENV, None)


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
