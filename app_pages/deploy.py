"""Deploy: the cheapest GPU deployment of the scenario's model that meets a latency target.

Reads the Compare page's scenario (its workload, traffic and hosting terms), enumerates every GPU offer x
GPUs per replica x precision (``calculator.pricing.deployments``), and shows the ranked list, a chart of
monthly cost against tokens/s per user with its Pareto front, and a "use this" button per configuration that
sets the Compare page's GPU option and the setup it is sized from. All numbers come from ``calculator``.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import streamlit as st

from app_pages import _scenario_ui, _state
from app_pages._chart import altair_chart
from app_pages._data import catalogs, kept, priced_key
from app_pages._params import NumberParam, check_params
from app_pages._widgets import bound_number
from calculator.capacity.ttft import TTFT_ERROR_NOTE
from calculator.errors import InputError
from calculator.present.deploy_charts import deployments_frame, pareto_chart, pareto_frame
from calculator.present.money import format_money
from calculator.pricing.deployments import (
    SPECULATIVE_SOURCE,
    SPECULATIVE_WHAT_IF,
    Deployment,
    DeploymentSearch,
    deployment_model,
    find_deployments,
)
from calculator.scenario.inputs import LatencyTarget

TOP = 10
BIND: Literal["query-params"] = "query-params"
NUMBERS = {
    "d_ttft": NumberParam("TTFT at most (ms, 0 = any)", float, 0.0, 600_000.0),
    "d_tps": NumberParam("Tokens/s per user at least (0 = any)", float, 0.0, 10_000.0),
}
ss = st.session_state
today = dt.date.today()

st.title("Deploy")
st.caption(
    "The cheapest way to run the scenario's model on GPUs: every dedicated endpoint and GPU VM offer in the price "
    "sheets, at every GPU count per replica and precision that holds it, sized for the Compare page's peak and "
    "ranked by monthly cost among those meeting the latency target."
)
url_problems = _scenario_ui.read_links()
url_problems += check_params(
    {k: st.query_params[k] for k in st.query_params},
    NUMBERS,
    {
        "d_model": catalogs().models.ids,
        "d_pct": list(_state.PERCENTILES),
        **dict.fromkeys(("d_spot", "d_spec", "d_all"), ["true", "false"]),
    },
)
for problem in url_problems:
    st.error(problem)
session = _scenario_ui.session_scenario()
if session is None:
    st.warning("The Compare page's inputs are not allowed as they are; it says why. Fix them there first.")
    st.page_link("app_pages/compare.py", label="Open Compare", icon=":material/compare_arrows:")
    st.stop()
scenario, cat = session
base = catalogs()


def _default_model() -> str:
    try:
        return deployment_model(scenario, cat).id
    except InputError:
        return cat.models.ids[0]


target_now = scenario.self_hosting.latency_target
with st.container(horizontal=True):
    models = cat.models.ids
    model = st.selectbox(
        "Model",
        models,
        index=models.index(_default_model()),
        key="d_model",
        bind=BIND,
        help="The scenario's model by default (its open serverless model, else the model its GPUs are sized for).",
    )
    percentile = st.selectbox(
        "Percentile",
        list(_state.PERCENTILES),
        index=list(_state.PERCENTILES).index(target_now.percentile if target_now else "p95"),
        key="d_pct",
        bind=BIND,
        help="Of measured latencies; an estimate has one figure (the roofline's), not a distribution.",
    )
    ttft = bound_number(
        "d_ttft",
        NUMBERS["d_ttft"],
        float(target_now.ttft_ms or 0) if target_now else 0.0,
        100.0,
        "Time to the first token, at the percentile.",
        fmt="%g",  # "0", "1500": a whole number of milliseconds reads as one
    )
    tps = bound_number(
        "d_tps",
        NUMBERS["d_tps"],
        float(target_now.tokens_per_s_per_user or 0) if target_now else 0.0,
        5.0,
        "Output tokens a second each user sees while the answer streams, at the percentile.",
        fmt="%g",
    )
with st.container(horizontal=True):
    spot = st.toggle(
        "Include spot prices", key="d_spot", bind=BIND, help="Interruptible GPUs: cheaper, and can be taken away."
    )
    spec_on = st.toggle(
        "Speculative decoding what-if",
        key="d_spec",
        bind=BIND,
        help=f"Adds rows for estimated setups with decode {SPECULATIVE_WHAT_IF:g}x faster (an assumption: "
        f"{SPECULATIVE_SOURCE}).",
    )
    show_all = st.toggle(
        "Show every configuration", key="d_all", bind=BIND, help="Not only the ten cheapest meeting the target."
    )

target = LatencyTarget(percentile=percentile, ttft_ms=ttft or None, tokens_per_s_per_user=tps or None)
speedup = SPECULATIVE_WHAT_IF if spec_on else None
inputs = f"{model}|{target.model_dump_json()}|{spot}|{speedup}"
key = priced_key(scenario, cat, today)
try:
    result: DeploymentSearch = kept(
        "deployments",
        None if key is None else f"{key}\n{inputs}",
        # the scenario's own model goes unnamed, so the answer says why it is that model (GLM-5.3's nearest spec)
        lambda: find_deployments(
            scenario, cat, None if model == _default_model() else model, target, spot=spot, speculative_speedup=speedup
        ),
    )
except InputError as exc:
    st.error(exc.problem.message)
    st.stop()

st.caption(f"Model: {result.model}, {result.model_reason}.")
meeting = result.meeting
if meeting:
    best = meeting[0]
    st.success(
        f"Cheapest meeting the target: **{best.label}**, {best.replicas} replica(s), {best.gpus} GPU(s), "
        f"**{format_money(best.monthly, best.currency)}** a month ({best.evidence_kind})."
    )
else:
    lines = ["No configuration meets the target."]
    fastest, quickest, closest = result.best_speed(), result.best_ttft(), result.closest()
    if fastest is not None and fastest.tokens_per_s_per_user is not None:
        lines.append(f"Best per-user speed: {fastest.tokens_per_s_per_user:,.1f} tokens/s ({fastest.label}).")
    if quickest is not None and quickest.ttft_ms is not None:
        lines.append(f"Best TTFT: {quickest.ttft_ms:,.0f} ms ({quickest.label}).")
    if closest is not None:
        lines.append(f"Closest to the target: {closest.label}.")
    st.warning(" ".join(lines))
named = [f"{s.provider}/{s.offer} ({s.reason})" for s in result.skipped if s.kind != "no_price"]
unpriced = sum(s.kind == "no_price" for s in result.skipped)
if unpriced:
    named.append(f"{unpriced} offer(s) with no price on {scenario.price_date.isoformat()}")
if named:
    st.caption("Left out: " + "; ".join(named))

shown: list[Deployment] = list(result.deployments) if show_all else list((meeting or result.deployments)[:TOP])


st.subheader("Ranked by monthly cost")
st.dataframe(deployments_frame(shown), hide_index=True, width="stretch", key="d_table")
st.caption(
    f"{len(result.deployments)} configuration(s) fit, {len(meeting)} meet the target. Replicas: ceil(peak / "
    "(capacity x target utilisation)) plus spares for GPU VMs, billed as Compare bills them (self-hosted includes "
    "the engineer's share). Estimates: per-user speed is the roofline's decode at the chosen batch; TTFT under "
    f"load at the target utilisation (prefill, the decode steps it rides, queues; {TTFT_ERROR_NOTE})."
)


def _use(d: Deployment, chosen: LatencyTarget) -> None:
    """Make ``d`` the Compare page's GPU option, sized from the same setup (its measurement, else the estimate),
    under this page's latency target (the busiest measured level meeting it is the one Compare sizes from)."""
    ss["ded" if d.kind == "dedicated" else "vm"] = _state.offer_key(d.provider, d.offer)
    ss["own"] = False
    ss.update(pct=chosen.percentile, ttft=float(chosen.ttft_ms or 0), tps=float(chosen.tokens_per_s_per_user or 0))
    if d.evidence_kind == "measurement":
        ss["rec"], ss["est"] = d.record_id, False
    else:
        ss.update(est=True, e_model=d.model, e_prec=d.precision, e_gpus=d.gpus_per_replica, e_attn=d.attention)
        if d.batch:
            ss["e_batch"] = d.batch
    ss["d_used"] = d.label


st.subheader("Use one in the scenario")
for i, d in enumerate(shown[:TOP]):
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button(
            "Use this",
            key=f"d_use_{i}",
            on_click=_use,
            args=(d, target),
            icon=":material/check:",
            disabled=d.what_if,
            help="A what-if: the Compare page has no speculative-decoding input, so it cannot price this row."
            if d.what_if
            else "Sets the Compare page's GPU option, the setup it is sized from and the latency target.",
        )
        st.caption(f"#{i + 1} {d.label}: {format_money(d.monthly, d.currency)} a month, {d.replicas} replica(s)")
used = ss.pop("d_used", None)
if used:
    st.success(f"The Compare page now prices {used}.")
    st.page_link("app_pages/compare.py", label="Open Compare", icon=":material/compare_arrows:")


st.subheader("Cost against per-user speed")
points = pareto_frame(result.deployments)
if not points.empty:
    altair_chart(pareto_chart(points, scenario.currency), width="stretch")
    st.caption("The dashed line is the Pareto front: no other configuration is both cheaper and faster per user.")
_scenario_ui.link_scenario(scenario, cat)
