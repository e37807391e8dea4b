"""Same model on both sides: which model the GPU options run when the scenario leaves it to us.

"API or self-host?" compares one model bought two ways. With ``self_hosting.record: auto`` (the
default) the dedicated and self-hosted options run the serverless model when its weights are open, under
its own spec or, failing that, the nearest one (``GLM-5.3`` is sized as ``glm-5``, and the answer says
so). A substitute is the user's explicit choice (``self_hosting.model``, or a record id); with a closed
serverless model and no choice, the options fall back to the record every scenario used before ``auto``
and the answer says that too. Sizing then prefers a measurement of the model (the user's own first) on
the offer's GPU, and otherwise estimates the fewest GPUs that hold it (:mod:`calculator.capacity.replica_setup`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from calculator.capacity.memory import default_kv_dtype, fit
from calculator.catalog.catalogs import Catalogs
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.models import ModelCatalog, ModelSpec
from calculator.catalog.prices import ServerlessOffer
from calculator.errors import InputError
from calculator.scenario.inputs import AUTO_RECORD
from calculator.scenario.model import Scenario

__all__ = ["GpuModelChoice", "gpu_model_choice", "measured_record", "serverless_spec"]


@dataclass(frozen=True)
class GpuModelChoice:
    """The model ``record: auto`` has the GPU options run, and how it was chosen."""

    spec: ModelSpec | None
    """The model spec the GPU options run; None when there is no open model to run (then the legacy record)."""
    chosen: Literal["serverless", "user", "default"]
    """``serverless``: the serverless model (open weights); ``user``: ``self_hosting.model``; ``default``:
    nothing to run the serverless model with, so :data:`LEGACY_RECORD` (``reason`` says why)."""
    stands_for: str | None = None
    """The serverless model's name, when the GPU options run it (or its nearest spec)."""
    exact: bool = True
    """Whether ``spec`` is the serverless model itself; False for the nearest spec (``GLM-5.3`` -> ``glm-5``)."""
    reason: str = ""
    """Why the default was taken (a closed model, a model with no spec, no serverless option)."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the model goes by here, for its token factor."""
        return tuple(n for n in ((self.spec.id if self.spec else None), self.stands_for) if n)


def _serverless_offer(scenario: Scenario, cat: Catalogs) -> ServerlessOffer | None:
    if scenario.serverless is None:
        return None
    try:
        return cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)[1]
    except InputError:  # the serverless side reports its own problem
        return None


def gpu_model_choice(scenario: Scenario, cat: Catalogs) -> GpuModelChoice | None:
    """What the GPU options run under ``record: auto``; None when the scenario names its sizing itself (a
    record id or an estimate). An unknown ``self_hosting.model`` is an :class:`InputError` naming the known ids."""
    hosting = scenario.self_hosting
    if hosting.estimate is not None or hosting.record != AUTO_RECORD:
        return None
    if hosting.model is not None:
        spec = cat.models.find(hosting.model)
        if spec is None:  # named as the scenario field, not the serverless --model flag
            raise InputError(
                "self_hosting.model",
                f"unknown model {hosting.model!r}; known: {', '.join(cat.models.ids)} "
                "(or import the model's config.json: models import CONFIG.json)",
            )
        return GpuModelChoice(spec, "user")
    offer = _serverless_offer(scenario, cat)
    if offer is None:
        return GpuModelChoice(None, "default", reason="there is no serverless option to match")
    if not offer.open_weights:
        return GpuModelChoice(None, "default", reason=f"{offer.model} is a closed model (it cannot be self-hosted)")
    found = serverless_spec(offer, cat.models)
    if found is None:
        return GpuModelChoice(
            None,
            "default",
            reason=f"no model spec matches {offer.model} (a spec can be imported from its config.json)",
        )
    spec, exact = found
    return GpuModelChoice(spec, "serverless", stands_for=offer.model, exact=exact)


def serverless_spec(offer: ServerlessOffer, models: ModelCatalog) -> tuple[ModelSpec, bool] | None:
    """The spec a serverless offer's model runs under, and whether it is the model itself (False: the
    nearest, ``GLM-5.3`` -> ``glm-5``); the model's own spec under any of its names beats the nearest."""
    found = [hit for n in (offer.base_model, offer.model) if n and (hit := models.nearest(n)) is not None]
    found.sort(key=lambda hit: not hit[1])
    return found[0] if found else None


def measured_record(
    spec: ModelSpec, cat: Catalogs, own: tuple[ThroughputRecord, ...], gpu: GpuSpec, context: int
) -> ThroughputRecord | None:
    """A measurement of ``spec`` to size from on ``gpu``, or None: the user's own records first, then those
    on the offer's GPU, then the one that served the most output tokens per GPU; a record whose setup
    cannot hold the weights and one ``context``-token sequence on ``gpu`` (as sizing checks it) does not count."""
    own_ids = {r.id for r in own}
    usable = []
    for record in cat.records.records:
        found = cat.models.find(record.model) if record.model else None
        # parameter counts a record leaves out come from the spec, so only its conditions must be stated
        if found is None or found.id != spec.id or record.missing or record.gpu is None:
            continue
        # the setup must hold the turn on its own GPU and on the offer's, as sizing checks both (a 70B FP8 record
        # measured on one H100 with short prompts cannot hold a 20,500-token sequence there)
        precision = (record.precision or "bf16").lower()
        try:
            held = all(
                fit(spec, on, precision, context, record.replica_gpus, default_kv_dtype(precision)).fits
                for on in {gpu.id: gpu, record.gpu: cat.gpus.get(record.gpu)}.values()
            )
        except (InputError, ValueError):  # a precision or GPU the catalogue does not know cannot be checked
            continue
        if not held:
            continue
        usable.append(record)
    if not usable:
        return None
    return min(
        usable,
        key=lambda r: (r.id not in own_ids, r.gpu != gpu.id, -_output_per_gpu(r)),
    )


def _output_per_gpu(record: ThroughputRecord) -> float:
    served = record.output_tokens_per_s or record.requests_per_s * (record.output_tokens or 0)
    return served / record.replica_gpus


def model_names(scenario: Scenario, cat: Catalogs, model_id: str) -> tuple[str, ...]:
    """Every name ``model_id`` goes by in ``scenario`` for its token factor: its own, and the serverless model's
    when the GPU options run it as that model's spec (GLM-5 for GLM-5.3)."""
    choice = gpu_model_choice(scenario, cat)
    if choice is not None and choice.spec is not None and choice.spec.id == model_id:
        return choice.names
    return (model_id,)
