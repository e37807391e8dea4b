"""The Compare page's inputs: one stable key per scalar (also its URL parameter), and the mapping
between those values and a :class:`calculator.scenario.Scenario`.

No streamlit import: the page reads and writes ``st.session_state`` with these functions, and the
tests use them directly. Keys are short because they appear in shared links.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from calculator.compare import Catalogs
from calculator.deploy import DAYS_PER_MONTH
from calculator.errors import InputError
from calculator.measurements import ThroughputRecord
from calculator.prices import DedicatedOffer, GpuVmOffer, ServerlessOffer, Source
from calculator.scenario import Scenario

NONE = "none"
OWN_RECORD = "own-figures"
"""Record id used for the user's own throughput figures."""


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
            0,
            10_000_000,
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
            0,
            1_000_000,
            100,
            "Tokens the model writes, reasoning tokens included (billed as output).",
        ),
        NumberSpec(
            "vol",
            "Turns",
            int,
            0,
            100_000_000_000,
            10_000,
            "How many requests the feature sends, per month or per day (see the switch above).",
        ),
        NumberSpec(
            "hrs",
            "Active hours per day",
            float,
            0.5,
            24.0,
            1.0,
            "Hours a day the traffic arrives in; 24 for round-the-clock use.",
            "%.1f",
        ),
        NumberSpec(
            "p2a",
            "Peak-to-average",
            float,
            1.0,
            100.0,
            0.5,
            "Peak request rate over the average rate within the active hours; GPUs are sized for the peak.",
            "%.1f",
        ),
        NumberSpec(
            "util",
            "Utilisation target",
            float,
            0.05,
            1.0,
            0.05,
            "Share of a replica's measured capacity you plan to use at peak (headroom for latency).",
            "%.2f",
        ),
        NumberSpec(
            "spare", "Spare replicas", int, 0, 100, 1, "Extra replicas kept for failures and bursts (self-hosted only)."
        ),
        NumberSpec(
            "eng",
            "Engineer share",
            float,
            0.0,
            5.0,
            0.05,
            "Share of a platform engineer's time running the stack (0.25 = a quarter).",
            "%.2f",
        ),
        NumberSpec(
            "engcost",
            "Engineer monthly cost",
            float,
            0.0,
            1_000_000.0,
            500.0,
            "Fully loaded monthly cost of one platform engineer, in the chosen currency.",
            "%.0f",
        ),
        NumberSpec(
            "fx",
            "USD per EUR",
            float,
            0.01,
            10.0,
            0.01,
            "Exchange rate used where sheets and the chosen currency differ.",
            "%.4f",
        ),
        NumberSpec(
            "own_rps",
            "Requests/s per replica",
            float,
            0.001,
            100_000.0,
            0.1,
            "What one replica of your engine sustained at your latency target, for this turn's shape.",
            "%.3f",
        ),
        NumberSpec("own_gpus", "GPUs per replica", int, 1, 64, 1, "GPUs in one replica (tensor parallel size)."),
    )
}
TOGGLES = ("auto", "own")
CHOICES_FIXED = {
    "cur": ("USD", "EUR"),
    "per": ("month", "day"),
    "weights": ("all", "open", "closed"),
    "sweep": ("prefix share", "hit rate"),
}


def offer_key(provider: str, offer_id: str) -> str:
    return f"{provider}/{offer_id}"


def split_key(value: str) -> tuple[str, str]:
    provider, _, offer_id = value.partition("/")
    return provider, offer_id


def choices(cat: Catalogs, presets: list[str]) -> dict[str, list[str]]:
    """Allowed values of every select-type input (before the region and weights filters)."""
    sl = [offer_key(s.provider, o.id) for s, o in cat.prices.offers("serverless")]
    ded = [offer_key(s.provider, o.id) for s, o in cat.prices.offers("dedicated")]
    vm = [offer_key(s.provider, o.id) for s, o in cat.prices.offers("gpu_vm")]
    return {
        "preset": presets,
        "sl": [NONE, *sl],
        "ded": [NONE, *ded],
        "vm": [NONE, *vm],
        "rec": [*cat.records.ids, OWN_RECORD] if cat.records.ids else [OWN_RECORD],
        **{k: list(v) for k, v in CHOICES_FIXED.items()},
    }


def regions(cat: Catalogs) -> list[str]:
    return sorted({o.region for _, o in cat.prices.offers() if o.region})


def scenario_to_state(s: Scenario, cat: Catalogs) -> dict[str, Any]:
    """Widget values for a scenario (the inverse of :func:`state_to_scenario` for these fields)."""
    sl = NONE
    if s.serverless:
        try:
            sheet, offer = cat.prices.serverless(s.serverless.provider, s.serverless.model)
            sl = offer_key(sheet.provider, offer.id)
        except InputError:
            sl = offer_key(s.serverless.provider, s.serverless.model.lower())
    return {
        "sl": sl,
        "ded": offer_key(s.dedicated.provider, s.dedicated.offer) if s.dedicated else NONE,
        "vm": offer_key(s.gpu_vm.provider, s.gpu_vm.offer) if s.gpu_vm else NONE,
        "rec": s.self_hosting.record,
        "cur": s.currency,
        "fx": float(s.fx.usd_per_eur),
        "asof": s.as_of,
        "in": int(s.workload.input_tokens),
        "pfx": float(s.workload.prefix_share),
        "hit": float(s.workload.hit_rate),
        "out": int(s.workload.output_tokens),
        "vol": int(s.traffic.turns_per_month),
        "per": "month",
        "hrs": float(s.traffic.active_hours_per_day),
        "p2a": float(s.traffic.peak_to_average),
        "util": float(s.self_hosting.target_utilisation),
        "spare": int(s.self_hosting.spare_replicas),
        "eng": float(s.self_hosting.engineer_share),
        "engcost": float(s.self_hosting.engineer_monthly_cost),
        "auto": bool(s.self_hosting.autoscale),
    }


