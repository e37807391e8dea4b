"""Measured throughput: what a replica of an engine really sustained, and under which conditions.

A record carries what makes it comparable (model, precision, GPU type and count, engine and
version, the traffic's input and output length and prefix share, concurrency or request rate)
and the results. The calculator sizes GPUs from records; the user's own measurement beats every
published one, and a published one beats an estimate.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from calculator.catalog.datafile import DATA_DIR, DataFileError, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.limits import GPUS_PER_REPLICA, MEAN_TOKENS, PARAMETERS_B, RATE
from calculator.catalog.prices import Slug, Source
from calculator.errors import InputError

__all__ = [
    "DEFAULT_MEASUREMENTS_DIR",
    "Latency",
    "REQUIRED_CONDITIONS",
    "comparable",
    "MeasurementFile",
    "RecordCatalog",
    "ThroughputRecord",
    "load_records",
]

DEFAULT_MEASUREMENTS_DIR = DATA_DIR / "measurements"


class _Frozen(BaseModel):
    # every figure finite: a rate of .inf would size an endpoint at no GPUs at all
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)


PERCENTILES = ("mean", "p50", "p90", "p95", "p99")


class Latency(_Frozen):
    """A latency distribution as benchmark tools report it, in milliseconds; any figure may be absent."""

    mean: float | None = Field(default=None, ge=0)
    p50: float | None = Field(default=None, ge=0)
    p90: float | None = Field(default=None, ge=0)
    p95: float | None = Field(default=None, ge=0)
    p99: float | None = Field(default=None, ge=0)

    def at(self, percentile: str) -> float | None:
        return getattr(self, percentile) if percentile in PERCENTILES else None

    @property
    def available(self) -> list[str]:
        return [p for p in PERCENTILES if getattr(self, p) is not None]


REQUIRED_CONDITIONS = ("model", "precision", "gpu", "gpu_count")
"""What a record must say to be used for sizing; importers leave unknown ones empty, never guessed."""


class ThroughputRecord(_Frozen):
    """One measured load level of one engine setup."""

    id: Slug
    model: str | None = None
    """The model served, by its common name (``llama-3.3-70b``); ids from ``models/`` link to its architecture."""
    model_path: str | None = None
    """The model as the result file named it, kept whole where ``model`` is reduced to the model's name (a local
    path, a Hugging Face cache folder, a provider's route such as ``accounts/fireworks/models/...``)."""
    params_total_b: Annotated[float, PARAMETERS_B] | None = None
    """Parameters in billions, all experts included; absent when the model's spec in ``models/`` says it."""
    params_active_b: Annotated[float, PARAMETERS_B] | None = None
    """Parameters used per token in billions (equal to the total for a dense model)."""
    precision: str | None = None
    """Weight precision: bf16, fp16, fp8, int4, fp4."""
    gpu: Slug | None = None
    """GPU type, an id from ``gpu_specs/``."""
    gpu_count: Annotated[int, GPUS_PER_REPLICA] | None = None
    """GPUs in one replica of the engine (tensor parallel size times pipeline size)."""
    engine: str
    engine_version: str | None = None
    tool: str | None = None
    """The benchmark tool that wrote the result (vllm bench serve, sglang bench_serving, genai-perf ...)."""
    input_tokens: Annotated[float, MEAN_TOKENS]
    """Mean input tokens per request in the measured traffic."""
    output_tokens: Annotated[float, MEAN_TOKENS]
    """Mean output tokens per request in the measured traffic."""
    prefix_share: float | None = Field(default=None, ge=0, le=1)
    """Share of input tokens the measured traffic repeats from earlier requests (what an unlimited prefix cache
    serves; 0 for prompts that share nothing or a run with the cache disabled). Absent when the run does not say:
    shown as unknown, never as 0, and sizing from the record says what it assumed."""
    concurrency: float | None = Field(default=None, gt=0)
    """Requests in flight (fixed-concurrency runs); when absent it follows from rate and latency."""
    request_rate: Annotated[float, RATE] | None = None
    """Offered request rate (req/s) in request-rate runs; absent for 'as fast as possible' (infinite) runs."""
    requests_per_s: Annotated[float, RATE]
    """Sustained completed requests per second for the whole replica."""
    output_tokens_per_s: float | None = Field(default=None, gt=0)
    total_tokens_per_s: float | None = Field(default=None, gt=0)
    ttft_ms: Latency = Latency()
    itl_ms: Latency = Latency()
    """Inter-token latency: gaps between streamed tokens."""
    e2e_ms: Latency = Latency()
    failed: int | None = Field(default=None, ge=0)
    measured: dt.date | None = None
    """When the measurement was taken, where known."""
    source: Source
    publisher: str | None = None
    """Who published the measurement, for the bundled library of published sweeps (``InferenceMAX
    (SemiAnalysis)``); absent for a user's own record. Sizing says which it rests on, and uses the user's own
    first."""
    notes: str | None = None
    warnings: tuple[str, ...] | None = None
    """What the importer read from the file but could not use, and which way that moves the record's figures,
    each said in words."""
    unread_latency: tuple[str, ...] | None = None
    """Latency figures of the result file the importer did not understand (their keys): the record's latencies
    may then be incomplete, so the record is incomplete (``missing`` names ``latency``) until they are read."""
    mismatches: tuple[str, ...] | None = None
    """Where the result file's own figures disagree with each other (request rate x mean output length
    against output tokens/s; completed requests over the run's duration against request rate), each
    said in words; the record keeps the file's figures. Absent when they agree or cannot be checked."""

    @field_validator("params_active_b")
    @classmethod
    def _active_le_total(cls, v: float | None, info: ValidationInfo) -> float | None:
        total = info.data.get("params_total_b")
        if v is not None and total is not None and v > total:
            raise ValueError(f"active parameters ({v}B) cannot exceed total parameters ({total}B)")
        return v

    @property
    def missing(self) -> list[str]:
        """Conditions the record does not state, and ``latency`` when the file had latency figures the importer
        could not read; a record missing any is incomplete."""
        missing = [f for f in REQUIRED_CONDITIONS if getattr(self, f) is None]
        return [*missing, "latency"] if self.unread_latency else missing

    @property
    def prefix_share_text(self) -> str:
        """The prefix share for a table or a sentence: a percentage, or ``unknown`` when the run does not say."""
        return "unknown" if self.prefix_share is None else f"{self.prefix_share:.0%}"

    @property
    def replica_gpus(self) -> int:
        """GPUs in one replica; an error for a record that does not say."""
        if self.gpu_count is None:
            raise InputError("record", f"throughput record {self.id!r} does not state its GPU count")
        return self.gpu_count

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def in_flight(self) -> float | None:
        """Requests in flight during the run: given, or by Little's law from rate and latency."""
        if self.concurrency is not None:
            return self.concurrency
        latency = self.e2e_ms.mean or self.e2e_ms.p50
        if latency is not None:
            return self.requests_per_s * latency / 1000
        return None

    @property
    def label(self) -> str:
        setup = f"{self.gpu_count or '?'}x {self.gpu or '?'}"
        version = f" {self.engine_version}" if self.engine_version else ""
        return (
            f"{self.model or '?'} {(self.precision or '?').upper()} on {setup}, {self.engine}{version}, "
            f"{self.input_tokens:.0f} in / {self.output_tokens:.0f} out"
        )


