"""The ``fit`` command: does a model fit on a GPU, and how many sequences fit in its KV cache."""

from __future__ import annotations

import argparse
from typing import Any

from calculator.catalog.gpus import load_gpu_specs
from calculator.cli import console, flags, folders

__all__ = ["add_capacity_parsers", "cmd_fit"]


def cmd_fit(args: argparse.Namespace) -> int:
    from calculator.capacity.memory import fit
    from calculator.catalog.models import load_model_specs

    model = load_model_specs(args.models).get(args.model)
    gpu = load_gpu_specs(args.gpu_specs).get(args.gpu)
    utilisation = None if args.memory_utilisation is None else float(args.memory_utilisation)
    result = fit(
        model,
        gpu,
        args.precision,
        args.context,
        args.gpu_count,
        args.kv_dtype,
        utilisation,
        engine=args.engine,
        attention=args.attention,
    )
    if args.json:
        console.emit(result.model_dump(mode="json"))
        return 0
    verdict = "fits" if result.fits else "does NOT fit"
    print(f"{model.id} at {result.precision.upper()} on {result.gpus}x {gpu.id}, context {result.context:,}: {verdict}")
    print(
        f"engine {result.engine}, {result.utilisation:.0%} of memory, KV cache {result.kv_dtype.upper()}, "
        f"attention {result.attention}; weights: {result.weights_basis}"
    )
    rows = [
        ["memory CUDA reports (usable)", "", f"{result.usable_memory_per_gpu_gib:,.2f} GiB"],
        ["weights (all experts resident)", f"{result.weights_gb:,.1f} GB", f"{result.weights_per_gpu_gb:,.1f} GB"],
        ["KV cache per token", f"{result.kv_bytes_per_token / 1024:,.1f} KiB", ""],
        ["KV per sequence at the context", "", f"{result.kv_per_sequence_per_gpu_gb:,.2f} GB"],
        ["engine overhead", "", f"{result.reserve_gb:,.1f} GB"],
        ["KV budget", "", f"{result.kv_budget_per_gpu_gb:,.1f} GB ({result.kv_budget_per_gpu_gib:,.2f} GiB)"],
        ["concurrent sequences at the context", f"{result.max_sequences:,}", ""],
        ["tokens the KV cache holds", f"{result.max_cached_tokens:,}", ""],
    ]
    print(console.table(rows, ["", "whole model", "per GPU"]))
    if result.engine_reserve_gib:
        parts = "; ".join(f"{label} {gib:,.2f} GiB" for label, gib in result.engine_reserve_gib)
        print(f"Engine reserve per GPU ({result.engine}: releases {result.engine_releases}): {parts}.")
    if result.kv_replicated:
        print("The KV cache is replicated on every GPU (MLA latent, or fewer KV heads than GPUs).")
    if not result.fits:
        print(f"Short by {result.shortfall_gb:,.1f} GB per GPU. Would fit: " + "; or ".join(result.suggestions))
    print("Assumptions: " + "; ".join(result.assumptions))
    return 0


def add_capacity_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    fit_ = sub.add_parser("fit", parents=[common], help="does a model fit; how many sequences fit in the KV cache")
    folders.add_data_folders(fit_, "models", "gpu_specs")
    fit_.add_argument("--model", required=True, help="model id (see: models)")
    fit_.add_argument("--gpu", required=True, help="GPU id (see: gpus)")
    fit_.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp8", "int8", "int4", "fp4"])
    fit_.add_argument(
        "--context", type=flags.context, help="tokens per sequence (default: the model's default context)"
    )
    fit_.add_argument("--gpus", dest="gpu_count", type=flags.gpus, default=1, help="tensor-parallel GPUs (default 1)")
    fit_.add_argument(
        "--kv-dtype", choices=["bf16", "fp16", "fp8", "int8"], help="KV cache precision (default: the model's, BF16)"
    )
    fit_.add_argument(
        "--memory-utilisation",
        type=flags.share,
        default=None,
        help="share of memory (default: the engine's; vLLM 0.9, SGLang 0.88 on one GPU)",
    )
    fit_.add_argument(
        "--engine",
        choices=["vllm", "vllm-0.17", "sglang"],  # calculator.capacity.memory.ENGINES, not imported at start
        default="vllm",
        help="whose memory accounting: vllm (releases 0.9 to 0.16), vllm-0.17 (0.17 and later) or sglang",
    )
    fit_.add_argument(
        "--attention",
        choices=["tp", "dp"],
        default="tp",
        help="tp: KV split by head (MLA latent replicated); dp: data-parallel attention, whole sequences per GPU",
    )
    fit_.set_defaults(func=cmd_fit)
