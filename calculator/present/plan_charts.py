"""Tables, sentences and Altair charts for the app's Plan page (no Streamlit here).

The page shows a load profile over the day, the ways to buy under it (self-hosting always on and
autoscaled), the cheapest hybrid plan (owned capacity for a percentile hour plus serverless
overflow) and month-by-month growth. The numbers come from :mod:`calculator.planning.load_profile`,
:mod:`calculator.planning.hybrid` and :mod:`calculator.planning.growth`; this module only lays them out.

    profile_frame / profile_chart     mean and peak request rate per hour of the day
    options_frame                     the pure options and the hybrid, per month
    hybrid_frame / hybrid_chart       load per hour: served by owned capacity, overflow, the capacity line
    curve_frame / curve_chart         hybrid monthly cost over percentiles, the pure options as rules
    growth_chart / cumulative_chart   monthly and cumulative cost per option over the months
    hybrid_sentence, growth_sentences the answers in words
"""

from __future__ import annotations

from typing import Any, Literal, cast

import altair as alt
import pandas as pd

from calculator.planning.growth import GrowthPlan
from calculator.planning.hybrid import HybridPlan, HybridResult
from calculator.planning.load_profile import LoadProfile, ProfileCosts
from calculator.present.money import format_money, money_title
from calculator.pricing.compare import OPTION_LABELS
from calculator.pricing.option import OptionCost
from calculator.scenario.model import Scenario

__all__ = [
    "cumulative_chart",
    "cheapest_single",
    "curve_chart",
    "curve_frame",
    "growth_chart",
    "growth_scenario",
    "growth_sentences",
    "hybrid_chart",
    "hybrid_frame",
    "hours_share",
    "hybrid_sentence",
    "options_frame",
    "owned_text",
    "percentile_text",
    "profile_chart",
    "profile_frame",
    "single_options",
]

WIDTH = 560
HEIGHT = 300
BLUE, GREEN, AMBER, GREY, RED = "#1f6feb", "#1a7f37", "#bf8700", "#6e7781", "#cf222e"
OPTION_COLORS = {"serverless": BLUE, "dedicated": AMBER, "self_hosted": GREEN}
SHORT = {"serverless": "Serverless", "dedicated": "Dedicated", "self_hosted": "Self-hosted"}
MAX_CROSSINGS = 2
"""More crossings than this (GPU steps crossing a straight line back and forth) are summed up, not listed."""
SERVED, OVERFLOW = "Owned", "Overflow to serverless"


def _hour(h: int) -> str:
    return f"{h:02d}:00"


def hours_share(percentile: float) -> str:
    """Owned capacity sized for the percentile hour, in words: the share of the day's hours it carries fully."""
    if percentile >= 100:
        return "the busiest hour"
    return f"{percentile:g}% of the day's hours"


def percentile_text(result: HybridResult) -> str:
    """What the cheapest hybrid owns capacity for, in words, or the range that ties for it."""
    lo, hi = result.best_percentiles
    if lo == hi:
        return hours_share(lo)
    return f"anything from {lo:g}% to {hi:g}% of the day's hours" if hi < 100 else f"{lo:g}% of the hours or more"


def owned_text(plan: HybridPlan) -> str:
    """What a hybrid plan owns, in words (``nothing owned``, ``3 replicas``), for a metric or a table cell."""
    if plan.owned_replicas == 0:
        return "nothing owned"
    return f"{plan.owned_replicas} replica{'s' if plan.owned_replicas > 1 else ''} owned"


# --- the load profile ----------------------------------------------------------------------------


def profile_frame(costs: ProfileCosts) -> pd.DataFrame:
    """Per hour of an active day: mean and peak request rate, share of the day, replicas the peak needs."""
    df = costs.frame()
    df["label"] = [_hour(int(h)) for h in df["hour"]]
    return df


