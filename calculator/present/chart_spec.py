"""An Altair chart as the Vega-Lite spec a page draws, built without re-checking it against the schema.

Altair checks every spec against the Vega-Lite JSON schema when it is turned into a dict; on the Compare
page that was about a third of each rerun. The chart builders' tests call ``chart.to_dict()``, which
still checks, so a malformed chart fails there rather than on every render. The chart's data frames go
into the spec's ``datasets`` as they are (a page sends them as Arrow, as ``st.altair_chart`` would),
not through Altair's JSON conversion of every row.

No streamlit import here: a page passes the result to ``st.vega_lite_chart``.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from contextlib import nullcontext
from typing import Any

import altair as alt
import pandas as pd
from altair.utils.schemapi import UndefinedType

__all__ = ["ALTAIR_GLOBALS", "vega_lite_spec"]

ALTAIR_GLOBALS = threading.Lock()
"""Altair's data transformer and theme are settings of the whole process; whoever changes them for one
conversion (here, or the PDF summary's charts in a download's thread) holds this lock meanwhile."""


def _named_frames(data: Any, frames: dict[str, Any]) -> dict[str, str]:
    """Altair data transformer: keep a data frame under a name hashed from its content."""
    if isinstance(data, pd.DataFrame):
        name = f"frame-{hashlib.blake2b(pickle.dumps(data), digest_size=12).hexdigest()}"
    else:
        name = f"data-{id(data):x}"
    frames[name] = data
    return {"name": name}


alt.data_transformers.register("named_frames", _named_frames)


def vega_lite_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite spec with its data frames under ``datasets``, not validated."""
    frames: dict[str, Any] = {}
    with ALTAIR_GLOBALS:
        # Altair's default theme only adds a 300x300 default view size that every chart here overrides
        theme = alt.theme.enable("none") if alt.theme.active == "default" else nullcontext()
        with theme, alt.data_transformers.enable("named_frames", frames=frames):
            if isinstance(chart, alt.LayerChart) and isinstance(chart.data, UndefinedType):
                spec = _layers_dict(chart)
            else:
                spec = chart.to_dict(validate=False)
    spec["datasets"] = {**spec.get("datasets", {}), **frames}
    return spec


def _layers_dict(chart: alt.LayerChart) -> dict[str, Any]:
    """What ``chart.to_dict(validate=False)`` gives for layers that each carry their own data, without the
    copy of the whole chart Altair makes first (to set the top level's data, which such a chart has none
    of): the copy builds the layer chart again, deep-copying every layer twice. tests/test_chart_spec.py
    holds the two equal."""
    context: dict[str, Any] = {"datasets": {}, "top_level": False, "pre_transform": False}
    spec: dict[str, Any] = alt.SchemaBase.to_dict(chart, validate=False, context=context)
    spec["$schema"] = alt.SCHEMA_URL
    if context["datasets"]:
        spec.setdefault("datasets", {}).update(context["datasets"])
    return spec
