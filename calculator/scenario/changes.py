"""What a scenario changed from the preset it was started from, and the name and description that follow.

A preset's name and description speak of its inputs ("An agent loop on GLM-5.3 ... 200 developers"), so they
stand only while those inputs are unchanged. Once one changes, the scenario is named as started from the
preset and its description says what changed (each change with the preset's value beside it), unless the user
gave a name or a description of their own: theirs stands. The page's heading, its link, the scenario file
(and its file name, :func:`slug`) and the PDF all read the name and description this gives.

Presentation is not a change of the scenario: the currency it is shown in, the exchange rates, the price date
and the prices a file was saved with leave the preset's words true.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from calculator.catalog.limits import DESCRIPTION_LENGTH, NAME_LENGTH, shown
from calculator.scenario.model import CHEAPEST, Scenario, in_currency

__all__ = ["PRESENTATION", "STARTED_FROM", "changes", "changes_sentence", "followed", "slug", "started_from"]

PRESENTATION = frozenset({"schema_version", "name", "description", "as_of", "currency", "fx", "prices_used"})
"""Scenario fields that change how it is shown, not what it is."""
STARTED_FROM = "Started from"
"""How the name of a changed preset begins."""

_WORKLOAD = {
    "input_tokens": ("input tokens a turn", "tokens"),
    "output_tokens": ("output tokens a turn", "tokens"),
    "prefix_share": ("prefix share", "share"),
    "hit_rate": ("cache hit rate", "share"),
    "cache_write_share": ("cache write share", "share"),
    "cache_ttl": ("cache lifetime", "text"),
    "batch": ("batch requests", "bool"),
}
_TRAFFIC = {
    "turns_per_month": ("turns a month", "tokens"),
    "users": ("users", "users"),
    "active_hours_per_day": ("active hours a day", "number"),
    "peak_to_average": ("peak-to-average", "number"),
}
_HOSTING = {
    "record": ("GPU options sized from", "text"),
    "model": ("GPU options' model", "text"),
    "target_utilisation": ("utilisation target", "number"),
    "spare_replicas": ("spare replicas", "number"),
    "autoscale": ("autoscaling outside active hours", "bool"),
    "min_replicas": ("minimum replicas when autoscaling", "number"),
    "startup_minutes": ("start-up minutes", "number"),
    "engineer_monthly_cost": ("engineer monthly cost", "number"),
    "engineer_share": ("engineer share", "number"),
    "model_changes_per_month": ("model changes a month", "number"),
    "build_minutes_per_change": ("build minutes per change", "number"),
    "latency_target": ("latency target", "target"),
    "estimate": ("roofline estimate", "estimate"),
}


def _value(value: Any, kind: str) -> str:
    if value is None:
        return {"users": "not counted", "target": "none", "estimate": "none"}.get(kind, "none")
    if kind == "bool":
        return "on" if value else "off"
    if kind == "tokens":
        return f"{int(value):,}"
    if kind == "users":
        return f"{int(value):,}" if value else "not counted"
    if kind in ("share", "number"):
        return f"{float(value):,.6g}"
    if kind == "target":
        parts = [f"TTFT at most {shown(value['ttft_ms'])} ms" if value.get("ttft_ms") else ""]
        parts.append(
            f"{shown(value['tokens_per_s_per_user'])} tokens/s per user" if value.get("tokens_per_s_per_user") else ""
        )
        return f"{value.get('percentile', 'p95')} " + " and ".join(p for p in parts if p)
    if kind == "estimate":
        return f"{value['model']} {str(value['precision']).upper()} on {value['gpus_per_replica']} GPU(s)"
    return str(value)


def _fields(labels: dict[str, tuple[str, str]], was: dict[str, Any], now: dict[str, Any]) -> list[str]:
    out = []
    for key, (label, kind) in labels.items():
        if was.get(key) != now.get(key):
            out.append(f"{label} {_value(now.get(key), kind)} (was {_value(was.get(key), kind)})")
    return out


def _offer(data: dict[str, Any] | None, what: str) -> str:
    if data is None:
        return "none"
    if what == "serverless":
        return f"{data['provider']} {data['model']}"
    if data["offer"] == CHEAPEST:
        return "the cheapest the deployment search finds"
    return f"{data['provider']} {data['offer']}"


def _evidence(data: dict[str, Any]) -> str:
    parts = []
    if data.get("records"):
        parts.append(f"{len(data['records'])} measurement record(s)")
    if data.get("prefix"):
        parts.append(f"a prefix analysis of {data['prefix']['source']}")
    if data.get("load_profile"):
        parts.append(f"the load profile {data['load_profile']['name']}")
    return ", ".join(parts) or "none"


def changes(preset: Scenario, scenario: Scenario) -> list[str]:
    """What ``scenario`` changed from ``preset``, one phrase each, the preset's value beside it
    ("3,000 input tokens a turn (was 20,000)"); empty when only the presentation differs (:data:`PRESENTATION`).

    Amounts are compared in ``scenario``'s currency (the preset's engineer cost converted at its rates)."""
    was = in_currency(preset, scenario.currency).model_dump(mode="python", exclude=set(PRESENTATION))
    now = scenario.model_dump(mode="python", exclude=set(PRESENTATION))
    out: list[str] = []
    for what, label in (
        ("serverless", "serverless API"),
        ("dedicated", "dedicated endpoint"),
        ("gpu_vm", "GPU machines"),
    ):
        before, after = was.get(what), now.get(what)
        if before == after:
            continue
        if _offer(before, what) != _offer(after, what):
            out.append(f"{label} {_offer(after, what)} (was {_offer(before, what)})")
        else:
            out.append(f"{label}: how {_offer(after, what)} is set up")
    out += _fields(_WORKLOAD, was["workload"], now["workload"])
    out += _fields(_TRAFFIC, was["traffic"], now["traffic"])
    out += _fields(_HOSTING, was["self_hosting"], now["self_hosting"])
    if was["token_factors"] != now["token_factors"]:
        factors = ", ".join(f"{k} {shown(v)}" for k, v in now["token_factors"].items()) or "none"
        out.append(f"token factors {factors}")
    if was["own_prices"] != now["own_prices"]:
        own = now["own_prices"]
        out.append(f"your own prices ({own['name']})" if own else "the listed prices (no own prices)")
    if was["evidence"] != now["evidence"]:
        out.append(f"your evidence: {_evidence(now['evidence'])}")
    return out


def started_from(preset: Scenario) -> str:
    """The name of a scenario changed from ``preset``: "Started from Coding agent (the seed's turn)"."""
    return f"{STARTED_FROM} {preset.name}"[:NAME_LENGTH]


def changes_sentence(preset: Scenario, changed: list[str]) -> str:
    """The description of a changed preset: where it started and what changed."""
    text = f"Started from the preset {preset.name!r}, changed: " + "; ".join(changed) + "."
    return text if len(text) <= DESCRIPTION_LENGTH else text[: DESCRIPTION_LENGTH - 1] + "…"


def followed(
    preset: Scenario,
    scenario: Scenario,
    *,
    name: str | None = None,
    description: str | None = None,
    baseline: Scenario | None = None,
) -> Scenario:
    """``scenario`` (started from ``preset``) with the name and description that say what it is.

    ``name`` and ``description`` are what the user typed (None, empty or the preset's own: not typed);
    ``baseline`` is the preset as the inputs hold it unchanged (the page's reading of it), ``preset`` when
    absent. A typed name or description stands; otherwise the preset's, while nothing changed
    (:func:`changes`), else :func:`started_from` and :func:`changes_sentence`. An empty description typed
    over the preset's means none."""
    own_name = name.strip() if name and name.strip() and name.strip() != preset.name else None
    own_desc = description.strip() if description is not None else None
    if own_desc is not None and own_desc == (preset.description or "").strip():
        own_desc = None
    changed = changes(baseline or preset, scenario)
    new_desc: str | None
    if changed:
        new_name = own_name or started_from(preset)
        new_desc = own_desc if own_desc is not None else changes_sentence(preset, changed)
    else:
        new_name = own_name or preset.name
        new_desc = own_desc if own_desc is not None else preset.description
    return scenario.model_copy(update={"name": new_name[:NAME_LENGTH], "description": new_desc or None})


def slug(name: str) -> str:
    """A file name for a scenario's name: "Acme Corp: support bot" -> ``acme-corp-support-bot`` (ASCII letters
    and digits joined by ``-``, at most 80 characters; ``scenario`` when nothing is left)."""
    ascii_only = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    words = re.sub(r"['’`]", "", ascii_only.lower())
    text = re.sub(r"[^a-z0-9]+", "-", words).strip("-")
    return text[:80].rstrip("-") or "scenario"