def profile_chart(df: pd.DataFrame, profile: LoadProfile) -> alt.LayerChart:
    """Bars of each hour's mean request rate, ticks at its busiest moment (mean x burst)."""
    x = alt.X("label:O", title="Hour of the day", sort=list(df["label"]), axis=alt.Axis(labelAngle=-90))
    tooltip = [
        alt.Tooltip("label:N", title="Hour"),
        alt.Tooltip("share:Q", title="Share of the day's turns", format=".1%"),
        alt.Tooltip("load_rps:Q", title="Mean req/s", format=",.3f"),
        alt.Tooltip("peak_rps:Q", title="Peak req/s", format=",.3f"),
    ]
    if "replicas" in df.columns:
        tooltip.append(alt.Tooltip("replicas:Q", title="Replicas the peak needs"))
    bars = (
        alt.Chart(df)
        .mark_bar(color=BLUE)
        .encode(x=x, y=alt.Y("load_rps:Q", title="Requests per second"), tooltip=tooltip)
    )
    layers: list[Any] = [bars]
    if profile.burst > 1:
        layers.append(
            alt.Chart(df[df["peak_rps"] > 0])
            .mark_tick(color=RED, thickness=2, size=14)
            .encode(x=x, y=alt.Y("peak_rps:Q"), tooltip=tooltip)
        )
    subtitle = "Bars: each hour's mean rate" + ("; red ticks: its busiest moment" if profile.burst > 1 else "")
    title = alt.Title("Load over an active day", subtitle=subtitle)
    return cast(alt.LayerChart, alt.layer(*layers, width=WIDTH, height=HEIGHT, title=title))


# --- the options ---------------------------------------------------------------------------------


OWNED_WORDS = {"self_hosted": "self-hosted GPUs", "dedicated": "a dedicated endpoint"}


def single_options(costs: ProfileCosts) -> dict[str, OptionCost]:
    """Each way to buy alone under the profile, self-hosting both always on and autoscaled (label -> cost)."""
    found = {
        "Serverless API": costs.serverless,
        "Dedicated endpoint (always on)": costs.dedicated,
        "Self-hosted GPUs, always on": costs.self_hosted_always_on,
        "Self-hosted GPUs, autoscaled": costs.self_hosted_autoscaled,
    }
    return {k: v for k, v in found.items() if v is not None}


def cheapest_single(costs: ProfileCosts) -> tuple[str, OptionCost] | None:
    """The cheapest single option under the profile (the first listed on a tie)."""
    options = single_options(costs)
    if not options:
        return None
    label = min(options, key=lambda k: options[k].monthly)
    return label, options[label]


HOW = {
    "Serverless API": "per turn; the profile does not change it",
    "Dedicated endpoint (always on)": "sized for the busiest moment, all month",
    "Self-hosted GPUs, always on": "the busiest hour's GPUs all month",
    "Self-hosted GPUs, autoscaled": "each hour's GPUs, billed per run of hours",
}


def options_frame(costs: ProfileCosts, result: HybridResult | None = None) -> pd.DataFrame:
    """The single options under the profile (self-hosting both ways) and the cheapest hybrid, per month."""
    cur = costs.currency
    rows: list[dict[str, Any]] = []
    for label, cost in single_options(costs).items():
        rows.append(
            {
                "Option": label,
                "Per month": format_money(cost.monthly, cur),
                "monthly": float(cost.monthly),
                "GPUs at peak": _count(cost.gpus, cost.gpus),
                "GPU hours": _count(cost.gpu_hours, cost.gpus),
                "How": HOW[label],
            }
        )
    if result is not None:
        b = result.best
        if b.owned_replicas == 0:
            how = "nothing owned: every turn to the serverless API"
        else:
            how = (
                f"{b.owned_replicas} replica(s) of {OWNED_WORDS[b.owned_option]}"
                f"{', autoscaled' if b.autoscale else ''} + {b.overflow_share:.1%} of turns to the serverless API"
            )
        rows.append(
            {
                "Option": f"Hybrid, the cheapest: {owned_text(b)}"
                + ("" if b.owned_replicas == 0 else f" for {hours_share(b.percentile)}"),
                "Per month": format_money(b.monthly, cur),
                "monthly": float(b.monthly),
                "GPUs at peak": _count(b.owned.gpus if b.owned else 0, b.owned.gpus if b.owned else 0),
                "GPU hours": _count(b.owned.gpu_hours if b.owned else 0, b.owned.gpus if b.owned else 0),
                "How": how,
            }
        )
    df = pd.DataFrame(rows)
    low = df["monthly"].min()
    df.insert(0, "Cheapest", ["yes" if m == low else "" for m in df["monthly"]])
    return df.drop(columns=["monthly"])


def _count(value: float | None, gpus: float | None) -> str:
    """A whole count for the table, in words where there is none: no GPUs (per token), or hours not counted."""
    if not gpus:
        return "none"
    return "not counted" if value is None else f"{round(value):,}"


