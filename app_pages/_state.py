"""The Compare page's inputs: one stable key per scalar (also its URL parameter), and the mapping
between those values and a :class:`calculator.scenario.model.Scenario`.

No streamlit import: the page reads and writes ``st.session_state`` with these functions, and the
tests use them directly. Keys are short because they appear in shared links.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app_pages import _link
from app_pages._params import check_params, echo
from calculator.capacity.memory import WEIGHT_BYTES
from calculator.catalog import limits
from calculator.catalog.fx import CODES, QUOTE_LIMITS, default_rates, quote_unit, quoted, rate_field, unquoted
from calculator.catalog.limits import Limit, shown
from calculator.catalog.measurements import RecordCatalog, ThroughputRecord
from calculator.catalog.prices import (
    DedicatedOffer,
    GpuVmOffer,
    ServerlessOffer,
    Source,
    TokenPrices,
    canonical_model,
    ttl_minutes,
)
from calculator.catalog.quantity import QuantityError, plain, read_quantity
from calculator.errors import InputError
from calculator.present.money import format_small
from calculator.pricing.compare import Catalogs
from calculator.pricing.resolve import resolve, sizing_record, with_own_records
from calculator.pricing.same_model import serverless_spec
from calculator.scenario.changes import followed
from calculator.scenario.evidence import OWN_RECORD as OWN_RECORD  # the pages name it here
from calculator.scenario.evidence import Evidence
from calculator.scenario.inputs import AUTO_RECORD, LEGACY_RECORD, Fx, monthly_turns
from calculator.scenario.model import CHEAPEST, DedicatedChoice, GpuVmChoice, Scenario, with_evidence_records
from calculator.scenario.own_prices import OwnPrices

NONE = "none"
DEFAULT_PRESET = "coding-agent"
"""The Compare page's preset when neither the session nor the URL names one."""
OWN_FIGURES = "Your own throughput figures"
"""The field an error in the user's own throughput figures names."""
HIDDEN = ("e_model", "e_prec", "e_gpus", "e_batch", "e_attn", "h_model", "ttl", "pct")
"""Inputs the Compare page shows only in some cases; while hidden they keep their default."""
COMPARE_PAGE = "as on the Compare page"
"""The choice, on pages that price a scenario, of the Compare page's current one."""
EVIDENCE = "evidence"
"""Session key of the scenario's evidence: the user's records, a prefix analysis, a load profile."""
NAME_MAX, DESC_MAX = limits.NAME_LENGTH, limits.DESCRIPTION_LENGTH
"""Longest scenario name and description (characters)."""
OWN_NAME_MAX = 120
"""Longest name of the user's own prices (``own_prices.name``)."""
TEXTS = {
    "name": ("Scenario name", NAME_MAX),
    "desc": ("Description", DESC_MAX),
    "op_name": ("Your prices' name", OWN_NAME_MAX),
}
SC, EV = "sc", "ev"
"""URL parameters: the whole scenario (pages other than Compare), and its evidence (the Compare page)."""
LINK_LABELS = {SC: "the scenario", EV: "your evidence"}
_WRITTEN = "_link_written"
"""Session key: the link values this session wrote or read last, so that only a new link is adopted."""


FX_KEYS = {"EUR": "fx", "GBP": "fx_gbp", "JPY": "jpy_per_usd", "INR": "inr_per_usd"}
"""The exchange-rate input (and URL parameter) of each currency but the dollar, holding the rate as markets
quote it (:func:`calculator.catalog.fx.quoted`): ``fx`` is the euro's, as links have always had it."""
OLD_FX_KEYS = {"fx_jpy": "JPY", "fx_inr": "INR"}
"""URL parameters of links made before the yen and the rupee were typed per dollar: dollars per unit."""


def _rate_help(code: str) -> str:
    rate = default_rates()[code]
    return (
        f"Default: {shown(quoted(code, rate.usd_per_unit))} {quote_unit(code)} ({rate.origin}). "
        "Set your own finance team's rate."
    )


def rate_caption(code: str, rate_shown: float) -> str:
    """Under a rate input: the rate the other way round, so a rate typed the wrong way shows at once, and
    the default's date."""
    rate = default_rates()[code]
    if rate_shown > 0:
        usd_per_unit = unquoted(code, Decimal(repr(rate_shown)))
        if code in limits.UNITS_PER_USD:
            other = f"1 {code} = {format_small(usd_per_unit, 'USD', figures=4)}"
        else:
            other = f"1 USD = {format_small(1 / usd_per_unit, code, figures=4)}"
    else:
        other = "-"
    when = f"the reference rate of {rate.date}" if rate.date else "an assumption"
    return f"{other} · default {shown(quoted(code, rate.usd_per_unit))}, {when}"


def adopt_old_rates(state: MutableMapping[Any, Any], params: MutableMapping[str, str]) -> list[str]:
    """An old link's yen or rupee rate (dollars per unit) moved to its input and parameter now (units per
    dollar); one that cannot be read is named, with what it takes, and left out."""
    problems = []
    for old, code in OLD_FX_KEYS.items():
        raw = params.get(old)
        if raw is None:
            continue
        del params[old]
        limit = limits.USD_PER_UNIT[code]
        try:
            value = Decimal(raw.strip())
            problem = limit.problem(value, as_typed=raw)
        except (InvalidOperation, ValueError):
            problem = f"{echo(raw)} is not a number"
        if problem:
            problems.append(f"URL parameter `{old}` (USD per {code}, as older links give it): {problem}")
        elif FX_KEYS[code] not in params:
            # a bound input reads the address the page opened with, so the session is given the value too
            state[FX_KEYS[code]] = float(quoted(code, value))
            params[FX_KEYS[code]] = shown(quoted(code, value))
    return problems


def converted_engineer_cost(values: Mapping[str, Any], old: str, new: str) -> int:
    """The engineer's monthly cost input carried from currency ``old`` to ``new`` at the page's rates: it is
    in the chosen currency, so a switch converts it (12,500 dollars are about 1.96 million yen) rather than
    relabel it; at most what the input takes."""
    fx = Fx(**{rate_field(code): unquoted(code, _dec(values[key])) for code, key in FX_KEYS.items()})
    converted = fx.convert(_dec(values["engcost"]), old, new).quantize(Decimal(1))
    return int(min(converted, Decimal(limits.ENGINEER_MONTHLY_COST.high)))


@dataclass(frozen=True)
class NumberSpec:
    key: str
    label: str
    kind: type
    min: float
    max: float
    step: float
    help: str
    fmt: str | None = None


