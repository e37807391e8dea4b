"""Plan: load over the day, the cheapest hybrid of owned GPUs and serverless overflow, and growth.

The Compare page's scenario (or a preset), a load profile (the one the scenario holds, its traffic,
a preset shape or a request log's timestamps) and a within-hour burst; then the ways to buy under
that profile (self-hosting always on and autoscaled), the cheapest hybrid plan, and month-by-month
growth. A profile chosen here can be kept in the scenario, so the Compare page's file and PDF and
later visits plan with it. Every scalar input has a short stable key bound to the URL, checked on
the way in; the Compare page's scenario travels in the link as one packed parameter. All numbers
come from ``calculator``.
"""

from __future__ import annotations

import datetime as dt
import io
from typing import Literal

import streamlit as st
from pydantic import ValidationError

from app_pages import _state, _uploads, _words
from app_pages._chart import altair_chart, kept_chart
from app_pages._data import catalogs, cheapest_picked, kept, presets, priced_key
from app_pages._params import NumberParam, check_params
from app_pages._uploads import MAX_MB, shown_name
from app_pages._widgets import bound_number, bound_quantity, stop_if_unread
from calculator.catalog import limits
from calculator.catalog.textfile import APP_MAX_CHARS
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
from calculator.present.work import WorkStopped, run_limited
from calculator.pricing.compare import OPTION_LABELS, Catalogs, without_unpriceable
from calculator.scenario.model import Scenario

BIND: Literal["query-params"] = "query-params"
# Options of URL-bound selects are what they show (the URL stores the shown text), so they read well.
SCENARIO_PROFILE = "the scenario's load profile"
SCENARIO_TRAFFIC = "the scenario's traffic"
TRACE = "from a request log"
PROFILES = {
    SCENARIO_PROFILE: None,
    SCENARIO_TRAFFIC: None,
    "business hours": "business_hours",
    "consumer evenings": "consumer_evenings",
    "flat": "flat",
    TRACE: None,
}
DAILY = {"flat": "flat", "business hours": "business_hours", "consumer evenings": "consumer_evenings"}
OWNED: dict[str, Owned] = {"self-hosted GPUs": "self_hosted", "dedicated endpoint": "dedicated"}
SCALING = {"as the scenario says": None, "always on": False, "autoscaled": True}
NUMBERS = {
    "pl_vol": NumberParam("Turns per month (0: the scenario's)", int, 0, limits.TURNS_PER_MONTH.high, typed=True),
    # 0 is the page's "automatic"; a burst given is checked against its limit's low end too
    "pl_burst": NumberParam("Within-hour burst (0: automatic)", float, 0.0, limits.PEAK_TO_AVERAGE.high),
    "pl_m": NumberParam("Months", int, MIN_MONTHS, MAX_MONTHS),
    "pl_g": NumberParam("Growth per month (%)", float, -50.0, 100.0),
}

cat: Catalogs = catalogs()
preset_map = presets()
ss = st.session_state
today = dt.date.today()

if not preset_map:
    st.title("Plan")
    st.info("No scenario presets could be read (scenarios/), so there is nothing to plan.")
    st.stop()

names = list(preset_map)
choices = {
    "pl_sc": [_state.COMPARE_PAGE, *names],
    "pl_prof": list(PROFILES),
    "pl_daily": list(DAILY),
    "pl_own": list(OWNED),
    "pl_scale": list(SCALING),
}
url_problems = _state.read_links(ss, st.query_params, cat, preset_map, today)  # a link's scenario first
url_problems += check_params({k: st.query_params[k] for k in st.query_params}, NUMBERS, choices)


def number(key: str, default: float, step: float, help: str, fmt: str | None = None) -> float:
    if NUMBERS[key].typed:  # a volume, typed as people type it (3M)
        return bound_quantity(key, NUMBERS[key], default, help, limits.TURNS_PER_MONTH)
    return bound_number(key, NUMBERS[key], default, step, help, fmt)


def select(label: str, key: str, default: str, help: str) -> str:
    options = choices[key]
    chosen: str = st.selectbox(label, options, index=options.index(default), key=key, bind=BIND, help=help)
    return chosen


def field_error(exc: InputError) -> None:
    st.error(_words.say(exc))


