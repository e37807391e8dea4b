"""Altair chart builders and number formats for the app and the PDF summary.

Pure functions: they take calculator results (or plain DataFrames built from them) and return
``alt.Chart`` objects, testable through ``chart.to_dict()``. No streamlit import here.

    turn_parts_chart     the reused-prefix turn beside the no-reuse turn, stacked by billed part
    volume_chart         monthly cost against monthly volume (GPU options as steps), today and break-even
    share_sweep_chart    monthly cost against hit rate or prefix share
    utilisation_chart    cost per million tokens against GPU utilisation
    sensitivity_chart    low and high values of the inputs that move the answer most (a tornado)
    price_history_chart  one offer's price versions as a step chart
    ttl_chart            cost per session of each cache lifetime against the median gap between turns
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Literal, cast

import altair as alt
import numpy as np
import numpy.typing as npt
import pandas as pd
from altair.utils.schemapi import Undefined, UndefinedType

from calculator.catalog import limits
from calculator.catalog.prices import (
    Offer,
    PriceCatalog,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    TokenPrices,
)
from calculator.errors import InputError
from calculator.present.chart_spec import Spec, layer, rows
from calculator.present.money import (
    amount_format,
    axis_format,
    fmt_volume,
    format_money,
    format_small,
    money_title,
)
from calculator.present.shown_currency import turn_currency
from calculator.pricing.billing import hourly_price_per_replica
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import OPTION_LABELS, Catalogs, Comparison, CostFn, cost_curves, curves
from calculator.pricing.resolve import resolve
from calculator.pricing.ttl import EmpiricalGaps, ExponentialGaps, GapDistribution, LognormalGaps, advise_ttl
from calculator.pricing.turn import TurnComparison
from calculator.scenario.model import Scenario

__all__ = [
    "OPTION_COLORS",
    "PART_LABELS",
    "cheapest_switch",
    "fmt_volume",
    "option_color_scale",
    "price_history_chart",
    "scaled_prices",
    "sensitivity_chart",
    "sensitivity_frame",
    "share_sweep_frame",
    "share_sweep_chart",
    "turn_parts_chart",
    "turn_parts_frame",
    "ttl_chart",
    "ttl_sweep_frame",
    "turn_currency",
    "utilisation_chart",
    "utilisation_frame",
    "volume_chart",
    "volume_frame",
]

OPTION_COLORS = {"serverless": "#1f6feb", "dedicated": "#bf8700", "self_hosted": "#1a7f37"}
PART_LABELS = {
    "uncached_input": "Uncached input",
    "cache_write": "Cache write",
    "cached_input": "Cached input",
    "output": "Output",
}
PART_COLORS = ["#1f6feb", "#8250df", "#54aeff", "#bf8700"]
WIDTH = 560
HEIGHT = 340
LEGEND: dict[str, Any] = {"orient": "bottom", "columns": 1}
"""The options' legend under the chart, one a row: in one row the third option ran past a half-width chart's
edge at 1024 to 1440 px and was cut off ("Self-hosted G")."""
PART_LEGEND: dict[str, Any] = {"orient": "bottom", "columns": 2}
"""The billed parts' legend, two a row (their names are short; in one row the fourth was cut off)."""


# --- numbers that are not money (money: calculator.present.money) -------------------------------


def option_color_scale(options: list[str]) -> alt.Scale:
    labels = [OPTION_LABELS[o] for o in options]
    return alt.Scale(domain=labels, range=[OPTION_COLORS[o] for o in options])


_FACETS = ("row", "column", "facet")


def _layered(*layers: alt.Chart, **props: Any) -> alt.LayerChart:
    """``alt.layer(*layers, **props)`` for plain layers, without the two deep copies of every layer it makes
    (to merge selection parameters across layers): a fifth of building a chart on each Compare rerun.

    Plain: every layer a unit chart with its own data and no parameters, facet, size or view of its own,
    as the charts here draw them; there ``alt.layer`` leaves each layer as it is, so setting the list gives
    the same chart. Anything else goes through ``alt.layer`` (tests/test_sweep_speed_equivalence.py holds
    the two equal).
    """
    plain = all(
        isinstance(c, alt.Chart)
        and not isinstance(c.data, UndefinedType)
        and all(isinstance(c[k], UndefinedType) for k in ("params", "width", "height", "view"))
        and all(isinstance(getattr(c["encoding"], ch, Undefined), UndefinedType) for ch in _FACETS)
        for c in layers
    )
    if not plain or len({id(c.data) for c in layers}) < 2:
        return cast(alt.LayerChart, alt.layer(*layers, **props))
    chart = alt.LayerChart(**props)
    chart.layer = list(layers)
    return chart


# --- the turn ------------------------------------------------------------------------------------


