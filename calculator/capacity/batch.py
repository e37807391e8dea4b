"""The batch a replica runs: the most sequences it holds at once, and which limit sets it.

An estimate's batch is never a hidden default. It is what the load puts in flight, capped by what the KV cache
holds at the request's context (:func:`calculator.capacity.memory.fit`), by the engine's own scheduler limit
(vLLM's ``max_num_seqs`` default), and by a maximum batch only when the user sets one.
"""

from __future__ import annotations

from typing import Literal

from calculator.capacity.memory import ENGINES, FitResult
from calculator.catalog.gpus import GpuSpec

__all__ = ["ENGINE_NAMES", "MEMORY_ENGINE", "Engine", "batch_cap"]

Engine = Literal["vllm", "sglang", "tensorrt-llm"]
ENGINE_NAMES: tuple[Engine, ...] = ("vllm", "sglang", "tensorrt-llm")
MEMORY_ENGINE: dict[str, str] = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "vllm"}
"""Whose memory accounting sizes the KV cache: TensorRT-LLM's (a share of the memory free after loading, 0.9 by
default) is closest to vLLM's, which has a calibrated profile."""


def batch_cap(
    gpu: GpuSpec, room: FitResult, engine: Engine, max_batch: int | None, *, ranks: int = 1
) -> tuple[int, str]:
    """The most sequences one replica holds at once, and which limit sets it. ``ranks``: schedulers in the
    replica (its GPUs under data-parallel attention, each scheduling its own sequences), else 1."""
    limits = [(room.max_sequences, f"the KV cache holds {room.max_sequences:,} sequences of the context")]
    profile = ENGINES[MEMORY_ENGINE[engine]]
    scheduler = profile.default_max_num_seqs(gpu) * ranks if profile.max_num_seqs else 0
    if scheduler and engine == "vllm":
        limits.append((scheduler, f"vLLM schedules at most {scheduler:,} sequences by default (max_num_seqs)"))
    if max_batch is not None:
        limits.append((max_batch, f"max batch {max_batch:,} (set by you)"))
    cap, why = min(limits, key=lambda pair: pair[0])
    return max(cap, 0), why