# --- the hybrid plan -----------------------------------------------------------------------------


def hybrid_frame(plan: HybridPlan) -> pd.DataFrame:
    """Long format per hour: the rate served by owned capacity and the overflow, with the capacity line."""
    base = plan.frame()
    rows = []
    for r in base.to_dict(orient="records"):
        for part, value in ((SERVED, r["served_rps"]), (OVERFLOW, r["overflow_rps"])):
            rows.append(
                {
                    "hour": int(r["hour"]),
                    "label": _hour(int(r["hour"])),
                    "part": part,
                    "rps": float(value),
                    "load_rps": float(r["load_rps"]),
                    "peak_rps": float(r["peak_rps"]),
                    "owned_replicas": int(r["owned_replicas"]),
                    "needed_replicas": int(r["needed_replicas"]),
                    "owned_capacity_rps": float(r["owned_capacity_rps"]),
                }
            )
    return pd.DataFrame(rows)


def hybrid_chart(df: pd.DataFrame, percentile: str) -> alt.LayerChart:
    """Stacked bars of each hour's mean rate (owned part, overflow part) and the owned capacity as a line."""
    order = list(dict.fromkeys(df["label"]))
    x = alt.X("label:O", title="Hour of the day", sort=order, axis=alt.Axis(labelAngle=-90))
    tooltip = [
        alt.Tooltip("label:N", title="Hour"),
        alt.Tooltip("part:N", title="Part"),
        alt.Tooltip("rps:Q", title="Mean req/s", format=",.3f"),
        alt.Tooltip("peak_rps:Q", title="Peak req/s", format=",.3f"),
        alt.Tooltip("owned_replicas:Q", title="Owned replicas up"),
        alt.Tooltip("needed_replicas:Q", title="Replicas the peak needs"),
        alt.Tooltip("owned_capacity_rps:Q", title="Owned capacity req/s", format=",.3f"),
    ]
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=x,
            y=alt.Y("rps:Q", title="Requests per second", stack="zero"),
            color=alt.Color(
                "part:N",
                title=None,
                sort=[SERVED, OVERFLOW],
                scale=alt.Scale(domain=[SERVED, OVERFLOW], range=[GREEN, BLUE]),
                legend=alt.Legend(orient="top", labelLimit=240),
            ),
            order=alt.Order("part_order:Q"),
            tooltip=tooltip,
        )
        .transform_calculate(part_order=f"datum.part == '{SERVED}' ? 0 : 1")
    )
    capacity = df[df["part"] == SERVED]
    line = (
        alt.Chart(capacity)
        .mark_line(color=RED, strokeDash=[6, 3], interpolate="step", strokeWidth=2)
        .encode(x=x, y=alt.Y("owned_capacity_rps:Q"), tooltip=tooltip)
    )
    title = alt.Title(
        f"Who serves each hour, owned for {percentile}", subtitle="Red dashes: what the owned replicas take"
    )
    return cast(alt.LayerChart, alt.layer(bars, line, width=WIDTH, height=HEIGHT, title=title))


def curve_frame(result: HybridResult) -> pd.DataFrame:
    df = result.curve_frame()
    df["label"] = [format_money(m, result.currency) for m in df["monthly"]]
    lo, hi = result.best_percentiles
    df["best"] = [lo <= p <= hi for p in df["percentile"]]
    return df


