"""The profiled estimator: NVIDIA AIConfigurator's per-operation latency tables, measured on the real GPU and
engine version, summed per engine step for one setup.

Where the roofline (:mod:`calculator.capacity.roofline`) derives a step from datasheet peaks and a few
fitted efficiencies, AIConfigurator (``aiconfigurator-core``, Apache-2.0, the optional extra ``profiled``)
looks every GEMM, attention, MoE and collective of the step up in tables collected with the engine itself,
and models continuous batching on top (its ``agg`` mode: mixed prefill-and-decode steps, then decode-only
steps). It covers NVIDIA GPUs only (H100 and H200 SXM, B200, A100 SXM, L40S here), TensorRT-LLM, vLLM and
SGLang at the versions it profiled, and the architectures it has a model for.

Everything runs offline: the model description is a ``config.json`` written from our :class:`ModelSpec`
into a local folder, so the package never asks Hugging Face for one. Fields our spec does not hold (the
width of the MLP and of each expert, DeepSeek's dense first layers and low-rank query) come from the
package's own copy of the same model's ``config.json`` when it has one; a dense model without one gets its
MLP width worked out from the parameter count. The package is imported only when an estimate is asked for,
so the app and the command line start as fast without it.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import json
import logging
import math
import shutil
import tempfile
import threading
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.calibration import burst_seconds, engine_family
from calculator.capacity.memory import default_kv_dtype
from calculator.catalog.datafile import write_atomically
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec

__all__ = [
    "CORE_PACKAGE",
    "EXTRA",
    "NotCovered",
    "ProfiledEstimate",
    "available",
    "backend_for",
    "covers",
    "model_config_json",
    "profiled_burst_tokens_per_s",
    "profiled_estimate",
    "system_for",
]

CORE_PACKAGE = "aiconfigurator_core"
EXTRA = "profiled"
"""The optional extra that installs the package: ``pip install 'inference-cost-calculator[profiled]'``."""

SYSTEMS = {
    "h100-sxm": "h100_sxm",
    "h200-sxm": "h200_sxm",
    "b200": "b200_sxm",
    "a100-80gb-sxm": "a100_sxm",
    "l40s": "l40s",
}
"""Our GPU ids and the AIConfigurator system each one is: the same card, memory size and form factor. The
package also describes the H100 PCIe, A30, L4 and others, but holds no profiled tables for them (0.12)."""

BACKENDS = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "trtllm"}
"""Engine families as the calculator names them, and AIConfigurator's backend names."""

DENSE_ARCHITECTURE = "LlamaForCausalLM"
"""A dense model without a ``config.json`` of its own in the package is described as a Llama: grouped-query
attention and a gated MLP, what every bundled dense model is (Qwen3 adds per-head norms, no cost to speak of)."""
MOE_ARCHITECTURE = "Qwen3MoeForCausalLM"
"""A mixture of experts without a ``config.json`` in the package is described as Qwen3-MoE: every layer routed,
no shared expert. A model with shared experts needs the package's description (dense first layers)."""

TIED_EMBEDDING_SHARE = 0.2
"""A dense model whose embedding table, counted twice, would be more than this share of its parameters is
taken to tie its input and output embeddings (Llama 3.2 1B/3B: 25%; Llama 3.1 8B, untied: 13%). An
ASSUMPTION for dense models the package has no ``config.json`` for; it sets the MLP width worked out."""
DEFAULT_VOCAB = 128_256
MLP_ROUNDING = 256
"""MLP widths are multiples of 256 in every published config read (14,336; 28,672; 25,600; 8,192)."""

