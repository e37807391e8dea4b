"""Widgets the pages share: a number input bound to the URL under its short key."""

from __future__ import annotations

import math
from typing import Any, Literal

import streamlit as st

from app_pages._params import Bounded


def bound_number(
    key: str,
    spec: Bounded,
    default: float,
    step: float,
    help: str,
    fmt: str | None = None,
    container: Any = None,
) -> float:
    """A number input in ``spec``'s range whose value lives in the URL as ``key``."""
    kind = spec.kind
    value: float = (container or st).number_input(
        spec.label,
        min_value=kind(spec.min),
        max_value=kind(spec.max),
        value=kind(default),
        step=kind(step),
        format=fmt,
        key=key,
        bind=url_bind(key),
        help=help,
    )
    return value


def url_bind(key: str) -> Literal["query-params"] | None:
    """How a number input keyed ``key`` binds to the URL: not at all in a view whose link holds an infinite
    number for it (and the link loses it). Streamlit seeds a whole-number input from the link with
    ``int(float(text))``, which raises on ``inf`` instead of falling back to the default as it does for other
    values out of range; the page has named the parameter already (``check_params``)."""
    raw = st.query_params.get(key)
    try:
        infinite = raw is not None and math.isinf(float(raw))
    except ValueError:
        infinite = False
    if not infinite:
        return "query-params"
    del st.query_params[key]
    return None
