"""The user's own evidence a scenario carries: measurement records, a prefix analysis, a load profile.

Evidence beats assumptions. A scenario that holds the user's own benchmark or replay records sizes
GPUs from them; one that holds a prompt-log analysis prices the reuse and the tokens per turn that
were measured; one that holds a load profile is planned hour by hour with it. Keeping the evidence
in the scenario (and so in its YAML file and its link) lets every page and command answer for the
same setup without asking for the files again.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.limits import TOKENS
from calculator.catalog.measurements import ThroughputRecord
from calculator.scenario.load import LoadProfile

if TYPE_CHECKING:  # the prefix simulator is only needed by those who ran it
    from calculator.traffic.prefix import PrefixReport

__all__ = ["OWN_RECORD", "Evidence", "PrefixEvidence", "prefix_evidence"]

OWN_RECORD = "own-figures"
"""Record id of the user's own throughput figures (typed on the Compare page, kept as a record of the evidence)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)


class PrefixEvidence(_Frozen):
    """What a prompt-log analysis measured (``prefix`` command, Prefix analysis page)."""

    source: str
    """The log or trace analysed (its file name)."""
    requests: int = Field(ge=0)
    prefix_share: Decimal = Field(ge=0, le=1)
    """s: the share of input tokens an unlimited cache serves."""
    hit_rate: Decimal | None = Field(default=None, ge=0, le=1)
    """h = (s x h) / s for the simulated cache; None when nothing repeats."""
    token_hit_share: Decimal | None = Field(default=None, ge=0, le=1)
    """s x h: the share of all input tokens the simulated cache served."""
    mean_input_tokens: Annotated[int, TOKENS] | None = None
    mean_output_tokens: Annotated[int, TOKENS] | None = None
    tokenizer: str | None = None
    analysed_on: dt.date | None = None


class Evidence(_Frozen):
    records: tuple[ThroughputRecord, ...] = ()
    """The user's own measurement records (imported benchmark results, replay runs): sizing looks here first."""
    prefix: PrefixEvidence | None = None
    load_profile: LoadProfile | None = None
    """How the month's turns spread over the day (a preset shape, or one read from a request log)."""

    @field_validator("records")
    @classmethod
    def _unique(cls, v: tuple[ThroughputRecord, ...]) -> tuple[ThroughputRecord, ...]:
        seen: set[str] = set()
        for record in v:
            if record.id in seen:
                raise ValueError(f"record id {record.id!r} appears twice; give each measurement its own id")
            seen.add(record.id)
        return v

    @property
    def empty(self) -> bool:
        return not self.records and self.prefix is None and self.load_profile is None


def _share(x: float | None) -> Decimal | None:
    return None if x is None else Decimal(str(round(min(max(x, 0.0), 1.0), 4)))


def prefix_evidence(report: PrefixReport, analysed_on: dt.date | None = None) -> PrefixEvidence:
    """A prefix analysis as scenario evidence: its measured shares and tokens per turn."""
    mean_out = report.mean_output_tokens
    # a turn's tokens become the scenario's, so a log whose requests could not fit a context is refused here
    for mean, what in ((report.mean_input_tokens, "input"), (mean_out, "output")):
        if mean is not None and report.requests:
            TOKENS.check(round(mean), f"log.mean_{what}_tokens")
    values = report.scenario_values()  # the rounding the report itself prints for a scenario
    return PrefixEvidence(
        source=report.source,
        requests=report.requests,
        prefix_share=_share(values["prefix_share"]) or Decimal(0),
        hit_rate=None if report.scenario.hit_rate is None else _share(values["hit_rate"]),
        token_hit_share=_share(report.scenario.token_hit_share),
        mean_input_tokens=round(report.mean_input_tokens) if report.requests else None,
        mean_output_tokens=None if mean_out is None else round(mean_out),
        tokenizer=report.tokenizer,
        analysed_on=analysed_on,
    )
