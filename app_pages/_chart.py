"""Drawing an Altair chart on a page without Altair's schema check on every rerun."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import altair as alt
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app_pages._data import kept
from calculator.present.chart_spec import Spec, vega_lite_spec

# Altair also checks each part of a chart against the schema as the part is built ("debug mode"); the page
# shows charts the chart tests have checked whole, so the app process skips it.
alt.utils.schemapi.disable_debug_mode()

Width = int | Literal["stretch", "content"] | None


def altair_chart(chart: alt.TopLevelMixin | Spec, width: Width = None, where: DeltaGenerator | None = None) -> None:
    """What ``where.altair_chart(chart, width=width)`` draws, from a spec Altair does not re-check against the
    Vega-Lite schema (a third of a Compare rerun; the chart tests check the specs)."""
    (where or st).vega_lite_chart(spec=vega_lite_spec(chart), width=width)


def kept_chart(
    name: str,
    key: str | None,
    build: Callable[[], alt.TopLevelMixin | Spec],
    width: Width = None,
    where: DeltaGenerator | None = None,
) -> None:
    """:func:`altair_chart` of ``build()``, its spec kept for the next reruns under ``key`` (which names every
    input of ``build``; None: built every time), so a rerun that changes something else does not rebuild it."""
    (where or st).vega_lite_chart(spec=kept(name, key, lambda: vega_lite_spec(build())), width=width)