def turn_parts_frame(turn: TurnComparison, scenario: Scenario | None = None) -> pd.DataFrame:
    _, convert = turn_currency(turn, scenario)
    rows = []
    for case, cost in (("No reuse", turn.no_reuse), ("Reused prefix", turn.reused)):
        for order, (part, label) in enumerate(PART_LABELS.items()):
            rows.append(
                {
                    "case": case,
                    "part": label,
                    "order": order,
                    "cost": float(convert(getattr(cost.parts, part))),
                    "total": float(convert(cost.cost_per_turn)),
                }
            )
    return pd.DataFrame(rows)


def turn_parts_chart(turn: TurnComparison, scenario: Scenario | None = None) -> Spec:
    """The reused-prefix turn beside the no-reuse turn, stacked by billed part, in the scenario's currency
    (the sheet's without one)."""
    currency, _ = turn_currency(turn, scenario)
    df = turn_parts_frame(turn, scenario)
    costs, totals = df["cost"].tolist(), df["total"].tolist()
    data = rows(
        {
            "case": df["case"].tolist(),
            "part": df["part"].tolist(),
            "order": df["order"].tolist(),
            "cost": costs,
            "total": totals,
            "cost_label": [format_small(v, currency) for v in costs],
            "total_label": [format_small(v, currency) for v in totals],
        }
    )
    return Spec(
        {
            "$schema": alt.SCHEMA_URL,
            "data": {"values": data},
            "mark": {"type": "bar"},
            "encoding": {
                "x": {
                    "field": "cost",
                    "type": "quantitative",
                    "title": money_title("Cost per turn", currency),
                    "stack": "zero",
                    "axis": {"format": axis_format(max(totals), currency)},
                },
                "y": {"field": "case", "type": "nominal", "title": None, "sort": ["No reuse", "Reused prefix"]},
                "color": {
                    "field": "part",
                    "type": "nominal",
                    "title": "Billed part",
                    "scale": {"domain": list(PART_LABELS.values()), "range": PART_COLORS},
                    "legend": PART_LEGEND,
                },
                "order": {"field": "order", "type": "quantitative"},
                "tooltip": [
                    {"field": "case", "type": "nominal", "title": "Turn"},
                    {"field": "part", "type": "nominal", "title": "Part"},
                    {"field": "cost_label", "type": "nominal", "title": "Cost"},
                    {"field": "total_label", "type": "nominal", "title": "Turn total"},
                ],
            },
            "title": f"Cost of one turn ({turn.price.provider} {turn.price.model}, {turn.price.effective})",
            "width": WIDTH,
            "height": 270,  # a two-row legend under it
        }
    )


# --- monthly cost against volume -----------------------------------------------------------------


def _volume_grid(lo: float, hi: float, points: int) -> npt.NDArray[np.float64]:
    return np.geomspace(lo, hi, points)


def volume_frame(curves: dict[str, CostFn], lo: float = 1e4, hi: float = 1e9, points: int = 241) -> pd.DataFrame:
    grid = _volume_grid(lo, hi, points)
    frames = []
    for name, fn in curves.items():
        frames.append(pd.DataFrame({"option": OPTION_LABELS[name], "key": name, "turns": grid, "monthly": fn(grid)}))
    if not frames:
        return pd.DataFrame(columns=["option", "key", "turns", "monthly"])
    return pd.concat(frames, ignore_index=True)


def _volume_range(today: float, comparison: Comparison | None) -> tuple[float, float]:
    marks = [today] + ([c.turns_per_month for c in comparison.crossings] if comparison else [])
    marks = [m for m in marks if m > 0]
    lo = min(marks) / 30 if marks else 1e4
    hi = max(marks) * 30 if marks else 1e9
    return max(lo, 1e2), min(max(hi, lo * 100), 1e10)


