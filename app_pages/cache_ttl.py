"""Cache TTL: which cache lifetime to buy (5 minutes or 1 hour) for sessions with gaps between turns.

Every scalar input has a stable key bound to the URL. All numbers come from ``calculator.pricing.ttl``
(the same advisor as ``python -m calculator ttl``) and the chart from ``calculator.present.charts``.
"""

from __future__ import annotations

import datetime as dt
import io
from typing import Literal

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from app_pages import _state, _uploads, _words
from app_pages._chart import altair_chart
from app_pages._data import catalogs, presets
from app_pages._params import NumberParam, check_params
from app_pages._uploads import MAX_MB
from app_pages._widgets import bound_quantity, stop_if_unread, url_bind
from calculator.catalog import limits
from calculator.catalog.datafile import DataFileError
from calculator.catalog.prices import ServerlessOffer
from calculator.catalog.textfile import APP_MAX_CHARS
from calculator.errors import InputError
from calculator.present import charts
from calculator.present.money import format_money, format_price, format_small
from calculator.present.shown_currency import ttl_advice_in
from calculator.present.work import WorkStopped, run_limited
from calculator.pricing.ttl import (
    DEFAULT_SESSIONS_PER_MONTH,
    EmpiricalGaps,
    ExponentialGaps,
    GapDistribution,
    LogGaps,
    LognormalGaps,
    TtlAdvice,
    advise_ttl,
    parse_gap_list,
    read_session_log,
)
from calculator.scenario.model import Scenario

LOG_TYPES = ("jsonl", "json")  # what the session-log uploader takes (plain, .gz or .zst)

BIND: Literal["query-params"] = "query-params"
DEFAULT_OFFER = "anthropic/claude-sonnet-4-5"
SOURCES = ("median gap", "gap list", "session log")  # shown as they are: a bound widget puts the text in the URL
SHAPES = ("lognormal", "exponential")
# key: (label, kind, min, max, step, default, format, help)
NUMBERS: dict[str, tuple[str, type, float, float, float, float, str | None, str]] = {
    "t_pfx": (
        "Prefix tokens",
        int,
        limits.CONTEXT.low,
        limits.CONTEXT.high,
        1000,
        20_000,
        None,
        "Tokens every turn of a session repeats at the start of its prompt (system prompt, tools, history): "
        "what is written to the cache and read back.",
    ),
    "t_med": (
        "Median gap between turns (minutes)",
        float,
        0.01,
        10_000.0,
        1.0,
        3.0,
        "%.2f",
        "Half the turns of a session come sooner than this after the previous one, half later.",
    ),
    "t_sigma": (
        "Spread (sigma)",
        float,
        0.05,
        5.0,
        0.1,
        1.0,
        "%.2f",
        "Lognormal spread of the gaps: 0.5 = most gaps within 0.4x to 2.7x the median; 1.5 = very uneven.",
    ),
    "t_turns": (
        "Turns per session",
        float,
        limits.TURNS_PER_SESSION.low,
        limits.TURNS_PER_SESSION.high,
        1.0,
        10.0,
        "%.1f",
        "Requests that share the prefix: the first writes the cache, each later one reads it if the gap "
        "since the previous turn is within the lifetime, and rewrites it otherwise.",
    ),
    "t_sess": (
        "Sessions per month",
        float,
        limits.SESSIONS_PER_MONTH.low,
        limits.SESSIONS_PER_MONTH.high,
        1000.0,
        float(DEFAULT_SESSIONS_PER_MONTH) * 10,
        "%.0f",
        "How many such sessions a month; scales the monthly figures, not the choice.",
    ),
}
CHOICES = {"t_src": list(SOURCES), "t_shape": list(SHAPES)}
TYPED = {"t_pfx": limits.CONTEXT, "t_sess": limits.SESSIONS_PER_MONTH}  # counts typed as people type them (3M)
MEDIAN, LIST, LOG = SOURCES

cat = catalogs()
ss = st.session_state
today = dt.date.today()


def _offers() -> list[str]:
    """Serverless offers that sell a cache write (by lifetime) on today's price version."""
    keep = []
    for sheet, offer in cat.prices.offers("serverless"):
        assert isinstance(offer, ServerlessOffer)
        try:
            version = offer.version_at(today)
        except InputError:
            continue
        if version.prices.cache_write:
            keep.append(_state.offer_key(sheet.provider, offer.id))
    return keep


