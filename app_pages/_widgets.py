"""Widgets the pages share: a number input bound to the URL under its short key, and a volume or token count
typed as people type it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import streamlit as st

from app_pages._params import Bounded
from calculator.catalog.limits import Limit
from calculator.catalog.quantity import QuantityError, plain, read_quantity


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


TYPED_HELP = " Type it as you would say it: 3000000, 3,000,000, 3M, 2.5k or 3e6."


def quantity_input(
    key: str,
    label: str,
    default: float,
    help: str,
    limit: Limit,
    container: Any = None,
    disabled: bool = False,
    whole: bool = True,
    on_typed: Callable[[], None] | None = None,
) -> str:
    """A volume or token count typed as text (``3M``, ``2.5k``, ``1,000,000``), bound to the URL as ``key``.

    Returns the text as typed; the page reads it with :func:`calculator.catalog.quantity.read_quantity`
    and shows its message instead of figures for another number. A number typed short is written back as
    digits once read (the field and the link then say ``3000000``, which any reader takes).
    """
    held = st.session_state.get(key)
    if held is not None and not isinstance(held, str):  # a page or a scenario set the number itself
        st.session_state[key] = plain(held)
    text: str = (container or st).text_input(
        label,
        value=plain(default),
        key=key,
        bind="query-params",
        help=help + TYPED_HELP,
        on_change=_written_back,
        args=(key, limit, whole, on_typed),
        disabled=disabled,
    )
    return text


def _written_back(key: str, limit: Limit, whole: bool, on_typed: Callable[[], None] | None = None) -> None:
    if on_typed is not None:
        on_typed()
    try:
        value = read_quantity(str(st.session_state.get(key, "")), limit, whole=whole)
    except QuantityError:
        return  # kept as typed: the page quotes it in its message
    st.session_state[key] = plain(value)


_UNREAD = "_unread_quantities"
"""Session key: this run's messages for volume and token fields that hold no number (see :func:`stop_if_unread`)."""


def bound_quantity(
    key: str, spec: Bounded, default: float, help: str, limit: Limit, container: Any = None, disabled: bool = False
) -> float:
    """A volume or token count in ``spec``'s field, typed as people type it, bound to the URL as ``key``.

    Text that is no number in ``limit`` is not priced as another: its message waits for
    :func:`stop_if_unread`, which the page calls before its figures (the inputs below still show, so
    nothing else the user set is lost), and the default returned meanwhile is never shown.
    """
    whole = spec.kind is int
    text = quantity_input(key, spec.label, default, help, limit, container, disabled, whole)
    try:
        return read_quantity(text, limit, whole=whole)
    except QuantityError as exc:
        where = f"URL parameter `{key}` ({spec.label})" if st.query_params.get(key) == text else spec.label
        st.session_state.setdefault(_UNREAD, []).append(f"{where}: {exc}")
        return default


def stop_if_unread() -> None:
    """Before a page's figures: each volume or token field that holds no number, named with its range, and
    no figures (none would be for what the field shows)."""
    unread: list[str] = st.session_state.pop(_UNREAD, [])
    if unread:
        for message in unread:
            st.error(message)
        st.stop()