NUMBERS: dict[str, NumberSpec] = {
    s.key: s
    for s in (
        NumberSpec(
            "in",
            "Input tokens per turn",
            int,
            limits.TOKENS.low,
            limits.TOKENS.high,
            1000,
            "Everything the request sends: system prompt, tool definitions, history and the new message.",
        ),
        NumberSpec(
            "pfx",
            "Prefix share",
            float,
            0.0,
            1.0,
            0.05,
            "Share of the input that repeats the start of an earlier prompt. Agent loops and long chats: "
            "0.8 to 0.95; unique prompts: about 0.",
            "%.3f",
        ),
        NumberSpec(
            "hit",
            "Cache hit rate",
            float,
            0.0,
            1.0,
            0.05,
            "Chance the repeated start is still cached when the turn arrives. 1 is the best case, not a "
            "measured rate: caches evict, and requests routed to another replica miss.",
            "%.3f",
        ),
        NumberSpec(
            "out",
            "Output tokens per turn",
            int,
            limits.TOKENS.low,
            limits.TOKENS.high,
            100,
            "Tokens the model writes, reasoning tokens included (billed as output).",
        ),
        NumberSpec(
            "vol",
            "Turns",
            int,
            limits.TURNS_PER_MONTH.low,
            limits.TURNS_PER_MONTH.high,
            10_000,
            "How many requests the feature sends, per month or per day (see the switch above).",
        ),
        NumberSpec(
            "users",
            "Users (seats)",
            int,
            0,
            limits.USERS.high,
            100,
            "People the feature serves (0: not counted). Gives the cost per user a month; with volume per "
            "'user' the turns are users x turns per user a day.",
        ),
        NumberSpec(
            "hrs",
            "Active hours per day",
            float,
            limits.ACTIVE_HOURS.low,
            limits.ACTIVE_HOURS.high,
            1.0,
            "Hours a day the traffic arrives in; 24 for round-the-clock use.",
            "%.2f",
        ),
        NumberSpec(
            "p2a",
            "Peak-to-average",
            float,
            limits.PEAK_TO_AVERAGE.low,
            limits.PEAK_TO_AVERAGE.high,
            0.5,
            "Peak request rate over the average rate within the active hours; GPUs are sized for the peak.",
            "%.1f",
        ),
        NumberSpec(
            "util",
            "Utilisation target",
            float,
            limits.UTILISATION.low,
            limits.UTILISATION.high,
            0.05,
            "Share of a replica's measured capacity you plan to use at peak (headroom for latency).",
            "%.2f",
        ),
        NumberSpec(
            "spare",
            "Spare replicas",
            int,
            limits.REPLICAS.low,
            limits.REPLICAS.high,
            1,
            "Extra replicas kept for failures and bursts (self-hosted only).",
        ),
        NumberSpec(
            "eng",
            "Engineer share",
            float,
            limits.ENGINEER_SHARE.low,
            limits.ENGINEER_SHARE.high,
            0.05,
            "Share of a platform engineer's time running the stack (0.25 = a quarter).",
            "%.2f",
        ),
        NumberSpec(
            "engcost",
            "Engineer monthly cost",
            int,  # whole currency units: a float field wrote 1959559.0 into the link after a yen switch
            limits.ENGINEER_MONTHLY_COST.low,
            limits.ENGINEER_MONTHLY_COST.high,
            500,
            "Fully loaded monthly cost of one platform engineer, in the chosen currency.",
            "%d",
        ),
        NumberSpec(
            "fx",
            "USD per EUR",
            float,
            limits.USD_PER_EUR.low,
            limits.USD_PER_EUR.high,
            0.01,
            "Exchange rate used where sheets and the chosen currency differ. " + _rate_help("EUR"),
            "%.4f",
        ),
        *(
            NumberSpec(
                FX_KEYS[code],
                quote_unit(code),
                float,
                QUOTE_LIMITS[code].low,
                QUOTE_LIMITS[code].high,
                step,
                f"{QUOTE_LIMITS[code].unit[0].upper()}{QUOTE_LIMITS[code].unit[1:]}: figures are shown in {code} "
                "at this rate. " + _rate_help(code),
                fmt,
            )
            for code, step, fmt in (("GBP", 0.01, "%.5f"), ("JPY", 0.1, "%.3f"), ("INR", 0.1, "%.4f"))
        ),
        NumberSpec(
            "own_rps",
            "Requests/s per replica",
            float,
            limits.RATE.low,
            limits.RATE.high,
            0.1,
            "What one replica of your engine sustained at your latency target, for this turn's shape.",
            "%g",
        ),
        NumberSpec(
            "own_gpus",
            "GPUs per replica",
            int,
            limits.GPUS_PER_REPLICA.low,
            limits.GPUS_PER_REPLICA.high,
            1,
            "GPUs in one replica (tensor parallel size).",
        ),
        # --- the Advanced inputs ---------------------------------------------------------------------
        NumberSpec(
            "cws",
            "Cache write share",
            float,
            0.0,
            1.0,
            0.05,
            "Where the offer charges cache writes: the share of what the next turn will read back that this turn "
            "writes. 1 in an agent loop (each turn writes the history the next one reads); lower when some "
            "turns end a session and their writes are never read.",
            "%.2f",
        ),
        NumberSpec(
            "npfx",
            "Distinct cached prefixes",
            int,
            limits.TURNS_PER_MONTH.low,
            limits.TURNS_PER_MONTH.high,
            1,
            "For offers that charge cache storage per hour (explicit context caching): how many different "
            "prefixes (system prompts, documents) are held in the cache at once. 0: no storage charge.",
        ),
        NumberSpec(
            "hold",
            "Hours held per month",
            float,
            0.0,
            744.0,
            10.0,
            "Hours a month those prefixes stay cached (730 = all month; 300 = about 10 hours a day).",
            "%.0f",
        ),
        NumberSpec(
            "minr",
            "Minimum replicas when autoscaling",
            int,
            limits.REPLICAS.low,
            limits.REPLICAS.high,
            1,
            "Replicas kept up outside the active hours when autoscaling (0 = scale to zero; the first request "
            "then waits for a start-up).",
        ),
        NumberSpec(
            "start",
            "Start-up minutes",
            float,
            limits.MINUTES.low,
            limits.MINUTES.high,
            0.5,
            "Billed time per scale-up before a replica serves: loading the weights (vLLM and SGLang load a 70B "
            "model in about a minute or two).",
            "%.1f",
        ),
        NumberSpec(
            "chg",
            "Model changes per month",
            float,
            limits.MODEL_CHANGES.low,
            limits.MODEL_CHANGES.high,
            0.5,
            "How often you move to a new model or version; each change reloads (and for TensorRT-LLM rebuilds) "
            "the engine.",
            "%.2f",
        ),
        NumberSpec(
            "build",
            "Build minutes per change",
            float,
            limits.MINUTES.low,
            limits.MINUTES.high,
            5.0,
            "One-time engine build per model change on the GPUs (TensorRT-LLM took about 28 minutes for a 70B "
            "model; 0 for vLLM and SGLang).",
            "%.0f",
        ),
        NumberSpec(
            "tf_sl",
            "Token factor: serverless model",
            float,
            0.2,
            5.0,
            0.01,
            "Tokens the serverless model's tokenizer counts per token of your workload figures (1.12 = the same "
            "text is 12% more tokens there). Scales input and output tokens of that option only.",
            "%.3f",
        ),
        NumberSpec(
            "tf_gpu",
            "Token factor: GPU options' model",
            float,
            0.2,
            5.0,
            0.01,
            "The same for the model the dedicated endpoint and the GPU machines run (the throughput record's "
            "model, or the estimated one).",
            "%.3f",
        ),
        NumberSpec(
            "ttft",
            "Time to first token at most (ms)",
            float,
            0.0,
            600_000.0,
            100.0,
            "Latency target for the GPU options: the busiest load level of the record's setup whose time to "
            "first token at the chosen percentile is at most this. 0: no TTFT target.",
            "%.0f",
        ),
        NumberSpec(
            "tps",
            "Tokens/s per user at least",
            float,
            0.0,
            10_000.0,
            1.0,
            "Latency target for the GPU options: output speed each user sees (1000 / inter-token latency) at the "
            "chosen percentile. 0: no speed target.",
            "%.1f",
        ),
        NumberSpec(
            "e_gpus",
            "GPUs per replica (estimate)",
            int,
            limits.GPUS_PER_REPLICA.low,
            limits.GPUS_PER_REPLICA.high,
            1,
            "Tensor-parallel GPUs per engine replica in the roofline estimate.",
        ),
        NumberSpec(
            "op_in",
            "Your input price (per 1M tokens)",
            float,
            0.0,
            99_999_999.0,
            0.01,
            "Your own price per million uncached input tokens, in the scenario's currency.",
            "%.4f",
        ),
        NumberSpec(
            "op_ca",
            "Your cached-input price (per 1M tokens)",
            float,
            0.0,
            99_999_999.0,
            0.01,
            "Your own price per million input tokens read from the cache.",
            "%.4f",
        ),
        NumberSpec(
            "op_out",
            "Your output price (per 1M tokens)",
            float,
            0.0,
            99_999_999.0,
            0.01,
            "Your own price per million output tokens (reasoning tokens included).",
            "%.4f",
        ),
        NumberSpec(
            "op_dh",
            "Your dedicated price (per GPU-hour)",
            float,
            0.0,
            99_999_999.0,
            0.1,
            "Your own price per GPU-hour for the dedicated endpoint, in the scenario's currency.",
            "%.4f",
        ),
        NumberSpec(
            "op_vh",
            "Your GPU VM price (per GPU-hour)",
            float,
            0.0,
            99_999_999.0,
            0.1,
            "Your own price per GPU-hour for the GPU virtual machines, from your own cloud contract.",
            "%.4f",
        ),
        *(
            NumberSpec(
                key,
                f"Discount on the listed {what} (%)",
                float,
                0.0,
                100.0,
                1.0,
                f"Percent off the {what}'s listed price (a committed-use or volume discount); 0: none.",
                "%.1f",
            )
            for key, what in (("op_sd", "serverless offer"), ("op_dd", "dedicated endpoint"), ("op_vd", "GPU VM"))
        ),
        NumberSpec(
            "e_batch",
            "Max batch (estimate; 0 = as many as fit)",
            int,
            0,
            limits.BATCH.high,
            8,
            "At most this many sequences decoded together; 0: as many as the KV cache holds and the engine "
            "schedules, fewer where the latency target needs it. More throughput, slower per user.",
        ),
    )
}
TOGGLES = ("auto", "own", "batch", "est", "op_sl", "op_ded", "op_vm")
SHARES = ("pfx", "hit")
"""The 0-1 fields of one turn: the page checks them itself (a typed 90 is named, not only drawn red)."""
NOT_FIGURES = frozenset({"region", "name", "desc", "op_name", "asof", "sweep", "why", "weights", "sl_more", "preset"})
"""URL parameters a bad value of which leaves the figures standing: the page says so and shows the rest."""
DATE_MIN, DATE_MAX = dt.date(2020, 1, 1), dt.date(2035, 12, 31)
"""The price dates the Compare page takes (the sheets' versions start in 2026)."""
QUANTITIES = ("in", "out", "vol", "users")
"""Volume and token inputs: text fields read as people type them (``3M``, ``2.5k``, ``1,000,000``), held in
the session and the link as that text; everything else reads the number :func:`read_typed` makes of it."""
M = TypeVar("M", bound=BaseModel)