offers = _offers()
CHOICES["t_offer"] = offers


def _compare_scenario() -> Scenario | None:
    """The Compare page's scenario, whose offer, prefix, volume and currency this page starts from; None when
    its inputs do not make one (that page says why)."""
    try:
        return _state.current_compare_scenario(ss, cat, presets(), today)[0]
    except (InputError, ValidationError):
        return None


scenario = _compare_scenario()
DEFAULTS = {key: spec[5] for key, spec in NUMBERS.items()}
default_offer = DEFAULT_OFFER
if scenario is not None:
    DEFAULTS["t_pfx"] = max(
        int(limits.CONTEXT.low), round(scenario.workload.input_tokens * float(scenario.workload.prefix_share))
    )
    DEFAULTS["t_sess"] = min(
        max(scenario.traffic.turns_per_month / DEFAULTS["t_turns"], limits.SESSIONS_PER_MONTH.low),
        limits.SESSIONS_PER_MONTH.high,
    )
    chosen = _state.serverless_key(scenario, cat)
    default_offer = chosen if chosen in offers else default_offer


def _check_params() -> list[str]:
    bounds = {key: NumberParam(*spec[:4], typed=key in TYPED) for key, spec in NUMBERS.items()}
    return check_params({k: st.query_params[k] for k in st.query_params}, bounds, CHOICES)


def number(key: str, container: st.delta_generator.DeltaGenerator | None = None, disabled: bool = False) -> float:
    label, kind, lo, hi, step, _, fmt, help = NUMBERS[key]
    default = DEFAULTS[key]
    if key in TYPED:
        spec = NumberParam(label, kind, lo, hi, typed=True)
        return bound_quantity(key, spec, default, help, TYPED[key], container, disabled)
    value: float = (container or st).number_input(
        label,
        min_value=kind(lo),
        max_value=kind(hi),
        value=kind(default),
        step=kind(step),
        format=fmt,
        key=key,
        bind=url_bind(key),
        help=help,
        disabled=disabled,
    )
    return value


url_problems = _check_params()

# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    if not offers:
        st.error("No serverless offer in the price sheets charges cache writes by lifetime.")
        st.stop()
    offer_key = st.selectbox(
        "Serverless offer",
        offers,
        index=offers.index(default_offer) if default_offer in offers else 0,
        key="t_offer",
        bind=BIND,
        help="Offers that sell prompt caching with a write fee by cache lifetime (explicit caching). Offers "
        "that cache automatically for free have no lifetime to choose.",
    )
    st.caption(_state.offer_label(cat, offer_key))
    prefix_tokens = int(number("t_pfx"))
    source = st.segmented_control(
        "Gaps between turns from",
        list(SOURCES),
        default=MEDIAN,
        required=True,
        key="t_src",
        bind=BIND,
        help="A median and a shape (quick), the gaps of a typical session (seconds), or a log of your own "
        "sessions (JSON Lines with a session id and a timestamp, or a Mooncake trace).",
    )
    log: LogGaps | None = None
    if source == MEDIAN:
        number("t_med")
        shape = st.segmented_control(
            "Shape",
            list(SHAPES),
            default="lognormal",
            required=True,
            key="t_shape",
            bind=BIND,
            help="Lognormal: people pause unevenly (a few long breaks). Exponential: turns arrive at random at a "
            "steady rate.",
        )
        if shape == "lognormal":
            number("t_sigma")
    elif source == LIST:
        st.text_input(
            "Gaps (seconds, comma-separated)",
            value="30, 45, 60, 90, 120, 240, 600, 1800, 3600",
            key="t_gaps",
            bind=BIND,
            help="The time between consecutive turns of a typical session, in seconds; each gap counts equally.",
        )
    else:
        _uploads.uploader(
            "Session log",
            LOG_TYPES,
            key="t_log",
            max_upload_size=MAX_MB,
            help="One JSON object a line with a session id (session_id, conversation_id, ...) and a time "
            "(timestamp in seconds or ISO 8601, or timestamp_ms); or a Mooncake trace. .gz and .zst allowed.",
        )
    use_log_counts = source == LOG and _uploads.uploaded(ss, "t_log", LOG_TYPES) is not None
    c1, c2 = st.columns(2)
    number("t_turns", c1, disabled=use_log_counts)
    given_sessions = number("t_sess", c2, disabled=use_log_counts)
    if use_log_counts:
        st.caption("Turns per session and sessions per month come from the log.")

