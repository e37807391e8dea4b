"""Engine start-up logs that state the KV cache size, checked against :func:`~calculator.capacity.memory.fit`.

A log excerpt (``tests/fixtures/engine_logs/*.log``) starts with ``# key: value`` lines naming the
setup (source ``url``, ``engine``, ``model`` or an imported ``model_config``, ``gpu``, ``gpus``,
``precision``, a non-default ``utilisation``, ``kv_dtype`` or ``context`` (the log's max_model_len, for
models whose chunked or sliding layers cap what a token holds), and ``role``: ``fit`` when the engine overheads were
fitted on it, ``hold-out`` when not), then the engine's own lines: vLLM's ``GPU KV cache size: N
tokens`` or SGLang's ``KV Cache is allocated. #tokens: N``. vLLM counts tokens over the whole replica
(per GPU times the ways the cache splits); SGLang per GPU, which under tensor parallelism is the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from calculator.capacity.memory import fit
from calculator.catalog.gpus import GpuCatalog
from calculator.catalog.models import Checkpoint, ModelCatalog, ModelSpec, from_hf_config
from calculator.catalog.prices import Source
from calculator.errors import InputError

__all__ = ["SMALL_BUDGET_GIB", "SMALL_BUDGET_TOLERANCE_GIB", "LogCase", "LogCheck", "check_log", "read_log"]

_KV_GIB = re.compile(r"Available KV cache memory:(?:\*\*)? (-?\d+(?:\.\d+)?) GiB")
SMALL_BUDGET_GIB = 10.0
"""Below this much KV memory per GPU a log is checked in GiB, within :data:`SMALL_BUDGET_TOLERANCE_GIB`:
a few hundred MiB of engine overhead is a large share of a small budget, not a large error."""
SMALL_BUDGET_TOLERANCE_GIB = 1.0
_TOKENS = (
    re.compile(r"GPU KV cache size: (\d[\d,]*) tokens"),
    re.compile(r"KV Cache is allocated\. #tokens: (\d+)"),
    re.compile(r"max_total_num_tokens=(\d+)"),  # SGLang's server info
)
_CONCURRENCY = re.compile(r"Maximum concurrency for (\d[\d,]*) tokens per request: (\d+(?:\.\d+)?)x")
"""vLLM's other line: the cache holds this many sequences of max_model_len; their product is the token count
(to the two decimals printed) when a log keeps only this line."""


class LogCase(BaseModel):
    """One engine log excerpt and the setup it was printed for."""

    model_config = ConfigDict(frozen=True)

    name: str
    header: dict[str, str]
    reported_tokens: int | None
    """vLLM's ``GPU KV cache size`` or SGLang's ``#tokens``; None when the source states only memory."""
    reported_kv_gib: float | None = None
    """vLLM's ``Available KV cache memory``, per GPU, when the log prints it."""

    @property
    def role(self) -> str:
        return self.header.get("role", "hold-out")

    @property
    def compares_memory(self) -> bool:
        """Whether the check compares KV memory per GPU rather than tokens (``compare: kv_gib``): for
        sliding-window models, whose token count vLLM derives from its block layout, and sources that
        state only memory."""
        return self.header.get("compare") == "kv_gib" or self.reported_tokens is None

    @property
    def small_budget(self) -> bool:
        """Whether the reported KV memory is under :data:`SMALL_BUDGET_GIB` per GPU."""
        return self.reported_kv_gib is not None and self.reported_kv_gib < SMALL_BUDGET_GIB


class LogCheck(BaseModel):
    model_config = ConfigDict(frozen=True)

    case: LogCase
    computed_tokens: int
    computed_kv_gib: float

    @property
    def error(self) -> float:
        """Computed over reported, minus one: tokens, or KV memory per GPU when the case says so."""
        if self.case.reported_tokens is None or (self.case.compares_memory and self.case.reported_kv_gib):
            return self.computed_kv_gib / (self.case.reported_kv_gib or 1.0) - 1
        return self.computed_tokens / self.case.reported_tokens - 1

    @property
    def gib_error(self) -> float | None:
        """Computed minus reported KV memory per GPU, GiB, when the log states it."""
        return None if self.case.reported_kv_gib is None else self.computed_kv_gib - self.case.reported_kv_gib

    @property
    def within_bound(self) -> bool:
        """5% of the reported figure, or for a small budget 1 GiB per GPU."""
        if self.case.small_budget and self.gib_error is not None:
            return abs(self.gib_error) <= SMALL_BUDGET_TOLERANCE_GIB
        return abs(self.error) <= 0.05


