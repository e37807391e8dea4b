"""Every estimator's error on the published cases it was not fitted to: computed here, stored by ``make data``.

The roofline's residuals are leave-one-source-out (:func:`calculator.capacity.calibration.loso_residuals`); the
profiled estimator's are its estimates of every case its tables cover, at the batch the roofline's check uses
(the concurrency capped by what the memory fit holds), with the same burst model for ShareGPT runs. Minutes of
work: :mod:`calculator.capacity.error_bands` reads the stored result at run time.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from calculator.capacity.calibration import (
    Case,
    Residual,
    check_cases,
    engine_family,
    gpu_architecture,
    load_cases,
    loso_residuals,
    run_kind,
    source_of,
)
from calculator.capacity.error_bands import BANDS_PATH, BandFile, inputs_digest
from calculator.capacity.profiled import (
    CORE_PACKAGE,
    NotCovered,
    available,
    profiled_burst_tokens_per_s,
    profiled_estimate,
)
from calculator.capacity.ttft import chunk_tokens_for
from calculator.catalog.datafile import write_atomically
from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.models import ModelCatalog, load_model_specs

__all__ = ["build_band_file", "case_expert_parallel", "profiled_case", "profiled_version", "write_error_bands"]


def profiled_version() -> str | None:
    """The installed ``aiconfigurator-core`` release, or None."""
    if not available():
        return None
    return metadata.version(CORE_PACKAGE.replace("_", "-"))


def case_expert_parallel(case: Case, models: ModelCatalog) -> int:
    """The expert-parallel width a case ran: as it states it, else SGLang's data-parallel attention runs with
    ``--ep-size`` equal to the DP size (GPUStack's and LMSYS's commands) and a tensor-parallel run keeps the
    experts tensor-parallel (vLLM and SGLang without ``--enable-expert-parallel``). An ASSUMPTION where unstated."""
    if case.expert_parallel is not None:
        return case.expert_parallel
    return case.gpus if case.attention == "dp" and models.get(case.model).is_moe else 1


def profiled_case(
    case: Case, batch: int, models: ModelCatalog, gpus: GpuCatalog, engine_chunk: bool = False
) -> tuple[float, str] | NotCovered:
    """The profiled estimate of what ``case`` measured, at ``batch`` in flight, and the engine version the tables
    were profiled on; with ``engine_chunk`` each step prefills the engine's default chunk
    (:func:`calculator.capacity.ttft.chunk_tokens_for`), not one prompt."""
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    setup = (model, gpu, case.gpus, case.precision, case.kv_dtype, case.engine, case.attention)
    ep = case_expert_parallel(case, models)
    budget = chunk_tokens_for(gpu) if engine_chunk else None
    answer = profiled_estimate(*setup, ep, case.input_tokens, case.output_tokens, batch, prefill_budget=budget)
    if isinstance(answer, NotCovered):
        return answer
    if case.kind == "decode_per_user":
        return answer.tokens_per_s_per_user, answer.engine_version
    if case.output_lengths == "sharegpt":
        requests = case.requests or round(case.concurrency)
        burst = profiled_burst_tokens_per_s(*setup, ep, case.input_tokens, case.output_tokens, batch, requests)
        if isinstance(burst, NotCovered):
            return burst
        return burst, answer.engine_version
    return answer.output_tokens_per_s, answer.engine_version


def _profiled_residuals(models: ModelCatalog, gpus: GpuCatalog) -> list[Residual]:
    if not available():
        return []
    found: list[Residual] = []
    for result in check_cases(models, gpus, cases=load_cases()):
        if not result.plausible:
            continue
        c = result.case
        answer = profiled_case(c, result.batch, models, gpus)
        if isinstance(answer, NotCovered):
            continue
        found.append(
            Residual(
                case_id=c.id, source=source_of(c), estimator="profiled", measured=c.measured, estimate=answer[0],
                moe=result.moe, architecture=gpu_architecture(c.gpu), run=run_kind(c),
                engine=engine_family(c.engine) or "other",
            )
        )  # fmt: skip
    return found


def build_band_file(models: ModelCatalog | None = None, gpus: GpuCatalog | None = None) -> BandFile:
    """Both estimators' residuals on the bundled cases (minutes: one roofline fit per source)."""
    models = models or load_model_specs()
    gpus = gpus or load_gpu_specs()
    version = profiled_version()
    loso = loso_residuals(models, gpus)
    return BandFile(
        schema_version=1,
        inputs_digest=inputs_digest(version),
        roofline_fit_set=loso.fit_set,
        profiled_version=version,
        residuals=(*loso.residuals, *_profiled_residuals(models, gpus)),
    )


def write_error_bands(path: Path = BANDS_PATH) -> BandFile:
    """Compute the residuals and write them, atomically, one residual a line (a diff shows which moved)."""
    band = build_band_file()
    data = band.model_dump(mode="json")
    rows = ",\n".join("    " + json.dumps(r, sort_keys=True) for r in data.pop("residuals"))
    head = json.dumps(data, indent=2, sort_keys=True)
    write_atomically(path, head[:-2] + ',\n  "residuals": [\n' + rows + "\n  ]\n}\n")
    return band