@st.cache_data(show_spinner=False, max_entries=8)
def _trace_profile(data: bytes, name: str, daily: str) -> LoadProfile:
    """A profile from an uploaded log's timestamps, read from memory (no file is written) as far as the app
    reads any log. The reader tells the format by the name's suffix; the profile is named after it (a name
    the app shortens to what a profile's name holds)."""
    try:  # in a child process: within a time and memory limit, the server answering other sessions meanwhile
        profile: LoadProfile = run_limited(
            f"Reading {shown_name(name)}",
            profile_from_trace,
            io.BytesIO(data),
            preset_profile(daily),
            name=shown_name(name),
            max_chars=APP_MAX_CHARS,
        )
    except WorkStopped as exc:
        raise InputError("load_profile", str(exc)) from None
    return profile


def _keep_profile(profile: LoadProfile | None) -> None:
    """Keep the profile in the session's scenario (None: plan it with its traffic again)."""
    try:
        _state.set_evidence(ss, load_profile=profile)
    except ValidationError as exc:
        st.error("This profile cannot be kept:\n\n" + "\n".join(f"- {x}" for x in _words.invalid(exc, "scenario")))
        return
    ss["pl_prof"] = SCENARIO_TRAFFIC if profile is None else SCENARIO_PROFILE
    ss["pl_burst"] = 0.0  # the kept profile holds its burst


def session_scenario() -> tuple[Scenario, Catalogs]:
    """The Compare page's scenario as it prices it; a problem with its inputs stops the page, named."""
    try:
        return _state.current_compare_scenario(ss, cat, preset_map, today)
    except ValidationError as exc:
        problem = "The Compare page's inputs are not allowed:\n\n" + "\n".join(
            f"- {x}" for x in _words.invalid(exc, "scenario")
        )
    except InputError as exc:
        problem = f"The Compare page's inputs: {_words.say(exc)}"
    st.title("Plan for the day and the months ahead")
    st.error(problem)
    st.stop()


# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    scenario_name = select(
        "Scenario",
        "pl_sc",
        _state.COMPARE_PAGE,
        "The Compare page's current scenario (its inputs, name and evidence: change it there and this page "
        "follows), or a preset (scenarios/).",
    )
    on_compare = scenario_name == _state.COMPARE_PAGE
    work_cat: Catalogs = cat
    if on_compare:
        base, work_cat = session_scenario()
    else:
        base = preset_map[scenario_name]
    held = base.evidence.load_profile
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
        SCENARIO_PROFILE if held is not None else SCENARIO_TRAFFIC,
        "How the day's turns spread over its 24 hours. The scenario's load profile: the one kept in it (from "
        "this page, a file or a link). The scenario's traffic: flat over its active hours. The presets are "
        "illustrative shapes, not measurements; a request log gives your own.",
    )
    trace_file = None
    daily_choice = "flat"
    if profile_choice == TRACE:
        trace_file = _uploads.uploader(
            "Request log with timestamps",
            ["csv", "jsonl", "json"],
            key="pl_trace",
            max_upload_size=MAX_MB,
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
    "link to these inputs and the scenario (an uploaded log is not in it; a profile kept in the scenario is)."
)
for problem in url_problems:
    st.error(problem)
stop_if_unread()
# the link: the Compare page's scenario travels whole (its inputs are that page's); a preset by its name
too_large = _state.write_link(ss, st.query_params, _state.SC, _state.shareable(base, work_cat) if on_compare else None)
if on_compare:
    _state.write_link(ss, st.query_params, _state.EV, None)  # the scenario carries its evidence
if too_large:
    st.warning(too_large)
base, dropped = without_unpriceable(base, work_cat)  # left out and said so, as on the Compare page
for option, why in dropped:
    st.warning(_words.left_out(option, why))
if profile_choice == SCENARIO_PROFILE and held is None:
    st.info("This scenario holds no load profile yet: planned with its traffic. Choose a shape and keep it below.")