# --- the advice -----------------------------------------------------------------------------------
st.title("Which cache lifetime to buy?")
st.caption(
    "Explicit prompt caching charges each cache write by lifetime: a 5-minute write is cheaper than a 1-hour "
    "one, but a turn that comes after the lifetime ran out rewrites the prefix. The gaps between your turns "
    "decide which is cheaper. The address bar is a link to these inputs."
)
if scenario is not None:
    w = scenario.workload
    st.caption(
        f"Starts from the Compare page's scenario **{scenario.name}**: its serverless offer where it sells cache "
        f"lifetimes, a prefix of {w.input_tokens:,} x {float(w.prefix_share):g} = {DEFAULTS['t_pfx']:,} tokens, "
        f"{scenario.traffic.turns_per_month:,} turns a month as sessions of {DEFAULTS['t_turns']:g} turns, and "
        f"its currency ({scenario.currency}). Change any of them here."
    )
for problem in url_problems:
    st.error(problem)
stop_if_unread()


@st.cache_data(show_spinner="Reading the log...", max_entries=4)
def _read_log(data: bytes, name: str) -> LogGaps:
    """The upload read from memory (no file is written), as much of it as the app reads of any log."""
    try:  # in a child process: within a time and memory limit, the server answering other sessions meanwhile
        log: LogGaps = run_limited(
            f"Reading {name}", read_session_log, io.BytesIO(data), name=name, max_chars=APP_MAX_CHARS
        )
    except WorkStopped as exc:
        raise DataFileError([str(exc)]) from None
    return log


turns = float(ss.get("t_turns") or DEFAULTS["t_turns"])
per_month = float(given_sessions)
per_month_source = "given"
gaps: GapDistribution
try:
    if source == MEDIAN:
        median_s = float(ss.get("t_med") or DEFAULTS["t_med"]) * 60
        if ss.get("t_shape", "lognormal") == "exponential":
            gaps = ExponentialGaps(median_s)
        else:
            gaps = LognormalGaps(median_s, float(ss.get("t_sigma") or DEFAULTS["t_sigma"]))
    elif source == LIST:
        gaps = EmpiricalGaps(parse_gap_list(str(ss.get("t_gaps") or "")))
    else:
        upload = _uploads.uploaded(ss, "t_log", LOG_TYPES)
        if upload is None:
            st.info("Upload a session log in the sidebar, or choose a median gap or a list of gaps.")
            st.stop()
        log = _read_log(upload.getvalue(), upload.name)
        gaps = log.distribution()
        turns = log.turns_per_session
        if log.sessions_per_month is not None:
            per_month, per_month_source = log.sessions_per_month, "the log's session rate"
        st.caption(
            f"Log {log.path} ({log.format}): {log.sessions:,} sessions, {log.turns:,} requests, "
            f"{len(log.gaps):,} gaps" + (f", {log.malformed:,} lines skipped" if log.malformed else "")
        )
        for problem in log.problems:
            st.warning(problem)
    provider, offer_id = _state.split_key(offer_key)
    sheet, offer = cat.prices.serverless(provider, offer_id)
    version = offer.version_at(today)
    advice: TtlAdvice = advise_ttl(
        sheet,
        offer,
        version,
        prefix_tokens=prefix_tokens,
        gaps=gaps,
        turns_per_session=turns,
        sessions_per_month=per_month,
        sessions_per_month_source=per_month_source,
    )
except InputError as exc:
    st.error(_words.say(exc))
    st.stop()
except DataFileError as exc:
    st.error("The log could not be read:\n\n" + "\n".join(f"- `{line}`" for line in exc.lines))
    st.stop()

cur, advice = ttl_advice_in(advice, scenario)  # shown in the scenario's currency, as Compare shows it
rate = scenario.fx.factor(sheet.currency, cur) if scenario is not None else 1.0  # for the chart's sweep
best = advice.cheapest
by_ttl = {o.ttl: o for o in advice.outcomes}


