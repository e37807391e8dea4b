"""A whole scenario: the workload, the traffic, and the offers for each way to buy.

The same schema is read from a YAML file (``compare --scenario``), from the bundled presets
(``compare --preset``), and written back by the app's download button, so a scenario moves
between people and tools unchanged.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from calculator.catalog.datafile import DATA_DIR, load_model, load_model_text
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.fx import CurrencyCode
from calculator.catalog.limits import PRESET_NAME, TURNS_PER_MONTH, Description, Name, ScenarioName
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import canonical_model
from calculator.errors import InputError
from calculator.scenario.evidence import Evidence, PrefixEvidence
from calculator.scenario.inputs import EstimateSetup, Fx, SelfHosting, Traffic, TurnShape
from calculator.scenario.load import LoadProfile, profile_from_traffic
from calculator.scenario.own_prices import OwnPrices

__all__ = [
    "CHEAPEST",
    "DEFAULT_PRESETS_DIR",
    "DedicatedChoice",
    "PinnedPrice",
    "GpuVmChoice",
    "Scenario",
    "ServerlessChoice",
    "dump_scenario",
    "in_currency",
    "list_presets",
    "load_preset",
    "load_scenario",
    "load_scenario_text",
    "with_evidence_records",
    "with_load_profile",
    "with_measured_reuse",
    "with_prefix_evidence",
]

DEFAULT_PRESETS_DIR = DATA_DIR / "scenarios"
CENT = Decimal("0.01")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)


class ServerlessChoice(_Frozen):
    provider: Name
    model: Name
    distinct_prefixes: Annotated[int, TURNS_PER_MONTH] = 0
    """Distinct cached prefixes held at once (for offers that charge cache storage per hour); each was
    written by a turn, so there are no more than a month's turns."""
    prefix_hold_hours: float = Field(default=730.0, ge=0, le=744)
    """Hours a month those prefixes are held in the cache."""


CHEAPEST = "cheapest"
"""``offer: cheapest``: the deployment search picks the offer and the configuration
(:func:`calculator.pricing.cheapest.with_cheapest_offers`), the cheapest that meets the latency target."""


class _OwnedChoice(_Frozen):
    """A GPU offer to own (``provider`` and ``offer`` as the price sheets name them), or ``offer: cheapest``."""

    provider: Name = "any"
    offer: Name
    estimate: EstimateSetup | None = None
    """Size this option from this roofline setup rather than ``self_hosting``'s (the deployment search writes
    one for ``offer: cheapest``; a file may pin one)."""
    record: Name | None = None
    """Size this option from this measurement record rather than ``self_hosting.record``."""

    @model_validator(mode="after")
    def _named(self) -> _OwnedChoice:
        if self.offer != CHEAPEST and self.provider == "any":
            raise ValueError(f"offer {self.offer!r}: name its provider too (or give offer: cheapest)")
        if self.estimate is not None and self.record is not None:
            raise ValueError("give an estimate or a record to size the option from, not both")
        return self

    @property
    def cheapest(self) -> bool:
        return self.offer == CHEAPEST


class DedicatedChoice(_OwnedChoice):
    pass


class GpuVmChoice(_OwnedChoice):
    pass


class PinnedPrice(_Frozen):
    """One price a saved scenario was computed with: which offer, which version, and its figures."""

    option: Literal["serverless", "dedicated", "self_hosted"]
    provider: str
    offer: str
    effective: dt.date
    currency: str
    prices: dict[str, Decimal]
    """Per million tokens (serverless) or per GPU- / replica-hour (dedicated, GPU VMs)."""
    monthly: Decimal
    """The option's monthly cost as saved."""


class Scenario(_Frozen):
    """Everything a comparison needs; every field has a default except the workload."""

    schema_version: Literal[1] = 1
    name: ScenarioName = "My scenario"
    description: Description | None = None
    as_of: dt.date | None = None
    """Price date; absent means today."""
    currency: CurrencyCode = "USD"
    """What every figure is shown in; price sheets stay in theirs and convert through the dollar at ``fx``."""
    fx: Fx = Field(default_factory=Fx)
    workload: TurnShape
    traffic: Traffic
    serverless: ServerlessChoice | None = None
    dedicated: DedicatedChoice | None = None
    gpu_vm: GpuVmChoice | None = None
    self_hosting: SelfHosting = SelfHosting()
    token_factors: dict[Name, Decimal] = Field(default_factory=dict)
    """Tokens per workload token for models whose tokenizer counts the same text differently, by model
    name (``{claude-haiku-4-5: 1.12}``): the workload's token counts are scaled for options running them."""
    prices_used: tuple[PinnedPrice, ...] = ()
    """The price versions this scenario was priced with when it was saved (see ``pinning.py``)."""
    evidence: Evidence = Evidence()
    """The user's own measurements, prefix analysis and load profile (see ``evidence.py``)."""
    own_prices: OwnPrices | None = None
    """The user's own prices for the options chosen, or discounts off their listed prices (see ``own_prices.py``)."""

    @field_validator("token_factors")
    @classmethod
    def _factors_positive(cls, v: dict[str, Decimal]) -> dict[str, Decimal]:
        for name, factor in v.items():
            if not Decimal("0.2") <= factor <= 5:
                raise ValueError(f"{name}: a factor of {factor} is outside 0.2..5 (tokens per workload token)")
        return v

    def token_factor(self, *names: str | None) -> Decimal:
        """The factor set for a model under any of its names (provider's name, common name)."""
        wanted = {canonical_model(n) for n in names if n}
        for name, factor in self.token_factors.items():
            if canonical_model(name) in wanted:
                return factor
        return Decimal(1)

    @property
    def price_date(self) -> dt.date:
        return self.as_of or dt.date.today()

    @property
    def load_profile(self) -> LoadProfile:
        """The day's load: the profile the scenario holds, else its traffic model (flat over the active hours)."""
        return self.evidence.load_profile or profile_from_traffic(self.traffic)