_LOG = logging.getLogger(__name__)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProfiledEstimate(_Frozen):
    """One replica's speed from the profiled tables, under continuous batching at ``batch`` in flight."""

    estimator: Literal["profiled"] = "profiled"
    output_tokens_per_s: float = Field(ge=0)
    """Output tokens per second of the whole replica (every attention data-parallel rank together)."""
    tokens_per_s_per_user: float = Field(ge=0)
    """What one user sees while decoding: 1000 / TPOT."""
    ttft_ms: float = Field(ge=0)
    """Time to first token: a prompt's prefill, with the queueing the scheduler model gives at this batch."""
    tpot_ms: float = Field(ge=0)
    """Time per output token after the first, averaged over mixed and decode-only steps."""
    batch: int = Field(ge=1)
    """Sequences in flight on the replica (the batch asked for, rounded up to a multiple of the DP ranks)."""
    engine_version: str
    """The engine and the profiled version that answered (``vllm 0.24.0``): the newest fully profiled one."""
    system: str
    """AIConfigurator's name for the GPU system (``h200_sxm``)."""
    fits_memory: bool
    """Whether AIConfigurator's own memory model fits this batch (ours, :mod:`calculator.capacity.memory`,
    decides the batch; this says whether theirs agrees)."""
    measured_share: float = Field(ge=0, le=1)
    """Share of the priced step time looked up in rows measured on the GPU (``silicon``); the rest the package
    estimates from neighbouring measurements or its own formulas (``estimated``, ``empirical``, ``sol``)."""
    model_description: str
    """Where the architecture came from: the package's ``config.json`` of the same model with our spec's
    shape, or our spec alone (and what was worked out)."""


class NotCovered(_Frozen):
    """The profiled estimator cannot answer this setup, and why (the roofline answers instead)."""

    reason: str

    def __str__(self) -> str:
        return f"not covered: {self.reason}"


# --- the package, imported on first use --------------------------------------------------------------------

_lock = threading.Lock()


@cache
def _core() -> dict[str, Any] | NotCovered:
    """The package's entry points, or why they cannot be had. Imported here only, so the app never pays for it."""
    try:
        modules = {
            name: importlib.import_module(f"{CORE_PACKAGE}.sdk.{name}")
            for name in ("backends.factory", "models", "perf_database", "config", "config_builders", "step_estimate")
        }
    except ImportError as exc:
        return NotCovered(
            reason=f"the profiled estimator needs the optional extra '{EXTRA}' "
            f"(pip install 'inference-cost-calculator[{EXTRA}]'); {CORE_PACKAGE} could not be imported ({exc})"
        )
    # The package logs every resolved quantisation and lane choice at INFO/WARNING; an estimate here is one
    # call among many, so only its errors are worth a line.
    logging.getLogger(CORE_PACKAGE).setLevel(logging.ERROR)
    return {name.rsplit(".", 1)[-1]: module for name, module in modules.items()}


def available() -> bool:
    """Whether the optional package is installed and imports."""
    return not isinstance(_core(), NotCovered)


def _module(core: dict[str, Any], name: str) -> ModuleType:
    module: ModuleType = core[name]
    return module


@cache
def _version(system: str, backend: str) -> str | None:
    core = _core()
    if isinstance(core, NotCovered):
        return None
    version: str | None = _module(core, "perf_database").get_latest_database_version(system=system, backend=backend)
    return version


@cache
def _database(system: str, backend: str, version: str) -> Any:
    core = _core()
    assert not isinstance(core, NotCovered)
    return _module(core, "perf_database").get_database_view(
        system, backend, version, allow_missing_data=False, database_mode="SILICON", transfer_policy=None
    )


# --- what is covered ---------------------------------------------------------------------------------------


def system_for(gpu: GpuSpec) -> str | NotCovered:
    """AIConfigurator's system for our GPU, or why there is none."""
    if gpu.vendor != "nvidia":
        return NotCovered(reason=f"{gpu.name}: AIConfigurator profiles NVIDIA GPUs only")
    system = SYSTEMS.get(gpu.id)
    if system is None:
        return NotCovered(
            reason=f"{gpu.name}: no profiled tables for this card in AIConfigurator "
            f"(profiled here: {', '.join(sorted(SYSTEMS))})"
        )
    return system


