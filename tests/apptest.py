"""Opening one page of the app in Streamlit's AppTest, as every page test does."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import AlertBase, Markdown

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def open_page(page: str, timeout: float = 60, **params: str) -> AppTest:
    """Run the app with ``params`` in the URL, switch to ``app_pages/<page>.py`` and check it ran clean."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def text_of(elements: Iterable[AlertBase | Markdown]) -> str:
    """The words of alerts or markdown-like elements (``at.error``, ``at.caption``, ...) as one string."""
    return " ".join(e.value for e in elements)


def table_with(at: AppTest, *columns: str) -> pd.DataFrame:
    """The one table on the page whose header has all these columns: a table found by what it shows, not by
    where it stands (a warning's table above it does not move it)."""
    found = [d.value for d in at.dataframe if set(columns) <= {str(c) for c in d.value.columns}]
    assert len(found) == 1, f"{len(found)} tables with the columns {columns}"
    return found[0]