def volume_spec(per: str) -> NumberSpec:
    """The Turns input's range: a month's, or a day's when the volume is given per day (as many as make at
    most the scenario's limit on a month), or one user's day."""
    if per == "user":
        limit = limits.TURNS_PER_USER_PER_DAY
        return replace(
            NUMBERS["vol"],
            label="Turns per user a day",
            kind=float,
            min=limit.low,
            max=limit.high,
            step=10,
            fmt="%g",
            help="How many requests each user's use sends on an average day; times the users gives the volume.",
        )
    limit = limits.TURNS_PER_DAY if per == "day" else limits.TURNS_PER_MONTH
    return replace(NUMBERS["vol"], min=limit.low, max=limit.high)


def quantity_limit(key: str, per: str | None) -> Limit:
    """The domain's limit on a volume or token input (:data:`QUANTITIES`), the Turns input's per ``per``."""
    if key == "users":  # 0: not counted
        return replace(limits.USERS, low=0, why_low="")
    if key == "vol":
        return {"day": limits.TURNS_PER_DAY, "user": limits.TURNS_PER_USER_PER_DAY}.get(
            per or "", limits.TURNS_PER_MONTH
        )
    return limits.TOKENS


def fractional_volume(per: str | None) -> bool:
    """Whether the Turns input may hold a fraction: per user a day (half a turn is every other day) and per
    day (2,500 a month is 82.19 a day; a whole 82 would change the month to 2,494 on a switch)."""
    return per in ("day", "user")


def read_typed(key: str, held: object, per: str | None) -> int | float:
    """The number a volume or token input holds (text as typed, or a number a page or link set): an
    :class:`InputError` naming the input and its range when it holds none, never another number. Whole,
    but for turns a day or per user a day (:func:`fractional_volume`)."""
    text = plain(held) if isinstance(held, int | float) and not isinstance(held, bool) else str(held)
    whole = not (key == "vol" and fractional_volume(per))
    try:
        value = read_quantity(text, quantity_limit(key, per), whole=whole)
    except QuantityError as exc:
        label = volume_spec(per or "month").label if key == "vol" else NUMBERS[key].label
        raise InputError(label, str(exc)) from None
    return int(value) if whole else float(value)


def link_quantity(field: str, params: Mapping[str, str], session_state: Mapping[Any, Any]) -> str | None:
    """The URL parameter a volume or token input's problem (named ``field``) came from, when the input still
    holds the link's text; None when the user typed it."""
    for key in QUANTITIES:
        labels = (NUMBERS[key].label, volume_spec("user").label) if key == "vol" else (NUMBERS[key].label,)
        if field in labels and key in params and str(session_state.get(key)) == params[key]:
            return key
    return None


def number_specs(per: str | None) -> dict[str, NumberSpec]:
    """Every number input's range, the Turns input's for volumes given ``per`` month or day."""
    return {**NUMBERS, "vol": volume_spec(per or "month")}


def _plain(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="python")
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def validated(model: M, /, **update: object) -> M:
    """``model`` with ``update`` laid over it, checked as a scenario file is: every limit and rule of every
    part. ``model_copy(update=...)`` checks nothing, so a value outside its limit would pass silently into
    the answer. Raises ``ValidationError``; returns the copy as given (a second reading would move
    a normalised float, e.g. a load profile's within-hour shape, by its last digit)."""
    copy = model.model_copy(update=update)
    type(model).model_validate(_plain(copy))
    return copy


def out_of_range(values: Mapping[str, object]) -> list[str]:
    """Numbers the Compare page's inputs cannot take (each naming its input and range), so a scenario that
    holds one is refused whole rather than silently changed."""
    specs = number_specs(str(values.get("per") or "month"))
    problems = []
    for key, value in values.items():
        spec = specs.get(key)
        if spec is None or not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if not spec.min <= value <= spec.max:
            allowed = f"{shown(spec.min)} to {shown(spec.max)}"
            problems.append(f"{spec.label}: {shown(value)} is outside what the page takes ({allowed})")
    return problems


SHORTEST = "shortest"
"""The ``ttl`` value for the shortest cache lifetime the offer sells (the scenario's ``cache_ttl`` left out)."""
PERCENTILES = ("p50", "p90", "p95", "p99")
CHOICES_FIXED = {
    "cur": CODES,
    "per": ("month", "day", "user"),
    "weights": ("all", "open", "closed"),
    "sweep": ("prefix share", "hit rate"),
    "pct": PERCENTILES,
    "e_prec": tuple(WEIGHT_BYTES),
    "e_attn": ("tp", "dp"),
}
ADVANCED = (
    "cws",
    "ttl",
    "batch",
    "npfx",
    "hold",
    "minr",
    "start",
    "chg",
    "build",
    "tf_sl",
    "tf_gpu",
    "pct",
    "ttft",
    "tps",
    "est",
    "e_model",
    "e_prec",
    "e_gpus",
    "e_batch",
    "e_attn",
)
"""Keys of the Advanced inputs (scenario fields the sidebar's main sections leave out)."""


def offer_key(provider: str, offer_id: str) -> str:
    return f"{provider}/{offer_id}"


def split_key(value: str) -> tuple[str, str]:
    provider, _, offer_id = value.partition("/")
    return provider, offer_id


