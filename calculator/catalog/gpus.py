"""GPU specifications: memory, bandwidth and dense tensor throughput, one YAML file per family.

A file in ``gpu_specs/`` holds one family (``h100.yaml``: h100-sxm, h100-pcie, h100-nvl). Every
throughput figure is **dense** (no 2:4 structured sparsity). NVIDIA's Ampere, Hopper, Ada and
Blackwell datasheets print tensor figures *with sparsity*, twice the dense rate; a file stores
half of what such a sheet prints and says so in the GPU's ``notes``. AMD prints dense figures.

Figures a source does not publish, or that sources disagree on, are listed in ``uncertain`` so
that a result built on them can say so.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from calculator.catalog.datafile import DATA_DIR, DataFileError, ItemPlace, ItemPlaces, key_line, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.limits import Limit
from calculator.catalog.prices import Source
from calculator.errors import InputError

__all__ = [
    "DEFAULT_GPU_DIR",
    "GB",
    "GIB",
    "HBM_USABLE_SHARE",
    "PRECISIONS",
    "GpuCatalog",
    "GpuFile",
    "GpuSpec",
    "load_gpu_file",
    "load_gpu_specs",
]

DEFAULT_GPU_DIR = DATA_DIR / "gpu_specs"

Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]
# Every figure of a GPU (GB, TB/s, TFLOP/s, watts) is under 10^6: a B200 has 180 GB, 8 TB/s, 9,000 dense
# FP4 TFLOP/s, 1,000 W. The bound keeps a typo (or 1e308) from overflowing every size computed from it.
GPU_FIGURE = Limit(0, 10**6, "", "no GPU figure (GB, TB/s, TFLOP/s, W) reaches a million", low_allowed=False)
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True), GPU_FIGURE]
"""A physical figure: a YAML number above zero (a quoted string or a boolean is refused)."""

GB = 1e9
"""Bytes in a gigabyte: the unit of the marketed ``memory_gb`` and of the fit's ``*_gb`` figures."""
GIB = 2**30
"""Bytes in a gibibyte: the unit the CUDA runtime, nvidia-smi and the engines' logs print memory in.
GB and GiB are converted here and nowhere else (``GpuSpec.usable_memory_bytes``)."""
HBM_USABLE_SHARE = 79.19 / 80
"""What the CUDA runtime reports of an HBM card's nominal memory: an "80 GB" H100 carries 80 GiB and
reports 79.19 GiB total (``total_memory=79.19GiB`` in vLLM 0.19.0 start-up logs, llm-d-incubation/
llm-d-planner accuracy/results/v0.19.0/logs at commit d3121e059da88662db39a926a3ead964be97359b, read
2026-12-02). The rule for a card whose reported figure no log or nvidia-smi output gives."""

PRECISIONS = ("bf16", "fp16", "fp8", "int8", "int4", "fp4")
"""Precisions :meth:`GpuSpec.dense_tflops` answers for."""

_ALIASES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "float8": "fp8",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
}

