"""Plan: load over the day, the cheapest hybrid of owned GPUs and serverless overflow, and growth.

A preset scenario, a load profile (preset shape, the scenario's own traffic, or a request log's
timestamps) and a within-hour burst; then the ways to buy under that profile (self-hosting always
on and autoscaled), the cheapest hybrid plan, and month-by-month growth. Every scalar input has a
short stable key bound to the URL, checked on the way in. All numbers come from ``calculator``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

import streamlit as st
from pydantic import ValidationError

from app_pages._data import catalogs, presets
from app_pages._params import NumberParam, check_params
from app_pages._widgets import bound_number
from calculator.catalog.datafile import validation_lines
from calculator.errors import InputError
from calculator.planning.growth import MAX_MONTHS, MIN_MONTHS, GrowthPlan, grow
from calculator.planning.hybrid import HybridResult, Owned, hybrid_plan
from calculator.planning.load_profile import (
    LoadProfile,
    preset_profile,
    profile_costs,
    profile_from_trace,
    profile_from_traffic,
)
from calculator.present import plan_charts as pc
from calculator.present.money import format_money
from calculator.pricing.compare import OPTION_LABELS, Catalogs
from calculator.scenario.model import Scenario

BIND: Literal["query-params"] = "query-params"
# Options of URL-bound selects are what they show (the URL stores the shown text), so they read well.
SCENARIO_TRAFFIC = "the scenario's traffic"
TRACE = "from a request log"
PROFILES = {
    SCENARIO_TRAFFIC: None,
    "business hours": "business_hours",
    "consumer evenings": "consumer_evenings",
    "flat": "flat",
    TRACE: None,
}
DAILY = {"flat": "flat", "business hours": "business_hours", "consumer evenings": "consumer_evenings"}
OWNED: dict[str, Owned] = {"self-hosted GPUs": "self_hosted", "dedicated endpoint": "dedicated"}
SCALING = {"as the scenario says": None, "always on": False, "autoscaled": True}
FIELDS = {  # the core names inputs by their command-line flag; the page names its own fields
    "--profile": "Request log",
    "--burst": "Within-hour burst",
    "--months": "Months",
    "--growth-per-month": "Growth per month",
    "--start-turns-per-month": "Turns per month",
    "--percentile": "Percentile",
    "scenario": "Scenario",
}
NUMBERS = {
    "pl_vol": NumberParam("Turns per month (0: the scenario's)", int, 0, 100_000_000_000),
    "pl_burst": NumberParam("Within-hour burst (0: automatic)", float, 0.0, 50.0),
    "pl_m": NumberParam("Months", int, MIN_MONTHS, MAX_MONTHS),
    "pl_g": NumberParam("Growth per month (%)", float, -50.0, 100.0),
}

cat: Catalogs = catalogs()
preset_map = presets()
ss = st.session_state

if not preset_map:
    st.title("Plan")
    st.info("No scenario presets could be read (scenarios/), so there is nothing to plan.")
    st.stop()

names = list(preset_map)
choices = {
    "pl_sc": names,
    "pl_prof": list(PROFILES),
    "pl_daily": list(DAILY),
    "pl_own": list(OWNED),
    "pl_scale": list(SCALING),
}
url_problems = check_params({k: st.query_params[k] for k in st.query_params}, NUMBERS, choices)


def number(key: str, default: float, step: float, help: str, fmt: str | None = None) -> float:
    return bound_number(key, NUMBERS[key], default, step, help, fmt)


def select(label: str, key: str, default: str, help: str) -> str:
    options = choices[key]
    chosen: str = st.selectbox(label, options, index=options.index(default), key=key, bind=BIND, help=help)
    return chosen


def field_error(exc: InputError) -> None:
    st.error(f"**{FIELDS.get(exc.field, exc.field)}**: {exc.message}")


@st.cache_data(show_spinner=False, max_entries=8)
def _trace_profile(data: bytes, name: str, daily: str) -> LoadProfile:
    """A profile from an uploaded log's timestamps (read from a temporary copy; the name keeps its suffix)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(data)
        return profile_from_trace(path, preset_profile(daily))


# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    scenario_name = select(
        "Scenario",
        "pl_sc",
        "coding-agent" if "coding-agent" in names else names[0],
        "A preset scenario (scenarios/): the workload, the offers and the self-hosting assumptions.",
    )
    base: Scenario = preset_map[scenario_name]
    turns_in = int(
        number(
            "pl_vol",
            0,
            1_000_000,
            f"Turns a month now. 0: the scenario's own, {base.traffic.turns_per_month:,}.",
            "%d",
        )
    )
    st.subheader("Load over the day")
    profile_choice = select(
        "Daily shape",
        "pl_prof",
        SCENARIO_TRAFFIC,
        "How the day's turns spread over its 24 hours. The scenario's traffic: flat over its active hours. "
        "The presets are illustrative shapes, not measurements; a request log gives your own.",
    )
    trace_file = None
    daily_choice = "flat"
    if profile_choice == TRACE:
        trace_file = st.file_uploader(
            "Request log with timestamps",
            type=["csv", "jsonl", "json", "gz"],
            key="pl_trace",
            help="CSV with a TIMESTAMP column (date-times, or seconds), or JSON Lines with a 'timestamp' key "
            "(date-times, or milliseconds). A day or more gives the daily shape; any length gives the burst.",
        )
        daily_choice = select(
            "Daily shape for a log shorter than a day",
            "pl_daily",
            "flat",
            "A log covering less than a day gives only the within-hour burst; this preset gives the day.",
        )
    burst_in = number(
        "pl_burst",
        0.0,
        0.1,
        "The busiest moment's request rate over the hour's mean. 0: automatic (a log's measured burst, the "
        "scenario's peak-to-average for its own traffic, 1 for a preset shape).",
        "%.2f",
    )
    st.subheader("Owned capacity")
    owned_choice = st.segmented_control(
        "Hybrid owns",
        list(OWNED),
        default="self-hosted GPUs",
        required=True,
        key="pl_own",
        bind=BIND,
        help="What carries the base load in the hybrid; the overflow goes to the scenario's serverless offer.",
    )
    scale_choice = select(
        "Self-hosted GPUs",
        "pl_scale",
        "as the scenario says",
        "Autoscaled: each hour runs only the GPUs its peak needs, billed per run of hours with start-up time. "
        "Always on: the busiest hour's GPUs all month. The table shows both.",
    )
    st.subheader("Growth")
    c1, c2 = st.columns(2)
    with c1:
        months = int(number("pl_m", 24, 1, f"Months to look ahead ({MIN_MONTHS} to {MAX_MONTHS}).", "%d"))
    with c2:
        growth_pct = number("pl_g", 5.0, 1.0, "Traffic growth each month, compounded (5 = 5% a month).", "%.1f")

# --- the inputs into a profile and a scenario ------------------------------------------------------
st.title("Plan for the day and the months ahead")
st.caption(
    "How load over the day changes what GPUs cost, whether owning part of the load and sending the rest to a "
    "serverless API beats every single option, and which option wins as traffic grows. The address bar is a "
    "link to these inputs (an uploaded log is not in it)."
)
for problem in url_problems:
    st.error(problem)

turns = turns_in or base.traffic.turns_per_month
autoscale = SCALING[scale_choice]
owned: Owned = OWNED[owned_choice or "self-hosted GPUs"]
try:
    if profile_choice == SCENARIO_TRAFFIC:
        profile = profile_from_traffic(base.traffic)
    elif profile_choice == TRACE:
        if trace_file is None:
            st.info("Upload a request log with timestamps in the sidebar (.csv, .jsonl, .json or .gz).")
            st.stop()
        profile = _trace_profile(trace_file.getvalue(), trace_file.name, DAILY[daily_choice])
    else:
        profile = preset_profile(PROFILES[profile_choice] or "flat")
    if burst_in:
        if burst_in < 1:
            raise InputError("--burst", f"{burst_in:g} is below 1; the busiest moment is at least the hour's mean")
        profile = profile.with_burst(burst_in)
    result: HybridResult | None = None
    hybrid_problem: InputError | None = None
    try:
        result = hybrid_plan(base, cat, profile, owned=owned, autoscale=autoscale, turns_per_month=turns)
        costs = result.pure
    except InputError as exc:
        if exc.field != "scenario":
            raise
        hybrid_problem = exc
        costs = profile_costs(base, cat, profile, autoscale=autoscale, turns_per_month=turns)
    growth: GrowthPlan = grow(pc.growth_scenario(base, profile, turns), cat, months, growth_pct / 100, turns)