def volume_chart(
    curves: dict[str, CostFn],
    today: float,
    comparison: Comparison | None = None,
    currency: str = "USD",
    points: int = 241,
) -> Spec:
    """Monthly cost of every option against turns per month, with today's volume and the crossings."""
    lo, hi = _volume_range(today, comparison)
    options = list(curves)
    x = {"field": "turns", "type": "quantitative", "title": "Turns per month (log scale)", "scale": {"type": "log"}}
    y = {
        "field": "monthly",
        "type": "quantitative",
        "title": money_title("Monthly cost", currency, "log scale"),
        "scale": {"type": "log"},
    }
    color = {
        "field": "option",
        "type": "nominal",
        "title": "Option",
        "scale": {"domain": [OPTION_LABELS[o] for o in options], "range": [OPTION_COLORS[o] for o in options]},
        "legend": LEGEND,
    }
    tooltip = [
        {"field": "option", "type": "nominal", "title": "Option"},
        {"field": "turns", "type": "quantitative", "title": "Turns / month", "format": ",.0f"},
        {
            "field": "monthly",
            "type": "quantitative",
            "title": money_title("Monthly cost", currency),
            "format": amount_format(currency),
        },
    ]
    grid = _volume_grid(lo, hi, points)
    turns = grid.tolist()
    layers: list[dict[str, Any]] = []
    for name in options:
        data = rows({"option": OPTION_LABELS[name], "turns": turns, "monthly": curves[name](grid).tolist()})
        mark = {"type": "line", "interpolate": "linear" if name == "serverless" else "step-after", "strokeWidth": 2.5}
        layers.append(layer(data, mark, {"x": x, "y": y, "color": color, "tooltip": tooltip}))
    layers.append(
        layer(
            rows({"turns": [today], "label": [f"Today: {today:,.0f} turns/month"]}),
            {"type": "rule", "color": "#6e7781", "strokeDash": [6, 4]},
            {
                "x": {"field": "turns", "type": "quantitative"},
                "tooltip": [{"field": "label", "type": "nominal", "title": "Volume"}],
            },
        )
    )
    crossings = [c for c in (comparison.crossings if comparison is not None else ()) if lo <= c.turns_per_month <= hi]
    if crossings:
        points_at = [
            {
                "turns": c.turns_per_month,
                "monthly": float(curves[c.cheaper_above](np.array([c.turns_per_month]))[0]),
                "label": f"{OPTION_LABELS[c.a]} = {OPTION_LABELS[c.b]}",
                "turns_label": f"{c.turns_per_month:,.0f}",
                "cheaper": OPTION_LABELS[c.cheaper_above],
            }
            for c in crossings
        ]
        layers.append(
            layer(
                rows({k: [p[k] for p in points_at] for k in points_at[0]}),
                {"type": "point", "color": "#cf222e", "filled": True, "shape": "diamond", "size": 140},
                {
                    "x": {"field": "turns", "type": "quantitative"},
                    "y": {"field": "monthly", "type": "quantitative"},
                    "tooltip": [
                        {"field": "label", "type": "nominal", "title": "Break-even"},
                        {"field": "turns_label", "type": "nominal", "title": "Turns / month"},
                        {"field": "cheaper", "type": "nominal", "title": "Cheaper above"},
                    ],
                },
            )
        )
    return Spec(
        {
            "$schema": alt.SCHEMA_URL,
            "layer": layers,
            "title": "Monthly cost against monthly volume",
            "width": WIDTH,
            "height": HEIGHT + 60,  # the options' legend takes three rows under it
        }
    )


# --- sweeps -------------------------------------------------------------------------------------


def share_sweep_chart(df: pd.DataFrame, variable: str, current: float, currency: str = "USD") -> alt.LayerChart:
    """Monthly cost against hit rate or prefix share; ``df`` has ``value``, ``option``, ``monthly``."""
    label = {"hit_rate": "Cache hit rate", "prefix_share": "Prefix share"}.get(variable, variable)
    options = [k for k, v in OPTION_LABELS.items() if v in set(df["option"])]
    lines = (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("value:Q", title=label, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            y=alt.Y("monthly:Q", title=money_title("Monthly cost", currency)),
            color=alt.Color("option:N", title="Option", scale=option_color_scale(options), legend=alt.Legend(**LEGEND)),
            tooltip=[
                alt.Tooltip("option:N", title="Option"),
                alt.Tooltip("value:Q", title=label, format=".0%"),
                alt.Tooltip("monthly:Q", title=money_title("Monthly cost", currency), format=amount_format(currency)),
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"value": [current], "label": [f"Now: {current:.0%}"]}))
        .mark_rule(strokeDash=[6, 4], color="#6e7781")
        .encode(x=alt.X("value:Q"), tooltip=[alt.Tooltip("label:N", title=label)])
    )
    return _layered(lines, rule, title=f"Monthly cost against {label.lower()}", width=WIDTH, height=HEIGHT)


