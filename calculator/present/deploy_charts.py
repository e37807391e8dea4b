"""The Deploy page's table and chart: configurations ranked by monthly cost, and cost against per-user speed.

    deployments_frame   one row per configuration, as the page's table shows it
    pareto_frame        the points of the chart, each marked on or off the Pareto front
    pareto_chart        monthly cost (log scale) against tokens/s per user; the front drawn through its points

No streamlit import here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import altair as alt
import pandas as pd

from calculator.present.money import amount_format, format_money, money_title
from calculator.pricing.deployments import Deployment, pareto_front

__all__ = ["deployments_frame", "pareto_chart", "pareto_frame"]

MEETS, MISSES = "meets the target", "misses the target"


NOT_MEASURED = "not measured"
"""A latency cell of a configuration sized from a record that states no latency."""


def _cell(value: float | None, spec: str) -> str:
    return NOT_MEASURED if value is None else format(value, spec)


def deployments_frame(rows: Sequence[Deployment]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "#": i + 1,
                "Offer": f"{d.provider}/{d.offer}",
                "Kind": ("Dedicated" if d.kind == "dedicated" else "GPU VM") + f", {d.price_kind.replace('_', '-')}",
                "Replica": f"{d.gpus_per_replica}x {d.gpu}" + (", DP attention" if d.attention == "dp" else ""),
                "Precision": d.precision.upper() + (" (spec. decoding what-if)" if d.what_if else ""),
                "Replicas": d.replicas,
                "GPUs": d.gpus,
                "Per month": format_money(d.monthly, d.currency),
                # text cells: a record without latencies says so rather than showing an empty None
                "Tokens/s per user": _cell(d.tokens_per_s_per_user, ",.1f"),
                "TTFT (ms)": _cell(d.ttft_ms, ",.0f"),
                "Meets target": d.meets_target,
                "Evidence": d.evidence,
            }
            for i, d in enumerate(rows)
        ],
        columns=[
            "#", "Offer", "Kind", "Replica", "Precision", "Replicas", "GPUs", "Per month", "Tokens/s per user",
            "TTFT (ms)", "Meets target", "Evidence",
        ],
    )  # fmt: skip


def pareto_frame(deployments: Sequence[Deployment]) -> pd.DataFrame:
    """Every configuration with a per-user speed, and whether it is on the Pareto front (no other is both
    cheaper and faster per user)."""
    front = {id(d) for d in pareto_front(list(deployments))}
    return pd.DataFrame(
        [
            {
                "configuration": d.label,
                "monthly": float(d.monthly),
                "tokens_per_s_per_user": d.tokens_per_s_per_user,
                "meets": MEETS if d.meets_target else MISSES,
                "pareto": id(d) in front,
            }
            for d in deployments
            if d.tokens_per_s_per_user is not None
        ],
        columns=["configuration", "monthly", "tokens_per_s_per_user", "meets", "pareto"],
    )


def pareto_chart(points: pd.DataFrame, currency: str) -> alt.LayerChart:
    """Dots for every configuration, coloured by whether it meets the target; a dashed line through the front."""
    x = alt.X("monthly:Q", title=money_title("Per month", currency, "log scale"), scale=alt.Scale(type="log"))
    y = alt.Y("tokens_per_s_per_user:Q", title="Tokens/s per user")
    tooltip = [
        alt.Tooltip("configuration:N", title="Configuration"),
        alt.Tooltip("monthly:Q", title=money_title("Per month", currency), format=amount_format(currency)),
        alt.Tooltip("tokens_per_s_per_user:Q", title="Tokens/s per user", format=",.1f"),
    ]
    colour = alt.Color("meets:N", title=None, scale=alt.Scale(domain=[MEETS, MISSES]))
    dots = alt.Chart(points).mark_circle(size=50, opacity=0.6).encode(x=x, y=y, color=colour, tooltip=tooltip)
    line = (
        alt.Chart(points[points["pareto"]])
        .mark_line(point=True, color="black", strokeDash=[4, 2])
        .encode(x=x, y=y, tooltip=tooltip)
    )
    return cast(alt.LayerChart, alt.layer(dots, line).properties(height=380))
