"""What a user tells us about their workload: the turn's shape, the traffic, how they would host.

These are the scenario's inputs. Every layer above reads them (capacity sizes from them, pricing
bills them, planning spreads them over hours and months), so they live below all of those.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.fx import CODES, default_rate, rate_field
from calculator.catalog.limits import (
    ACTIVE_HOURS,
    BATCH,
    ENGINEER_MONTHLY_COST,
    ENGINEER_SHARE,
    GPUS_PER_REPLICA,
    MINUTES,
    MODEL_CHANGES,
    PEAK_TO_AVERAGE,
    REPLICAS,
    TOKENS,
    TURNS_PER_MONTH,
    USD_PER_EUR,
    USD_PER_GBP,
    USD_PER_INR,
    USD_PER_JPY,
    USERS,
    UTILISATION,
    Name,
)
from calculator.errors import InputError

__all__ = [
    "AUTO_RECORD",
    "DAYS_PER_MONTH",
    "DAYS_PER_MONTH_EXACT",
    "HOURS_PER_MONTH",
    "LEGACY_RECORD",
    "EstimateSetup",
    "Fx",
    "LatencyTarget",
    "SelfHosting",
    "Share",
    "Traffic",
    "TurnShape",
    "VolumePer",
    "monthly_turns",
]

Arr = npt.NDArray[np.float64]
Share = Decimal

HOURS_PER_MONTH = 730.0
"""8,760 hours a year over 12 months, as cloud providers bill a month."""
DAYS_PER_MONTH = 365.0 / 12
DAYS_PER_MONTH_EXACT = Decimal(365) / Decimal(12)


VolumePer = Literal["month", "day", "user"]
"""How a volume is given: turns a month, turns a day, or turns per user a day (times the users)."""


def monthly_turns(volume: float, per: VolumePer = "month", users: int | None = None) -> int:
    """A month's turns from a volume given ``per`` month, day, or user a day (a month is 365/12 days).

    Per user needs ``users``: without them the per-user volume says nothing about the month.
    """
    if per == "month":
        return int(round(volume))
    if per == "day":
        return int(round(volume * DAYS_PER_MONTH))
    if not users:
        raise ValueError("a volume per user needs the number of users")
    return int(round(volume * users * DAYS_PER_MONTH))


class LatencyTarget(BaseModel):
    """What users must see: TTFT at most, and tokens/s per user at least, at a percentile."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    percentile: Literal["p50", "p90", "p95", "p99"] = "p95"
    ttft_ms: float | None = Field(default=None, gt=0)
    tokens_per_s_per_user: float | None = Field(default=None, gt=0)
    # finite, and nothing more: a target is compared with measured latencies, never multiplied


class EstimateSetup(BaseModel):
    """Size GPUs from a roofline estimate instead of a measurement (always labelled as an estimate)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)

    model: Name
    """A model id from ``models/``."""
    precision: str = Field(default="fp8", max_length=16)
    gpus_per_replica: Annotated[int, GPUS_PER_REPLICA] = 1
    """Tensor-parallel GPUs per engine replica."""
    max_batch: Annotated[int, BATCH] | None = None
    """An override: at most this many sequences decoded together. Absent, the batch is as many as the KV cache
    holds and the engine schedules (vLLM's max_num_seqs), fewer where a latency target needs it."""
    attention: Literal["tp", "dp"] = "tp"
    """Attention layout: ``tp`` tensor parallel; ``dp`` data-parallel attention (SGLang's
    ``--enable-dp-attention``), for MLA models: each GPU keeps whole sequences, so the latent is not copied on
    every GPU and the KV cache holds more."""


class TurnShape(BaseModel):
    """What one request sends and receives."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)

    input_tokens: Annotated[int, TOKENS]
    """All prompt tokens: system prompt, tools, history and the new message."""
    prefix_share: Share = Field(ge=0, le=1)
    """Share of the input that repeats an earlier prompt's start (0 to 1)."""
    hit_rate: Share = Field(default=Decimal(1), ge=0, le=1)
    """Chance the repeated start is still cached when the turn arrives (0 to 1)."""
    output_tokens: Annotated[int, TOKENS]
    """Output tokens, reasoning tokens included (billed as output)."""
    cache_write_share: Share = Field(default=Decimal(1), ge=0, le=1)
    """Where the offer charges cache writes: the share of what the next turn will read that this turn writes."""
    cache_ttl: str | None = Field(default=None, max_length=16)
    """Which cache lifetime to buy where an offer sells several (``5m``, ``1h``); default the shortest."""
    batch: bool = False
    """Priced as batch requests where the offer has a batch discount."""

    @model_validator(mode="after")
    def _one_context(self) -> TurnShape:
        # the prompt and the output are one sequence: together they fit the longest context or nothing
        if self.input_tokens + self.output_tokens > TOKENS.high:
            text = (
                f"{self.input_tokens:,} input and {self.output_tokens:,} output tokens make one sequence of "
                f"{self.input_tokens + self.output_tokens:,}: more than {TOKENS.high:,} {TOKENS.unit}: {TOKENS.why} "
                f"(allowed: input + output up to {TOKENS.high:,})"
            )
            raise PydanticCustomError("limit", "{text}", {"text": text})
        return self

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
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)