def choices(cat: Catalogs, presets: list[str], evidence: Evidence | None = None) -> dict[str, list[str]]:
    """Allowed values of every select-type input (before the region and weights filters).

    Throughput records: the scenario's own (``evidence``) first, then the bundled ones, then the own figures.
    """
    sl = [offer_key(s.provider, o.id) for s, o in cat.prices.offers("serverless")]
    ded = [offer_key(s.provider, o.id) for s, o in cat.prices.offers("dedicated")]
    vm = [offer_key(s.provider, o.id) for s, o in cat.prices.offers("gpu_vm")]
    own = [r.id for r in (evidence.records if evidence else ()) if r.id != OWN_RECORD]
    return {
        "preset": presets,
        "sl": [NONE, *sl],
        "ded": [NONE, CHEAPEST, *ded],
        "vm": [NONE, CHEAPEST, *vm],
        "rec": [AUTO_RECORD, *own, *(r for r in cat.records.ids if r not in own), OWN_RECORD],
        "ttl": [SHORTEST, *all_ttls(cat)],
        "e_model": list(cat.models.ids),
        "h_model": [AUTO_RECORD, *cat.models.ids],
        **{k: list(v) for k, v in CHOICES_FIXED.items()},
    }


def all_ttls(cat: Catalogs) -> list[str]:
    """Every cache lifetime any serverless offer sells, shortest first."""
    found: set[str] = set()
    for _, offer in cat.prices.offers("serverless"):
        assert isinstance(offer, ServerlessOffer)
        for version in offer.versions:
            found.update(version.prices.cache_write or {})
    return sorted(found, key=ttl_minutes)


def serverless_prices(cat: Catalogs, key: str, when: dt.date) -> tuple[TokenPrices, Decimal | None] | None:
    """(prices, batch discount) of a serverless offer key on a date; None when unknown or undated."""
    if key == NONE:
        return None
    provider, offer_id = split_key(key)
    try:
        _, offer = cat.prices.serverless(provider, offer_id)
        version = offer.version_at(when)
    except InputError:
        return None
    return version.prices, version.batch_discount


def serverless_model(cat: Catalogs, key: str) -> str | None:
    """The model name a serverless offer key runs (``GLM-5.3``), or None."""
    if key == NONE:
        return None
    provider, offer_id = split_key(key)
    try:
        return cat.prices.serverless(provider, offer_id)[1].model
    except InputError:
        return offer_id


def gpu_model(cat: Catalogs | None, v: dict[str, Any]) -> str | None:
    """The model the GPU options run: the estimated one, else the throughput record's; for ``auto``, the
    serverless model's spec (``sl``) when its weights are open, else the default record's."""
    if v.get("est"):
        return str(v.get("e_model") or "") or None
    if v.get("own") or cat is None:
        return None
    rec = v.get("rec")
    if rec == AUTO_RECORD and v.get("h_model") not in (None, AUTO_RECORD):
        return str(v["h_model"])
    if rec == AUTO_RECORD:
        found = _serverless_offer(cat, str(v.get("sl") or NONE))
        hit = serverless_spec(found, cat.models) if found is not None and found.open_weights else None
        if hit is not None:
            return hit[0].id
        rec = LEGACY_RECORD
    try:
        return cat.records.get(str(rec)).model
    except (ValueError, KeyError):
        return None


def _serverless_offer(cat: Catalogs, key: str) -> ServerlessOffer | None:
    if key == NONE:
        return None
    provider, offer_id = split_key(key)
    try:
        return cat.prices.serverless(provider, offer_id)[1]
    except InputError:
        return None


def _record_defaults(cat: Catalogs, record_id: str) -> tuple[str, str, int]:
    """(model id, precision, GPUs per replica) for the estimate inputs, taken from the measured record."""
    ids = cat.models.ids
    model = "llama-3.3-70b" if "llama-3.3-70b" in ids else (ids[0] if ids else "")
    precision, gpus = "fp8", 1
    try:
        record = cat.records.get(record_id)
    except ValueError:
        return model, precision, gpus
    found = cat.models.find(record.model) if record.model else None
    if found is not None:
        model = found.id
    if record.precision and record.precision.lower() in WEIGHT_BYTES:
        precision = record.precision.lower()
    return model, precision, record.gpu_count or gpus


def regions(cat: Catalogs) -> list[str]:
    return sorted({o.region for _, o in cat.prices.offers() if o.region})


def _owned_key(choice: DedicatedChoice | GpuVmChoice | None) -> str:
    if choice is None:
        return NONE
    return CHEAPEST if choice.cheapest else offer_key(choice.provider, choice.offer)


def scenario_to_state(s: Scenario, cat: Catalogs) -> dict[str, Any]:
    """Widget values for a scenario (the inverse of :func:`state_to_scenario` for these fields)."""
    return {
        "sl": serverless_key(s, cat),
        "ded": _owned_key(s.dedicated),
        "vm": _owned_key(s.gpu_vm),
        "rec": s.self_hosting.record,
        "h_model": s.self_hosting.model or AUTO_RECORD,
        "cur": s.currency,
        **{key: float(quoted(code, s.fx.usd_per(code))) for code, key in FX_KEYS.items()},
        "asof": s.as_of,
        "in": int(s.workload.input_tokens),
        "pfx": float(s.workload.prefix_share),
        "hit": float(s.workload.hit_rate),
        "out": int(s.workload.output_tokens),
        "vol": int(s.traffic.turns_per_month),
        "per": "month",
        "users": int(s.traffic.users or 0),
        "hrs": float(s.traffic.active_hours_per_day),
        "p2a": float(s.traffic.peak_to_average),
        "util": float(s.self_hosting.target_utilisation),
        "spare": int(s.self_hosting.spare_replicas),
        "eng": float(s.self_hosting.engineer_share),
        "engcost": int(s.self_hosting.engineer_monthly_cost),
        "auto": bool(s.self_hosting.autoscale),
        **_advanced_state(s, cat),
        **own_price_state(s, cat),
    }


def own_price_state(s: Scenario, cat: Catalogs) -> dict[str, Any]:
    """The "your own price" inputs for a scenario's ``own_prices`` (all off without any); a price not set
    starts at the chosen offer's listed one, in the scenario's currency, so switching it on changes nothing
    until a figure is typed."""
    own = s.own_prices or OwnPrices()
    shown: dict[str, float] = {"input": 0.0, "cached_input": 0.0, "output": 0.0}
    if own.serverless is not None:
        shown.update({k: float(v) for k, v in own.serverless.model_dump(include=set(shown)).items() if v is not None})
    elif s.serverless is not None and (listed := serverless_prices(cat, serverless_key(s, cat), s.price_date)):
        currency = cat.prices.sheet(split_key(serverless_key(s, cat))[0]).currency
        for k, v in listed[0].model_dump(include=set(shown)).items():
            if v is not None:
                shown[k] = float(s.fx.convert(v, currency, s.currency))
    ded_hour = own.dedicated_gpu_hour
    vm_hour = own.gpu_hour
    return {
        "op_name": own.name,
        "op_sl": own.serverless is not None,
        "op_in": shown["input"],
        "op_ca": shown["cached_input"],
        "op_out": shown["output"],
        "op_sd": float(own.serverless_discount or 0),
        "op_ded": ded_hour is not None,
        "op_dh": float(ded_hour if ded_hour is not None else _listed_gpu_hour(s, cat, "dedicated") or 0),
        "op_dd": float(own.dedicated_discount or 0),
        "op_vm": vm_hour is not None,
        "op_vh": float(vm_hour if vm_hour is not None else _listed_gpu_hour(s, cat, "gpu_vm") or 0),
        "op_vd": float(own.gpu_vm_discount or 0),
    }


