"""The profiled estimator (AIConfigurator's tables): what it answers on published runs, what it says it does not
cover, and that everything works without the optional package."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.capacity import profiled
from calculator.capacity.profiled import NotCovered, ProfiledEstimate, covers, model_config_json, profiled_estimate
from calculator.capacity.roofline import replica_speed
from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.models import ModelCatalog, load_model_specs

TRTLLM_PERF_OVERVIEW = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/docs/source/performance/"
    "perf-overview.md"
)
"""NVIDIA's TensorRT-LLM performance overview (read 2026-11-30): Llama 3.3 70B, ISL/OSL 1000/1000, 3,000 requests
queued at once (trtllm-bench), ModelOpt checkpoints with an FP8 KV cache."""
GPUSTACK_DEEPSEEK_R1_H200 = (
    "https://github.com/gpustack/gpustack/blob/47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d/docs/performance-lab/"
    "deepseek-r1/h200.md"
)
"""GPUStack's performance lab, DeepSeek-R1-0528 on 8x H200 (read 2026-11-30): `vllm serve ... -tp 8`, random 4K
input, 500 requests sent at once: 753.67 output tokens/s."""


@pytest.fixture(scope="module")
def models() -> ModelCatalog:
    return load_model_specs()


@pytest.fixture(scope="module")
def gpus() -> GpuCatalog:
    return load_gpu_specs()


@pytest.fixture
def without_package(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The optional package as if never installed: every import of it fails, whatever was imported before."""
    for name in [m for m in sys.modules if m.startswith("aiconfigurator_core")] + ["aiconfigurator_core"]:
        monkeypatch.setitem(sys.modules, name, None)
    profiled._core.cache_clear()
    profiled._built.cache_clear()
    yield
    profiled._core.cache_clear()
    profiled._built.cache_clear()


# --- published runs (need the package) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "precision", "batch", "measured"),
    [
        # perf overview: h200-sxm TP1 FP8 2,909 tok/s; b200 TP1 FP4 7,007 tok/s. The batch is what our memory fit
        # holds for 2,000 tokens a sequence (the roofline check's batch for these cases).
        ("h200-sxm", "fp8", 182, 2909.0),
        ("b200", "fp4", 403, 7007.0),
    ],
)
def test_llama_70b_on_tensorrt_llm_is_within_a_tenth_of_nvidias_perf_overview(
    models: ModelCatalog, gpus: GpuCatalog, gpu: str, precision: str, batch: int, measured: float
) -> None:
    pytest.importorskip("aiconfigurator_core")
    answer = profiled_estimate(
        models.get("llama-3.3-70b"), gpus.get(gpu), 1, precision, "fp8", "tensorrt-llm", "tp", 1, 1000, 1000, batch
    )
    assert isinstance(answer, ProfiledEstimate), answer
    assert answer.output_tokens_per_s == pytest.approx(measured, rel=0.10)  # source: TRTLLM_PERF_OVERVIEW
    assert answer.engine_version.startswith("tensorrt-llm ")
    assert answer.batch == batch
    # tokens/s per user is 1000 / TPOT, and the replica's rate is at most batch users decoding at that speed
    assert answer.tokens_per_s_per_user == pytest.approx(1000 / answer.tpot_ms)
    assert answer.output_tokens_per_s <= batch * answer.tokens_per_s_per_user
    assert answer.ttft_ms > answer.tpot_ms


def test_deepseek_r1_on_eight_h200_with_vllm_is_within_fifteen_percent_of_gpustacks_run(
    models: ModelCatalog, gpus: GpuCatalog
) -> None:
    pytest.importorskip("aiconfigurator_core")
    answer = profiled_estimate(
        models.get("deepseek-v3"), gpus.get("h200-sxm"), 8, "fp8", "bf16", "vllm", "tp", 1, 3995.1, 200, 152
    )
    assert isinstance(answer, ProfiledEstimate), answer
    assert answer.output_tokens_per_s == pytest.approx(753.67, rel=0.15)  # source: GPUSTACK_DEEPSEEK_R1_H200
    assert answer.system == "h200_sxm"
    assert answer.model_description.startswith("deepseek-ai/DeepSeek-V3:")
    assert 0.5 < answer.measured_share <= 1