except InputError as exc:
    field_error(exc)
    st.stop()
except ValidationError as exc:
    st.error("These inputs are not allowed:\n\n" + "\n".join(f"- {x}" for x in validation_lines(exc, "input")))
    st.stop()

cur = base.currency
single = pc.cheapest_single(costs)

# --- answers first ----------------------------------------------------------------------------------
with st.container(horizontal=True):
    st.metric(
        "Peak-to-average",
        f"{profile.peak_to_average:.2f}",
        help="The busiest moment's request rate over the month's mean rate (quiet days included): what GPUs "
        "kept on all month are sized for.",
        border=True,
    )
    if single is not None:
        st.metric(
            "Cheapest single option",
            format_money(single[1].monthly, cur),
            help=f"{single[0]}, per month under this profile.",
            border=True,
        )
    if result is not None:
        st.metric(
            "Cheapest hybrid",
            f"p{result.best.percentile:g}",
            help="Owned capacity sized for this percentile hour of the day; the rest overflows to serverless. "
            f"Percentiles {pc.percentile_text(result)} all cost the same.",
            border=True,
        )
        st.metric("Hybrid per month", format_money(result.best.monthly, cur), border=True)
last = growth.rows[-1]

st.caption(
    f"**{base.name}** at {turns:,} turns a month; load: {profile.source}."
    + ("" if single is None else f" Cheapest single option: {single[0]}.")
)
if result is not None:
    st.success(pc.hybrid_sentence(result))
else:
    assert hybrid_problem is not None
    st.warning(f"No hybrid plan for this scenario: {hybrid_problem.message}.")
st.info(" ".join(pc.growth_sentences(growth)))

st.dataframe(pc.options_frame(costs, result), hide_index=True, width="stretch")
st.caption(
    "Per month under this profile. The dedicated endpoint and always-on GPUs are sized for the busiest moment all "
    "month; autoscaled GPUs follow each hour's need."
)

# --- why: the load ----------------------------------------------------------------------------------
st.subheader("Load over the day")
left, right = st.columns(2)
with left:
    st.altair_chart(pc.profile_chart(pc.profile_frame(costs), profile), width="stretch")
with right:
    days = "every day" if profile.days_per_week >= 7 else f"{profile.days_per_week:g} days a week"
    st.markdown(
        f"Peak-to-average **{profile.peak_to_average:.2f}**: the busiest hour carries "
        f"**{float(profile.hourly_factors.max()):.2f}x** the day's mean rate, its busiest moment "
        f"**{profile.burst:.2f}x** the hour's mean (the within-hour burst), {days}."
    )
    st.caption(f"Source: {profile.source}.")
    for note in (*profile.notes, *costs.warnings):
        st.caption(f"Note: {note}")

# --- why: the hybrid ----------------------------------------------------------------------------------
if result is not None:
    st.subheader("The hybrid plan")
    left, right = st.columns(2)
    with left:
        st.altair_chart(pc.hybrid_chart(pc.hybrid_frame(result.best), pc.percentile_text(result)), width="stretch")
    with right:
        st.altair_chart(pc.curve_chart(pc.curve_frame(result), result), width="stretch")
    st.caption(
        "Owned capacity is sized for the percentile hour's peak: p50 owns what the 12th busiest hour needs. In "
        "every hour the traffic above it goes to the serverless API. The share above capacity within an hour "
        + (
            "is measured from the log."
            if profile.within_hour is not None
            else "assumes the rate rises evenly to the burst over the hour."
        )
    )

# --- why: growth ----------------------------------------------------------------------------------------
st.subheader("As traffic grows")
left, right = st.columns(2)
with left:
    st.altair_chart(pc.growth_chart(growth), width="stretch")
with right:
    st.altair_chart(pc.cumulative_chart(growth), width="stretch")
totals = ", ".join(f"{OPTION_LABELS.get(k, k)} {format_money(v, cur)}" for k, v in growth.totals.items())
st.caption(
    f"Spent over {growth.months} months: {totals}. Month 1 is {growth.start_turns_per_month:,} turns, month "
    f"{growth.months} {last.turns_per_month:,}. GPU options step up a replica at a time, always on and sized for "
    f"this profile's peak (peak-to-average {profile.peak_to_average:.2f}); autoscaling is not followed month by "
    "month."
)
