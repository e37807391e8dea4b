"""Measurements: benchmark result files in, records out, compared engine against engine.

Upload vLLM, SGLang, genai-perf, AIPerf or GuideLLM results (JSON or YAML, vLLM's nightly summary,
or the records Replay and ``bench --out`` write); say what each file does not (GPU, GPU count,
precision, model), for every file at once or file by file. The same file uploaded twice is read
once. Only comparable runs share a chart, and the runs left out are named with the reason. A
latency target picks the busiest load level that meets it. Complete records can be added to the
session's scenario, one of them sizing the Compare page's GPU options; the scenario's records are
listed here too, and travel in the link (an uploaded file does not).
"""

from __future__ import annotations

from typing import Literal

import streamlit as st
from pydantic import ValidationError

from app_pages import _scenario_ui, _state, _uploads, _words
from app_pages._chart import altair_chart
from app_pages._data import catalogs
from app_pages._params import NumberParam, check_params
from app_pages._widgets import url_bind
from calculator.capacity.saturation import describe, series_of
from calculator.catalog import limits
from calculator.catalog.measurements import ThroughputRecord
from calculator.present import capacity_charts as cc
from calculator.pricing.compare import Catalogs
from calculator.scenario.inputs import LatencyTarget

BIND: Literal["query-params"] = "query-params"
NOT_GIVEN = "(not given)"
FROM_FILE = "(as the file says)"
AS_FOR_ALL = "(as for every file)"
PRECISIONS = [NOT_GIVEN, "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
PERCENTILES = ["p50", "p90", "p95", "p99"]
NUMBERS = {
    "m_n": NumberParam("GPU count", int, 0, limits.GPUS_PER_REPLICA.high),
    "m_ttft": NumberParam("TTFT at most (ms)", float, 0, 600_000),
    "m_tps": NumberParam("Tokens/s per user at least", float, 0, 10_000),
}

cat: Catalogs = catalogs()
model_options = [FROM_FILE, *cat.models.ids]
gpu_options = [NOT_GIVEN, *cat.gpus.ids]
choices = {"m_model": model_options, "m_gpu": gpu_options, "m_prec": PRECISIONS, "m_pct": PERCENTILES}
url_problems = _scenario_ui.read_links()  # a link's scenario first: its records are listed below
url_problems += check_params({k: st.query_params[k] for k in st.query_params}, NUMBERS, choices)


def number(key: str, default: float, step: float, help: str, fmt: str) -> float:
    spec = NUMBERS[key]
    value: float = st.number_input(
        spec.label,
        min_value=spec.kind(spec.min),
        max_value=spec.kind(spec.max),
        value=spec.kind(default),
        step=spec.kind(step),
        format=fmt,
        key=key,
        bind=url_bind(key),
        help=help,
    )
    return value


# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    files = _uploads.uploader(
        "Benchmark result files",
        ["json", "jsonl", "yaml", "yml"],
        accept_multiple_files=True,
        key="m_files",
        max_upload_size=_uploads.MAX_MB,
        help="vllm bench serve (also its nightly summary), sglang.bench_serving, genai-perf, AIPerf, GuideLLM, "
        "InferenceMAX or llmperf output, JSON or YAML (plain, .gz or .zst), or the records Replay and `bench --out` "
        "write; the format is detected from the content.",
    )
    st.toggle(
        "Add the bundled published records",
        value=False,
        key="m_pub",
        bind=BIND,
        help="The published measurements in measurements/ (InferenceMAX / InferenceX sweeps and others, each with "
        "its source), to compare your runs with and to size from where yours do not cover a setup.",
    )
    published = [r for r in cat.records.records if r.publisher]
    if st.session_state.get("m_pub"):
        pub_models = st.multiselect(
            "Published records: models",
            sorted({r.model or cc.NOT_STATED for r in published}),
            key="m_pub_model",
            help="Only these models' published records (none picked: every model).",
        )
        pub_gpus = st.multiselect(
            "Published records: GPUs",
            sorted({r.gpu or cc.NOT_STATED for r in published}),
            key="m_pub_gpu",
            help="Only these GPUs' published records (none picked: every GPU).",
        )
        published = [
            r
            for r in published
            if (not pub_models or (r.model or cc.NOT_STATED) in pub_models)
            and (not pub_gpus or (r.gpu or cc.NOT_STATED) in pub_gpus)
        ]
    with st.expander("What the files do not say", expanded=True):
        st.caption(
            "For every file; each file can say otherwise under Files. Result files never state the GPU or "
            "precision; a record without them is incomplete."
        )
        model_pick = st.selectbox(
            "Model", model_options, key="m_model", bind=BIND, help="Overrides the model the file names, if any."
        )
        gpu_pick = st.selectbox("GPU", gpu_options, key="m_gpu", bind=BIND, help="The GPU type the runs used.")
        c1, c2 = st.columns(2)
        with c1:
            count = int(number("m_n", 0, 1, "GPUs in one engine replica (0: not given).", "%d"))
        with c2:
            precision_pick = st.selectbox(
                "Precision", PRECISIONS, key="m_prec", bind=BIND, help="Precision of the weights."
            )
    with st.expander("Latency target", expanded=True):
        percentile = st.selectbox(
            "Percentile",
            PERCENTILES,
            index=PERCENTILES.index("p95"),
            key="m_pct",
            bind=BIND,
            help="Which percentile of TTFT and inter-token latency must meet the target.",
        )
        c1, c2 = st.columns(2)
        with c1:
            ttft = number("m_ttft", 1000, 50, "Time to first token at most, in ms (0: no limit).", "%.0f")
        with c2:
            tps = number("m_tps", 20, 1, "Tokens/s each user sees at least, 1000 / ITL (0: no limit).", "%.1f")