UncertainField = Literal[
    "memory_gb",
    "usable_memory_gib",
    "memory_bandwidth_tbs",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "int8_dense_tops",
    "fp4_dense_tflops",
    "tdp_w",
    "interconnect",
]
"""Fields that ``uncertain`` may name."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class GpuSpec(_Frozen):
    """One GPU model as sold (a form factor and memory size), with dense throughput per precision."""

    id: Slug
    """Unique across all files; price sheets name GPUs by it (``h100-sxm``)."""
    name: str = Field(min_length=1)
    """The name as the vendor prints it (``NVIDIA H100 SXM5 80GB``)."""
    vendor: Slug
    """``nvidia``, ``amd`` ..."""
    memory_gb: Positive
    """Memory in GB as the vendor quotes it (nominal); where marketing quotes more than a program can
    use (B200: 192 fitted, 180 usable), the usable figure, and ``notes`` says so."""
    usable_memory_gib: Positive | None = None
    """Memory per card as the CUDA (or ROCm) runtime reports it to the engine, in GiB: the total that
    vLLM's ``--gpu-memory-utilization`` and SGLang's ``--mem-fraction-static`` multiply. Below the
    marketed figure: the driver keeps part, and GDDR cards with ECC on lose 1/16 (an L40S sold as 48 GB
    reports 44.31 GiB). ``usable_memory_source`` says where it was read; absent, it is derived from
    ``memory_gb`` by :data:`HBM_USABLE_SHARE` (see :attr:`usable_gib`)."""
    usable_memory_source: str | None = Field(default=None, min_length=1)
    """Where ``usable_memory_gib`` was read (an engine log or nvidia-smi output, with its address), or the
    rule it was derived by; a derived figure is also listed in ``uncertain``."""
    memory_bandwidth_tbs: Positive
    """Peak memory bandwidth in TB/s (10^12 bytes per second)."""
    bf16_dense_tflops: Positive
    """Dense BF16/FP16 tensor throughput in TFLOP/s (no 2:4 sparsity)."""
    fp8_dense_tflops: Positive | None = None
    """Dense FP8 tensor throughput in TFLOP/s; absent when the GPU has no FP8 tensor cores (A100, A10)."""
    int8_dense_tops: Positive | None = None
    """Dense INT8 tensor throughput in TOP/s; give it where it differs from FP8 (GPUs without FP8)."""
    fp4_dense_tflops: Positive | None = None
    """Dense FP4 tensor throughput in TFLOP/s; absent before Blackwell."""
    tdp_w: Positive | None = None
    """Maximum board power in watts (the top of a configurable range); absent when not published."""
    interconnect: str = Field(min_length=1)
    """GPU-to-GPU link as the vendor quotes it (NVLink figures are both directions together)."""
    form_factor: Literal["sxm", "pcie", "nvl", "oam", "superchip"]
    """``nvl``: a PCIe card sold to be bridged with NVLink (H100 NVL, H200 NVL)."""
    source: Source
    notes: str | None = None
    """Caveats, for example "datasheet prints sparse 3,958; stored dense"."""
    uncertain: tuple[UncertainField, ...] = ()
    """Fields whose figure no primary source publishes, or that sources disagree on."""

    @field_validator("fp8_dense_tflops")
    @classmethod
    def _fp8_not_below_bf16(cls, v: float | None, info: ValidationInfo) -> float | None:
        bf16 = info.data.get("bf16_dense_tflops")
        if v is not None and bf16 is not None and v < bf16:
            raise ValueError(f"{v} is below bf16_dense_tflops ({bf16}); is one of them a sparse figure?")
        return v

    @field_validator("fp4_dense_tflops")
    @classmethod
    def _fp4_not_below_fp8(cls, v: float | None, info: ValidationInfo) -> float | None:
        floor = info.data.get("fp8_dense_tflops") or info.data.get("bf16_dense_tflops")
        if v is not None and floor is not None and v < floor:
            raise ValueError(f"{v} is below the FP8 (or BF16) rate ({floor}); is one of them a sparse figure?")
        return v

    @field_validator("source")
    @classmethod
    def _source_points_somewhere(cls, v: Source) -> Source:
        # Source's own check runs only when ``document`` is given; a figure must say where it is from.
        if v.url is None and v.document is None:
            raise ValueError("a source needs a url or a document")
        return v

    @model_validator(mode="after")
    def _usable_memory_is_sourced_and_below_the_marketed(self) -> GpuSpec:
        if self.usable_memory_gib is None:
            return self
        if self.usable_memory_source is None:
            raise ValueError(
                "usable_memory_gib needs usable_memory_source: the log, nvidia-smi output or rule it is from"
            )
        if self.usable_memory_gib > self.memory_gb:
            # HBM is sold in binary units and GDDR with ECC loses a sixteenth: no card reports more than it is sold with
            raise ValueError(
                f"usable_memory_gib ({self.usable_memory_gib}) exceeds memory_gb ({self.memory_gb}); the runtime "
                "reports less than the card is sold with"
            )
        return self

    @field_validator("uncertain")
    @classmethod
    def _unique_uncertain(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise ValueError("a field is listed twice")
        return v

    def effective_precision(self, precision: str) -> str:
        """The tensor rate a matrix multiply in ``precision`` runs at on this GPU.

        * ``bf16``, ``fp16``: the BF16 rate (the two are equal on every bundled GPU).
        * ``fp8``: the FP8 rate; on a GPU without FP8 (A100, A10) the weights are upcast and the
          multiply runs at the **BF16 rate**.
        * ``int8``: ``int8_dense_tops`` when given, else the FP8 rate (equal on Hopper, Ada,
          Blackwell and CDNA3), else BF16.
        * ``int4``: weight-only (AWQ, GPTQ: W4A16): the weights are dequantised and the multiply runs at
          the **BF16 rate** (the page and the memory table offer int4 weights; an unknown name crashed them).
        * ``fp4``: the FP4 rate on Blackwell; elsewhere FP4 weights are dequantised and the
          multiply runs at the FP8 rate, or the BF16 rate without FP8.

        Names are case-insensitive; ``bfloat16``, ``float16``, ``nvfp4`` and ``mxfp4`` are accepted.
        Returns one of ``bf16``, ``fp8``, ``int8``, ``fp4``. An unknown name is an :class:`InputError`.
        """
        key = precision.strip().lower()
        key = _ALIASES.get(key, key)
        if key not in PRECISIONS:
            raise InputError("precision", f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
        if key == "fp4" and self.fp4_dense_tflops is not None:
            return "fp4"
        if key == "int8" and self.int8_dense_tops is not None:
            return "int8"
        if key in ("fp4", "int8", "fp8") and self.fp8_dense_tflops is not None:
            return "fp8"
        return "bf16"

    def dense_tflops(self, precision: str) -> float:
        """Dense tensor throughput in TFLOP/s (TOP/s for int8) for ``precision``.

        Falls back as :meth:`effective_precision` describes: FP8 on a GPU without FP8 (A100)
        runs at the BF16 rate; FP4 without FP4 runs at the FP8 rate, or BF16; INT8 without its
        own figure runs at the FP8 rate, or BF16.
        """
        rate = {
            "bf16": self.bf16_dense_tflops,
            "fp8": self.fp8_dense_tflops,
            "int8": self.int8_dense_tops,
            "fp4": self.fp4_dense_tflops,
        }[self.effective_precision(precision)]
        assert rate is not None
        return float(rate)

    @property
    def usable_gib(self) -> float:
        """GiB per card the engine sees: ``usable_memory_gib``, or ``memory_gb`` read as GiB (HBM is sold
        in binary units) times :data:`HBM_USABLE_SHARE` when the spec gives none."""
        if self.usable_memory_gib is not None:
            return float(self.usable_memory_gib)
        return float(self.memory_gb) * HBM_USABLE_SHARE

    @property
    def usable_memory_bytes(self) -> float:
        """:attr:`usable_gib` in bytes: the one conversion from the catalogue's memory to the fit's."""
        return self.usable_gib * GIB

    def is_uncertain(self, field: str) -> bool:
        """Whether the file marks this field's figure as uncertain."""
        return field in self.uncertain

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})"


