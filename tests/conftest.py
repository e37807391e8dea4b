from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import time_machine
from hypothesis import settings

from calculator.catalog.parse_cache import CACHE_ENV
from calculator.catalog.prices import PriceCatalog, load_price_sheets
from calculator.pricing.compare import Catalogs, load_catalogs

from . import clock

# The same examples on every run, so the suite's answer does not depend on the day it runs; set
# HYPOTHESIS_PROFILE=explore to search new ones (a failure found there becomes an example of its own).
settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

_OWN_CACHE = pytest.StashKey[str]()
_TRAVEL = pytest.StashKey[time_machine.travel]()
_FROZEN_CLOCK_SITE = Path(__file__).parent / "_frozen_clock"


def pytest_configure(config: pytest.Config) -> None:
    """The run's clock stands at ``clock.NOW`` before collection (module-level dates included), and so does
    every Python process the tests start (through ``_frozen_clock/sitecustomize.py`` on PYTHONPATH). The
    parsed-catalogue cache of this run lives in a folder of its own, not the user's ~/.cache, and is removed
    at the end."""
    travel = time_machine.travel(clock.NOW, tick=True)
    travel.start()
    config.stash[_TRAVEL] = travel
    os.environ[clock.ENV] = clock.NOW.isoformat()
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_FROZEN_CLOCK_SITE), os.environ.get("PYTHONPATH")]))
    if CACHE_ENV not in os.environ:
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="inference-calc-cache-")
        config.stash[_OWN_CACHE] = os.environ[CACHE_ENV]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks by file for ``make test-fast``, which leaves out the pages (``app``), the browser (``e2e``) and
    the fuzz campaign (``fuzz``); app tests that live among core tests carry ``@pytest.mark.app`` themselves."""
    for item in items:
        name = item.path.name
        if name.startswith("test_app"):
            item.add_marker(pytest.mark.app)
        elif name == "test_e2e.py":
            item.add_marker(pytest.mark.e2e)
        elif name == "test_fuzz_cli.py":
            item.add_marker(pytest.mark.fuzz)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_OWN_CACHE, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(CACHE_ENV, None)
    travel = config.stash.get(_TRAVEL, None)
    if travel is not None:
        travel.stop()


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
    """Each app test starts from cold caches, so one test's data cannot leak into the next. A core test never
    imported Streamlit, so it has no cache to clear and does not pay for the import."""
    if "streamlit" not in sys.modules:
        yield
        return
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
