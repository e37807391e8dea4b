"""Measured throughput: what a replica of an engine really sustained, and under which conditions.

A record carries what makes it comparable (model, precision, GPU type and count, engine and
version, the traffic's input and output length and prefix share, concurrency or request rate)
and the results. The calculator sizes GPUs from records; the user's own measurement beats every
published one, and a published one beats an estimate.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .datafile import DataFileError, load_model
from .errors import InputError
from .prices import Slug, Source

__all__ = [
    "DEFAULT_MEASUREMENTS_DIR",
    "MeasurementFile",
    "RecordCatalog",
    "ThroughputRecord",
    "load_records",
]

DEFAULT_MEASUREMENTS_DIR = Path(__file__).resolve().parent.parent / "measurements"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class ThroughputRecord(_Frozen):
    id: Slug
    model: str
    """The model served, by its common name (``llama-3.3-70b``)."""
    params_total_b: float = Field(gt=0)
    """Parameters in billions, all experts included (what must sit in memory)."""
    params_active_b: float = Field(gt=0)
    """Parameters used per token in billions (equal to the total for a dense model)."""
    precision: str
    """Weight precision: bf16, fp16, fp8, int4, fp4."""
    gpu: Slug
    """GPU type, an id from ``gpu_specs/``."""
    gpu_count: int = Field(ge=1)
    """GPUs in one replica of the engine (tensor parallel size times pipeline size)."""
    engine: str
    engine_version: str
    input_tokens: float = Field(gt=0)
    """Mean input tokens per request in the measured traffic."""
    output_tokens: float = Field(gt=0)
    """Mean output tokens per request in the measured traffic."""
    prefix_share: float = Field(default=0, ge=0, le=1)
    """Share of input tokens served from the prefix cache in the measured traffic (0 when disabled)."""
    concurrency: float | None = Field(default=None, gt=0)
    """Requests in flight (fixed-concurrency runs); when absent it follows from rate and latency."""
    request_rate: float | None = Field(default=None, gt=0)
    """Offered request rate (req/s) in request-rate runs."""
    requests_per_s: float = Field(gt=0)
    """Sustained completed requests per second for the whole replica."""
    output_tokens_per_s: float | None = Field(default=None, gt=0)
    ttft_p50_ms: float | None = Field(default=None, gt=0)
    ttft_p95_ms: float | None = Field(default=None, gt=0)
    itl_p50_ms: float | None = Field(default=None, gt=0)
    e2e_p50_ms: float | None = Field(default=None, gt=0)
    measured: dt.date | None = None
    """When the measurement was taken, where known."""
    source: Source
    notes: str | None = None

    @field_validator("params_active_b")
    @classmethod
    def _active_le_total(cls, v: float, info: object) -> float:
        total = getattr(info, "data", {}).get("params_total_b")
        if total is not None and v > total:
            raise ValueError(f"active parameters ({v}B) cannot exceed total parameters ({total}B)")
        return v

    @property
    def in_flight(self) -> float | None:
        """Requests in flight during the run: given, or by Little's law from rate and latency."""
        if self.concurrency is not None:
            return self.concurrency
        if self.e2e_p50_ms is not None:
            return self.requests_per_s * self.e2e_p50_ms / 1000
        return None

    @property
    def label(self) -> str:
        return (
            f"{self.model} {self.precision.upper()} on {self.gpu_count}x {self.gpu}, "
            f"{self.engine} {self.engine_version}, {self.input_tokens:.0f} in / {self.output_tokens:.0f} out"
        )


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
