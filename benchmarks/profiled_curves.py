"""Print efficiency curves read from AIConfigurator's profiled tables, in the roofline's own terms.

Run with ``.venv/bin/python benchmarks/profiled_curves.py`` (needs the optional extra ``profiled``; a few seconds).
Each figure is a measured kernel time set against the roofline time our GPU specs give for the same work,
``max(FLOPs / dense peak, bytes / bandwidth)`` (``calculator/data/gpu_specs``): 100% is the datasheet ceiling. They
are what the roofline's single efficiencies (``RooflineAssumptions``) flatten, shown against what they depend on:

- GEMM against the tokens in a step (``m``), for two weight shapes of a 70B dense model (8,192 x 8,192, the
  attention output; 65,536 x 8,192, near its gate-and-up projection of 57,344), BF16 and FP8;
- decode attention (one new token per sequence) against context, as a share of bandwidth for the KV bytes read,
  at 8 and 64 sequences; prefill attention (causal) against prompt length, as a share of BF16 peak;
- the MoE layer of DeepSeek-V3 (256 experts, 8 active, 7,168 x 2,048, block FP8) against tokens per expert, all
  experts on one GPU (balanced routing): the layer's time and its FLOPs as a share of FP8 peak; and the time of
  the same ``num_tokens`` row under 8-way expert parallelism as a ratio. Only the FLOP share is given: at a few
  tokens per expert the rows run faster than reading the experts the tokens would touch allows (1.4 ms for 32
  tokens on an H100, where 163 of 256 experts' FP8 weights take 2.1 ms to read), so the collector's routing
  touches fewer experts than uniform routing would, and what ``num_tokens`` counts under EP (each rank's batch or
  the group's) the table does not say (0.6x at 16k tokens fits neither 1x nor 1/8).

The fastest kernel the engine profiled at each point is taken. Nothing here is fitted or written back.
"""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pandas as pd

from calculator.capacity.profiled import SYSTEMS, available
from calculator.catalog.gpus import GpuSpec, load_gpu_specs

GPUS = ("h100-sxm", "h200-sxm", "b200")
BACKEND, VERSION = "vllm", "0.24.0"
"""vLLM 0.24.0 is profiled on all three (the newest version the package calls current)."""
TOKENS = (1, 8, 32, 128, 512, 1024, 2048, 4096, 8192, 16384)
CONTEXTS = (127, 511, 1023, 2047, 4095, 8191, 16383, 32767)
PROMPTS = (512, 1024, 2048, 4096, 8192, 16384)


def table(system: str, op: str, name: str) -> pd.DataFrame | None:
    root = Path(importlib.import_module("aiconfigurator_core").__file__ or "").parent
    path = root / "systems" / "data" / system / op / BACKEND / VERSION / f"{name}_perf.parquet"
    return pd.read_parquet(path) if path.is_file() else None


def share(roofline_ms: float, measured_ms: float) -> str:
    return f"{roofline_ms / measured_ms:5.0%}" if measured_ms > 0 else "    -"


def gemm(system: str, gpu: GpuSpec) -> None:
    data = table(system, "gemm", "gemm")
    if data is None:
        return
    for dtype, weight, peak in (("bfloat16", 2, gpu.bf16_dense_tflops), ("fp8", 1, gpu.fp8_dense_tflops)):
        if peak is None:
            continue
        for n, k in ((8192, 8192), (65536, 8192)):
            rows = data[(data.gemm_dtype == dtype) & (data.n == n) & (data.k == k)].groupby("m").latency.min()
            cells = []
            for m in TOKENS:
                if m not in rows.index:
                    cells.append("    -")
                    continue
                flops = 2 * m * n * k / (peak * 1e12)
                moved = (n * k * weight + m * k * weight + m * n * 2) / (gpu.memory_bandwidth_tbs * 1e12)
                cells.append(share(max(flops, moved) * 1000, float(rows[m])))
            print(f"  GEMM {dtype:8} {n:>6} x {k:<6}   " + " ".join(cells))