def _listed_gpu_hour(s: Scenario, cat: Catalogs, kind: str) -> Decimal | None:
    """The chosen dedicated or GPU VM offer's listed price per GPU-hour, in the scenario's currency."""
    choice = s.dedicated if kind == "dedicated" else s.gpu_vm
    if choice is None:
        return None
    try:
        sheet, offer = cat.prices.offer(choice.provider, choice.offer, kind)
        version = offer.version_at(s.price_date)
    except InputError:
        return None
    per_gpu: Decimal | None = getattr(version, "per_gpu_hour", None)
    per_replica: Decimal | None = getattr(version, "per_replica_hour", None)
    if per_gpu is None and isinstance(offer, DedicatedOffer) and per_replica is not None:
        per_gpu = per_replica / offer.gpus_per_replica
    return None if per_gpu is None else s.fx.convert(per_gpu, sheet.currency, s.currency)


def _own_prices(base: Scenario, v: Mapping[str, Any]) -> dict[str, Any] | None:
    """``own_prices`` from the page's inputs, over what the base scenario holds that the page does not show
    (a replica-hour price, a minimum, long-context tiers stay while their option's inputs are untouched)."""
    own = (base.own_prices or OwnPrices()).model_dump(exclude_none=True)
    own["name"] = str(v.get("op_name") or "").strip()[:OWN_NAME_MAX] or OwnPrices().name
    if v.get("op_sl"):
        kept = own.get("serverless") or {}
        own["serverless"] = {
            **{k: val for k, val in kept.items() if k not in ("input", "cached_input", "output")},
            "input": _price(v["op_in"]),
            "output": _price(v["op_out"]),
            **({"cached_input": _price(v["op_ca"])} if v.get("op_ca") or kept.get("cached_input") is not None else {}),
        }
        own.pop("serverless_discount", None)
    else:
        own.pop("serverless", None)
        own.pop("serverless_long_context", None)
        own["serverless_discount"] = _dec(v.get("op_sd") or 0) or None
    if v.get("op_ded"):
        own.pop("dedicated_replica_hour", None)
        own.update(dedicated_gpu_hour=_price(v["op_dh"]), dedicated_discount=None)
    else:
        own.pop("dedicated_gpu_hour", None)
        own["dedicated_discount"] = _dec(v.get("op_dd") or 0) or None
    if v.get("op_vm"):
        own.update(gpu_hour=_price(v["op_vh"]), gpu_vm_discount=None)
    else:
        own.pop("gpu_hour", None)
        own["gpu_vm_discount"] = _dec(v.get("op_vd") or 0) or None
    built = OwnPrices.model_validate({k: val for k, val in own.items() if val is not None})
    return None if built.empty else built.model_dump(exclude_none=True)


def _advanced_state(s: Scenario, cat: Catalogs) -> dict[str, Any]:
    w, h = s.workload, s.self_hosting
    target, setup = h.latency_target, h.estimate
    model, precision, gpus = _record_defaults(cat, h.record)
    sl_model = serverless_model(cat, serverless_key(s, cat)) if s.serverless else None
    gpu = setup.model if setup else gpu_model(cat, {"rec": h.record, "h_model": h.model, "sl": serverless_key(s, cat)})
    if h.record == AUTO_RECORD and gpu is not None and gpu in cat.models:
        model = cat.models.get(gpu).id  # the estimate inputs start from the model auto runs
    return {
        "cws": float(w.cache_write_share),
        "ttl": w.cache_ttl or SHORTEST,
        "batch": bool(w.batch),
        "npfx": int(s.serverless.distinct_prefixes) if s.serverless else 0,
        "hold": float(s.serverless.prefix_hold_hours) if s.serverless else 730.0,
        "minr": int(h.min_replicas),
        "start": float(h.startup_minutes),
        "chg": float(h.model_changes_per_month),
        "build": float(h.build_minutes_per_change),
        "tf_sl": float(s.token_factor(sl_model)),
        "tf_gpu": float(s.token_factor(gpu)),
        "pct": target.percentile if target else "p95",
        "ttft": float(target.ttft_ms or 0) if target else 0.0,
        "tps": float(target.tokens_per_s_per_user or 0) if target else 0.0,
        "est": setup is not None,
        "e_model": setup.model if setup else model,
        "e_prec": setup.precision.lower() if setup else precision,
        "e_gpus": int(setup.gpus_per_replica) if setup else gpus,
        "e_batch": int(setup.max_batch or 0) if setup else 0,
        "e_attn": setup.attention if setup else "tp",
    }


def serverless_key(s: Scenario, cat: Catalogs) -> str:
    """The ``sl`` key of a scenario's serverless choice."""
    if not s.serverless:
        return NONE
    try:
        sheet, offer = cat.prices.serverless(s.serverless.provider, s.serverless.model)
    except InputError:
        return offer_key(s.serverless.provider, s.serverless.model.lower())
    return offer_key(sheet.provider, offer.id)


def _dec(x: float) -> Decimal:
    return Decimal(repr(round(float(x), 9)))


def _price(x: float) -> Decimal:
    """A typed price to the 6 decimal places a price holds."""
    return Decimal(repr(round(float(x), 6)))


def page_monthly_turns(v: Mapping[str, Any]) -> int:
    """The month's turns the Traffic inputs say (volume per month, day, or user a day times the users)."""
    per = str(v.get("per") or "month")
    users = int(v.get("users") or 0)
    if per == "user" and not users:
        raise InputError(
            "Users", "a volume per user needs the number of users", "1 or more, or a volume per month or day"
        )
    return monthly_turns(float(v["vol"]), "user" if per == "user" else "day" if per == "day" else "month", users)


def state_to_scenario(base: Scenario, v: dict[str, Any], today: dt.date, cat: Catalogs | None = None) -> Scenario:
    """The base scenario (preset or upload) with the widget values laid over it; validated.

    The Advanced values are laid over too when present; the token factors need ``cat`` (to name the
    models they apply to), and a cache lifetime the chosen offer does not sell falls back to its shortest.
    """
    data = base.model_dump(mode="python")
    data["as_of"] = v.get("asof") or today
    data["currency"] = v["cur"]
    data["fx"].update(
        {rate_field(code): unquoted(code, _dec(v[key])) for code, key in FX_KEYS.items() if v.get(key) is not None}
    )
    data["workload"].update(
        input_tokens=int(v["in"]), prefix_share=_dec(v["pfx"]), hit_rate=_dec(v["hit"]), output_tokens=int(v["out"])
    )
    data["traffic"].update(
        turns_per_month=page_monthly_turns(v),
        users=int(v.get("users") or 0) or None,
        active_hours_per_day=float(v["hrs"]),
        peak_to_average=float(v["p2a"]),
    )
    hosting = data["self_hosting"]
    if (OWN_RECORD if v.get("own") else v["rec"]) != AUTO_RECORD:
        hosting["model"] = None  # a file's substitute model goes with auto; a record chosen here sizes its own
    elif v.get("h_model") is not None:  # auto: the serverless model, or the model chosen to stand in for it
        hosting["model"] = None if v["h_model"] == AUTO_RECORD else v["h_model"]
    hosting.update(
        record=OWN_RECORD if v.get("own") else v["rec"],
        target_utilisation=float(v["util"]),
        spare_replicas=int(v["spare"]),
        engineer_share=float(v["eng"]),
        engineer_monthly_cost=_dec(v["engcost"]),
        autoscale=bool(v["auto"]),
    )
    old_sl = data.get("serverless") or {}
    if v["sl"] == NONE:
        data["serverless"] = None
    else:
        provider, offer_id = split_key(v["sl"])
        data["serverless"] = {**old_sl, "provider": provider, "model": offer_id}
    for key, field in (("ded", "dedicated"), ("vm", "gpu_vm")):
        if v[key] == NONE:
            data[field] = None
        elif v[key] == CHEAPEST:
            data[field] = {"offer": CHEAPEST}
        else:
            provider, offer_id = split_key(v[key])
            data[field] = {"provider": provider, "offer": offer_id}
    _apply_advanced(data, v, today, cat)
    if v.get("op_sl") is not None:  # the page's own-price inputs (absent for values that predate them)
        data["own_prices"] = _own_prices(base, v)
    return Scenario.model_validate(data)