with st.container(horizontal=True):
    st.metric(
        "Cheaper cache lifetime",
        best.ttl,
        help="The lifetime with the lower expected cost for these sessions (a tie goes to the shorter one).",
        border=True,
    )
    for o in advice.outcomes:
        st.metric(
            f"{o.ttl} cache, per month",
            format_money(o.cost_per_month, cur),
            help=f"Writes {o.writes_per_session:.2f} and reads {o.reads_per_session:.2f} times per session "
            f"({o.hit_probability:.0%} of gaps within {o.ttl}); {format_small(o.cost_per_session, cur)} "
            "per session.",
            border=True,
        )
    st.metric(
        "No cache, per month",
        format_money(advice.no_cache_cost_per_month, cur),
        help="The prefix billed as plain input on every turn.",
        border=True,
    )

sentences = []
others = [o for o in advice.outcomes if o is not best]
if others:
    dearest = max(others, key=lambda o: o.cost_per_month)
    sentences.append(
        f"Buy the **{best.ttl}** cache: **{format_money(best.cost_per_month, cur)}** a month against "
        f"{format_money(dearest.cost_per_month, cur)} for {dearest.ttl} "
        f"(saves {format_money(advice.saving_per_month, cur)} a month, "
        f"{advice.sessions_per_month:,.0f} sessions of {advice.turns_per_session:.3g} turns"
        + ("" if advice.sessions_per_month_source == "given" else f"; sessions from {advice.sessions_per_month_source}")
        + ")."
    )
if not advice.caching_pays:
    sentences.append(
        f"Not caching at all is cheaper still ({format_money(advice.no_cache_cost_per_month, cur)} a month): "
        "the turns come "
        "too far apart for a cache write to be read back often enough."
    )
for b in advice.break_even:
    if b.reads_per_write is None:
        sentences.append(f"{b.longer} never pays off against {b.shorter}: a rewrite costs no more than a read.")
        continue
    need = float(b.reads_per_write)
    have = b.observed_reads_per_write
    verdict = "so it pays off" if have > need else "so it does not pay off"
    sentences.append(
        f"**{b.longer}** pays off against {b.shorter} once each {b.longer} write is read back **{need:.2f} times** "
        f"on turns that {b.shorter} would have rewritten (a gap between {b.shorter} and {b.longer}); your "
        f"sessions give {have:.2f} such reads per write ({b.extra_hit_probability:.0%} of gaps), {verdict}."
    )
for o in advice.outcomes:
    if o.break_even_reads_vs_no_cache is not None:
        sentences.append(
            f"A {o.ttl} cache beats not caching from {float(o.break_even_reads_vs_no_cache):.2f} reads per write; "
            f"yours gives {o.reads_per_write:.2f}."
        )
st.markdown("\n".join(f"- {s}" for s in sentences))
for note in advice.notes:
    st.info(note)

# --- the chart ------------------------------------------------------------------------------------
today_costs = {o.ttl: o.cost_per_session for o in advice.outcomes}
today_costs[charts.NO_CACHE] = advice.no_cache_cost_per_session


@st.cache_data(show_spinner=False, max_entries=16)
def _sweep(
    offer_key: str, when: dt.date, prefix: int, gaps_key: str, _gaps: GapDistribution, turns: float
) -> pd.DataFrame:
    provider, offer_id = _state.split_key(offer_key)
    sheet, offer = cat.prices.serverless(provider, offer_id)
    return charts.ttl_sweep_frame(
        sheet, offer, offer.version_at(when), prefix_tokens=prefix, gaps=_gaps, turns_per_session=turns
    )


gaps_key = repr(gaps) if not isinstance(gaps, EmpiricalGaps) else f"list:{hash(gaps.gaps)}"
sweep = _sweep(offer_key, today, advice.prefix_tokens, gaps_key, gaps, advice.turns_per_session)
altair_chart(
    charts.ttl_chart(sweep.assign(cost=sweep["cost"] * rate), charts.gap_median(gaps), today_costs, cur),
    width="stretch",
)
st.caption(
    f"{gaps.describe()}; the whole pattern moves left or right with its median. Dots: your sessions today. "
    f"{advice.prefix_tokens:,}-token prefix, {advice.turns_per_session:.3g} turns per session."
)

ref = advice.price
writes = ", ".join(
    f"{o.ttl} write {format_price(o.write_price, cur)}" for o in sorted(advice.outcomes, key=lambda o: o.ttl_seconds)
)
st.caption(
    f"Prices per 1M tokens, {ref.provider} {ref.model}, version of {ref.effective.isoformat()} (as of "
    f"{today.isoformat()}): input {format_price(advice.input_price, cur)}, read "
    f"{format_price(best.read_price, cur)}, {writes}. Source: {ref.source}."
)
