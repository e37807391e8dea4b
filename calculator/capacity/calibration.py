"""The roofline estimate held against published measurements, case by case.

Each case names its model, GPU, engine, precision, lengths and concurrency, and what was measured.
The estimate of a throughput case treats a request's replica time as its prefill plus its share of
the decode steps it rides in: ``t = I / prefill + O x step(B) / B`` (continuous batching,
:meth:`ReplicaSpeed.request_seconds`), with the batch capped by what fits in the KV cache. The
efficiencies are the :class:`RooflineAssumptions` passed in (the one default set otherwise), the same
object that splits measured records in ``calculator.capacity.sizing``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.memory import default_kv_dtype, fit
from calculator.capacity.roofline import RooflineAssumptions, replica_speed
from calculator.catalog.datafile import DATA_DIR, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.gpus import GpuCatalog
from calculator.catalog.models import ModelCatalog
from calculator.catalog.prices import Source

__all__ = ["CASES_PATH", "Case", "CaseResult", "check_cases", "estimate_case", "load_cases"]

CASES_PATH = DATA_DIR / "roofline_cases.yaml"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class Case(_Frozen):
    id: str
    model: str
    gpu: str
    gpus: int = Field(ge=1)
    precision: str
    engine: str
    kind: Literal["decode_per_user", "throughput"]
    input_tokens: float = Field(gt=0)
    output_tokens: float = Field(gt=0)
    concurrency: float = Field(gt=0)
    measured: float = Field(gt=0)
    """Tokens/s per user (decode_per_user) or output tokens/s of the replica (throughput)."""
    source: Source


class CaseFile(_Frozen):
    schema_version: Literal[1]
    cases: tuple[Case, ...]


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    case: Case
    estimate: float
    batch: int
    bound: str
    ceiling: float
    """The same estimate with every efficiency at 100%: no real engine can beat it."""

    @property
    def plausible(self) -> bool:
        """False when the measurement beats the physical ceiling: its stated conditions cannot all be right."""
        return self.case.measured <= self.ceiling * 1.05

    @property
    def error(self) -> float:
        """Relative error of the estimate: +0.2 means 20% above the measurement."""
        return self.estimate / self.case.measured - 1


def load_cases(path: Path | None = None) -> tuple[Case, ...]:
    return load_model(path or CASES_PATH, CaseFile).cases


PERFECT = RooflineAssumptions(
    bandwidth_efficiency=1, decode_flops_efficiency=1, prefill_flops_efficiency=1, tp_overhead=0
)


def estimate_case(
    case: Case, models: ModelCatalog, gpus: GpuCatalog, assumptions: RooflineAssumptions | None = None
) -> CaseResult:
    estimate, batch, bound = _estimate(case, models, gpus, assumptions)
    ceiling, _, _ = _estimate(case, models, gpus, PERFECT, utilisation=1.0, reserve_gb=0.0)
    return CaseResult(case=case, estimate=estimate, batch=batch, bound=bound, ceiling=ceiling)


def _estimate(
    case: Case,
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None,
    utilisation: float = 0.9,
    reserve_gb: float = 2.0,
) -> tuple[float, int, str]:
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    kv_dtype = default_kv_dtype(case.precision)
    room = fit(
        model,
        gpu,
        case.precision,
        int(case.input_tokens + case.output_tokens),
        case.gpus,
        kv_dtype,
        utilisation=utilisation,
        reserve_gb=reserve_gb,
    )
    batch = max(1, min(round(case.concurrency), room.max_sequences))
    speed = replica_speed(
        model, gpu, case.precision, case.input_tokens, case.output_tokens, batch, case.gpus, kv_dtype, assumptions
    )
    if case.kind == "decode_per_user":
        return speed.decode.tokens_per_s_per_user, batch, speed.decode.bound
    # a throughput benchmark sends unique prompts: every input token is prefilled
    return case.output_tokens / speed.request_seconds(case.input_tokens, case.output_tokens), batch, speed.decode.bound


def check_cases(
    models: ModelCatalog, gpus: GpuCatalog, assumptions: RooflineAssumptions | None = None
) -> list[CaseResult]:
    return [estimate_case(c, models, gpus, assumptions) for c in load_cases()]