# --- records --------------------------------------------------------------------------------------
st.title("Measured throughput")
st.caption(
    "Your benchmark results as records, engine against engine where the runs are comparable, and the busiest "
    "load level that meets a latency target."
)
for problem in url_problems:
    st.error(problem)

uploads = [(f.name, f.getvalue()) for f in files or []]


def said(key: str, field: str) -> str | None:
    """What the user picked for one file (None: as for every file)."""
    value = st.session_state.get(f"m_f_{key}_{field}")
    return None if value in (None, AS_FOR_ALL) else str(value)


per_file = {
    key: cc.FileFacts(
        model=said(key, "model"),
        gpu=said(key, "gpu"),
        gpu_count=int(st.session_state.get(f"m_f_{key}_n") or 0) or None,
        precision=said(key, "prec"),
        prefix_share=st.session_state.get(f"m_f_{key}_share"),
    )
    for key in {cc.upload_key(data) for _, data in uploads}
}
outcome = cc.import_uploads(
    uploads,
    model=None if model_pick == FROM_FILE else model_pick,
    gpu=None if gpu_pick == NOT_GIVEN else gpu_pick,
    gpu_count=count or None,
    precision=None if precision_pick == NOT_GIVEN else precision_pick,
    per_file=per_file,
)
if outcome.files or outcome.duplicates:
    st.subheader("Files")
    st.caption("What each file does not say, for that file alone (it wins over the sidebar's choice for every file).")
for upload in outcome.files:
    missing = sorted({m for r in upload.records for m in r.missing}, key=list(cc.MISSING_NAMES).index)
    unknown_share = any(r.prefix_share is None for r in upload.records)
    summary = (
        f"{upload.name}: {len(upload.records)} run(s)"
        + (f", missing {', '.join(cc.MISSING_NAMES[m] for m in missing)}" if missing else ", complete")
        + (", prefix share unknown" if unknown_share else "")
    )
    with st.expander(summary, expanded=bool(missing) or unknown_share):
        c1, c2, c3, c4, c5 = st.columns(5)
        c1.selectbox("Model", [AS_FOR_ALL, *cat.models.ids], key=f"m_f_{upload.key}_model", help="Overrides the file.")
        c2.selectbox("GPU", [AS_FOR_ALL, *cat.gpus.ids], key=f"m_f_{upload.key}_gpu")
        c3.number_input(
            "GPU count",
            min_value=0,
            max_value=int(limits.GPUS_PER_REPLICA.high),
            value=0,
            step=1,
            key=f"m_f_{upload.key}_n",
            help="GPUs in one engine replica (0: as for every file).",
        )
        c4.selectbox("Precision", [AS_FOR_ALL, *PRECISIONS[1:]], key=f"m_f_{upload.key}_prec")
        c5.number_input(
            "Prefix share",
            min_value=0.0,
            max_value=1.0,
            value=None,
            step=0.05,
            format="%.2f",
            key=f"m_f_{upload.key}_share",
            placeholder="as the file says",
            help="Share of the input tokens the run's prompts repeat from earlier ones (0 to 1), where the file "
            "does not say; empty: as the file says, or unknown.",
        )
        unread = [f"`{r.id}`: {w}" for r in upload.records for w in r.warnings or ()]
        if unread:
            st.warning("Read from the file but not used:\n\n" + "\n".join(f"- {w}" for w in unread))
        doubts = [f"`{r.id}`: {m}" for r in upload.records for m in r.mismatches or ()]
        if doubts:
            st.warning(
                "The file's own figures disagree (kept as the file states them):\n\n"
                + "\n".join(f"- {d}" for d in doubts)
            )
for name, first in outcome.duplicates:
    st.caption(f"`{name}` is the same file as `{first}`: read once.")