def utilisation_chart(
    df: pd.DataFrame, currency: str = "USD", current: dict[str, float] | None = None
) -> alt.LayerChart:
    """Cost per million tokens against GPU utilisation; ``df`` has ``utilisation``, ``option``, ``per_million``.

    A serverless row (constant) may be included as a reference line.
    """
    df = df.copy()
    df["label"] = [format_small(v, currency) for v in df["per_million"]]
    options = [k for k, v in OPTION_LABELS.items() if v in set(df["option"])]
    layers: list[Any] = [
        alt.Chart(df)
        .mark_line()
        .encode(
            x=alt.X("utilisation:Q", title="Average GPU utilisation", axis=alt.Axis(format="%")),
            y=alt.Y(
                "per_million:Q",
                # a title longer than the plot is tall hid the chart title
                title=money_title("Per 1M tokens", currency, "log"),
                scale=alt.Scale(type="log"),
            ),
            color=alt.Color("option:N", title="Option", scale=option_color_scale(options), legend=alt.Legend(**LEGEND)),
            tooltip=[
                alt.Tooltip("option:N", title="Option"),
                alt.Tooltip("utilisation:Q", title="Utilisation", format=".0%"),
                alt.Tooltip("label:N", title="Per 1M tokens"),
            ],
        )
    ]
    if current:
        now = pd.DataFrame(
            [{"option": OPTION_LABELS[k], "utilisation": u} for k, u in current.items() if u is not None and u > 0]
        )
        if not now.empty:
            merged = []
            for _, row in now.iterrows():
                part = df[df["option"] == row["option"]]
                if part.empty:
                    continue
                idx = (part["utilisation"] - row["utilisation"]).abs().idxmin()
                merged.append({**part.loc[idx].to_dict(), "utilisation": row["utilisation"]})
            if merged:
                layers.append(
                    alt.Chart(pd.DataFrame(merged))
                    .mark_point(size=120, filled=True, shape="circle")
                    .encode(
                        x=alt.X("utilisation:Q"),
                        y=alt.Y("per_million:Q"),
                        color=alt.Color("option:N", scale=option_color_scale(options), legend=None),
                        tooltip=[
                            alt.Tooltip("option:N", title="Today"),
                            alt.Tooltip("utilisation:Q", title="Utilisation", format=".1%"),
                            alt.Tooltip("label:N", title="Per 1M tokens"),
                        ],
                    )
                )
    return _layered(*layers, title="Cost per million tokens against GPU utilisation", width=WIDTH, height=HEIGHT)


