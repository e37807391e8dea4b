"""Widgets the pages share: a number input bound to the URL under its short key."""

from __future__ import annotations

from typing import Any

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
        bind="query-params",
        help=help,
    )
    return value
