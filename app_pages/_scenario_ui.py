"""Widgets the pages share for the session's scenario: adding the user's measurement records to it."""

from __future__ import annotations

import datetime as dt

import streamlit as st
from pydantic import ValidationError

from app_pages import _state, _words
from app_pages._data import catalogs, presets
from calculator.capacity.sizing import missing_for_sizing
from calculator.catalog.measurements import ThroughputRecord
from calculator.errors import InputError
from calculator.pricing.compare import Catalogs
from calculator.pricing.resolve import with_model_params
from calculator.scenario.model import Scenario


def _usable(record: ThroughputRecord) -> str | None:
    """Why a record cannot size GPUs, in the page's words, or None when it can."""
    missing = missing_for_sizing(record)
    if not missing:
        return None
    if "model" in missing:  # a model the app knows brings its parameter counts
        missing = [f for f in missing if not f.startswith("params_")]
        return f"does not state {_words.record_fields(missing)}; give them in the sidebar before it sizes GPUs"
    return f"does not state {_words.record_fields(missing)}; choose a model this app knows, which brings them"


def _add(records: tuple[ThroughputRecord, ...], key: str) -> None:
    size_from = st.session_state.get(f"{key}_size")
    _state.add_records(st.session_state, presets(), records, size_from if size_from else None)
    st.session_state[f"{key}_added"] = (len(records), size_from)


def _remove() -> None:
    _state.remove_records(st.session_state, catalogs(), presets())


def use_records(records: list[ThroughputRecord], key: str) -> None:
    """Offer ``records`` (imported or measured on this page) to the scenario: kept as its evidence, one of them
    chosen to size the Compare page's GPU options."""
    ss = st.session_state
    held = _state.session_evidence(ss, ss.get("uploaded"))
    usable, why_not = [], []
    for found in records:
        record = with_model_params(found, catalogs())
        reason = _usable(record)
        (why_not.append(f"`{record.id}`: {reason}") if reason else usable.append(record))
    st.subheader("Use them in the scenario")
    if not records:
        pass
    elif usable:
        ids = [r.id for r in usable]
        st.selectbox(
            "Size the Compare page's GPU options from",
            ids,
            key=f"{key}_size",
            help="One load level of your setup; with a latency target on the Compare page (Advanced) the busiest "
            "level of the same setup that meets it is used instead.",
        )
        st.button(
            f"Add {len(usable)} record(s) to the scenario",
            key=f"{key}_add",
            type="primary",
            icon=":material/playlist_add:",
            on_click=_add,
            args=(tuple(usable), key),
            help="The scenario keeps them as its evidence (its file, its PDF and its link carry them); a record with "
            "the same id is replaced.",
        )
    else:
        st.caption("None of these records can size GPUs yet.")
    if why_not:
        with st.expander(f"Records that cannot size GPUs ({len(why_not)})", expanded=not usable):
            st.markdown("\n".join(f"- {line}" for line in why_not))
    added = ss.pop(f"{key}_added", None)
    if added:
        st.success(f"Added {added[0]} record(s) to the scenario; its GPU options are sized from `{added[1]}`.")
    if held.records:
        rec = ss.get("rec")
        sizing = f" The Compare page sizes its GPU options from `{rec}`." if rec in {r.id for r in held.records} else ""
        with st.container(horizontal=True, vertical_alignment="center"):
            st.caption(f"The scenario holds {len(held.records)} of your records.{sizing}")
            st.page_link("app_pages/compare.py", label="Open Compare", icon=":material/compare_arrows:")
            st.button("Remove them", key=f"{key}_rm", on_click=_remove, icon=":material/delete:")


def link_scenario(scenario: Scenario | None, cat: Catalogs | None = None) -> None:
    """Carry the session's scenario in this page's link (None: the page does not show it, so take it out)."""
    ss = st.session_state
    if scenario is None:
        _state.write_link(ss, st.query_params, _state.SC, None)
        return
    too_large = _state.write_link(ss, st.query_params, _state.SC, _state.shareable(scenario, cat or catalogs()))
    _state.write_link(ss, st.query_params, _state.EV, None)  # the scenario carries its evidence
    if too_large:
        st.warning(too_large)


def session_scenario() -> tuple[Scenario, Catalogs] | None:
    """The Compare page's scenario as it prices it, or None when its inputs are not allowed (that page says why)."""
    try:
        return _state.current_compare_scenario(st.session_state, catalogs(), presets(), dt.date.today())
    except (ValidationError, InputError):
        return None


def read_links() -> list[str]:
    """Adopt the scenario or evidence a link carries (see :func:`app_pages._state.read_links`)."""
    return _state.read_links(st.session_state, st.query_params, catalogs(), presets(), dt.date.today())