def load_scenario(path: Path) -> Scenario:
    return load_model(path, Scenario)


def load_scenario_text(text: str, name: str = "scenario") -> Scenario:
    return load_model_text(text, name, Scenario)


def dump_scenario(scenario: Scenario) -> str:
    """YAML text that :func:`load_scenario_text` reads back to an equal scenario."""
    data = _plain(scenario.model_dump(exclude_none=True))
    if scenario.evidence.empty:
        data.pop("evidence", None)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _plain(value: Any) -> Any:
    """Decimals as YAML numbers (0.9, not '0.9'), dates as ISO dates: a file a person can edit."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def in_currency(scenario: Scenario, code: CurrencyCode) -> Scenario:
    """The scenario shown in ``code``, its own amounts converted at its rates: the engineer's monthly cost
    and the monthly costs it was saved with are in the scenario's currency, so 12,500 dollars become
    about 1.96 million yen, not 12,500 yen."""
    if code == scenario.currency:
        return scenario
    fx, src = scenario.fx, scenario.currency
    cost = fx.convert(scenario.self_hosting.engineer_monthly_cost, src, code).quantize(Decimal(1))
    pinned = tuple(
        p.model_copy(update={"monthly": fx.convert(p.monthly, src, code).quantize(CENT)}) for p in scenario.prices_used
    )
    data = scenario.model_dump()
    data.update(currency=code, prices_used=[p.model_dump() for p in pinned])
    data["self_hosting"]["engineer_monthly_cost"] = cost
    return Scenario.model_validate(data)


def with_measured_reuse(scenario: Scenario, prefix_share: float, hit_rate: float | None) -> Scenario:
    """The scenario with the prefix share and hit rate a prompt-log analysis measured."""
    workload = scenario.workload.model_copy(
        update={
            "prefix_share": Decimal(str(round(prefix_share, 4))),
            "hit_rate": Decimal(str(round(hit_rate, 4))) if hit_rate is not None else scenario.workload.hit_rate,
        }
    )
    return scenario.model_copy(update={"workload": workload})


def with_prefix_evidence(scenario: Scenario, evidence: PrefixEvidence, tokens: bool = True) -> Scenario:
    """The scenario with what a prompt-log analysis measured: the shares, and (``tokens``) the tokens per turn.

    The analysis is kept in ``evidence.prefix``, so the file and the link say where the numbers came from.
    """
    update: dict[str, object] = {"prefix_share": evidence.prefix_share}
    if evidence.hit_rate is not None:
        update["hit_rate"] = evidence.hit_rate
    if tokens and evidence.mean_input_tokens:
        update["input_tokens"] = evidence.mean_input_tokens
    if tokens and evidence.mean_output_tokens is not None:
        update["output_tokens"] = evidence.mean_output_tokens
    workload = scenario.workload.model_copy(update=update)
    return scenario.model_copy(
        update={"workload": workload, "evidence": scenario.evidence.model_copy(update={"prefix": evidence})}
    )


def with_evidence_records(scenario: Scenario, records: tuple[ThroughputRecord, ...], size_from: str | None) -> Scenario:
    """The scenario holding the user's own measurement records (a record with the same id is replaced).

    ``size_from`` names the record GPU options are sized from (None: keep the scenario's choice).
    """
    kept = tuple(r for r in scenario.evidence.records if r.id not in {n.id for n in records})
    evidence = scenario.evidence.model_copy(update={"records": kept + tuple(records)})
    update: dict[str, object] = {"evidence": Evidence.model_validate(evidence.model_dump())}
    if size_from is not None:
        update["self_hosting"] = scenario.self_hosting.model_copy(update={"record": size_from})
    return scenario.model_copy(update=update)


def with_load_profile(scenario: Scenario, profile: LoadProfile | None) -> Scenario:
    """The scenario planned with ``profile`` (None: back to its traffic model)."""
    return scenario.model_copy(update={"evidence": scenario.evidence.model_copy(update={"load_profile": profile})})


def list_presets(directory: Path | None = None) -> list[str]:
    return sorted(p.stem for p in (directory or DEFAULT_PRESETS_DIR).glob("*.yaml"))


def load_preset(name: str, directory: Path | None = None) -> Scenario:
    """A bundled scenario by its name: a slug, so it names a file in ``directory`` and never a path."""
    directory = directory or DEFAULT_PRESETS_DIR
    if not re.fullmatch(PRESET_NAME, name):
        shown = name if len(name) <= 40 else f"{name[:40]}... ({len(name):,} characters)"
        raise InputError(
            "preset",
            f"{shown!r} is not a preset name: a name is lower-case letters, digits, '.', '_' and '-', "
            f"at most 80 characters; choose one of {', '.join(list_presets(directory))}",
        )
    path = directory / f"{name}.yaml"
    if not path.is_file():
        raise InputError("preset", f"unknown preset {name!r}; choose one of {', '.join(list_presets(directory))}")
    return load_scenario(path)
