"""The replica an estimate sizes when the user names only a model and a GPU offer.

"Same model on both sides" runs the serverless model on the offer's GPUs. With no measurement of it,
the roofline estimates a replica, and someone has to say how many GPUs and at what precision. The rule
here is the one an engineer starts from: the model's own weights (no extra quantisation), on the fewest
GPUs of the offer's type that hold them and at least one sequence of the scenario's turn (tensor
parallel 1, 2, 4, 8; 16 spans two nodes).
"""

from __future__ import annotations

from calculator.capacity.memory import Attention, FitResult, fit
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec
from calculator.errors import InputError
from calculator.scenario.inputs import EstimateSetup

__all__ = ["REPLICA_GPU_COUNTS", "attention_layouts", "fewest_gpus", "native_precision", "replica_setup"]

REPLICA_GPU_COUNTS = (1, 2, 4, 8, 16)
"""GPUs per replica tried, fewest first: tensor-parallel sizes divide the heads evenly (powers of two),
and one node holds 8; 16 is a replica over two nodes, as the largest open models run on H100s (GLM-5,
DeepSeek-V3 and Kimi K2 at FP8). A model that needs more is left to a GPU with more memory."""


def attention_layouts(model: ModelSpec) -> tuple[Attention, ...]:
    """How a replica of ``model`` can lay out attention over its GPUs: tensor parallel always, and for MLA
    models data-parallel attention too (SGLang's ``--enable-dp-attention``, vLLM's data-parallel attention
    for DeepSeek), since one latent per token cannot be split by heads and tensor parallel copies it on
    every GPU. Deploy tries each; ``record: auto`` keeps the one whose estimate serves more."""
    return ("tp", "dp") if model.mla is not None else ("tp",)


def native_precision(model: ModelSpec, gpu: GpuSpec) -> str:
    """The weights' precision the estimate serves ``model`` at on ``gpu``: its published checkpoint's
    (``checkpoint``: FP8 for DeepSeek-V3.x and GLM-5-FP8, MXFP4, run as ``fp4``, for gpt-oss), else FP8 on
    a GPU with FP8 tensor cores and BF16 without.

    A model published in BF16 is served in FP8 by the providers that sell it (Together's -Turbo) and most
    publishers ship an FP8 checkpoint beside it (Qwen3-*-FP8, Llama-4-Maverick-FP8), so FP8 is the like-for-like
    comparison; a GPU without FP8 (A100, A10) loads the BF16 weights."""
    if model.checkpoint is not None:
        return model.checkpoint.precision
    return "fp8" if gpu.fp8_dense_tflops is not None else "bf16"


def fewest_gpus(model: ModelSpec, gpu: GpuSpec, precision: str, context: int) -> FitResult | None:
    """The memory fit on the fewest GPUs of :data:`REPLICA_GPU_COUNTS` that hold the weights and one
    sequence of ``context`` tokens; None when even the most do not."""
    for gpus in REPLICA_GPU_COUNTS:
        room = fit(model, gpu, precision, context, gpus)
        if room.fits:
            return room
    return None


def replica_setup(model: ModelSpec, gpu: GpuSpec, context: int) -> EstimateSetup:
    """The estimate's replica for ``model`` on ``gpu``: its native precision, the fewest GPUs that fit.

    A model no replica of up to 16 GPUs can hold is an :class:`InputError` naming the model and the GPU."""
    precision = native_precision(model, gpu)
    room = fewest_gpus(model, gpu, precision, context)
    if room is None:
        raise InputError(
            "self_hosting.model",
            f"{model.id} at {precision.upper()} does not fit on up to {REPLICA_GPU_COUNTS[-1]}x {gpu.id} with a "
            f"{context:,}-token sequence; would fit: a GPU offer with more memory per GPU, or a smaller model "
            "(self_hosting.model)",
        )
    return EstimateSetup(model=model.id, precision=precision, gpus_per_replica=room.gpus)