def _apply_advanced(data: dict[str, Any], v: dict[str, Any], today: dt.date, cat: Catalogs | None) -> None:
    work, hosting, sl = data["workload"], data["self_hosting"], data.get("serverless")
    if v.get("cws") is not None:
        work["cache_write_share"] = _dec(v["cws"])
    if v.get("batch") is not None:
        work["batch"] = bool(v["batch"])
    if v.get("ttl") is not None:
        ttl = None if v["ttl"] == SHORTEST else str(v["ttl"])
        if ttl and cat is not None:
            found = serverless_prices(cat, v["sl"], v.get("asof") or today)
            if found is None or ttl not in (found[0].cache_write or {}):
                ttl = None  # the offer does not sell it: its shortest, as the select shows
        work["cache_ttl"] = ttl
    if sl is not None:
        if v.get("npfx") is not None:
            sl["distinct_prefixes"] = int(v["npfx"])
        if v.get("hold") is not None:
            sl["prefix_hold_hours"] = float(v["hold"])
    for key, field, kind in (
        ("minr", "min_replicas", int),
        ("start", "startup_minutes", float),
        ("chg", "model_changes_per_month", float),
        ("build", "build_minutes_per_change", float),
    ):
        if v.get(key) is not None:
            hosting[field] = kind(v[key])
    if v.get("ttft") is not None or v.get("tps") is not None:
        ttft, tps = float(v.get("ttft") or 0), float(v.get("tps") or 0)
        hosting["latency_target"] = (
            {"percentile": v.get("pct") or "p95", "ttft_ms": ttft or None, "tokens_per_s_per_user": tps or None}
            if ttft or tps
            else None
        )
    if v.get("est") is not None:
        hosting["estimate"] = (
            {
                "model": v["e_model"],
                "precision": v["e_prec"],
                "gpus_per_replica": int(v["e_gpus"]),
                "max_batch": int(v["e_batch"]) or None,
                "attention": v.get("e_attn") or "tp",
            }
            if v["est"]
            else None
        )
    if cat is not None and (v.get("tf_sl") is not None or v.get("tf_gpu") is not None):
        factors = dict(data.get("token_factors") or {})
        sl_name, gpu_name = serverless_model(cat, v["sl"]), gpu_model(cat, v)
        pairs = [(sl_name, v.get("tf_sl")), (gpu_name, v.get("tf_gpu"))]
        if sl_name and gpu_name and canonical_model(sl_name) == canonical_model(gpu_name):
            # one model, one tokenizer: one factor (the serverless one unless only the GPU one was changed)
            sl_value = float(v.get("tf_sl") or 1)
            pairs = [(sl_name, sl_value if sl_value != 1 else v.get("tf_gpu"))]
        for name, value in pairs:
            if not name or value is None:
                continue
            wanted = canonical_model(name)
            factors = {k: f for k, f in factors.items() if canonical_model(k) != wanted}
            if float(value) != 1.0:
                factors[name] = _dec(value)
        data["token_factors"] = factors


def serverless_model_name(cat: Catalogs, s: Scenario) -> Scenario:
    """Write the serverless model as the sheet names it (``GLM-5.3``), so YAML downloads read well."""
    if not s.serverless:
        return s
    try:
        _, offer = cat.prices.serverless(s.serverless.provider, s.serverless.model)
    except InputError:
        return s
    return validated(s, serverless=validated(s.serverless, model=offer.model))


def own_record(cat: Catalogs, s: Scenario, rps: float, gpus: int) -> ThroughputRecord:
    """A throughput record from the user's own figures, measured at this scenario's shape."""
    gpu = "h100-sxm"
    if s.gpu_vm and not s.gpu_vm.cheapest:
        _, offer = cat.prices.offer(s.gpu_vm.provider, s.gpu_vm.offer, "gpu_vm")
        assert isinstance(offer, GpuVmOffer)
        gpu = offer.gpu
    elif s.dedicated and not s.dedicated.cheapest:
        _, d_offer = cat.prices.offer(s.dedicated.provider, s.dedicated.offer, "dedicated")
        assert isinstance(d_offer, DedicatedOffer)
        gpu = d_offer.gpu
    w = s.workload
    model = "your model"
    if s.serverless:
        with contextlib.suppress(InputError):
            model = cat.prices.serverless(s.serverless.provider, s.serverless.model)[1].model
    return ThroughputRecord(
        id=OWN_RECORD,
        model=model,
        params_total_b=70,
        params_active_b=70,
        precision="fp8",
        gpu=gpu,
        gpu_count=gpus,
        engine="your engine",
        engine_version="your measurement",
        input_tokens=max(float(w.input_tokens), 1.0),
        output_tokens=max(float(w.output_tokens), 1.0),
        prefix_share=float(w.prefix_share * w.hit_rate),
        requests_per_s=rps,
        source=Source(document="entered in the app (your own figures)", read=s.price_date),
    )


def link_date(raw: str | None) -> dt.date | None:
    """The price date a link gives (``asof``), when it is one the page takes."""
    try:
        day = dt.date.fromisoformat(raw or "")
    except ValueError:
        return None
    return day if DATE_MIN <= day <= DATE_MAX else None


def validate_params(params: dict[str, str], allowed: dict[str, list[str]], region_list: list[str]) -> list[str]:
    """Problems with values read from the URL, each naming the parameter; unknown parameters are ignored."""
    # a volume or token field takes any text and names what it cannot read itself, once
    numbers = {k: v for k, v in number_specs(params.get("per")).items() if k not in QUANTITIES}
    problems = check_params(params, numbers, allowed)
    for key, raw in params.items():
        if key in NUMBERS or key in allowed:
            continue
        if key in TOGGLES:
            if raw.lower() not in ("true", "false"):
                problems.append(f"URL parameter `{key}`: {echo(raw)} must be true or false")
        elif key == "asof":
            try:
                day = dt.date.fromisoformat(raw)
            except ValueError:
                problems.append(f"URL parameter `asof` (price date): {raw[:40]!r} is not a date like 2026-10-30")
            else:
                if not DATE_MIN <= day <= DATE_MAX:
                    problems.append(
                        f"URL parameter `asof` (price date): {day.isoformat()} is outside the dates the page takes "
                        f"({DATE_MIN.isoformat()} to {DATE_MAX.isoformat()}); the prices shown are those of the "
                        "date in the sidebar"
                    )
        elif key == "region" and raw not in region_list:
            problems.append(f"URL parameter `region`: {echo(raw)} is not one of: {', '.join(region_list)}")
        elif key in TEXTS and len(raw) > TEXTS[key][1]:
            label, limit = TEXTS[key]
            problems.append(f"URL parameter `{key}` ({label}): {len(raw):,} characters; at most {limit:,}")
    return problems


def offer_label(cat: Catalogs, key: str) -> str:
    """A readable label for an offer key, shown in the select boxes."""
    if key == NONE:
        return "(none)"
    if key == CHEAPEST:
        return "the cheapest configuration the deployment search finds (the Deploy page ranks them all)"
    provider, offer_id = split_key(key)
    for sheet, offer in cat.prices.offers():
        if sheet.provider == provider and offer.id == offer_id:
            region = f" · {offer.region}" if offer.region else ""
            if offer.retired is not None:  # the mark a retired offer is always shown with
                end = offer.retired
                verb = "RETIRED on" if end.date <= dt.date.today() else "retires on"
                region += f" · {verb} {end.date.isoformat()}"
                region += f" ({end.successor_text})" if end.successor_text else ""
            if isinstance(offer, ServerlessOffer):
                weights = "open weights" if offer.open_weights else "closed"
                return f"{sheet.name}: {offer.model}{region} · {weights}"
            assert isinstance(offer, DedicatedOffer | GpuVmOffer)
            count = offer.gpus_per_instance if isinstance(offer, GpuVmOffer) else offer.gpus_per_replica
            return f"{sheet.name}: {offer.id} ({count}x {offer.gpu}){region}"
    return key


