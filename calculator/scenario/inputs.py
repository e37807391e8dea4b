"""What a user tells us about their workload: the turn's shape, the traffic, how they would host.

These are the scenario's inputs. Every layer above reads them (capacity sizes from them, pricing
bills them, planning spreads them over hours and months), so they live below all of those.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DAYS_PER_MONTH",
    "DAYS_PER_MONTH_EXACT",
    "HOURS_PER_MONTH",
    "EstimateSetup",
    "Fx",
    "LatencyTarget",
    "SelfHosting",
    "Share",
    "Traffic",
    "TurnShape",
]

Arr = npt.NDArray[np.float64]
Share = Decimal

HOURS_PER_MONTH = 730.0
"""8,760 hours a year over 12 months, as cloud providers bill a month."""
DAYS_PER_MONTH = 365.0 / 12
DAYS_PER_MONTH_EXACT = Decimal(365) / Decimal(12)


class LatencyTarget(BaseModel):
    """What users must see: TTFT at most, and tokens/s per user at least, at a percentile."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    percentile: Literal["p50", "p90", "p95", "p99"] = "p95"
    ttft_ms: float | None = Field(default=None, gt=0)
    tokens_per_s_per_user: float | None = Field(default=None, gt=0)


class EstimateSetup(BaseModel):
    """Size GPUs from a roofline estimate instead of a measurement (always labelled as an estimate)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    model: str
    """A model id from ``models/``."""
    precision: str = "fp8"
    gpus_per_replica: int = Field(default=1, ge=1)
    """Tensor-parallel GPUs per engine replica."""
    max_batch: int = Field(default=64, ge=1)
    """Most sequences decoded together (the engine's max batch; latency grows with it)."""


class TurnShape(BaseModel):
    """What one request sends and receives."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    input_tokens: int = Field(ge=0)
    """All prompt tokens: system prompt, tools, history and the new message."""
    prefix_share: Share = Field(ge=0, le=1)
    """Share of the input that repeats an earlier prompt's start (0 to 1)."""
    hit_rate: Share = Field(default=Decimal(1), ge=0, le=1)
    """Chance the repeated start is still cached when the turn arrives (0 to 1)."""
    output_tokens: int = Field(ge=0)
    """Output tokens, reasoning tokens included (billed as output)."""
    cache_write_share: Share = Field(default=Decimal(1), ge=0, le=1)
    """Where the offer charges cache writes: the share of what the next turn will read that this turn writes."""
    cache_ttl: str | None = None
    """Which cache lifetime to buy where an offer sells several (``5m``, ``1h``); default the shortest."""
    batch: bool = False
    """Priced as batch requests where the offer has a batch discount."""

    def scaled(self, factor: Decimal) -> TurnShape:
        """The same text counted by another tokenizer: ``factor`` tokens per token of this count."""
        if factor == 1:
            return self
        return self.model_copy(
            update={
                "input_tokens": int((self.input_tokens * factor).to_integral_value()),
                "output_tokens": int((self.output_tokens * factor).to_integral_value()),
            }
        )

    def without_reuse(self) -> TurnShape:
        """The same turn with nothing repeated and nothing written to a cache."""
        return self.model_copy(update={"prefix_share": Decimal(0), "cache_write_share": Decimal(0)})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Traffic(_Frozen):
    turns_per_month: int = Field(ge=0)
    """Requests per month."""
    peak_to_average: float = Field(default=2.0, ge=1)
    """Peak request rate over the average rate within the active hours."""
    active_hours_per_day: float = Field(default=24.0, gt=0, le=24)
    """Hours a day the traffic arrives in (24 for round-the-clock use)."""

    def peak_rps(self, turns_per_month: float | Arr) -> float | Arr:
        seconds = DAYS_PER_MONTH * self.active_hours_per_day * 3600
        return turns_per_month / seconds * self.peak_to_average


class SelfHosting(_Frozen):
    """How you would run the engine yourself (and how a dedicated endpoint is sized)."""

    record: str = "sglang-llama-3.3-70b-bf16-4xh200-rate4"
    """The throughput record capacity is taken from (an id from ``measurements/``)."""
    target_utilisation: float = Field(default=0.7, gt=0, le=1)
    """Share of a replica's measured capacity you plan to use at peak (headroom for latency)."""
    spare_replicas: int = Field(default=1, ge=0)
    """Extra replicas kept for failures and bursts (self-hosted only)."""
    autoscale: bool = False
    """Scale down outside the active hours (per-second billing makes this real) instead of always on."""
    min_replicas: int = Field(default=1, ge=0)
    """Replicas kept up outside the active hours when autoscaling."""
    startup_minutes: float = Field(default=2.0, ge=0)
    """Billed time per scale-up before a replica serves (vLLM and SGLang load in about a minute)."""
    engineer_monthly_cost: Decimal = Field(default=Decimal(12500), ge=0)
    """Fully loaded monthly cost of one platform engineer, in the scenario's currency (an assumption)."""
    engineer_share: float = Field(default=0.25, ge=0, le=5)
    """Share of an engineer's time running the stack (0.25 = a quarter)."""
    model_changes_per_month: float = Field(default=0.5, ge=0)
    """How often you move to a new model or version (each needs a load, and a build for TensorRT-LLM)."""
    build_minutes_per_change: float = Field(default=0.0, ge=0)
    """One-time engine build per model change (TensorRT-LLM's took about 28 minutes for a 70B model)."""
    latency_target: LatencyTarget | None = None
    """Use the busiest load level of the record's setup that still meets this (TTFT, tokens/s per user)."""
    estimate: EstimateSetup | None = None
    """Size from a roofline estimate of this model instead of a measured record (labelled an estimate)."""


class Fx(_Frozen):
    """Exchange rate used where sheets are in different currencies."""

    usd_per_eur: Decimal = Field(default=Decimal("1.08"), gt=0)
    """US dollars per euro. An assumption you should set to your own finance team's rate: the default is
    a round figure near the 2025-2026 range of the ECB reference rate, not a quote for any day."""

    def convert(self, amount: Decimal, src: str, dst: str) -> Decimal:
        if src == dst:
            return amount
        return amount * self.usd_per_eur if src == "EUR" else amount / self.usd_per_eur

    def factor(self, src: str, dst: str) -> float:
        return float(self.convert(Decimal(1), src, dst))