class Traffic(_Frozen):
    turns_per_month: Annotated[int, TURNS_PER_MONTH]
    """Requests per month."""
    peak_to_average: Annotated[float, PEAK_TO_AVERAGE] = 2.0
    """Peak request rate over the average rate within the active hours."""
    active_hours_per_day: Annotated[float, ACTIVE_HOURS] = 24.0
    """Hours a day the traffic arrives in (24 for round-the-clock use)."""
    users: Annotated[int, USERS] | None = None
    """People (seats) the traffic serves, when known: the cost per user divides the bill by it."""

    @property
    def turns_per_user_per_day(self) -> float | None:
        """Turns each user sends on an average day (a month is 365/12 days), when users are known."""
        if not self.users:
            return None
        return self.turns_per_month / self.users / DAYS_PER_MONTH

    @property
    def monthly_peak_to_average(self) -> float:
        """The peak rate over the month's mean rate (round the clock): the peak within the active hours,
        times 24 over the active hours."""
        return self.peak_to_average * 24 / self.active_hours_per_day

    @model_validator(mode="after")
    def _peak_within_a_month(self) -> Traffic:
        # The same bound as a load profile's: whatever sets the peak, it cannot hold more than the month.
        if self.monthly_peak_to_average > PEAK_TO_AVERAGE.high:
            text = (
                f"a peak of {self.peak_to_average:g} times the mean within {self.active_hours_per_day:g} active "
                f"hour(s) a day is {self.monthly_peak_to_average:.3g} times the month's mean rate: "
                f"{PEAK_TO_AVERAGE.why} "
                f"(allowed: peak-to-average x 24 / active hours up to {PEAK_TO_AVERAGE.high:,.0f})"
            )
            raise PydanticCustomError("limit", "{text}", {"text": text})
        return self

    def peak_rps(self, turns_per_month: float | Arr) -> float | Arr:
        seconds = DAYS_PER_MONTH * self.active_hours_per_day * 3600
        return turns_per_month / seconds * self.peak_to_average


AUTO_RECORD = "auto"
"""``self_hosting.record: auto``: the GPU options run the serverless model (or ``self_hosting.model``), sized
from a measurement of it when the records hold one, else from the roofline estimate, labelled as such."""
LEGACY_RECORD = "sglang-llama-3.3-70b-bf16-4xh200-rate4"
"""The record every scenario sized from before ``auto`` (Llama 3.3 70B, SGLang, 4x H200): what ``auto`` falls
back to when it has no open model to run (a closed serverless model and no ``self_hosting.model``), and says so."""


