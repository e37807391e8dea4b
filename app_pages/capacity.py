"""Capacity: does a model fit on a GPU, how many sequences, and how fast it decodes (a roofline estimate).

The model, precision, GPU, GPU count and context start as the Compare page's scenario has them (the
setup its GPU options are sized from, a turn's context) and follow it while left as they are; a link
or a change here sets them. Every scalar input has a short stable key bound to the URL; values read
from the URL are checked first and a bad one is named in an error. All numbers come from ``calculator``.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from app_pages import _scenario_ui, _state, _uploads, _words
from app_pages._chart import altair_chart
from app_pages._data import catalogs, cheapest_picked
from app_pages._params import NumberParam, check_params
from app_pages._uploads import shown_name
from app_pages._widgets import bound_number, bound_quantity, stop_if_unread
from calculator.capacity.calibration import check_cases
from calculator.capacity.estimate import SetupEstimate, estimate_setup
from calculator.capacity.memory import ENGINES, KV_DTYPE_BYTES, WEIGHT_BYTES, fit
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, RooflineAssumptions, prefill_tokens_per_s
from calculator.catalog import limits
from calculator.catalog.datafile import DataFileError, validation_lines
from calculator.catalog.hf_config import import_hf_config
from calculator.catalog.models import ModelSpec
from calculator.catalog.quantity import plain
from calculator.errors import InputError
from calculator.present import capacity_charts as cc
from calculator.pricing.compare import Catalogs

CONFIG_TYPES = ("json",)  # what the config.json uploader takes (plain, .gz or .zst)

BIND: Literal["query-params"] = "query-params"
AUTO = "auto"
PRECISIONS = list(WEIGHT_BYTES)
KV_DTYPES = [AUTO, *KV_DTYPE_BYTES]
DEFAULT_MODEL, DEFAULT_GPU = "llama-3.3-70b", "h100-sxm"
R = DEFAULT_ASSUMPTIONS
NUMBERS = {
    "c_ctx": NumberParam("Context per sequence (tokens)", int, limits.CONTEXT.low, limits.CONTEXT.high, typed=True),
    "c_n": NumberParam("GPUs (tensor parallel)", int, limits.GPUS_PER_REPLICA.low, limits.GPUS_PER_REPLICA.high),
    "c_util": NumberParam("Memory utilisation", float, 0.1, 1.0),
    "c_rsv": NumberParam("Reserve per GPU (GB)", float, 0.0, 100.0),
    "c_bw": NumberParam("Bandwidth efficiency", float, 0.05, 1.0),
    "c_fl": NumberParam("Decode FLOP/s efficiency", float, 0.05, 1.0),
    "c_pf": NumberParam("Prefill FLOP/s efficiency", float, 0.05, 1.0),
    "c_tp": NumberParam("Tensor-parallel overhead", float, 0.0, 1.0),
    "c_spec": NumberParam("Speculative decoding speed-up (what-if)", float, 1.0, 5.0),
    "c_out": NumberParam("Output tokens per request", int, 1, limits.CONTEXT.high),
    "c_conc": NumberParam("Requests in flight", int, 1, 100_000),
}
ENGINE_CHOICES = ["vllm", "sglang", "tensorrt-llm"]

cat: Catalogs = catalogs()
ss = st.session_state


@st.cache_data(show_spinner=False)
def _calibration(_cat: Catalogs, assumptions_json: str) -> pd.DataFrame:
    assumptions = RooflineAssumptions.model_validate_json(assumptions_json)
    return cc.calibration_frame(check_cases(_cat.models, _cat.gpus, assumptions))


@st.cache_data(show_spinner="Estimating (the profiled tables load once, a few seconds)...", max_entries=64)
def _setup_estimate(
    _model: ModelSpec, _cat: Catalogs, key: str, gpu_id: str, gpus: int, precision: str, kv: str | None,
    engine: Literal["vllm", "sglang", "tensorrt-llm"], input_tokens: int, output_tokens: int, concurrency: int,
    assumptions_json: str,
) -> SetupEstimate:  # fmt: skip
    """``key`` names the model (its id and spec): the spec itself is not hashed."""
    return estimate_setup(
        _model, _cat.gpus.get(gpu_id), gpus, precision, input_tokens, output_tokens, kv_dtype=kv, engine=engine,
        concurrency=concurrency, assumptions=RooflineAssumptions.model_validate_json(assumptions_json),
    )  # fmt: skip


def _uploaded() -> ModelSpec | None:
    spec = ss.get("c_spec_model")
    return spec if isinstance(spec, ModelSpec) else None


def _import_config() -> None:
    """Read an uploaded config.json into a model spec and select it."""
    file = _uploads.uploaded(ss, "c_cfg", CONFIG_TYPES)
    ss.pop("c_cfg_error", None)
    ss.pop("c_cfg_warnings", None)
    if file is None:
        return
    name = shown_name(file.name)
    try:
        text = _uploads.unpacked_upload(file.getvalue(), file.name).decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        ss["c_cfg_error"] = [f"{name}: {_words.unexpected(exc)}"]
        return
    except DataFileError as exc:  # a broken or too large .gz / .zst
        ss["c_cfg_error"] = exc.lines
        return
    if not text.strip():
        ss["c_cfg_error"] = [f"{name}: the file is empty"]
        return
    if not text.lstrip().startswith("{"):  # the reader would take any other text for a path on this server
        ss["c_cfg_error"] = [f"{name}: not a config.json: a config.json is one JSON object, starting with {{"]
        return
    try:
        imported = import_hf_config(text, source_name=name)
    except DataFileError as exc:
        ss["c_cfg_error"] = exc.lines
        return
    except InputError as exc:
        ss["c_cfg_error"] = [f"{name}: {_words.label(exc.field)}: {_words.message(exc)}"]
        return
    spec = imported.spec
    if spec.id in cat.models.ids:  # never shadow a bundled model
        try:
            spec = _state.validated(spec, id=f"{spec.id}-uploaded")
        except ValidationError as exc:
            ss["c_cfg_error"] = [f"{name}: {line}" for line in validation_lines(exc, "model")]
            return
    ss["c_spec_model"] = spec
    ss["c_cfg_warnings"] = list(imported.warnings)
    ss["c_model"] = spec.id


uploaded = _uploaded()
model_ids = [*cat.models.ids, *([uploaded.id] if uploaded else [])]
gpu_ids = cat.gpus.ids
choices = {"c_model": model_ids, "c_gpu": gpu_ids, "c_prec": PRECISIONS, "c_kv": KV_DTYPES, "c_eng": ENGINE_CHOICES}
url_problems = _scenario_ui.read_links()  # a link's scenario first: the defaults below follow it
url_problems += check_params({k: st.query_params[k] for k in st.query_params}, NUMBERS, choices)
session = _scenario_ui.session_scenario()


def _followed() -> dict[str, str | int | float]:
    """The inputs' defaults: the Compare scenario's setup. An input still at the default it was last given
    follows the scenario; one the user or a link changed keeps its value."""
    found = _state.capacity_defaults(cheapest_picked(*session, dt.date.today())[0], session[1]) if session else {}
    last: dict[str, str | int | float] = ss.setdefault("_c_followed", {})
    out: dict[str, str | int | float] = {}
    for key, found_value in found.items():
        value: str | int | float = found_value
        if key in choices and value not in choices[key]:
            continue
        if key in NUMBERS:
            spec = NUMBERS[key]
            bounded = spec.kind(min(max(float(value), spec.min), spec.max))
            value = plain(bounded) if spec.typed else bounded  # a text field holds the number as digits
        if key in ss and key in last and ss[key] == last[key] and ss[key] != value:
            ss[key] = value
        last[key] = out[key] = value
    return out


follow = _followed()


def number(key: str, default: float, step: float, help: str, fmt: str | None = None) -> float:
    if NUMBERS[key].typed:  # a token count, typed as people type it (128k)
        return bound_quantity(key, NUMBERS[key], default, help, limits.CONTEXT)
    return bound_number(key, NUMBERS[key], default, step, help, fmt)


def select(label: str, key: str, options: list[str], default: str, help: str) -> str:
    chosen: str = st.selectbox(label, options, index=options.index(default), key=key, bind=BIND, help=help)
    return chosen


# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    model_id = select(
        "Model",
        "c_model",
        model_ids,
        str(follow.get("c_model") or (DEFAULT_MODEL if DEFAULT_MODEL in model_ids else model_ids[0])),
        "A bundled architecture (models/), or one imported from its config.json below. Type to search.",
    )
    with st.expander("Import a model (Hugging Face config.json)", expanded=False):
        _uploads.uploader(
            "config.json",
            CONFIG_TYPES,
            key="c_cfg",
            max_upload_size=_uploads.MAX_MB,
            on_change=_import_config,
            help="The model's config.json, read here; nothing is downloaded. Parameter counts are computed "
            "from the architecture.",
        )
    gpu_id = select(
        "GPU",
        "c_gpu",
        gpu_ids,
        str(follow.get("c_gpu") or (DEFAULT_GPU if DEFAULT_GPU in gpu_ids else gpu_ids[0])),
        "A GPU type from gpu_specs/. Type to search.",
    )
    c1, c2 = st.columns(2)
    with c1:
        precision = select(
            "Weights", "c_prec", PRECISIONS, str(follow.get("c_prec", "fp8")), "Precision the weights are stored in."
        )
    with c2:
        kv_choice = select(
            "KV cache",
            "c_kv",
            KV_DTYPES,
            AUTO,
            "Precision of the KV cache; auto: the model's dtype (BF16), as vLLM's and SGLang's "
            "--kv-cache-dtype auto, whatever the weights' precision.",
        )
    c1, c2 = st.columns(2)
    with c1:
        context = int(
            number(
                "c_ctx",
                float(follow.get("c_ctx", 8192)),
                1024,
                "Tokens each sequence holds in the KV cache: prompt plus output.",
                "%d",
            )
        )
    with c2:
        gpus = int(
            number(
                "c_n",
                float(follow.get("c_n", 1)),
                1,
                "GPUs in one replica, splitting the weights (tensor parallel).",
                "%d",
            )
        )
    with st.expander("Memory assumptions", expanded=False):
        util = number(
            "c_util", 0.9, 0.01, "Share of each GPU's memory the engine may take (vLLM's default 0.9).", "%.2f"
        )
        known = cat.models.find(model_id)
        reserve = number(
            "c_rsv",
            # vLLM's default for this model and GPU: its sampler warm-up grows with the vocabulary
            round(
                ENGINES["vllm"].overhead(gpus, known.vocab_size if known else None, cat.gpus.get(gpu_id), known)
                * 2**30
                / 1e9,
                1,
            ),
            0.5,
            "Activations, sampler warm-up, CUDA context and engine buffers, per GPU: vLLM's calibrated default "
            "(benchmarks/memory_check.py checks it against engine logs).",
            "%.1f",
        )
    with st.expander("Roofline assumptions and what-ifs", expanded=False):
        st.caption(
            "Efficiency factors: shares of the datasheet peaks an engine reaches. Assumptions, not facts. The "
            "same factors make the estimate and split a measured record's time into prefill and decode when "
            "it is converted to another shape."
        )
        bw = number("c_bw", R.bandwidth_efficiency, 0.05, "Share of peak memory bandwidth a decode step reaches.")
        fl = number("c_fl", R.decode_flops_efficiency, 0.05, "Share of peak FLOP/s a large decode batch reaches.")
        pf = number("c_pf", R.prefill_flops_efficiency, 0.05, "Share of peak FLOP/s prefill reaches.")
        tp = number("c_tp", R.tp_overhead, 0.05, "Extra time per step for communication when on 2+ GPUs.")
        spec = number(
            "c_spec",
            R.speculative_speedup,
            0.1,
            "What-if: decode speed-up from speculative decoding (1 = off). Depends on the acceptance rate.",
        )

# --- answers --------------------------------------------------------------------------------------
st.title("Will it fit, and how fast?")
st.caption(
    "Memory per GPU and the most sequences the KV cache holds, then a roofline estimate of decode speed "
    "held beside published measurements. The address bar is a link to these inputs."
)
for problem in url_problems:
    st.error(problem)
stop_if_unread()
if session is not None:
    st.caption(
        f"Defaults from the Compare page's scenario **{session[0].name}**: the setup its GPU options are sized "
        "from, the GPU of its GPU offer and a turn's context (input plus output tokens). Change one and it stays."
    )
_scenario_ui.link_scenario(session[0] if session else None, session[1] if session else None)
if ss.get("c_cfg_error"):
    st.error("The uploaded config.json could not be used:\n\n" + "\n".join(f"- `{line}`" for line in ss["c_cfg_error"]))

model: ModelSpec = uploaded if uploaded is not None and model_id == uploaded.id else cat.models.get(model_id)
if model is uploaded and ss.get("c_cfg_warnings"):
    st.warning("Left out of the figures:\n\n" + "\n".join(f"- `{line}`" for line in ss["c_cfg_warnings"]))
gpu = cat.gpus.get(gpu_id)
kv_dtype = None if kv_choice == AUTO else kv_choice
try:
    assumptions = RooflineAssumptions(
        bandwidth_efficiency=bw,
        decode_flops_efficiency=fl,
        prefill_flops_efficiency=pf,
        tp_overhead=tp,
        speculative_speedup=spec,
    )
    result = fit(model, gpu, precision, context, gpus, kv_dtype, utilisation=util, reserve_gb=reserve)
except InputError as exc:
    st.error(_words.say(exc))
    st.stop()
except ValidationError as exc:
    st.error("These assumptions are not allowed:\n\n" + "\n".join(f"- {x}" for x in _words.invalid(exc, "roofline")))
    st.stop()

st.caption(
    f"**{model.label}**: {model.params_total_b:g}B parameters ({model.params_active_b:g}B per token), "
    f"{model.layers} layers, {model.kv_heads} KV heads"
    + (", latent attention (MLA)" if model.mla else "")
    + (f", {model.sliding_window.layers} sliding-window layers" if model.sliding_window else "")
    + "".join(f", {g.layers} {g.kind.replace('_', ' ')} layers" for g in model.cache_layers or ())
    + (f", sparse attention (top {model.sparse_attention.top_k:,} tokens)" if model.sparse_attention else "")
    + (f", {model.experts.total} experts ({model.experts.active} per token)" if model.experts else "")
    + f"; {result.kv_bytes_per_token / 1e3:,.0f} kB of KV per token at {result.kv_dtype.upper()}. "
    f"Source: {model.source.label}. **{gpu.label}**: {gpu.memory_gb:g} GB, "
    f"{result.usable_memory_per_gpu_gib:.2f} GiB as CUDA reports it, "
    f"{gpu.memory_bandwidth_tbs:g} TB/s."
)
if model.notes:
    st.caption(model.notes)
if context > model.max_context:
    st.warning(f"A context of {context:,} tokens is longer than {model.id} supports ({model.max_context:,}).")

with st.container(horizontal=True):
    st.metric("Fits?", "Yes" if result.fits else "Does not fit", border=True)
    st.metric(
        "Max sequences",
        f"{result.max_sequences:,}",
        help=f"Sequences of {context:,} tokens the KV cache holds at once (the most a batch can be).",
        border=True,
    )
    st.metric("Cached tokens", f"{result.max_cached_tokens:,}", help="Tokens the KV cache holds in all.", border=True)
    st.metric("Weights per GPU", f"{result.weights_per_gpu_gb:,.1f} GB", border=True)
    st.metric(
        "KV per sequence per GPU",
        f"{result.kv_per_sequence_per_gpu_gb:,.2f} GB",
        help=f"One sequence of {context:,} tokens at {result.kv_dtype.upper()}.",
        border=True,
    )

setup = f"{model.id} at {precision.upper()} on {gpus}x {gpu.id} with a context of {context:,} tokens"
if result.fits:
    st.success(f"{setup} fits: the KV cache holds **{result.max_sequences:,} sequences** at once.")
else:
    st.warning(
        f"**Does not fit**: {setup} is **{result.shortfall_gb:,.2f} GB per GPU short** of holding one sequence. "
        "Would fit: " + "; or ".join(result.suggestions) + "."
    )
altair_chart(cc.memory_chart(result, gpu.id), width="stretch")
notes = list(result.assumptions)
if result.kv_replicated:
    notes.append("the KV cache is replicated: it splits over KV heads (or an MLA latent), fewer than the GPUs")
st.caption("Assumptions: " + "; ".join(notes) + ".")

# --- decode speed -----------------------------------------------------------------------------------
st.subheader("Decode speed (roofline estimate)")
decode_df = cc.decode_frame(model, gpu, precision, context, gpus, result.kv_dtype, result.max_sequences, assumptions)
if not result.fits:
    st.info("Nothing fits in the KV cache, so no batch can run; the dashed lines show what the roofline would give.")
left, right = st.columns(2)
altair_chart(cc.decode_chart(decode_df, "per_user", result.max_sequences), width="stretch", where=left)
altair_chart(cc.decode_chart(decode_df, "total", result.max_sequences), width="stretch", where=right)
prefill = prefill_tokens_per_s(model, gpu, precision, context, gpus, assumptions)
st.caption(
    f"Every sequence at {context:,} tokens of context. Prefill of a {context:,}-token prompt: about "
    f"{prefill:,.0f} tokens/s. Assumptions: " + "; ".join(assumptions.notes()) + "."
)

# --- one setup at one load ---------------------------------------------------------------------------
st.subheader("One setup at one load: throughput and latency percentiles")
if result.fits:
    c1, c2, c3 = st.columns(3)
    with c1:
        engine = select(
            "Engine",
            "c_eng",
            ENGINE_CHOICES,
            str(follow.get("c_eng", "vllm")),
            "The engine the estimate is for: it decides the scheduler's batch limit, and whether "
            "AIConfigurator's profiled tables answer (TensorRT-LLM on NVIDIA Hopper and Blackwell).",
        )
    with c2:
        out_tokens = int(
            number(
                "c_out",
                float(min(1000, max(context // 2, 1))),
                100,
                "Tokens each request generates; the prompt is the rest of the context.",
                "%d",
            )
        )
    with c3:
        in_flight = int(number("c_conc", 32.0, 8, "Requests always in flight (a benchmark's --max-concurrency).", "%d"))
    prompt = max(context - out_tokens, 1)
    key = f"{model.id}:{hash(model.model_dump_json())}"
    try:
        est = _setup_estimate(model, cat, key, gpu.id, gpus, precision, kv_dtype, engine,  # type: ignore[arg-type]
                              prompt, out_tokens, in_flight, assumptions.model_dump_json())  # fmt: skip
    except InputError as exc:
        st.error(_words.say(exc))
    else:
        band = est.error_band
        with st.container(horizontal=True):
            st.metric("Output tokens/s", f"{est.output_tokens_per_s:,.0f}",
                      help=f"8 in 10 published cases of this family: {band.low:,.0f} to {band.high:,.0f}.",
                      border=True)  # fmt: skip
            st.metric("Tokens/s per user", f"{est.tokens_per_s_per_user:,.1f}", border=True)
            st.metric("Batch", f"{est.batch:,}", help=f"Limit {est.batch_limit:,}: {est.batch_limit_reason}.",
                      border=True)  # fmt: skip
        st.dataframe(
            pd.DataFrame(
                {"Percentile": [p for p in ("p50", "p90", "p95", "p99")],
                 "TTFT (ms)": [round(est.ttft_ms.at(p)) for p in ("p50", "p90", "p95", "p99")],
                 "TPOT (ms)": [round(est.tpot_ms.at(p), 1) for p in ("p50", "p90", "p95", "p99")]}
            ),
            hide_index=True,
        )  # fmt: skip
        st.caption(
            f"**Estimator: {est.estimator}** ({est.estimator_reason}). Between {band.low:,.0f} and {band.high:,.0f} "
            f"output tokens/s for 8 in 10 published cases: {band.provenance}. {prompt:,} tokens in, "
            f"{out_tokens:,} out, {in_flight:,} in flight; the same answer as `python -m calculator estimate`."
        )
        if est.other is not None:
            st.caption(
                f"The {est.other.estimator} estimator says {est.other.output_tokens_per_s:,.0f} tokens/s "
                f"({est.other.error_band.low:,.0f} to {est.other.error_band.high:,.0f}; "
                f"{est.other.error_band.provenance})."
            )
        for note in est.notes:
            st.caption(note)
else:
    st.info("Nothing fits in the KV cache, so no load can run.")

# --- estimate beside measurement --------------------------------------------------------------------
st.subheader("Estimate beside measurement")
side, skipped = cc.estimate_vs_measured(  # the scenario's own records beside the published ones
    (session[1] if session else cat).records.records, model.id, gpu.id, cat.models, cat.gpus, assumptions, context
)
if side.empty:
    st.info(f"No bundled measurement of {model.id} on {gpu.id}; the Measurements page imports your own.")
else:
    st.dataframe(side, hide_index=True, width="stretch")
    st.caption(
        "Each record's own setup (precision, GPU count, lengths) estimated at its requests in flight, the batch "
        "capped by what fits in the KV cache. A measurement above the ceiling (every efficiency at 100%) cannot "
        f"hold as stated. The last column converts each measurement to {context:,} tokens per sequence (its own "
        "output, the prompt filling the rest) as sizing does: the roofline with the efficiency factors above "
        "splits its time into prefill and decode (what-ifs left out: a measurement holds what its engine did)."
    )
for line in skipped:
    st.caption(f"Left out: {line}")

# --- calibration ------------------------------------------------------------------------------------
st.subheader("The roofline against published measurements")
st.dataframe(_calibration(cat, assumptions.model_dump_json()), hide_index=True, width="stretch")
st.caption(
    "calculator/data/roofline_cases.yaml, estimated with the efficiency factors above. The defaults were fitted to "
    "these cases, so agreement here is in-sample; expect more error on other setups."
)