class GpuFile(_Frozen):
    """One YAML file: one GPU family."""

    schema_version: Literal[1]
    family: Slug
    """Must equal the file name without ``.yaml``."""
    notes: str | None = None
    gpus: tuple[GpuSpec, ...] = Field(min_length=1)

    @field_validator("gpus")
    @classmethod
    def _unique_ids(cls, v: tuple[GpuSpec, ...]) -> tuple[GpuSpec, ...]:
        seen: dict[str, int] = {}
        for index, gpu in enumerate(v):
            if gpu.id in seen:
                raise ValueError(f"gpus {seen[gpu.id]} and {index} share the id {gpu.id!r}; ids must be unique")
            seen[gpu.id] = index
        return v


class GpuCatalog(BaseModel):
    """All loaded GPUs, with a lookup that fails with a message naming what exists."""

    model_config = ConfigDict(frozen=True)
    gpus: tuple[GpuSpec, ...]

    @model_validator(mode="after")
    def _unique_ids(self) -> GpuCatalog:
        ids = [g.id for g in self.gpus]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate GPU ids: {', '.join(duplicates)}")
        return self

    @cached_property
    def _by_id(self) -> dict[str, GpuSpec]:
        return {g.id: g for g in self.gpus}

    @property
    def ids(self) -> list[str]:
        """Every GPU id, sorted."""
        return sorted(self._by_id)

    def __contains__(self, gpu_id: object) -> bool:
        return isinstance(gpu_id, str) and gpu_id.strip().lower() in self._by_id

    def get(self, gpu_id: str) -> GpuSpec:
        """The GPU with this id (case-insensitive); an unknown id is an :class:`InputError` on ``gpu``."""
        try:
            return self._by_id[gpu_id.strip().lower()]
        except KeyError:
            raise InputError("gpu", f"unknown GPU {gpu_id!r}; known: {', '.join(self.ids)}") from None


def load_gpu_file(path: Path) -> GpuFile:
    """Load and validate one family file; every failure is a DataFileError naming file and line."""
    spec_file = load_model(path, GpuFile)
    if spec_file.family != path.stem:
        line = key_line(path, "family")
        raise DataFileError([f"{path}:{line}: family: {spec_file.family!r} must match the file name {path.stem!r}"])
    return spec_file


def load_gpu_specs(directory: Path | None = None) -> GpuCatalog:
    """Load every ``*.yaml`` in ``directory`` (default ``gpu_specs/``).

    All broken files are reported together in one DataFileError, and an id defined in two files
    is an error that names both files and lines.
    """
    directory = directory or DEFAULT_GPU_DIR
    paths = sorted(directory.glob("*.yaml"))
    if not paths:
        raise DataFileError([f"{directory}: no GPU spec files (*.yaml) found"])
    gpus: list[GpuSpec] = []
    first_seen: dict[str, ItemPlace] = {}
    problems: list[str] = []
    for path in paths:
        try:
            spec_file = load_gpu_file(path)
        except DataFileError as exc:
            problems.extend(exc.lines)
            continue
        places = ItemPlaces(path, "gpus")
        for index, gpu in enumerate(spec_file.gpus):
            where = places[index]
            if gpu.id in first_seen:
                problems.append(
                    f"{where}: gpus.{index}[{gpu.id}].id: duplicate GPU id {gpu.id!r}; "
                    f"already defined in {first_seen[gpu.id]}"
                )
                continue
            first_seen[gpu.id] = where
            gpus.append(gpu)
    if problems:
        raise DataFileError(problems)
    return GpuCatalog(gpus=tuple(gpus))
