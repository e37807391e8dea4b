"""An Altair chart as the Vega-Lite spec a page draws, built without re-checking it against the schema; and
:class:`Spec`, a chart written as that spec directly.

Altair checks every spec against the Vega-Lite JSON schema when it is turned into a dict; on the Compare
page that was about a third of each rerun. The chart builders' tests call ``chart.to_dict()``, which
still checks, so a malformed chart fails there rather than on every render. The chart's data frames go
into the spec's ``datasets`` as they are (a page sends them as Arrow, as ``st.altair_chart`` would),
not through Altair's JSON conversion of every row.

The two charts every Compare rerun draws (the turn and the volume curve) are written as Vega-Lite dicts
with their rows inline (:class:`Spec`): building them through Altair's objects, turning those into a
dict and sending their frames as Arrow was a quarter of a rerun. Their tests check them against the
schema, as Altair would.

No streamlit import here: a page passes the result to ``st.vega_lite_chart``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import pickle
import threading
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd
from altair.utils.schemapi import UndefinedType

__all__ = ["ALTAIR_GLOBALS", "Spec", "layer", "rows", "vega_lite_spec"]

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


@dataclass(frozen=True)
class Spec:
    """A Vega-Lite chart written as its JSON dict, used where an Altair chart would be: ``properties`` sets
    top-level keys (the PDF's sizes), ``to_dict`` checks it against the schema as Altair's does, and
    ``to_json`` is what the PDF renders."""

    spec: dict[str, Any]

    def properties(self, **props: Any) -> Spec:
        return Spec({**self.spec, **props})

    def to_dict(self, validate: bool = True) -> dict[str, Any]:
        if validate:
            from altair.utils.schemapi import validate_jsonschema
            from altair.vegalite.v6.schema import load_schema

            validate_jsonschema(self.spec, load_schema())
        return copy.deepcopy(self.spec)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.spec, **kwargs)


def rows(columns: dict[str, Sequence[Any] | Any], length: int | None = None) -> list[dict[str, Any]]:
    """A chart's inline rows from columns (a list each, or one value for every row); a number that is not
    finite is left empty (JSON has no NaN, and a chart leaves out what it cannot draw)."""
    n = length if length is not None else max(len(v) for v in columns.values() if isinstance(v, list | tuple))
    # column by column, then zipped: a dict built per cell by index was most of a volume chart's rerun
    cleaned = [
        [_json_value(x) for x in v[:n]] if isinstance(v, list | tuple) else [_json_value(v)] * n
        for v in columns.values()
    ]
    if any(len(c) < n for c in cleaned):
        raise IndexError("a chart column is shorter than its rows")
    keys = list(columns)
    return [dict(zip(keys, cells, strict=True)) for cells in zip(*cleaned, strict=False)]


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def layer(data: Iterable[dict[str, Any]], mark: dict[str, Any], encoding: dict[str, Any]) -> dict[str, Any]:
    """One layer of a :class:`Spec` with its rows inline."""
    return {"data": {"values": list(data)}, "mark": mark, "encoding": encoding}


def vega_lite_spec(chart: alt.TopLevelMixin | Spec) -> dict[str, Any]:
    """The chart's Vega-Lite spec with its data frames under ``datasets``, not validated."""
    if isinstance(chart, Spec):
        return dict(chart.spec)  # a page may add to the top level; the rows are not copied
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