class SelfHosting(_Frozen):
    """How you would run the engine yourself (and how a dedicated endpoint is sized)."""

    record: Name = AUTO_RECORD
    """The throughput record whose run capacity is read from (an id from ``measurements/``): the run's saturation
    point, or its busiest level meeting ``latency_target``, not necessarily this level. Or ``auto``: the same
    model as the serverless option (or ``model``), from a measurement of it if one exists, else a labelled
    estimate."""
    model: Name | None = None
    """With ``record: auto``, the model the GPU options run (an id or alias from ``models/``): your choice of
    substitute when the serverless model is closed. Absent: the serverless model's own spec (or its nearest)."""
    target_utilisation: Annotated[float, UTILISATION] = 0.7
    """Share of a replica's measured capacity you plan to use at peak (headroom for latency)."""
    spare_replicas: Annotated[int, REPLICAS] = 1
    """Extra replicas kept for failures and bursts (self-hosted only)."""
    autoscale: bool = False
    """Scale down outside the active hours (per-second billing makes this real) instead of always on."""
    min_replicas: Annotated[int, REPLICAS] = 1
    """Replicas kept up outside the active hours when autoscaling."""
    startup_minutes: Annotated[float, MINUTES] = 2.0
    """Billed time per scale-up before a replica serves (vLLM and SGLang load in about a minute)."""
    engineer_monthly_cost: Annotated[Decimal, ENGINEER_MONTHLY_COST] = Decimal(12500)
    """Fully loaded monthly cost of one platform engineer, in the scenario's currency (an assumption)."""
    engineer_share: Annotated[float, ENGINEER_SHARE] = 0.25
    """Share of an engineer's time running the stack (0.25 = a quarter)."""
    model_changes_per_month: Annotated[float, MODEL_CHANGES] = 0.5
    """How often you move to a new model or version (each needs a load, and a build for TensorRT-LLM)."""
    build_minutes_per_change: Annotated[float, MINUTES] = 0.0
    """One-time engine build per model change (TensorRT-LLM's took about 28 minutes for a 70B model)."""
    latency_target: LatencyTarget | None = None
    """Use the busiest load level of the record's run that still meets this (TTFT, tokens/s per user)."""
    estimate: EstimateSetup | None = None
    """Size from a roofline estimate of this model instead of a measured record (labelled an estimate)."""

    @model_validator(mode="after")
    def _model_needs_auto(self) -> SelfHosting:
        # a named record sizes from its own model: a model beside it would be silently ignored
        if self.model is not None and self.record != AUTO_RECORD:
            raise ValueError(
                f"model ({self.model!r}) chooses what record: auto runs; the record {self.record!r} sizes from its "
                "own model: set record: auto, or leave model out"
            )
        return self


class Fx(_Frozen):
    """Exchange rates, each in US dollars per unit of the currency: a sheet in one currency is shown in another
    through the dollar. Defaults are dated reference rates (``data/fx_rates.yaml``), not quotes for today: set
    your own finance team's."""

    usd_per_eur: Annotated[Decimal, USD_PER_EUR] = Field(default_factory=lambda: default_rate("EUR"))
    """US dollars per euro."""
    usd_per_gbp: Annotated[Decimal, USD_PER_GBP] = Field(default_factory=lambda: default_rate("GBP"))
    """US dollars per pound sterling."""
    usd_per_jpy: Annotated[Decimal, USD_PER_JPY] = Field(default_factory=lambda: default_rate("JPY"))
    """US dollars per yen (150 yen a dollar is 0.00667)."""
    usd_per_inr: Annotated[Decimal, USD_PER_INR] = Field(default_factory=lambda: default_rate("INR"))
    """US dollars per rupee (90 rupees a dollar is 0.0111)."""

    def usd_per(self, code: str) -> Decimal:
        """US dollars per unit of ``code``; an unknown code is an error, not a silent 1."""
        if code == "USD":
            return Decimal(1)
        if code not in CODES:
            raise InputError("currency", f"{code!r} is not a currency the calculator converts", ", ".join(CODES))
        rate: Decimal = getattr(self, rate_field(code))
        return rate

    def convert(self, amount: Decimal, src: str, dst: str) -> Decimal:
        if src == dst:
            return amount
        return amount * self.usd_per(src) / self.usd_per(dst)

    def factor(self, src: str, dst: str) -> float:
        return float(self.convert(Decimal(1), src, dst))