if outcome.problems:
    st.error(
        "These files could not be imported (nothing from a broken file is used):\n\n"
        + "\n".join(f"- `{line}`" for line in outcome.problems)
    )
imported = {r.id for r in outcome.records}
kept = list(_state.session_evidence(st.session_state, st.session_state.get("uploaded")).records)
records: list[ThroughputRecord] = list(outcome.records) + [r for r in kept if r.id not in imported]
shown = _scenario_ui.session_scenario() if kept else None  # the scenario's records are on this page: link it
_scenario_ui.link_scenario(shown[0] if shown else None, shown[1] if shown else None)
if st.session_state.get("m_pub"):
    records += [r for r in published if r.id not in {x.id for x in records}]
if not records:
    st.info("Upload one or more result files in the sidebar (or add the bundled published records).")
    st.stop()

st.subheader("Records")
st.dataframe(cc.records_frame(records), hide_index=True, width="stretch")
if kept:
    st.caption(
        "Records kept in the scenario: "
        + ", ".join(f"`{r.id}`" + ("" if r.id in imported else " (from the scenario)") for r in kept)
        + "."
    )
incomplete = [r for r in records if not r.complete]
if incomplete:
    st.warning(
        f"{len(incomplete)} of {len(records)} records are incomplete: give what they are missing under Files "
        "(for one file) or in the sidebar (What the files do not say, for every file). Incomplete records "
        "cannot be compared or size GPUs."
    )
if outcome.records:
    _scenario_ui.use_records(list(outcome.records), "m")
elif kept:
    _scenario_ui.use_records([], "m")

# --- charts of comparable runs --------------------------------------------------------------------
st.subheader("Throughput and latency")
groups = cc.comparable_groups(records)
if not groups:
    st.info("No chart: every record is incomplete.")
    st.stop()
labels = [f"{i + 1}. {g.label}" for i, g in enumerate(groups)]
group = groups[0]
if len(groups) > 1:
    picked = st.selectbox(
        "Comparable runs",
        labels,
        key="m_grp",
        help="Runs that differ in model, precision, GPU, GPU count or traffic shape cannot share a chart.",
    )
    group = groups[labels.index(picked)] if picked in labels else groups[0]
else:
    st.caption(f"Chart: {group.label}")
pct = cc.ttft_percentile(group.records)
frame, axis, unplaced = cc.run_chart_frame(group.records, pct)
left, right = st.columns(2)
altair_chart(cc.throughput_chart(frame, axis), width="stretch", where=left)
if pct is not None and frame["ttft_ms"].notna().any():
    altair_chart(cc.ttft_chart(frame, axis, pct), width="stretch", where=right)
    if pct != "p95":
        right.caption(f"TTFT {pct}: the highest percentile these records hold (no p95).")
else:
    right.info("These records hold no time-to-first-token figures.")
left_out = [(rid, "; ".join(why)) for rid, why in group.left_out] + unplaced
if left_out:
    with st.expander(f"Left out of these charts ({len(left_out)} runs) and why", expanded=False):
        st.markdown("\n".join(f"- `{rid}`: {why}" for rid, why in left_out))

# --- latency target -------------------------------------------------------------------------------
st.subheader("Busiest level that meets the target")
try:
    target = LatencyTarget(percentile=percentile, ttft_ms=ttft or None, tokens_per_s_per_user=tps or None)
except ValidationError as exc:
    st.error("Latency target:\n\n" + "\n".join(f"- {line}" for line in _words.invalid(exc, "target")))
    st.stop()
if target.ttft_ms is None and target.tokens_per_s_per_user is None:
    st.info("Set a TTFT limit or a tokens/s per user floor in the sidebar.")
    st.stop()
for what, limit, held in (
    ("TTFT", target.ttft_ms, {p for r in group.records for p in r.ttft_ms.available}),
    ("inter-token latency", target.tokens_per_s_per_user, {p for r in group.records for p in r.itl_ms.available}),
):
    if limit is not None and percentile not in held:
        have = ", ".join(p for p in PERCENTILES if p in held) or "no percentile"
        st.info(f"These runs hold {what} at {have}, not {percentile}: choose one of those as the percentile.")
for engine, best, reasons in cc.busiest_by_engine(group.records, target):
    if best is not None:
        bound = describe(best, series_of(best, group.records), target).bound
        st.success(
            f"**{engine}**: {best.requests_per_s:.3g} requests/s "
            f"({cc.output_tokens_per_s(best):,.0f} output tokens/s) in run `{best.id}`"
            + {
                "at_least": ": at least that much, a lower bound (that level kept up with what it was offered).",
                "saturated": ", where the replica was at its limit.",
                "unknown": " (the run does not say what load it was offered).",
            }[bound]
        )
    else:
        st.warning(f"**{engine}**: no measured level meets the target.")
    st.caption("\n".join(f"- {reason}" for reason in reasons))