def attention(system: str, gpu: GpuSpec) -> None:
    decode = table(system, "attention", "generation_attention")
    if decode is not None:
        shape = (decode.num_heads == 64) & (decode.num_key_value_heads == 8) & (decode.head_dim == 128)
        mine = decode[shape & (decode.kv_cache_dtype == "bfloat16") & (decode.window_size == 0)]
        for batch in (8, 64):
            rows = mine[mine.batch_size == batch].groupby("step").latency.min()
            cells = []
            for context in CONTEXTS:
                if context not in rows.index:
                    cells.append("    -")
                    continue
                read = batch * (context + 1) * 2 * 8 * 128 * 2 / (gpu.memory_bandwidth_tbs * 1e12)
                cells.append(share(read * 1000, float(rows[context])))
            print(f"  decode attention, {batch:2d} seqs    " + " ".join(cells))
    prefill = table(system, "attention", "context_attention")
    if prefill is not None:
        shape = (prefill.num_heads == 64) & (prefill.num_key_value_heads == 8) & (prefill.head_dim == 128)
        full = (prefill.window_size == 0) & (prefill.kv_cache_dtype == "bfloat16") & (prefill.batch_size == 1)
        mine = prefill[shape & full]
        rows = mine.groupby("isl").latency.min()
        cells = []
        for isl in PROMPTS:
            if isl not in rows.index:
                cells.append("    -")
                continue
            flops = 4 * isl * isl / 2 * 64 * 128 / (gpu.bf16_dense_tflops * 1e12)
            cells.append(share(flops * 1000, float(rows[isl])))
        print("  prefill attention, 1 prompt  " + " ".join(cells) + f"   (prompt lengths {PROMPTS})")


def moe(system: str, gpu: GpuSpec) -> None:
    data = table(system, "moe", "moe")
    if data is None or gpu.fp8_dense_tflops is None:
        return
    experts, active, hidden, inter = 256, 8, 7168, 2048
    shape = (data.hidden_size == hidden) & (data.inter_size == inter) & (data.num_experts == experts)
    mine = data[shape & (data.topk == active) & (data.moe_tp_size == 1)]
    mine = mine[(mine.moe_dtype == "fp8_block") & (mine.distribution == "balanced")]
    latency: dict[int, dict[int, float]] = {}
    for ep, tokens, value in zip(mine.moe_ep_size, mine.num_tokens, mine.latency, strict=True):
        row = latency.setdefault(int(ep), {})
        row[int(tokens)] = min(float(value), row.get(int(tokens), math.inf))
    if 1 not in latency:
        return
    cells: list[str] = []
    per_expert: list[str] = []
    ep8: list[str] = []
    times: list[str] = []
    for tokens in TOKENS:
        if tokens not in latency[1]:
            for line in (cells, per_expert, ep8, times):
                line.append("    -")
            continue
        measured = latency[1][tokens]
        flops = 2 * tokens * active * 3 * hidden * inter / (gpu.fp8_dense_tflops * 1e12)
        cells.append(share(flops * 1000, measured))
        times.append(f"{measured:5.2f}" if measured < 10 else f"{measured:5.1f}")
        load = tokens * active / experts
        per_expert.append(f"{load:5.1f}" if load < 10 else f"{load:5.0f}")
        ep8.append(f"{latency[8][tokens] / measured:5.2f}" if tokens in latency.get(8, {}) else "    -")
    print(f"  {'MoE DeepSeek-V3, 1 GPU, ms':29}" + " ".join(times))
    print("    share of FP8 peak        " + " ".join(cells))
    print("    tokens per expert        " + " ".join(per_expert))
    print("    EP8 time / one GPU's     " + " ".join(ep8))


def main() -> None:
    if not available():
        print("aiconfigurator-core is not installed: pip install 'inference-cost-calculator[profiled]'")
        sys.exit(0)
    gpus = load_gpu_specs()
    print(f"share of the roofline ceiling reached by the fastest profiled kernel ({BACKEND} {VERSION} tables)")
    for gpu_id in GPUS:
        gpu, system = gpus.get(gpu_id), SYSTEMS[gpu_id]
        print(f"\n{gpu.name} ({system})")
        print(f"  {'tokens per step (m)':29}" + " ".join(f"{m:>5}" for m in TOKENS))
        gemm(system, gpu)
        moe(system, gpu)
        print(
            f"  {'context (tokens)':29}"
            + " ".join(f"{c + 1:>5}" if c < 9999 else f"{(c + 1) // 1024:>4}k" for c in CONTEXTS)
        )
        attention(system, gpu)


if __name__ == "__main__":
    main()