# --- the Compare page's scenario, for every page that prices it -----------------------------------------


def compare_preset(session_state: Mapping[Any, Any], presets: Mapping[str, Scenario], wanted: str | None = None) -> str:
    """The Compare page's preset: the session's, else ``wanted`` (the URL's), else coding-agent or the first."""
    for name in (session_state.get("preset"), wanted):
        if name in presets:
            return str(name)
    return default_preset(presets)


def default_preset(presets: Mapping[str, Scenario]) -> str:
    return DEFAULT_PRESET if DEFAULT_PRESET in presets else next(iter(presets))


def compare_defaults(
    cat: Catalogs, presets: Mapping[str, Scenario], preset: str, currency: str | None = None
) -> dict[str, Any]:
    """The Compare page's widget defaults for a preset; an offer or record the sheets lack falls back to
    the first choice (none for offers). Shown in ``currency``, the preset's engineer cost is converted into it
    (a link with only ``cur=JPY`` prices the engineer as the command line's ``--currency JPY`` does)."""
    allowed = choices(cat, list(presets))
    defaults = scenario_to_state(presets[preset], cat)
    if currency in CODES and currency != defaults["cur"]:
        defaults["engcost"] = converted_engineer_cost(defaults, defaults["cur"], str(currency))
    for key in ("sl", "ded", "vm", "rec"):
        if defaults[key] not in allowed[key]:
            defaults[key] = allowed[key][0]
    return defaults


def compare_values(
    session_state: Mapping[Any, Any], cat: Catalogs, presets: Mapping[str, Scenario], today: dt.date
) -> tuple[str, dict[str, Any]]:
    """(preset, input values) of the Compare page now: the session's values over the preset's defaults."""
    preset = compare_preset(session_state, presets)
    defaults = compare_defaults(cat, presets, preset, session_state.get("cur"))
    values = {k: session_state.get(k, defaults.get(k)) for k in (*defaults, "own", "own_rps", "own_gpus")}
    for key in HIDDEN:
        if values[key] is None:
            values[key] = defaults[key]
    values["own"], values["auto"] = bool(values["own"]), bool(values["auto"])
    values["own_rps"] = values["own_rps"] or 2.0
    values["own_gpus"] = values["own_gpus"] or 1
    for key in QUANTITIES:
        values[key] = read_typed(key, values[key], str(values.get("per") or "month"))
    # the page sets the date before it prices; an emptied date input means today
    asof = session_state["asof"] if "asof" in session_state else presets[preset].as_of
    values["asof"] = asof or today
    return preset, values


def session_evidence(session_state: Mapping[Any, Any], base: Scenario | None = None) -> Evidence:
    """The evidence the session's scenario holds (that of ``base``, a file or preset, until the session sets it)."""
    found = session_state.get(EVIDENCE)
    if isinstance(found, Evidence):
        return found
    return base.evidence if base is not None else Evidence()


def preset_evidence(evidence: Evidence) -> Evidence:
    """What a preset keeps of the session's evidence: a preset replaces the workload and the traffic (so a
    prefix analysis and a load profile kept for them go), while the user's own measurement records stay."""
    return Evidence(records=evidence.records)


def _text(session_state: Mapping[Any, Any], key: str, limit: int) -> str | None:
    """A text input's value (stripped, cut to ``limit``), or None while the session has not set it."""
    value = session_state.get(key)
    return None if value is None else str(value).strip()[:limit]


def current_compare_scenario(
    session_state: Mapping[Any, Any], cat: Catalogs, presets: Mapping[str, Scenario], today: dt.date
) -> tuple[Scenario, Catalogs]:
    """The scenario the Compare page prices now, and the catalogs it prices it with (the scenario's own
    measurement records and, when chosen, the user's own throughput figures added). The one place that rule
    lives: the Compare page and every page that shows "the Compare page's scenario" call it.

    The base is a scenario file opened on the Compare page (or a link's), else its preset; the session's
    name, description and evidence and the page's inputs (the Advanced ones and the token factors included)
    are laid over it. Raises ``ValidationError`` for inputs the scenario does not allow, and
    :class:`InputError` naming :data:`OWN_FIGURES` for unusable own figures.
    """
    preset, values = compare_values(session_state, cat, presets, today)
    uploaded: Scenario | None = session_state.get("uploaded")
    base: Scenario = uploaded or presets[preset]
    typed_name, desc = _text(session_state, "name", NAME_MAX), _text(session_state, "desc", DESC_MAX)
    base = validated(
        base,
        name=typed_name or base.name,
        description=base.description if desc is None else desc or None,
        evidence=session_evidence(session_state, base),
    )
    cat = with_own_records(cat, base)
    scenario = serverless_model_name(cat, state_to_scenario(base, values, today, cat))
    if uploaded is None:  # a preset's name and description stand only while its inputs are unchanged
        unchanged = {"preset": preset, "asof": values["asof"], "cur": values["cur"]}
        baseline = compare_values(unchanged, cat, presets, today)[1]
        baseline_scenario = serverless_model_name(cat, state_to_scenario(presets[preset], baseline, today, cat))
        scenario = followed(presets[preset], scenario, name=typed_name, description=desc, baseline=baseline_scenario)
    if not values["own"]:
        return scenario, cat
    try:
        record = own_record(cat, scenario, float(values["own_rps"]), int(values["own_gpus"]))
    except (InputError, ValidationError) as exc:
        raise InputError(OWN_FIGURES, str(exc)) from exc
    records = RecordCatalog(records=(*cat.records.records, record))
    return scenario, Catalogs(cat.prices, cat.gpus, records, cat.models)


def shareable(scenario: Scenario, cat: Catalogs) -> Scenario:
    """The scenario as a file or link carries it: the user's own throughput figures, when they size the GPU
    options, kept as a record of its evidence (so the file reopens with them)."""
    if scenario.self_hosting.record != OWN_RECORD or scenario.self_hosting.estimate is not None:
        return scenario
    if any(r.id == OWN_RECORD for r in scenario.evidence.records):
        return scenario
    try:
        record = cat.records.get(OWN_RECORD)
    except ValueError:
        return scenario
    return with_evidence_records(scenario, (record,), None)


def set_compare_state(
    session_state: MutableMapping[Any, Any],
    values: Mapping[str, object],
    allowed: Mapping[str, list[str]],
    today: dt.date,
) -> None:
    """Set the Compare page's inputs to ``values``: a choice not allowed is skipped, a number is clamped."""
    for key, value in values.items():
        if key == "asof":
            value = value or today
        if key in allowed and value not in allowed[key]:
            continue
        spec = number_specs(str(values.get("per") or "month")).get(key)
        if spec is not None and isinstance(value, int | float) and not isinstance(value, bool):
            value = spec.kind(min(max(value, spec.min), spec.max))
            if key in QUANTITIES:  # a text field: it holds the number as digits
                value = plain(value)
        session_state[key] = value


