"""The ``estimate`` command: what an engine would measure for one setup that nobody has measured.

``--json`` keys (a public interface): ``output_tokens_per_s`` (all replicas together), ``tokens_per_s_per_user``,
``requests_per_s``, ``batch``, ``batch_limit``, ``ttft_ms`` and ``tpot_ms`` (each with ``p50``, ``p90``, ``p95``,
``p99``), ``estimator``, ``estimator_reason``, ``bound``, ``error_band`` (``low``, ``high``, ``provenance``),
``other`` (the other estimator's ``output_tokens_per_s`` and ``error_band`` where it could answer, else null),
``load``, ``replicas``, ``setup`` and ``notes``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from calculator.cli import console, flags, folders

__all__ = ["add_estimate_parser", "cmd_estimate"]

PRECISIONS = ["bf16", "fp16", "fp8", "int8", "int4", "fp4"]
KV_DTYPES = ["bf16", "fp16", "fp8", "int8"]


def _model(ref: str, models_dir: Path | None) -> Any:
    """A bundled model by id, or a model described by a Hugging Face config.json (a path ending in .json, or
    a folder holding one)."""
    from calculator.catalog.models import load_model_specs

    try:
        config = ref.endswith(".json") or Path(ref).is_dir()
    except OSError:  # no such path can exist (a name too long, a NUL): it is a model id, refused as one
        config = False
    if config:
        from calculator.catalog.hf_config import import_hf_config

        return import_hf_config(ref).spec
    return load_model_specs(models_dir).get(ref)


def cmd_estimate(args: argparse.Namespace) -> int:
    from calculator.capacity.estimate import estimate_setup
    from calculator.catalog.gpus import load_gpu_specs

    targets = args.ttft_ms is not None or args.tpot_ms is not None
    given = (args.concurrency is not None) + bool(args.offline) + targets
    if given != 1:
        raise flags.UsageError(
            "estimate: give one load: --concurrency N, --offline, or latency targets (--ttft-ms and/or --tpot-ms)"
        )
    if args.latency_percentile is not None and not targets:
        raise flags.UsageError("estimate: --latency-percentile goes with --ttft-ms or --tpot-ms")
    model = _model(args.model, args.models)
    gpu = load_gpu_specs(args.gpu_specs).get(args.gpu)
    result = estimate_setup(
        model,
        gpu,
        args.gpu_count,
        args.precision,
        float(args.input_tokens),
        float(args.output_tokens),
        replicas=args.replicas,
        kv_dtype=args.kv_dtype,
        engine=args.engine,
        attention=args.attention,
        cached_share=float(args.cached_share),
        concurrency=args.concurrency,
        offline=args.offline,
        ttft_ms=args.ttft_ms,
        tpot_ms=args.tpot_ms,
        percentile=args.latency_percentile or "p95",
        max_batch=args.max_batch,
        expert_parallel=args.expert_parallel,
        estimator=args.estimator,
    )
    setup = {
        "model": model.id,
        "gpu": gpu.id,
        "gpus": args.gpu_count,
        "replicas": args.replicas,
        "precision": args.precision,
        "kv_dtype": result.fit.kv_dtype,
        "engine": args.engine,
        "attention": args.attention,
        "expert_parallel": args.expert_parallel,
        "input_tokens": args.input_tokens,
        "output_tokens": args.output_tokens,
        "cached_share": float(args.cached_share),
    }
    if args.json:
        data = result.model_dump(mode="json", exclude={"fit"})
        console.emit({**data, "setup": setup, "kv_cache_tokens": result.fit.max_cached_tokens})
        return 0
    _print(result, setup)
    return 0


def _print(result: Any, setup: dict[str, Any]) -> None:
    where = f"{setup['replicas']} x " if setup["replicas"] > 1 else ""
    print(
        f"ESTIMATE ({result.estimator}, not a measurement): {setup['model']} at {setup['precision'].upper()} "
        f"(KV {setup['kv_dtype'].upper()}) on {where}{setup['gpus']}x {setup['gpu']}, {setup['engine']}, "
        f"attention {setup['attention']}; {setup['input_tokens']:,} in / {setup['output_tokens']:,} out"
    )
    print(f"Load: {result.load}; batch {result.batch:,} per replica (limit {result.batch_limit:,}: "
          f"{result.batch_limit_reason})")  # fmt: skip
    band = result.error_band
    print(
        f"Output: {result.output_tokens_per_s:,.0f} tokens/s ({band.low:,.0f}-{band.high:,.0f} for 8 in 10 published "
        f"cases), {result.requests_per_s:,.2f} requests/s, {result.tokens_per_s_per_user:,.1f} tokens/s per user "
        f"({result.bound}-bound decode)"
    )
    rows = [
        [name, f"{getattr(result.ttft_ms, name):,.0f}", f"{getattr(result.tpot_ms, name):,.1f}"]
        for name in ("p50", "p90", "p95", "p99")
    ]
    print(console.table(rows, ["", "TTFT (ms)", "TPOT (ms)"]))
    print(f"Estimator: {result.estimator} ({result.estimator_reason})")
    print(f"Error band: {band.provenance}")
    if result.other is not None:
        o = result.other
        print(
            f"The {o.estimator} estimator says {o.output_tokens_per_s:,.0f} tokens/s "
            f"({o.error_band.low:,.0f}-{o.error_band.high:,.0f}; {o.error_band.provenance})"
        )
    for note in result.notes:
        print(f"Note: {note}")


def add_estimate_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    est = sub.add_parser(
        "estimate",
        parents=[common],
        help="throughput, per-user speed and latency percentiles of one setup, estimated",
    )
    folders.add_data_folders(est, "models", "gpu_specs")
    est.add_argument("--model", required=True, help="model id (see: models) or a Hugging Face config.json")
    est.add_argument("--gpu", required=True, help="GPU id (see: gpus)")
    est.add_argument("--gpus", dest="gpu_count", type=flags.gpus, default=1, help="GPUs per replica (default 1)")
    est.add_argument("--replicas", type=flags.replicas, default=1, help="replicas of the setup (default 1)")
    est.add_argument("--precision", required=True, choices=PRECISIONS, help="weight precision")
    est.add_argument("--kv-dtype", choices=KV_DTYPES, help="KV cache precision (default: the model's, BF16)")
    est.add_argument("--engine", choices=["vllm", "sglang", "tensorrt-llm"], default="vllm", help="(default vllm)")
    est.add_argument("--attention", choices=["tp", "dp"], default="tp", help="tensor or data-parallel attention")
    est.add_argument("--expert-parallel", type=flags.gpus, help="GPUs the experts are spread over (default: --gpus)")
    est.add_argument("--input-tokens", type=flags.tokens, required=True)
    est.add_argument("--output-tokens", type=flags.tokens, required=True)
    est.add_argument("--cached-share", type=flags.share, default=0, help="share of input served from a prefix cache")
    est.add_argument("--concurrency", type=flags.at_least_one, help="requests always in flight")
    est.add_argument("--offline", action="store_true", help="as many in flight as fit (a throughput benchmark)")
    est.add_argument("--ttft-ms", type=flags.positive, help="time to first token at most this (ms)")
    est.add_argument("--tpot-ms", type=flags.positive, help="time per output token at most this (ms)")
    est.add_argument("--latency-percentile", choices=["p50", "p90", "p95", "p99"], help="of the targets (p95)")
    est.add_argument(
        "--max-batch", type=flags.at_least_one, help="cap the batch (default: what fits and the engine runs)"
    )
    est.add_argument(
        "--estimator",
        choices=["auto", "roofline", "profiled"],
        default="auto",
        help="auto (default): the profiled tables where they beat the roofline on published points of the "
        "setup's family, else the roofline",
    )
    est.set_defaults(func=cmd_estimate)