def _dec(x: float) -> Decimal:
    return Decimal(repr(round(float(x), 9)))


def monthly_turns(vol: float, per: str) -> int:
    return int(round(vol * DAYS_PER_MONTH)) if per == "day" else int(vol)


def state_to_scenario(base: Scenario, v: dict[str, Any], today: dt.date) -> Scenario:
    """The base scenario (preset or upload) with the widget values laid over it; validated."""
    data = base.model_dump(mode="python")
    data["as_of"] = v.get("asof") or today
    data["currency"] = v["cur"]
    data["fx"] = {"usd_per_eur": _dec(v["fx"])}
    data["workload"].update(
        input_tokens=int(v["in"]), prefix_share=_dec(v["pfx"]), hit_rate=_dec(v["hit"]), output_tokens=int(v["out"])
    )
    data["traffic"].update(
        turns_per_month=monthly_turns(v["vol"], v["per"]),
        active_hours_per_day=float(v["hrs"]),
        peak_to_average=float(v["p2a"]),
    )
    hosting = data["self_hosting"]
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
        else:
            provider, offer_id = split_key(v[key])
            data[field] = {"provider": provider, "offer": offer_id}
    return Scenario.model_validate(data)


def serverless_model_name(cat: Catalogs, s: Scenario) -> Scenario:
    """Write the serverless model as the sheet names it (``GLM-5.3``), so YAML downloads read well."""
    if not s.serverless:
        return s
    try:
        _, offer = cat.prices.serverless(s.serverless.provider, s.serverless.model)
    except InputError:
        return s
    return s.model_copy(update={"serverless": s.serverless.model_copy(update={"model": offer.model})})


def own_record(cat: Catalogs, s: Scenario, rps: float, gpus: int) -> ThroughputRecord:
    """A throughput record from the user's own figures, measured at this scenario's shape."""
    gpu = "h100-sxm"
    if s.gpu_vm:
        _, offer = cat.prices.offer(s.gpu_vm.provider, s.gpu_vm.offer, "gpu_vm")
        assert isinstance(offer, GpuVmOffer)
        gpu = offer.gpu
    elif s.dedicated:
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


def validate_params(params: dict[str, str], allowed: dict[str, list[str]], region_list: list[str]) -> list[str]:
    """Problems with values read from the URL, each naming the parameter; unknown parameters are ignored."""
    problems: list[str] = []
    for key, raw in params.items():
        if key in NUMBERS:
            spec = NUMBERS[key]
            try:
                value = float(raw)
            except ValueError:
                problems.append(f"URL parameter `{key}` ({spec.label}): {raw!r} is not a number")
                continue
            if spec.kind is int and value != int(value):
                problems.append(f"URL parameter `{key}` ({spec.label}): {raw!r} must be a whole number")
            elif not spec.min <= value <= spec.max:
                problems.append(
                    f"URL parameter `{key}` ({spec.label}): {raw!r} is outside {spec.min:g} to {spec.max:g}"
                )
        elif key in allowed:
            if raw not in allowed[key]:
                shown = ", ".join(allowed[key][:8]) + (" ..." if len(allowed[key]) > 8 else "")
                problems.append(f"URL parameter `{key}`: {raw!r} is not one of: {shown}")
        elif key in TOGGLES:
            if raw.lower() not in ("true", "false"):
                problems.append(f"URL parameter `{key}`: {raw!r} must be true or false")
        elif key == "asof":
            try:
                dt.date.fromisoformat(raw)
            except ValueError:
                problems.append(f"URL parameter `asof` (price date): {raw!r} is not a date like 2026-10-30")
        elif key == "region" and raw not in region_list:
            problems.append(f"URL parameter `region`: {raw!r} is not one of: {', '.join(region_list)}")
    return problems


def offer_label(cat: Catalogs, key: str) -> str:
    """A readable label for an offer key, shown in the select boxes."""
    if key == NONE:
        return "(none)"
    provider, offer_id = split_key(key)
    for sheet, offer in cat.prices.offers():
        if sheet.provider == provider and offer.id == offer_id:
            region = f" · {offer.region}" if offer.region else ""
            if isinstance(offer, ServerlessOffer):
                weights = "open weights" if offer.open_weights else "closed"
                return f"{sheet.name}: {offer.model}{region} · {weights}"
            assert isinstance(offer, DedicatedOffer | GpuVmOffer)
            count = offer.gpus_per_instance if isinstance(offer, GpuVmOffer) else offer.gpus_per_replica
            return f"{sheet.name}: {offer.id} ({count}x {offer.gpu}){region}"
    return key