def curve_chart(df: pd.DataFrame, result: HybridResult) -> alt.LayerChart:
    """Hybrid monthly cost for owned capacity sized at each percentile hour; the pure options as dashed rules."""
    cur = result.currency
    x = alt.X(
        "percentile:Q",
        title="Owned capacity: share of the day's hours it carries (%)",
        scale=alt.Scale(domain=[0, 100]),
    )
    y = alt.Y("monthly:Q", title=money_title("Monthly cost", cur))
    tooltip = [
        alt.Tooltip("percentile:Q", title="Share of the day's hours (%)"),
        alt.Tooltip("label:N", title="Hybrid per month"),
    ]
    layers: list[Any] = [
        alt.Chart(df).mark_line(color=GREY, interpolate="step-after").encode(x=x, y=y, tooltip=tooltip),
    ]
    pure = [
        {"option": SHORT[k] + " only", "monthly": float(v), "label": format_money(v, cur), "key": k}
        for k, v in result.pure_monthly().items()
    ]
    if pure:
        pure_df = pd.DataFrame(pure)
        layers.append(
            alt.Chart(pure_df)
            .mark_rule(strokeDash=[6, 4], strokeWidth=1.5)
            .encode(
                y=alt.Y("monthly:Q"),
                color=alt.Color(
                    "option:N",
                    title=None,
                    scale=alt.Scale(domain=list(pure_df["option"]), range=[OPTION_COLORS[k] for k in pure_df["key"]]),
                    legend=alt.Legend(orient="bottom", labelLimit=240),
                ),
                tooltip=[alt.Tooltip("option:N", title="Option"), alt.Tooltip("label:N", title="Per month")],
            )
        )
    best = df[df["best"]].head(1)
    layers.append(
        alt.Chart(best).mark_point(shape="diamond", size=160, filled=True, color=RED).encode(x=x, y=y, tooltip=tooltip)
    )
    title = alt.Title(
        "Hybrid cost against the owned size",
        subtitle="0%: all serverless; 100%: owned for the busiest hour",
    )
    return cast(alt.LayerChart, alt.layer(*layers, width=WIDTH, height=HEIGHT, title=title))


def hybrid_sentence(result: HybridResult) -> str:
    """The cheapest hybrid in words (markdown), held against the cheapest single option."""
    b, cur = result.best, result.currency
    lo, hi = result.best_percentiles
    if b.owned_replicas == 0:
        text = (
            f"**Owning nothing is the cheapest hybrid**: every turn goes to the serverless API, "
            f"**{format_money(b.monthly, cur)}** a month"
        )
    else:
        where = (
            hours_share(lo) if lo == hi else f"{hours_share(lo)} (owning for up to {hours_share(hi)} costs the same)"
        )
        text = (
            f"**The cheapest hybrid owns {b.owned_replicas} replica(s) of {OWNED_WORDS[b.owned_option]}"
            + (", autoscaled" if b.autoscale else "")
            + f"**, enough for {where}"
        )
        if b.overflow_turns == 0:
            text += f", and sends nothing to the serverless API: **{format_money(b.monthly, cur)}** a month"
        else:
            text += (
                f", and sends **{b.overflow_share:.1%}** of turns ({b.overflow_turns:,} a month) to the serverless "
                f"API: **{format_money(b.monthly, cur)}** a month ({format_money(b.owned_monthly, cur)} owned + "
                f"{format_money(b.overflow_monthly, cur)} overflow)"
            )
    single = cheapest_single(result.pure)
    if single is None:
        return text + "."
    label, cost = single
    if b.monthly < cost.monthly:
        return text + (
            f", **{format_money(cost.monthly - b.monthly, cur)} less** than the cheapest single option "
            f"({label}, {format_money(cost.monthly, cur)})."
        )
    if b.monthly == cost.monthly:
        return text + f": no saving over {label} alone."
    hint = (
        " (the hybrid here keeps its owned GPUs always on; set the self-hosted GPUs to autoscaled to compare like "
        "with like)"
        if label.endswith("autoscaled") and not b.autoscale
        else ""
    )
    return text + (f"; {label} alone costs less, {format_money(cost.monthly, cur)}{hint}.")


# --- growth --------------------------------------------------------------------------------------


def growth_scenario(scenario: Scenario, profile: LoadProfile, turns_per_month: int) -> Scenario:
    """The scenario as growth prices it on this page: the profile's peak, GPUs always on, from ``turns``.

    Month 1 then matches the always-on options under the profile (the core's traffic model holds one
    peak-to-average, not 24 hours, so autoscaling is not followed month by month).
    """
    return scenario.model_copy(
        update={
            "traffic": profile.equivalent_traffic(turns_per_month),
            "self_hosting": scenario.self_hosting.model_copy(update={"autoscale": False}),
        }
    )