def test_data_parallel_attention_counts_the_batch_over_every_rank(models: ModelCatalog, gpus: GpuCatalog) -> None:
    pytest.importorskip("aiconfigurator_core")
    setup = (models.get("deepseek-v3.2"), gpus.get("h200-sxm"), 8, "fp8", "bf16", "sglang", "dp", 8, 1000, 1000)
    answer = profiled_estimate(*setup, 250)
    assert isinstance(answer, ProfiledEstimate), answer
    assert answer.batch == 256  # 32 on each of the 8 ranks
    smaller = profiled_estimate(*setup, 64)
    assert isinstance(smaller, ProfiledEstimate)
    assert smaller.tokens_per_s_per_user > answer.tokens_per_s_per_user
    assert smaller.output_tokens_per_s < answer.output_tokens_per_s


def test_an_engine_prefill_chunk_is_kept_below_the_batchs_prompts(models: ModelCatalog, gpus: GpuCatalog) -> None:
    pytest.importorskip("aiconfigurator_core")
    setup = (models.get("llama-3.1-8b"), gpus.get("h200-sxm"), 1, "fp8", "fp8", "tensorrt-llm", "tp", 1, 1000, 1000)
    one_prompt = profiled_estimate(*setup, 64)
    chunked = profiled_estimate(*setup, 64, prefill_budget=8192)
    alone = profiled_estimate(*setup, 1, prefill_budget=8192)  # one sequence: the budget cannot exceed its prompt
    assert isinstance(one_prompt, ProfiledEstimate) and isinstance(chunked, ProfiledEstimate), (one_prompt, chunked)
    assert isinstance(alone, ProfiledEstimate), alone
    assert chunked.output_tokens_per_s != one_prompt.output_tokens_per_s
    assert alone.tokens_per_s_per_user > chunked.tokens_per_s_per_user


def test_an_estimate_never_asks_hugging_face_for_a_config(
    models: ModelCatalog, gpus: GpuCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("aiconfigurator_core")
    utils = pytest.importorskip("aiconfigurator_core.sdk.utils")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the profiled estimator tried to download a model config")

    monkeypatch.setattr(utils, "_download_hf_config", no_network)
    monkeypatch.setattr(utils, "_download_hf_json", no_network)
    answer = profiled_estimate(
        models.get("llama-3.2-3b"), gpus.get("l40s"), 1, "bf16", None, "vllm", "tp", 1, 999, 270, 8
    )
    assert isinstance(answer, ProfiledEstimate), answer


# --- the model description -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "width", "tied"),
    [
        # intermediate_size and tie_word_embeddings in each model's published config.json on Hugging Face
        # (meta-llama/Llama-3.1-8B, Llama-3.3-70B-Instruct, Llama-3.2-3B; copies ship in aiconfigurator-core)
        ("llama-3.1-8b", 14336, False),
        ("llama-3.3-70b", 28672, False),
        ("llama-3.2-3b", 8192, True),
    ],
)
def test_a_dense_models_mlp_width_worked_out_from_its_parameters_matches_its_config(
    models: ModelCatalog, model_id: str, width: int, tied: bool, without_package: None
) -> None:
    described = model_config_json(models.get(model_id))
    assert not isinstance(described, NotCovered)
    config, note = described
    assert config["intermediate_size"] == width
    assert config["tie_word_embeddings"] is tied
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert "worked out" in note


def test_a_mixture_of_experts_with_shared_experts_needs_the_packages_own_description(models: ModelCatalog) -> None:
    described = model_config_json(models.get("glm-4.6"))
    assert isinstance(described, NotCovered)
    assert "shared experts" in described.reason