def backend_for(engine: str) -> str | NotCovered:
    """AIConfigurator's backend for an engine name as the calculator writes it (``vllm``, ``SGLang v0.5.3``,
    ``tensorrt-llm``), or why there is none."""
    family = engine_family(engine)
    if family is None:
        return NotCovered(reason=f"engine {engine!r}: AIConfigurator models vLLM, SGLang and TensorRT-LLM only")
    return BACKENDS[family]


def _is_block_fp8(model: ModelSpec) -> bool:
    """Whether the model's FP8 weights are block-scaled (128 x 128 tiles): its checkpoint says so, or its
    publisher ships its own FP8 release (an alias ending ``-FP8``: Qwen, GLM, DeepSeek and MiniMax all
    block-scale theirs). Otherwise FP8 means per-tensor scales, as in NVIDIA's ModelOpt checkpoints."""
    checkpoint = model.checkpoint
    if checkpoint is not None and checkpoint.format == "fp8":
        return checkpoint.group_size >= 128 * 128
    return any(a.lower().endswith("-fp8") and not a.lower().startswith("nvidia/") for a in model.aliases)


def _quantisation(model: ModelSpec, precision: str, system: str) -> dict[str, Any] | NotCovered:
    """The fields a checkpoint's ``config.json`` would carry for ``precision``, as the package reads them."""
    name = precision.lower()
    native = model.checkpoint.format if model.checkpoint is not None else None
    if name in ("bf16", "fp16"):
        return {}
    if name == "fp8":
        if _is_block_fp8(model):
            return {
                "quant_algo": "fp8_block",
                "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
            }
        # per-tensor FP8 with static scales: NVIDIA's ModelOpt checkpoints, what TensorRT-LLM's tables ran
        return {"quant_algo": "fp8", "quantization_config": {"quant_method": "fp8"}}
    if name in ("fp4", "int4") and native == "mxfp4":
        return {"quant_algo": "mxfp4", "quantization_config": {"quant_method": "mxfp4"}}
    if name == "fp4":
        if not system.startswith(("b", "gb")):
            return NotCovered(reason=f"precision fp4 (NVFP4) on {system}: FP4 tensor cores are Blackwell's")
        return {"quant_algo": "nvfp4", "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
    return NotCovered(
        reason=f"precision {precision}: the profiled estimator runs bf16, fp8, fp4 (NVFP4 on Blackwell) and "
        "MXFP4 checkpoints (gpt-oss)"
    )


KV_MODES = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8", "int8": "int8"}


# --- the model description ---------------------------------------------------------------------------------


def _template(model: ModelSpec) -> tuple[str, dict[str, Any]] | None:
    """The package's own ``config.json`` for the same model, found by any of our spec's names."""
    try:
        root = Path(importlib.import_module(CORE_PACKAGE).__file__ or "").parent / "model_configs"
    except ImportError:
        return None
    for name in (model.id, *model.aliases):
        if "/" not in name:
            continue
        path = root / f"{name.strip().replace('/', '--')}_config.json"
        if path.is_file():
            config: dict[str, Any] = json.loads(path.read_text())
            return name.strip(), config
    return None


def _derived_mlp_width(model: ModelSpec, vocab: int) -> tuple[int, bool]:
    """The MLP width a dense model's parameter count implies, and whether its embeddings are tied:
    params = embeddings + layers x (attention + 3 x hidden x width) for a gated MLP."""
    hidden, head = model.hidden_size, model.head_dim
    embedding = vocab * hidden
    tied = 2 * embedding > TIED_EMBEDDING_SHARE * model.params_total_b * 1e9
    attention = hidden * head * (2 * model.attention_heads + 2 * model.kv_heads)
    per_layer = (model.params_total_b * 1e9 - embedding * (1 if tied else 2)) / model.layers
    width = (per_layer - attention - 2 * hidden) / (3 * hidden)
    return max(MLP_ROUNDING, round(width / MLP_ROUNDING) * MLP_ROUNDING), tied


_EXPERT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts")


def model_config_json(model: ModelSpec) -> tuple[dict[str, Any], str] | NotCovered:
    """A Hugging Face style ``config.json`` describing ``model`` to AIConfigurator, and a sentence saying
    where its fields came from; or why the package cannot describe it."""
    vocab = model.vocab_size or DEFAULT_VOCAB
    found = _template(model)
    if found is not None:
        name, config = found
        config = {
            k: v for k, v in config.items() if k not in ("quantization_config", "quant_algo", "kv_cache_quant_algo")
        }
        text = config.get("text_config")
        body: dict[str, Any] = text if isinstance(text, dict) else config
        # our spec's shape wins; the package's file supplies what ours does not hold (MLP and expert widths)
        body.update(
            num_hidden_layers=model.layers,
            hidden_size=model.hidden_size,
            num_attention_heads=model.attention_heads,
            num_key_value_heads=model.kv_heads,
            max_position_embeddings=model.max_context,
        )
        if model.vocab_size is not None:
            body["vocab_size"] = model.vocab_size
        if model.mla is None:
            body["head_dim"] = model.head_dim
        if model.experts is not None:
            for key in _EXPERT_KEYS:
                if key in body:
                    body[key] = model.experts.total
            body["num_experts_per_tok"] = model.experts.active
        return config, f"{name}: AIConfigurator's config.json of the model, with our spec's shape"
    if model.cache_layers is not None or model.sparse_attention is not None or model.mla is not None:
        return NotCovered(
            reason=f"model {model.id}: AIConfigurator holds no description of this architecture's layers "
            "(latent or sparse attention, or per-layer cache types) under any of its names"
        )
    base: dict[str, Any] = {
        "hidden_size": model.hidden_size,
        "num_hidden_layers": model.layers,
        "num_attention_heads": model.attention_heads,
        "num_key_value_heads": model.kv_heads,
        "head_dim": model.head_dim,
        "vocab_size": vocab,
        "max_position_embeddings": model.max_context,
        "torch_dtype": "bfloat16",
    }
    if model.experts is None:
        width, tied = _derived_mlp_width(model, vocab)
        base.update(architectures=[DENSE_ARCHITECTURE], intermediate_size=width, tie_word_embeddings=tied)
        return base, (
            f"{model.id}: our spec alone, described as a Llama; MLP width {width:,} worked out from "
            f"{model.params_total_b:g}B parameters ({'tied' if tied else 'untied'} embeddings assumed)"
        )
    experts = model.experts
    if experts.shared or model.sliding_window is not None:
        return NotCovered(
            reason=f"model {model.id}: a mixture of experts with shared experts or sliding-window layers needs "
            "AIConfigurator's own description of the model, and it has none under any of its names"
        )
    width = round(model.routed_expert_params_b * 1e9 / (model.layers * experts.total * 3 * model.hidden_size))
    base.update(
        architectures=[MOE_ARCHITECTURE],
        intermediate_size=width,
        moe_intermediate_size=width,
        num_experts=experts.total,
        num_experts_per_tok=experts.active,
    )
    return base, (
        f"{model.id}: our spec alone, described as Qwen3-MoE; expert width {width:,} worked out from "
        f"{model.routed_expert_params_b:g}B routed-expert parameters"
    )


_folder: Path | None = None


def _model_folder(config: dict[str, Any]) -> str:
    """A local folder holding ``config``: named by its content, because the package caches what it reads per
    path for the life of the process (the same folder must never hold two descriptions)."""
    global _folder
    text = json.dumps(config, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    with _lock:
        if _folder is None:
            _folder = Path(tempfile.mkdtemp(prefix="calculator-profiled-"))
            atexit.register(shutil.rmtree, _folder, ignore_errors=True)
        path = _folder / digest
        if not (path / "config.json").is_file():
            path.mkdir(exist_ok=True)
            write_atomically(path / "config.json", text)  # another thread must never read half a description
    return str(path)


# --- one setup ------------------------------------------------------------------------------------------------


class _Setup(BaseModel):
    """Everything the package needs to price a step, resolved once per setup."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    engine_version: str
    system: str
    description: str
    dp: int
    model: Any
    database: Any
    backend: Any


def _parallel(model: ModelSpec, gpus: int, attention: str, expert_parallel: int) -> dict[str, int] | NotCovered:
    if gpus < 1 or expert_parallel < 1:
        return NotCovered(reason="gpus and expert_parallel must be at least 1")
    tp, dp = (1, gpus) if attention == "dp" else (gpus, 1)
    if model.experts is None:
        return {"tp_size": tp, "pp_size": 1, "attention_dp_size": dp, "moe_tp_size": 1, "moe_ep_size": 1}
    if gpus % expert_parallel:
        return NotCovered(reason=f"expert_parallel {expert_parallel} does not divide {gpus} GPUs")
    if expert_parallel > model.experts.total:
        return NotCovered(reason=f"expert_parallel {expert_parallel} exceeds the model's {model.experts.total} experts")
    return {
        "tp_size": tp,
        "pp_size": 1,
        "attention_dp_size": dp,
        "moe_tp_size": gpus // expert_parallel,
        "moe_ep_size": expert_parallel,
    }


def _setup(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str | None,
    engine: str,
    attention: str,
    expert_parallel: int,
) -> _Setup | NotCovered:
    system = system_for(gpu)
    if isinstance(system, NotCovered):
        return system
    backend = backend_for(engine)
    if isinstance(backend, NotCovered):
        return backend
    if attention not in ("tp", "dp"):
        return NotCovered(reason=f"attention {attention!r}: tp or dp")
    kv = (kv_dtype or default_kv_dtype(precision)).lower()
    if kv not in KV_MODES:
        return NotCovered(reason=f"KV dtype {kv}: the profiled tables hold {', '.join(sorted(KV_MODES))}")
    quant = _quantisation(model, precision, system)
    if isinstance(quant, NotCovered):
        return quant
    parallel = _parallel(model, gpus, attention, expert_parallel)
    if isinstance(parallel, NotCovered):
        return parallel
    core = _core()
    if isinstance(core, NotCovered):
        return core
    described = model_config_json(model)
    if isinstance(described, NotCovered):
        return described
    config, description = described
    return _built(
        json.dumps({**config, **quant}, sort_keys=True),
        system,
        backend,
        KV_MODES[kv],
        tuple(sorted(parallel.items())),
        description,
        model.is_moe,
    )


@cache
def _built(
    config_text: str,
    system: str,
    backend: str,
    kv_mode: str,
    parallel: tuple[tuple[str, int], ...],
    description: str,
    is_moe: bool,
) -> _Setup | NotCovered:
    core = _core()
    assert not isinstance(core, NotCovered)
    version = _version(system, backend)
    if version is None:
        return NotCovered(reason=f"AIConfigurator holds no profiled {backend} tables for {system}")
    try:
        database = _database(system, backend, version)
        path = _model_folder(json.loads(config_text))
        sizes = dict(parallel)
        model_config = _module(core, "config_builders").build_model_config(
            **sizes,
            kvcache_quant_mode=kv_mode,
            # a 16-bit cache cannot feed FP8 attention; with an FP8 cache the package picks what it profiled
            fmha_quant_mode="bfloat16" if kv_mode == "bfloat16" else None,
        )
        _module(core, "models").resolve_context_fmha_by_data(
            model_config, path, database, backend, is_context_role=True
        )
        built = _module(core, "models").get_model(path, model_config, backend)
        engine = _module(core, "factory").get_backend(backend)
    except Exception as exc:  # the package raises ValueError, AssertionError, KeyError... for what it lacks
        return NotCovered(reason=f"AIConfigurator cannot build this setup on {system} {backend} {version}: {exc}")
    supported = getattr(database, "supported_quant_mode", {}) or {}
    gemm = built.config.gemm_quant_mode.name
    if supported.get("gemm") and gemm not in supported["gemm"]:
        return NotCovered(reason=f"no {gemm} GEMM tables for {backend} {version} on {system}")
    moe = built.config.moe_quant_mode.name
    if is_moe and supported.get("moe") and moe not in supported["moe"]:
        return NotCovered(reason=f"no {moe} MoE tables for {backend} {version} on {system}")
    return _Setup(
        engine_version=f"{next(k for k, v in BACKENDS.items() if v == backend)} {version}",
        system=system,
        description=description,
        dp=dict(parallel)["attention_dp_size"],
        model=built,
        database=database,
        backend=engine,
    )


def covers(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str | None,
    engine: str,
    attention: str = "tp",
    expert_parallel: int = 1,
) -> NotCovered | None:
    """None when the profiled estimator can answer for this setup, else why not. Builds the model once (cached),
    so asking first and estimating after costs no more than estimating."""
    found = _setup(model, gpu, gpus, precision, kv_dtype, engine, attention, expert_parallel)
    return found if isinstance(found, NotCovered) else None


LENGTH_MAX = 10_000_000
"""Longest prompt or answer accepted (ten million tokens): beyond any model's context, so a larger figure is a
mistake, not a workload."""
BATCH_MAX = 1_000_000


def _lengths(input_tokens: float, output_tokens: float, batch: int) -> tuple[int, int] | NotCovered:
    """Whole token counts for the package (at least one token in, two out: TPOT needs a second token)."""
    if not all(math.isfinite(x) and 0 < x <= LENGTH_MAX for x in (input_tokens, output_tokens)):
        return NotCovered(reason=f"input and output tokens must be between 1 and {LENGTH_MAX:,}")
    if not 1 <= batch <= BATCH_MAX:
        return NotCovered(reason=f"batch must be between 1 and {BATCH_MAX:,} sequences")
    return max(1, round(input_tokens)), max(2, round(output_tokens))


_SetupArgs = tuple[ModelSpec, GpuSpec, int, str, str | None, str, str, int]


def _prepared(
    args: _SetupArgs, input_tokens: float, output_tokens: float, batch: int
) -> tuple[_Setup, dict[str, Any], int, int] | NotCovered:
    """The setup built (or why not) and the lengths as whole tokens, checked before anything is loaded."""
    lengths = _lengths(input_tokens, output_tokens, batch)
    if isinstance(lengths, NotCovered):
        return lengths
    setup = _setup(*args)
    if isinstance(setup, NotCovered):
        return setup
    core = _core()
    assert not isinstance(core, NotCovered)
    return setup, core, *lengths


def _runtime(core: dict[str, Any], batch: int, isl: int, osl: int) -> Any:
    return _module(core, "config").RuntimeConfig(batch_size=batch, beam_width=1, isl=isl, osl=osl)


def profiled_estimate(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str | None,
    engine: str,
    attention: str,
    expert_parallel: int,
    input_tokens: float,
    output_tokens: float,
    batch: int,
    *,
    prefill_budget: int | None = None,
) -> ProfiledEstimate | NotCovered:
    """The replica's output tokens/s, tokens/s per user, TTFT and TPOT at ``batch`` sequences in flight, from
    the profiled tables; or why they cannot answer.

    Continuous batching as AIConfigurator's ``agg`` estimate models it: each mixed step prefills
    ``prefill_budget`` prompt tokens beside the running decodes; None is one prompt's worth (its command line's
    default), a number is an engine's chunk (``max_num_batched_tokens``, ``chunked_prefill_size``), kept below
    the batch's prompts so some sequences always decode. ``batch`` counts the whole replica; under data-parallel
    attention each rank holds its share. ``attention``, ``expert_parallel`` as the engines take them (``tp``: one
    tensor-parallel group over all GPUs; ``dp``: one attention rank per GPU, the experts split over
    ``expert_parallel`` GPUs)."""
    prepared = _prepared(
        (model, gpu, gpus, precision, kv_dtype, engine, attention, expert_parallel), input_tokens, output_tokens, batch
    )
    if isinstance(prepared, NotCovered):
        return prepared
    setup, core, isl, osl = prepared
    per_rank = max(1, math.ceil(batch / setup.dp))
    budget = isl if prefill_budget is None else max(1, min(prefill_budget, isl * max(1, per_rank - 1)))
    try:
        summary = setup.backend.run_agg(
            setup.model, setup.database, _runtime(core, per_rank, isl, osl), ctx_tokens=budget
        )
        result = summary.get_result_dict()
        fits = not (summary.check_oom() or summary.check_kv_cache_oom())
        measured = _measured_share(summary.get_per_ops_data() or {}, summary.get_per_ops_source() or {})
    except Exception as exc:  # missing table rows surface as exceptions deep in the package
        return NotCovered(reason=f"AIConfigurator could not price this step on {setup.system}: {exc}")
    tpot = float(result["tpot"])
    return ProfiledEstimate(
        output_tokens_per_s=float(result["tokens/s"]),
        tokens_per_s_per_user=1000.0 / tpot if tpot > 0 else 0.0,
        ttft_ms=float(result["ttft"]),
        tpot_ms=tpot,
        batch=per_rank * setup.dp,
        engine_version=setup.engine_version,
        system=setup.system,
        fits_memory=fits,
        measured_share=measured,
        model_description=setup.description,
    )


def _measured_share(latencies: dict[str, Any], sources: dict[str, Any]) -> float:
    """Share of a run's step time priced from measured rows: each step kind's per-operation latencies weighted
    by how many steps of that kind the run takes (``scheduling``)."""
    counts = latencies.get("scheduling", {})
    weights = {"mix_step": counts.get("num_mix_steps", 1.0), "genonly_step": counts.get("num_genonly_steps", 1.0)}
    total = measured = 0.0
    for step, weight in weights.items():
        for op, latency in (latencies.get(step) or {}).items():
            share = float(latency) * float(weight)
            total += share
            if (sources.get(step) or {}).get(op) == "silicon":
                measured += share
    return measured / total if total > 0 else 0.0


def profiled_burst_tokens_per_s(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str | None,
    engine: str,
    attention: str,
    expert_parallel: int,
    input_tokens: float,
    mean_output_tokens: float,
    batch: int,
    requests: int,
) -> float | NotCovered:
    """Output tokens/s of a run that sent ``requests`` prompts at once with ShareGPT-like answer lengths,
    timed by :func:`calculator.capacity.calibration.burst_seconds` (the same burst the roofline's check uses)
    on the profiled step costs: one prompt's prefill step, and a decode-only step at each batch."""
    prepared = _prepared(
        (model, gpu, gpus, precision, kv_dtype, engine, attention, expert_parallel),
        input_tokens,
        mean_output_tokens,
        min(batch, requests),
    )
    if isinstance(prepared, NotCovered):
        return prepared
    setup, core, isl, osl = prepared
    runtime = _runtime(core, 1, isl, osl)
    try:
        step = _module(core, "step_estimate").MixedStepInput(context_tokens=isl, num_decode_requests=0)
        prefill_ms = float(setup.backend.run_mixed(setup.model, setup.database, runtime, step).latency_ms)
        ranks = setup.dp

        @cache
        def step_s(b: int) -> float:
            per_rank = max(1, math.ceil(b / ranks))
            latency = setup.backend._get_genonly_step_latency(setup.model, setup.database, runtime, per_rank, isl, osl)[
                0
            ]
            return float(latency) / 1000

        # every rank prefills its own prompts, so the replica prefills `ranks` prompts per step time
        prefill_tokens_per_s = ranks * isl / (prefill_ms / 1000)
        seconds = burst_seconds(requests, batch, input_tokens, mean_output_tokens, prefill_tokens_per_s, step_s)
    except Exception as exc:
        return NotCovered(reason=f"AIConfigurator could not price this step on {setup.system}: {exc}")
    return requests * mean_output_tokens / seconds