def adopt_scenario(
    session_state: MutableMapping[Any, Any],
    scenario: Scenario,
    cat: Catalogs,
    presets: Mapping[str, Scenario],
    today: dt.date,
) -> list[str]:
    """Make ``scenario`` (a file or a link opened) the session's: the Compare page's inputs, name, description
    and evidence. Returns the problems (each naming the field) and changes nothing when there are any: a
    value the page's inputs cannot take is one of them, never silently changed."""
    own = next((r for r in scenario.evidence.records if r.id == OWN_RECORD), None)
    evidence = scenario.evidence
    if own is not None:  # the own figures travel as a record; the page keeps them as its two inputs
        evidence = validated(evidence, records=tuple(r for r in evidence.records if r.id != OWN_RECORD))
    allowed = choices(cat, list(presets), evidence)
    values = scenario_to_state(scenario, with_own_records(cat, scenario))
    fields = (("sl", "serverless"), ("ded", "dedicated"), ("vm", "gpu_vm"), ("rec", "self_hosting.record"))
    missing = [
        f"{field}: {values[key]!r} is not in the price sheets"
        for key, field in fields
        if values[key] not in allowed[key] and not (key == "rec" and own is not None)
    ]
    own_values = {} if own is None else {"own_rps": own.requests_per_s, "own_gpus": own.gpu_count or 1}
    missing += out_of_range({**values, **own_values})
    if missing:
        return missing
    session_state["uploaded"] = validated(scenario, evidence=evidence)
    set_compare_state(session_state, {**values, "own": own is not None}, allowed, today)
    if own is not None:
        set_compare_state(session_state, own_values, allowed, today)
    session_state[EVIDENCE] = evidence
    session_state["name"] = scenario.name[:NAME_MAX]
    session_state["desc"] = (scenario.description or "")[:DESC_MAX]
    return []


def add_records(
    session_state: MutableMapping[Any, Any],
    presets: Mapping[str, Scenario],
    records: tuple[ThroughputRecord, ...],
    size_from: str | None,
) -> Evidence:
    """Keep ``records`` in the session scenario's evidence (one with the same id is replaced); with
    ``size_from``, the Compare page sizes its GPU options from that record (not an estimate, not own figures)."""
    base: Scenario = session_state.get("uploaded") or presets[compare_preset(session_state, presets)]
    holding = validated(base, evidence=session_evidence(session_state, base))
    evidence = with_evidence_records(holding, records, None).evidence
    session_state[EVIDENCE] = evidence
    if size_from is not None:
        session_state["rec"] = size_from
        session_state["own"] = False
        session_state["est"] = False
    return evidence


def remove_records(session_state: MutableMapping[Any, Any], cat: Catalogs, presets: Mapping[str, Scenario]) -> None:
    """Drop the user's records from the session scenario; a Compare page sized from one goes back to its
    preset's record."""
    evidence = session_evidence(session_state, session_state.get("uploaded"))
    ids = {r.id for r in evidence.records}
    session_state[EVIDENCE] = validated(evidence, records=())
    if session_state.get("rec") in ids:
        preset = compare_preset(session_state, presets)
        session_state["rec"] = compare_defaults(cat, presets, preset)["rec"]


def set_evidence(session_state: MutableMapping[Any, Any], **update: object) -> Evidence:
    """Replace parts of the session scenario's evidence (``prefix=...``, ``load_profile=...``), checked (raises
    ``ValidationError``)."""
    evidence = validated(session_evidence(session_state, session_state.get("uploaded")), **update)
    session_state[EVIDENCE] = evidence
    return evidence


# --- the session scenario in a link -----------------------------------------------------------------------


def read_links(
    session_state: MutableMapping[Any, Any],
    params: Mapping[str, str],
    cat: Catalogs,
    presets: Mapping[str, Scenario],
    today: dt.date,
) -> list[str]:
    """Adopt a scenario (``sc``) or evidence (``ev``) a link carries, when this session did not write it
    itself (a link opened, not the page's own address). Returns the problems, each naming its parameter."""
    written: dict[str, str] = session_state.setdefault(_WRITTEN, {})
    problems: list[str] = []
    raw = params.get(SC)
    if raw and written.get(SC) != raw:
        written[SC] = raw
        try:
            scenario = _link.decode(raw, Scenario, SC, LINK_LABELS[SC])
        except _link.LinkError as exc:
            problems.append(str(exc))
        else:
            where = f"URL parameter `{SC}` ({LINK_LABELS[SC]})"
            problems += [f"{where}: {p}" for p in adopt_scenario(session_state, scenario, cat, presets, today)]
    raw = params.get(EV)
    if raw and written.get(EV) != raw:
        written[EV] = raw
        try:
            session_state[EVIDENCE] = _link.decode(raw, Evidence, EV, LINK_LABELS[EV])
        except _link.LinkError as exc:
            problems.append(str(exc))
    return problems


def write_link(
    session_state: MutableMapping[Any, Any], params: MutableMapping[str, str], key: str, model: BaseModel | None
) -> str | None:
    """Put ``model`` in the link as ``key`` (None: take it out). Returns a sentence when it is too large for a
    link, and then leaves it out: the scenario file carries it."""
    written: dict[str, str] = session_state.setdefault(_WRITTEN, {})
    encoded = None if model is None else _link.encode(model)
    if encoded is None or not _link.fits(encoded):
        if key in params:
            del params[key]
        written.pop(key, None)
        if encoded is None:
            return None
        return (
            f"This {LINK_LABELS[key]} is too large for a link ({len(encoded):,} characters packed; a link carries "
            f"{_link.MAX_CHARS:,}), so the address bar leaves it out: share the scenario file (YAML, on the Compare "
            "page) instead."
        )
    if params.get(key) != encoded:
        params[key] = encoded
    written[key] = encoded
    return None


# --- what other pages take from the scenario ------------------------------------------------------------


def capacity_defaults(scenario: Scenario, cat: Catalogs) -> dict[str, str | int]:
    """The Capacity page's inputs for the setup the scenario sizes: the estimate's or the sizing record's
    model, precision and GPUs per replica, the GPU of its GPU offer, and a turn's context (input + output)."""
    found: dict[str, str | int] = {
        "c_ctx": max(int(scenario.workload.input_tokens + scenario.workload.output_tokens), 1)
    }
    h = scenario.self_hosting
    # a GPU option sized from its own setup (what 'cheapest' picked) is the one the Capacity page starts from
    pinned = next(
        (c for c in (scenario.gpu_vm, scenario.dedicated) if c is not None and (c.estimate or c.record)), None
    )
    if pinned is not None:
        h = h.model_copy(update={"estimate": pinned.estimate, "record": pinned.record or h.record})
    gpu: str | None = None
    auto = h.record == AUTO_RECORD and h.estimate is None
    side = None
    if auto:  # what record: auto sizes: the serverless model's measurement or estimate on the offer's GPU
        with contextlib.suppress(InputError, ValueError):
            resolved = resolve(scenario, cat, drop_unpriceable=True)
            side = resolved.self_hosted or resolved.dedicated
    setup = h.estimate or (side.setup if side is not None else None)
    if setup is not None:
        found.update(c_model=setup.model, c_prec=setup.precision.lower(), c_n=setup.gpus_per_replica)
    else:
        try:
            hosted = scenario.model_copy(update={"self_hosting": h})
            record = side.record if side is not None else None if auto else sizing_record(hosted, cat)
        except (InputError, ValueError):
            record = None
        if record is not None:
            spec = cat.models.find(record.model) if record.model else None
            if spec is not None:
                found["c_model"] = spec.id
            if record.precision and record.precision.lower() in WEIGHT_BYTES:
                found["c_prec"] = record.precision.lower()
            if record.gpu_count:
                found["c_n"] = record.gpu_count
            gpu = record.gpu
    for choice, kind in ((scenario.gpu_vm, "gpu_vm"), (scenario.dedicated, "dedicated")):
        if choice is None:
            continue
        with contextlib.suppress(InputError, ValueError):
            _, offer = cat.prices.offer(choice.provider, choice.offer, kind)
            assert isinstance(offer, GpuVmOffer | DedicatedOffer)
            gpu = offer.gpu
            break
    if gpu is not None:
        found["c_gpu"] = gpu
    return found