# --- not covered, and why --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "gpu", "precision", "engine", "says"),
    [
        ("llama-3.3-70b", "mi300x", "fp8", "vllm", "NVIDIA GPUs only"),
        ("llama-3.3-70b", "h100-pcie", "fp8", "vllm", "no profiled tables"),
        ("llama-3.3-70b", "h100-sxm", "fp8", "llama.cpp", "vLLM, SGLang and TensorRT-LLM only"),
        ("llama-3.3-70b", "h100-sxm", "fp4", "tensorrt-llm", "Blackwell"),
        ("llama-3.3-70b", "h100-sxm", "int8", "vllm", "precision int8"),
    ],
)
def test_a_setup_outside_the_profiled_tables_says_what_is_missing(
    models: ModelCatalog, gpus: GpuCatalog, model_id: str, gpu: str, precision: str, engine: str, says: str
) -> None:
    model = models.get(model_id)
    reason = covers(model, gpus.get(gpu), 1, precision, None, engine)
    assert isinstance(reason, NotCovered)
    assert says in reason.reason
    assert str(reason).startswith("not covered: ")
    answer = profiled_estimate(model, gpus.get(gpu), 1, precision, None, engine, "tp", 1, 1000, 1000, 8)
    assert answer == reason


def test_an_expert_parallel_width_that_does_not_divide_the_gpus_is_not_covered(
    models: ModelCatalog, gpus: GpuCatalog
) -> None:
    reason = covers(models.get("deepseek-v3"), gpus.get("h200-sxm"), 8, "fp8", "bf16", "sglang", "dp", 3)
    assert isinstance(reason, NotCovered)
    assert "does not divide 8" in reason.reason


# --- without the optional package -------------------------------------------------------------------------------


def test_without_the_extra_the_reason_names_it_and_the_roofline_still_answers(
    models: ModelCatalog, gpus: GpuCatalog, without_package: None
) -> None:
    model, gpu = models.get("llama-3.3-70b"), gpus.get("h200-sxm")
    answer = profiled_estimate(model, gpu, 1, "fp8", "fp8", "tensorrt-llm", "tp", 1, 1000, 1000, 64)
    assert isinstance(answer, NotCovered)
    assert "optional extra 'profiled'" in answer.reason
    assert not profiled.available()
    speed = replica_speed(model, gpu, "fp8", 1000, 1000, 64, 1, "fp8")
    assert speed.decode.tokens_per_s_per_user > 0


def test_importing_the_estimator_does_not_import_the_package() -> None:
    probe = (
        "import sys, calculator.capacity.profiled; "
        "print(sorted(m for m in sys.modules if m.startswith('aiconfigurator_core')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gpus_count=st.integers(min_value=-2, max_value=17),
    expert_parallel=st.integers(min_value=-1, max_value=300),
    attention=st.sampled_from(["tp", "dp", "pp", ""]),
    input_tokens=st.floats(allow_nan=True, allow_infinity=True),
    output_tokens=st.floats(min_value=-10, max_value=1e9),
    batch=st.integers(min_value=-5, max_value=10**7),
)
def test_any_numbers_give_an_estimate_or_a_reason_never_a_traceback(
    models: ModelCatalog,
    gpus: GpuCatalog,
    gpus_count: int,
    expert_parallel: int,
    attention: str,
    input_tokens: float,
    output_tokens: float,
    batch: int,
) -> None:
    answer = profiled_estimate(
        models.get("deepseek-v3"),
        gpus.get("h200-sxm"),
        gpus_count,
        "fp8",
        "bf16",
        "sglang",
        attention,
        expert_parallel,
        input_tokens,
        output_tokens,
        batch,
    )
    assert isinstance(answer, ProfiledEstimate | NotCovered)
    if isinstance(answer, NotCovered):
        assert answer.reason