turns = turns_in or base.traffic.turns_per_month
autoscale = SCALING[scale_choice]
owned: Owned = OWNED[owned_choice or "self-hosted GPUs"]
try:
    if profile_choice == SCENARIO_PROFILE and held is not None:
        profile = held
    elif profile_choice in (SCENARIO_TRAFFIC, SCENARIO_PROFILE):
        profile = profile_from_traffic(base.traffic)
    elif profile_choice == TRACE:
        if trace_file is None:
            st.info("Upload a request log with timestamps in the sidebar (.csv, .jsonl, .json or .gz).")
            st.stop()
        profile = _trace_profile(trace_file.getvalue(), trace_file.name, DAILY[daily_choice])
    else:
        profile = preset_profile(PROFILES[profile_choice] or "flat")
    if burst_in:
        profile = profile.with_burst(burst_in)
    profile = _state.validated(profile)  # a burst over a peaky day can pass the month's limit
    priced = priced_key(base, work_cat, today)  # the day's plan is kept while only the growth inputs change
    owned_as_priced = cheapest_picked(base, work_cat, today)[0]  # 'cheapest' GPU options: the search's picks
    plan_key = (
        None if priced is None else "\n".join([priced, profile.model_dump_json(), owned, str(autoscale), str(turns)])
    )
    result: HybridResult | None = None
    hybrid_problem: InputError | None = None
    try:
        result = kept(
            "plan.hybrid",
            plan_key,
            lambda: hybrid_plan(
                owned_as_priced, work_cat, profile, owned=owned, autoscale=autoscale, turns_per_month=turns
            ),
        )
        costs = result.pure
    except InputError as exc:
        if exc.field != "scenario":
            raise
        hybrid_problem = exc
        costs = profile_costs(owned_as_priced, work_cat, profile, autoscale=autoscale, turns_per_month=turns)
    growth: GrowthPlan = grow(
        pc.growth_scenario(owned_as_priced, profile, turns), work_cat, months, growth_pct / 100, turns
    )
except InputError as exc:
    field_error(exc)
    st.stop()
except ValidationError as exc:
    st.error("These inputs are not allowed:\n\n" + "\n".join(f"- {x}" for x in _words.invalid(exc, "load_profile")))
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
            pc.owned_text(result.best).capitalize(),
            help="Owned capacity that carries a share of the day's hours fully; the rest overflows to the serverless "
            f"API. The cheapest: owned for {pc.percentile_text(result)}.",
            border=True,
        )
        st.metric("Hybrid per month", format_money(result.best.monthly, cur), border=True)
last = growth.rows[-1]

whose = " (the Compare page's scenario)" if on_compare else " (preset)"
st.caption(
    f"**{base.name}**{whose} at {turns:,} turns a month; load: {profile.source}."
    + ("" if single is None else f" Cheapest single option: {single[0]}.")
)
if result is not None:
    st.success(pc.hybrid_sentence(result))
else:
    assert hybrid_problem is not None
    st.warning(f"No hybrid plan for this scenario: {_words.message(hybrid_problem)}.")
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
    kept_chart(
        "plan.profile_chart", plan_key, lambda: pc.profile_chart(pc.profile_frame(costs), profile), width="stretch"
    )
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
    if on_compare and profile != held and profile_choice != SCENARIO_TRAFFIC:
        st.button(
            "Keep this profile in the scenario",
            key="pl_keep",
            on_click=_keep_profile,
            args=(profile,),
            icon=":material/bookmark_add:",
            help="The Compare page's scenario holds it from now on: its file, its PDF, its link and this page's "
            "later visits plan with it.",
        )
    elif on_compare and held is not None and profile_choice == SCENARIO_TRAFFIC:
        st.button(
            "Plan the scenario with its traffic (drop its load profile)",
            key="pl_drop",
            on_click=_keep_profile,
            args=(None,),
            icon=":material/bookmark_remove:",
        )
    elif on_compare and profile == held:
        st.caption("This is the load profile the scenario holds.")

# --- why: the hybrid ----------------------------------------------------------------------------------
if result is not None:
    plan, best = result, result.best
    st.subheader("The hybrid plan")
    left, right = st.columns(2)
    with left:
        kept_chart(
            "plan.hybrid_chart",
            plan_key,
            lambda: pc.hybrid_chart(pc.hybrid_frame(best), pc.percentile_text(plan)),
            width="stretch",
        )
    with right:
        kept_chart("plan.curve_chart", plan_key, lambda: pc.curve_chart(pc.curve_frame(plan), plan), width="stretch")
    st.caption(
        "Owned capacity is sized for a share of the day's hours: owned for 50% of them, it carries what the 12th "
        "busiest hour needs. In "
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
    altair_chart(pc.growth_chart(growth), width="stretch")
with right:
    altair_chart(pc.cumulative_chart(growth), width="stretch")
totals = ", ".join(f"{OPTION_LABELS.get(k, k)} {format_money(v, cur)}" for k, v in growth.totals.items())
st.caption(
    f"Spent over {growth.months} months: {totals}. Month 1 is {growth.start_turns_per_month:,} turns, month "
    f"{growth.months} {last.turns_per_month:,}. GPU options step up a replica at a time, always on and sized for "
    f"this profile's peak (peak-to-average {profile.peak_to_average:.2f}); autoscaling is not followed month by "
    "month."
)