def growth_sentences(plan: GrowthPlan) -> list[str]:
    """Which option stays cheapest, the month each other one becomes the cheapest, the crossings (markdown)."""
    out: list[str] = []
    stays, since = plan.stays_cheapest if plan.stays_cheapest is not None else (None, 0)
    if stays is not None:
        label = OPTION_LABELS.get(stays, stays)
        if since == 1:
            out.append(f"**{label} is the cheapest in every month, 1 to {plan.months}.**")
        else:
            out.append(f"**{label} is the cheapest from month {since} to the end (month {plan.months}).**")
    never = []
    for name in plan.totals:
        label = OPTION_LABELS.get(name, name)
        month = plan.becomes_cheapest.get(name)
        if month is None:
            never.append(label)
        elif name == stays and since == 1:
            continue
        elif month == 1:
            out.append(f"{label} is the cheapest in month 1.")
        else:
            out.append(f"{label} becomes the cheapest in month {month}.")
    if never:
        verb = "is" if len(never) == 1 else "are"
        out.append(f"{' and '.join(never)} {verb} never the cheapest within {plan.months} months.")
    if len(plan.crossings) > MAX_CROSSINGS:
        first, last = plan.crossings[0].month, plan.crossings[-1].month
        out.append(
            f"Two options swap places {len(plan.crossings)} times between months {first} and {last} as GPU steps "
            "cross the other lines (see the chart)."
        )
        return out
    for c in plan.crossings:
        out.append(
            f"{OPTION_LABELS.get(c.a, c.a)} and {OPTION_LABELS.get(c.b, c.b)} cost the same at "
            f"{c.turns_per_month:,.0f} turns a month, passed in month {c.month}; "
            f"{OPTION_LABELS.get(c.cheaper_after, c.cheaper_after)} is the cheaper of the two after it."
        )
    return out


def _growth_df(plan: GrowthPlan) -> pd.DataFrame:
    df = plan.frame()
    df["label"] = [SHORT.get(k, k) for k in df["option"]]
    df["monthly_label"] = [format_money(v, plan.currency) for v in df["monthly"]]
    df["cumulative_label"] = [format_money(v, plan.currency) for v in df["cumulative"]]
    df["turns_label"] = [f"{t:,}" for t in df["turns_per_month"]]
    return df


def _option_color(df: pd.DataFrame) -> alt.Color:
    keys = [k for k in OPTION_LABELS if k in set(df["option"])]
    return alt.Color(
        "label:N",
        title=None,
        scale=alt.Scale(domain=[SHORT[k] for k in keys], range=[OPTION_COLORS[k] for k in keys]),
        legend=alt.Legend(orient="bottom", labelLimit=240),
    )


def growth_chart(plan: GrowthPlan) -> alt.LayerChart:
    """Monthly cost of each option over the months; GPU options as steps, the cheapest each month dotted."""
    df = _growth_df(plan)
    x = alt.X("month:Q", title="Month", scale=alt.Scale(domain=[1, plan.months]), axis=alt.Axis(tickMinStep=1))
    y = alt.Y("monthly:Q", title=money_title("Monthly cost", plan.currency))
    tooltip = [
        alt.Tooltip("label:N", title="Option"),
        alt.Tooltip("month:Q", title="Month"),
        alt.Tooltip("turns_label:N", title="Turns that month"),
        alt.Tooltip("monthly_label:N", title="Cost that month"),
        alt.Tooltip("cumulative_label:N", title="Spent so far"),
    ]
    color = _option_color(df)
    layers: list[Any] = []
    for key in [k for k in OPTION_LABELS if k in set(df["option"])]:
        interpolate: Literal["linear", "step-after"] = "linear" if key == "serverless" else "step-after"
        layers.append(
            alt.Chart(df[df["option"] == key])
            .mark_line(interpolate=interpolate, strokeWidth=2.5)
            .encode(x=x, y=y, color=color, tooltip=tooltip)
        )
    layers.append(
        alt.Chart(df[df["cheapest"]]).mark_point(filled=True, size=40).encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    title = alt.Title(
        "Monthly cost as traffic grows",
        subtitle=f"{plan.growth_per_month:+.1%} a month; dots: the cheapest that month",
    )
    return cast(alt.LayerChart, alt.layer(*layers, width=WIDTH, height=HEIGHT, title=title))


def cumulative_chart(plan: GrowthPlan) -> alt.Chart:
    """Cumulative spend of each option over the months."""
    df = _growth_df(plan)
    chart: alt.Chart = (
        alt.Chart(df)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=alt.X("month:Q", title="Month", scale=alt.Scale(domain=[1, plan.months]), axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("cumulative:Q", title=money_title("Spent so far", plan.currency)),
            color=_option_color(df),
            tooltip=[
                alt.Tooltip("label:N", title="Option"),
                alt.Tooltip("month:Q", title="Month"),
                alt.Tooltip("cumulative_label:N", title="Spent so far"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT, title="Cumulative spend")
    )
    return chart