SHAPE_TOLERANCE = 0.25


def comparable(a: ThroughputRecord, b: ThroughputRecord) -> tuple[bool, list[str]]:
    """Whether two measurements can be compared (say, engine against engine), and why not.

    Model, precision, GPU type and count must match, and the traffic shape (input and output
    length within 25%, prefix share within 0.1). Unknown conditions make records incomparable; a prefix share
    neither run states does not (two runs that do not say cannot be told apart on it), one stated and one not does.
    """
    reasons = []
    for field in REQUIRED_CONDITIONS:
        va, vb = getattr(a, field), getattr(b, field)
        if va is None or vb is None:
            reasons.append(f"{field} is not stated for {a.id if va is None else b.id}")
        elif str(va).lower() != str(vb).lower():
            reasons.append(f"{field} differs: {va} vs {vb}")
    for field in ("input_tokens", "output_tokens"):
        va, vb = getattr(a, field), getattr(b, field)
        if abs(va - vb) > SHAPE_TOLERANCE * max(va, vb):
            reasons.append(f"{field.replace('_', ' ')} differs by more than 25%: {va:.0f} vs {vb:.0f}")
    if (a.prefix_share is None) != (b.prefix_share is None):
        unknown = a if a.prefix_share is None else b
        reasons.append(f"prefix share is not stated for {unknown.id} ({a.prefix_share_text} vs {b.prefix_share_text})")
    elif a.prefix_share is not None and b.prefix_share is not None and abs(a.prefix_share - b.prefix_share) > 0.1:
        reasons.append(f"prefix share differs: {a.prefix_share:.0%} vs {b.prefix_share:.0%}")
    return not reasons, reasons


class MeasurementFile(_Frozen):
    schema_version: int = Field(1, ge=1, le=1)
    records: tuple[ThroughputRecord, ...] = Field(min_length=1)


class RecordCatalog(BaseModel):
    model_config = ConfigDict(frozen=True)
    records: tuple[ThroughputRecord, ...]

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    def get(self, record_id: str) -> ThroughputRecord:
        for record in self.records:
            if record.id == record_id:
                return record
        raise InputError("record", f"unknown throughput record {record_id!r}; known: {', '.join(self.ids)}")


def load_records(directory: Path | None = None) -> RecordCatalog:
    directory = directory or DEFAULT_MEASUREMENTS_DIR
    records: list[ThroughputRecord] = []
    problems: list[str] = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            records.extend(load_model(path, MeasurementFile).records)
        except DataFileError as exc:
            problems.extend(exc.lines)
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            problems.append(f"{directory}: two throughput records share the id {record.id!r}")
        seen.add(record.id)
    if problems:
        raise DataFileError(problems)
    return RecordCatalog(records=tuple(records))