def sensitivity_chart(df: pd.DataFrame, base: float, currency: str = "USD", subject: str = "") -> alt.LayerChart:
    """A tornado: ``df`` has ``input``, ``low_label``, ``high_label``, ``low``, ``high`` (the answer at each)."""
    df = df.copy()
    df["swing"] = (df["high"] - df["low"]).abs()
    df = df.sort_values("swing", ascending=False)
    order = list(df["input"])
    long = pd.concat(
        [
            pd.DataFrame({"input": df["input"], "end": "low", "setting": df["low_label"], "value": df["low"]}),
            pd.DataFrame({"input": df["input"], "end": "high", "setting": df["high_label"], "value": df["high"]}),
        ],
        ignore_index=True,
    )
    long["base"] = base
    long["value_label"] = [format_money(v, currency) for v in long["value"]]
    bars = (
        alt.Chart(long)
        .mark_bar(opacity=0.85)
        .encode(
            y=alt.Y("input:N", title=None, sort=order),
            x=alt.X("value:Q", title=money_title("Monthly cost", currency) + (f" of {subject}" if subject else "")),
            x2=alt.X2("base:Q"),
            color=alt.Color(
                "end:N",
                title="Input at",
                scale=alt.Scale(domain=["low", "high"], range=["#54aeff", "#cf222e"]),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[
                alt.Tooltip("input:N", title="Input"),
                alt.Tooltip("setting:N", title="Set to"),
                alt.Tooltip("value_label:N", title="Monthly cost"),
            ],
        )
    )
    rule = alt.Chart(pd.DataFrame({"base": [base]})).mark_rule(color="#6e7781").encode(x=alt.X("base:Q"))
    return _layered(bars, rule, title="What moves the answer most", width=WIDTH, height=110 + 38 * len(order))


# --- price sheets -------------------------------------------------------------------------------


def price_history_chart(df: pd.DataFrame, unit: str, title: str = "Price history") -> alt.Chart:
    """Price versions as steps; ``df`` has ``effective`` (date), ``price`` (float), ``part`` (str), ``source``."""
    df = df.copy()
    df["effective"] = pd.to_datetime(df["effective"])
    chart: alt.Chart = (
        alt.Chart(df, title=title)
        .mark_line(interpolate="step-after", point=True)
        .encode(
            x=alt.X("effective:T", title="Effective from"),
            y=alt.Y("price:Q", title=unit),
            color=alt.Color("part:N", title="Price", legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip("part:N", title="Price"),
                alt.Tooltip("effective:T", title="Effective", format="%Y-%m-%d"),
                alt.Tooltip("price:Q", title=unit, format=",.4f"),
                alt.Tooltip("source:N", title="Source"),
            ],
        )
        .properties(width=WIDTH, height=320)
    )
    return chart


# --- data for the sweeps (pure, shared by the page and the PDF) ---------------------------------


def _with(scenario: Scenario, section: str, **update: Any) -> Scenario:
    part = getattr(scenario, section)
    return scenario.model_copy(update={section: part.model_copy(update=update)})


def _resolver(scenario: Scenario, cat: Catalogs) -> Callable[[Scenario], dict[str, CostFn]]:
    """Cost curves of variants of ``scenario`` priced on ``cat``: each from the scenario resolved once
    (offers, versions, records looked up once; only what a variant changes is sized again), as
    :func:`cost_curves` would price it alone. When the scenario itself does not resolve, each variant is
    resolved on its own, so a variant that does resolve is still priced."""
    try:
        base = resolve(scenario, cat)
    except InputError:
        return lambda variant: cost_curves(variant, cat)
    return lambda variant: curves(base.with_scenario(variant))


def share_sweep_frame(scenario: Scenario, cat: Catalogs, variable: str, points: int = 21) -> pd.DataFrame:
    """Monthly cost of each option at today's volume as ``variable`` (hit_rate or prefix_share) runs 0 to 1."""
    scenario = with_cheapest_offers(scenario, cat)[0]  # one configuration priced along the sweep
    volume = np.array([float(scenario.traffic.turns_per_month)])
    priced = _resolver(scenario, cat)
    rows = []
    for value in np.linspace(0.0, 1.0, points):
        shape = scenario.workload.model_copy(update={variable: Decimal(f"{value:.4f}")})
        for name, fn in priced(scenario.model_copy(update={"workload": shape})).items():
            rows.append(
                {"value": float(value), "option": OPTION_LABELS[name], "key": name, "monthly": float(fn(volume)[0])}
            )
    return pd.DataFrame(rows)


def cheapest_switch(df: pd.DataFrame) -> list[tuple[float, str, str]]:
    """Where the cheapest option changes along a sweep: (value, cheaper below, cheaper above)."""
    if df.empty:
        return []
    # plain lists: a pandas group-by and a row loop were a tenth of the sweep they read
    best: dict[float, tuple[float, str]] = {}
    for value, key, monthly in zip(df["value"].tolist(), df["key"].tolist(), df["monthly"].tolist(), strict=True):
        if math.isnan(monthly):
            continue
        if value not in best or monthly < best[value][0]:  # a tie keeps the first row, as idxmin does
            best[value] = (monthly, str(key))
    switches = []
    ordered = sorted(best.items())
    for (before, (_, below)), (after, (_, above)) in zip(ordered, ordered[1:], strict=False):
        if above != below:
            switches.append(((before + after) / 2, below, above))
    return switches


def utilisation_frame(comparison: Comparison, cat: Catalogs | None = None, points: int = 40) -> pd.DataFrame:
    """Cost per million tokens (input + output) for the GPU options as utilisation runs 5% to 100%.

    GPU hours only (no engineer, no spares): what a replica-hour of the setup each option was sized
    from buys at each load. The serverless reused-prefix turn is added as a flat reference line.
    """
    res = comparison.resolution
    s = res.scenario
    tokens = float(s.workload.input_tokens + s.workload.output_tokens)
    grid = np.linspace(0.05, 1.0, points)
    frames = []
    for opt in comparison.options:
        if opt.option == "serverless":
            if comparison.turn is not None and tokens > 0:
                per_m = float(opt.cost_per_1000_turns or 0) / 1000 / tokens * 1e6
                frames.append(
                    pd.DataFrame({"utilisation": grid, "option": OPTION_LABELS[opt.option], "per_million": per_m})
                )
            continue
        side = res.owned("dedicated" if opt.option == "dedicated" else "self_hosted")
        if side is None or tokens <= 0:
            continue
        fx = s.fx.factor(side.sheet.currency, s.currency)
        hourly = float(hourly_price_per_replica(side.offer, res.as_of, side.replica_gpus))
        tokens_per_hour = side.capacity.requests_per_s * grid * 3600 * tokens
        frames.append(
            pd.DataFrame(
                {
                    "utilisation": grid,
                    "option": OPTION_LABELS[opt.option],
                    "per_million": hourly * fx / tokens_per_hour * 1e6,
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=["utilisation", "option", "per_million"])
    return pd.concat(frames, ignore_index=True)


def _half_up(x: float) -> float:
    return min(1.0, x + (1.0 - x) / 2)


def _scale_tokens(p: TokenPrices, f: Decimal) -> TokenPrices:
    update: dict[str, Any] = {"input": p.input * f, "output": p.output * f}
    if p.cached_input is not None:
        update["cached_input"] = p.cached_input * f
    if p.cache_write:
        update["cache_write"] = {ttl: price * f for ttl, price in p.cache_write.items()}
    if p.cache_storage_per_hour is not None:
        update["cache_storage_per_hour"] = p.cache_storage_per_hour * f
    return p.model_copy(update=update)


def _scale_offer(offer: Any, f: Decimal) -> Any:
    versions: list[Any] = []
    for v in offer.versions:
        if isinstance(v, ServerlessPriceVersion):
            versions.append(
                v.model_copy(
                    update={
                        "prices": _scale_tokens(v.prices, f),
                        "long_context": tuple(_scale_tokens(t, f) for t in v.long_context),
                    }
                )
            )
        else:
            update = {k: getattr(v, k) * f for k in ("per_gpu_hour", "per_replica_hour") if getattr(v, k, None)}
            versions.append(v.model_copy(update=update))
    return offer.model_copy(update={"versions": tuple(versions)})


def scaled_prices(cat: Catalogs, scenario: Scenario, which: Literal["serverless", "gpu"], factor: float) -> Catalogs:
    """The catalogs with the scenario's serverless prices (``serverless``) or its dedicated and GPU-VM hour
    prices (``gpu``) multiplied by ``factor``, every version alike; other offers unchanged."""
    targets: set[tuple[str, str, str]] = set()
    if which == "serverless" and scenario.serverless:
        sheet, offer = cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)
        targets.add((sheet.provider, offer.kind, offer.id))
    if which == "gpu":
        for choice, kind in ((scenario.dedicated, "dedicated"), (scenario.gpu_vm, "gpu_vm")):
            if choice is not None:
                sheet, found = cat.prices.offer(choice.provider, choice.offer, kind)
                targets.add((sheet.provider, found.kind, found.id))
    f = Decimal(repr(factor))
    sheets: list[PriceSheet] = []
    for sheet in cat.prices.sheets:
        offers: tuple[Offer, ...] = tuple(
            _scale_offer(o, f) if (sheet.provider, o.kind, o.id) in targets else o for o in sheet.offers
        )
        sheets.append(sheet.model_copy(update={"offers": offers}))
    return dataclasses.replace(cat, prices=PriceCatalog(sheets=tuple(sheets)))


PRICE_SWING = 0.2
"""Prices move this share down and up in the sensitivity chart (±20%)."""


def sensitivity_frame(scenario: Scenario, cat: Catalogs, option: str) -> tuple[pd.DataFrame, float]:
    """The option's monthly cost with each input set low and high (others unchanged), and the base cost.

    Shares go to half their value and halfway to 1; counts and volume to half and double; the serverless
    prices and the GPU-hour prices (dedicated and GPU VMs together) 20% down and up.
    ``cheapest_low``/``cheapest_high`` name the cheapest option at each setting. A price row is kept when
    it moves the option's cost or changes which option is cheapest.
    """
    scenario = with_cheapest_offers(scenario, cat)[0]  # the picked configuration, its prices scaled
    w, t, h = scenario.workload, scenario.traffic, scenario.self_hosting
    volume = float(t.turns_per_month)

    resolved: dict[tuple[int, int], dict[str, CostFn] | None] = {}  # the volume rows reuse the scenario's
    priced = _resolver(scenario, cat)

    def evaluate(s: Scenario, vol: float = volume, c: Catalogs = cat) -> tuple[float, str]:
        if (id(s), id(c)) not in resolved:
            try:
                resolved[id(s), id(c)] = priced(s) if c is cat else cost_curves(s, c)
            except InputError:
                resolved[id(s), id(c)] = None
        curves = resolved[id(s), id(c)]
        if curves is None:
            return float("nan"), "n/a: the setup does not fit"  # e.g. twice the tokens no longer fit in memory
        values = {k: float(fn(np.array([vol]))[0]) for k, fn in curves.items()}
        return values.get(option, float("nan")), OPTION_LABELS[min(values, key=lambda k: values[k])]

    base, base_cheapest = evaluate(scenario)
    s_share, h_rate = float(w.prefix_share), float(w.hit_rate)
    Setting = tuple[str, Scenario, float, Catalogs]
    cases: list[tuple[str, Setting, Setting, bool]] = []

    def add(
        name: str, low: tuple[str, Scenario, float], high: tuple[str, Scenario, float], optional: bool = False
    ) -> None:
        cases.append((name, (*low, cat), (*high, cat), optional))

    add("Turns per month", (f"{volume / 2:,.0f}", scenario, volume / 2), (f"{volume * 2:,.0f}", scenario, volume * 2))
    for name, field, value in (("Prefix share", "prefix_share", s_share), ("Cache hit rate", "hit_rate", h_rate)):
        lo, hi = value / 2, _half_up(value)
        add(
            name,
            (f"{lo:.2f}", _with(scenario, "workload", **{field: Decimal(f"{lo:.4f}")}), volume),
            (f"{hi:.2f}", _with(scenario, "workload", **{field: Decimal(f"{hi:.4f}")}), volume),
        )
    for name, field, count in (
        ("Input tokens", "input_tokens", w.input_tokens),
        ("Output tokens", "output_tokens", w.output_tokens),
    ):
        # doubled, but never past the longest sequence a turn may be (a 7M-token output would make 14M)
        more = min(count * 2, max(count, int(limits.TOKENS.high) - (w.input_tokens + w.output_tokens - count)))
        add(
            name,
            (f"{count // 2:,}", _with(scenario, "workload", **{field: count // 2}), volume),
            (f"{more:,}", _with(scenario, "workload", **{field: more}), volume),
        )
    if option != "serverless":
        p2a = t.peak_to_average
        add(
            "Peak-to-average",
            (f"{max(1.0, p2a / 2):g}", _with(scenario, "traffic", peak_to_average=max(1.0, p2a / 2)), volume),
            (f"{p2a * 2:g}", _with(scenario, "traffic", peak_to_average=p2a * 2), volume),
        )
        u = h.target_utilisation
        add(
            "Utilisation target",
            (f"{u * 0.75:.2f}", _with(scenario, "self_hosting", target_utilisation=u * 0.75), volume),
            (
                f"{min(1.0, u * 1.25):.2f}",
                _with(scenario, "self_hosting", target_utilisation=min(1.0, u * 1.25)),
                volume,
            ),
        )
    if option == "self_hosted":
        share = h.engineer_share
        add(
            "Engineer share",
            (f"{share / 2:g}", _with(scenario, "self_hosting", engineer_share=share / 2), volume),
            (f"{min(5.0, share * 2):g}", _with(scenario, "self_hosting", engineer_share=min(5.0, share * 2)), volume),
        )
    lo_f, hi_f = 1 - PRICE_SWING, 1 + PRICE_SWING
    for name, which, present in (
        ("Serverless prices", "serverless", scenario.serverless is not None),
        ("GPU-hour prices", "gpu", scenario.dedicated is not None or scenario.gpu_vm is not None),
    ):
        if not present:
            continue
        kind = cast(Literal["serverless", "gpu"], which)
        cases.append(
            (
                name,
                (f"-{PRICE_SWING:.0%}", scenario, volume, scaled_prices(cat, scenario, kind, lo_f)),
                (f"+{PRICE_SWING:.0%}", scenario, volume, scaled_prices(cat, scenario, kind, hi_f)),
                True,
            )
        )
    rows = []
    for name, (lo_label, lo_s, lo_vol, lo_cat), (hi_label, hi_s, hi_vol, hi_cat), optional in cases:
        low, cheap_low = evaluate(lo_s, lo_vol, lo_cat)
        high, cheap_high = evaluate(hi_s, hi_vol, hi_cat)
        moves = not (math.isclose(low, base) and math.isclose(high, base))
        if optional and not moves and cheap_low == base_cheapest and cheap_high == base_cheapest:
            continue
        rows.append(
            {
                "input": name,
                "low_label": lo_label,
                "high_label": hi_label,
                "low": low,
                "high": high,
                "cheapest_low": cheap_low,
                "cheapest_high": cheap_high,
            }
        )
    return pd.DataFrame(rows), base


# --- cache lifetimes (the TTL advisor) -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _ScaledGaps(GapDistribution):
    """Listed gaps all multiplied by ``factor`` (the same pattern, faster or slower); cdf by bisection."""

    ordered: tuple[float, ...]
    factor: float
    kind: str = "list"

    def cdf(self, seconds: float) -> float:
        return bisect.bisect_right(self.ordered, seconds / self.factor) / len(self.ordered)

    def describe(self) -> str:
        return f"{len(self.ordered):,} gaps scaled by {self.factor:g}"


def gap_median(gaps: GapDistribution) -> float:
    """The median gap in seconds of a distribution the advisor accepts."""
    median = getattr(gaps, "median", None)
    if median is None:
        raise TypeError(f"no median for {type(gaps).__name__}")
    return float(median)


def _at_median(gaps: GapDistribution, median: float, ordered: tuple[float, ...] | None) -> GapDistribution:
    if isinstance(gaps, LognormalGaps):
        return LognormalGaps(median, gaps.sigma)
    if isinstance(gaps, ExponentialGaps):
        return ExponentialGaps(median)
    assert isinstance(gaps, EmpiricalGaps) and ordered is not None
    base = gaps.median
    return _ScaledGaps(ordered, median / base if base > 0 else 1.0)


NO_CACHE = "No cache"


def ttl_sweep_frame(
    sheet: PriceSheet,
    offer: ServerlessOffer,
    version: ServerlessPriceVersion,
    *,
    prefix_tokens: int,
    gaps: GapDistribution,
    turns_per_session: float,
    points: int = 61,
) -> pd.DataFrame:
    """Cost per session of each cache lifetime and of no caching as the median gap runs from 10 seconds to
    a day (or wider, to include the current median); the distribution keeps its shape (a list of gaps is
    scaled as a whole). Columns: ``median_min``, ``series``, ``cost``, ``ttl_seconds`` (None for no cache)."""
    current = gap_median(gaps)
    lo = min(10.0, current / 3) if current > 0 else 10.0
    hi = max(86_400.0, current * 3)
    grid = np.geomspace(lo, hi, points)
    ordered = tuple(sorted(gaps.gaps)) if isinstance(gaps, EmpiricalGaps) else None
    rows = []
    for median in grid:
        advice = advise_ttl(
            sheet,
            offer,
            version,
            prefix_tokens=prefix_tokens,
            gaps=_at_median(gaps, float(median), ordered),
            turns_per_session=turns_per_session,
            sessions_per_month=1,
        )
        for o in advice.outcomes:
            rows.append(
                {"median_min": median / 60, "series": o.ttl, "cost": o.cost_per_session, "ttl_seconds": o.ttl_seconds}
            )
        rows.append(
            {
                "median_min": median / 60,
                "series": NO_CACHE,
                "cost": advice.no_cache_cost_per_session,
                "ttl_seconds": None,
            }
        )
    return pd.DataFrame(rows)


TTL_COLORS = ["#1f6feb", "#8250df", "#bf8700", "#1a7f37"]


def ttl_chart(
    df: pd.DataFrame, current_median_s: float, today: dict[str, float], currency: str = "USD"
) -> alt.LayerChart:
    """Cost per session against the median gap (log scale) for each lifetime and no caching, today marked.

    ``today`` maps each series (``5m``, ``1h``, ``No cache``) to its cost per session at the current median."""
    df = df.copy()
    df["cost_label"] = [format_small(v, currency) for v in df["cost"]]
    df["gap_label"] = [_minutes(m) for m in df["median_min"]]
    series = list(dict.fromkeys(df["series"]))
    colors = [*TTL_COLORS[: len(series) - 1], "#6e7781"] if NO_CACHE in series else TTL_COLORS[: len(series)]
    color = alt.Color(
        "series:N",
        title="Cache lifetime",
        scale=alt.Scale(domain=series, range=colors),
        legend=alt.Legend(orient="bottom"),
    )
    domain = [float(df["median_min"].min()), float(df["median_min"].max())]
    x = alt.X(
        "median_min:Q",
        title="Median gap between turns (minutes, log scale)",
        scale=alt.Scale(type="log", domain=domain, nice=False),
    )
    y = alt.Y("cost:Q", title=money_title("Cost per session", currency))
    lines = (
        alt.Chart(df)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=x,
            y=y,
            color=color,
            strokeDash=alt.StrokeDashValue(
                **alt.condition(alt.datum.series == NO_CACHE, alt.value([5, 4]), alt.value([1, 0]))
            ),
            tooltip=[
                alt.Tooltip("series:N", title="Lifetime"),
                alt.Tooltip("gap_label:N", title="Median gap"),
                alt.Tooltip("cost_label:N", title="Per session"),
            ],
        )
    )
    current_min = current_median_s / 60
    now = pd.DataFrame(
        [
            {
                "median_min": current_min,
                "series": name,
                "cost": cost,
                "cost_label": format_small(cost, currency),
                "gap_label": _minutes(current_min),
            }
            for name, cost in today.items()
        ]
    )
    rule = (
        alt.Chart(pd.DataFrame({"median_min": [current_min], "label": [f"Yours: {_minutes(current_min)}"]}))
        .mark_rule(strokeDash=[6, 4], color="#6e7781")
        .encode(x=alt.X("median_min:Q"), tooltip=[alt.Tooltip("label:N", title="Median gap")])
    )
    points = (
        alt.Chart(now)
        .mark_point(size=130, filled=True)
        .encode(
            x=alt.X("median_min:Q"),
            y=alt.Y("cost:Q"),
            color=alt.Color("series:N", scale=alt.Scale(domain=series, range=colors), legend=None),
            tooltip=[
                alt.Tooltip("series:N", title="Today"),
                alt.Tooltip("gap_label:N", title="Median gap"),
                alt.Tooltip("cost_label:N", title="Per session"),
            ],
        )
    )
    return _layered(
        lines,
        rule,
        points,
        title="Cost per session against the median gap between turns",
        width=WIDTH,
        height=HEIGHT + 100,
    )


def _minutes(m: float) -> str:
    if m < 2:
        return f"{m * 60:.0f} s"
    if m < 120:
        return f"{m:.3g} min"
    return f"{m / 60:.3g} h"