def read_log(path: Path) -> LogCase:
    """The header and the reported KV tokens of one excerpt; a file without either is a named error."""
    header: dict[str, str] = {}
    key = ""
    tokens: int | None = None
    by_concurrency: int | None = None
    kv_gib: float | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#   ") and key:
            header[key] += " " + line[4:].strip()
        elif line.startswith("# ") and ":" in line:
            key, _, value = line[2:].partition(":")
            key = key.strip()
            header[key] = value.strip()
        else:
            kv = _KV_GIB.search(line)
            if kv and kv_gib is None:
                kv_gib = float(kv.group(1))
            for pattern in _TOKENS:
                match = pattern.search(line)
                if match and tokens is None:
                    tokens = int(match.group(1).replace(",", ""))
            concurrency = _CONCURRENCY.search(line)
            if concurrency and by_concurrency is None:
                by_concurrency = round(int(concurrency.group(1).replace(",", "")) * float(concurrency.group(2)))
    tokens = tokens if tokens is not None else by_concurrency
    if kv_gib is None and "reported_kv_gib" in header:
        kv_gib = float(header["reported_kv_gib"])  # a summary table's column, quoted in the header
    if tokens is None and kv_gib is None:
        raise InputError(
            "log",
            f"{path.name}: no 'GPU KV cache size', 'Maximum concurrency', 'KV Cache is allocated', "
            "'max_total_num_tokens' or 'Available KV cache memory' line",
        )
    for needed in ("url", "engine", "gpu", "gpus", "precision"):
        if needed not in header:
            raise InputError("log", f"{path.name}: the header has no '{needed}:' line")
    return LogCase(name=path.stem, header=header, reported_tokens=tokens, reported_kv_gib=kv_gib)


def _model(case: LogCase, models: ModelCatalog, fixtures: Path) -> ModelSpec:
    h = case.header
    if "model" in h:
        spec = models.get(h["model"])
    else:
        spec = from_hf_config(
            fixtures / h["model_config"],
            params_total_b=float(h["params_total_b"]),
            params_active_b=float(h["params_active_b"]),
        )
        config = json.loads((fixtures / h["model_config"]).read_text(encoding="utf-8"))
        vocab = config.get("vocab_size")
        if isinstance(vocab, int) and spec.vocab_size is None:
            spec = spec.model_copy(update={"vocab_size": vocab})
    if "fp8_high_precision_params_b" in h:
        # the log ran an FP8 checkpoint this spec does not describe (a third-party quantisation)
        checkpoint = Checkpoint(
            format="fp8",
            group_size=int(h.get("fp8_group_size", 128 * 128)),
            scale_bytes=4,
            high_precision_params_b=float(h["fp8_high_precision_params_b"]),
            source=Source.model_validate({"url": h["url"], "read": h.get("read", "2026-11-30")}),
        )
        spec = spec.model_copy(update={"checkpoint": checkpoint})
    return spec


def check_log(case: LogCase, models: ModelCatalog, gpus: GpuCatalog, fixtures: Path) -> LogCheck:
    """``fit``'s ``max_cached_tokens`` for the log's setup, with the engine's defaults unless the log
    names a utilisation (SGLang's ``--mem-fraction-static``)."""
    h = case.header
    model = _model(case, models, fixtures)
    utilisation = float(h["utilisation"]) if "utilisation" in h else None
    # the log's max_model_len where it matters: chunked and sliding layers hold at most their window
    context = int(h["context"]) if "context" in h else min(model.max_context, 131_072)
    result = fit(
        model,
        gpus.get(h["gpu"]),
        h["precision"],
        context=context,
        gpus=int(h["gpus"]),
        kv_dtype=h.get("kv_dtype"),
        utilisation=utilisation,
        engine=h["engine"],
    )
    return LogCheck(
        case=case,
        computed_tokens=result.max_cached_tokens,
        computed_kv_gib=result.kv_budget_per_gpu_gib,
    )
