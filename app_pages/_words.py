"""How the app says a core problem: the field as the label the page shows, the core's sentence, and what
to do about it on these pages.

The core names a field by what it is (``load_profile.burst``, ``self_hosting.estimate``) and names no flag
and no sidebar label; each front end says it in its own words. This module is the app's one table between
the two (the command line's is :mod:`calculator.cli.words`), so no page rewrites a core sentence and no
page shows a field's internal name. A core sentence that can only be said with a scenario file's keys or
a flag carries a stable ``code``; the app says that one in its own words here.
"""

from __future__ import annotations

from pydantic import ValidationError

from calculator.errors import InputError, Problem

FIELDS: dict[str, str] = {
    # the scenario, as the Compare page's sidebar sets it
    "scenario": "Scenario",
    "evidence": "Your evidence",
    "preset": "Preset",
    "record": "Throughput record",
    "as_of": "Price date",
    "prices_used": "Saved prices",
    "workload.input_tokens": "Input tokens per turn",
    "workload.prefix_share": "Prefix share",
    "workload.hit_rate": "Cache hit rate",
    "workload.output_tokens": "Output tokens per turn",
    "workload.cache_write_share": "Cache write share",
    "workload.cache_ttl": "Cache lifetime (TTL)",
    "traffic.turns_per_month": "Turns",
    "traffic.peak_to_average": "Peak-to-average",
    "traffic.active_hours_per_day": "Active hours per day",
    "self_hosting.target_utilisation": "Utilisation target",
    "self_hosting.spare_replicas": "Spare replicas",
    "self_hosting.engineer_share": "Engineer share",
    "self_hosting.build_minutes_per_change": "Build minutes per change",
    "self_hosting.record": "Throughput record",
    "self_hosting.model": "Model the GPU options run",
    "self_hosting.estimate": "Roofline estimate of the GPU options",
    "self_hosting.latency_target": "Latency target",
    "fx.usd_per_eur": "USD per EUR",
    "fx.usd_per_gbp": "USD per GBP",
    "fx.usd_per_jpy": "USD per JPY",
    "fx.usd_per_inr": "USD per INR",
    "price_list.source": "Price list",
    "price_list.read_on": "Date the price list was read",
    "currency": "Currency",
    "traffic.users": "Users (seats)",
    "serverless.provider": "Serverless API",
    "serverless.model": "Serverless API",
    "dedicated.provider": "Dedicated endpoint",
    "dedicated.offer": "Dedicated endpoint",
    "gpu_vm.provider": "GPU virtual machine (self-hosted)",
    "gpu_vm.offer": "GPU virtual machine (self-hosted)",
    # offers, models and GPUs (Capacity, Price sheets)
    "provider": "Provider",
    "model": "Model",
    "offer": "Offer",
    "gpu": "GPU",
    "gpus": "GPUs",
    "cached_share": "Cached share of the input",
    "latency": "Latency target",
    "load": "Load",
    "concurrency": "Requests in flight",
    "family": "Estimate family",
    "max_batch": "Max batch",
    "estimator": "Estimator",
    "error_bands": "Stored error bands",
    "latency_percentile": "Latency percentile",
    "arrivals": "Arrival times",
    "hourly_rates": "Requests per hour",
    "input_lengths": "Prompt lengths",
    "kv_budget_tokens": "KV cache (tokens)",
    "max_context": "Longest context",
    "rate": "Request rate",
    "requests": "Requests simulated",
    "context": "Context per sequence",
    "precision": "Precision",
    "kv_dtype_bytes": "KV cache precision",
    "utilisation": "Memory utilisation",
    "engine": "Engine",
    "attention": "Attention layout",
    "log": "Engine log",
    "cache_ttl": "Cache lifetime (TTL)",
    "genai-prices": "Price sheet",
    # Plan
    "load_profile": "Request log",
    "load_profile.burst": "Within-hour burst",
    "load_profile.bucket_seconds": "Burst window",
    "hybrid.percentile": "Owned share of the day's hours",
    "growth.months": "Months",
    "growth.growth_per_month": "Growth per month",
    "growth.start_turns_per_month": "Turns per month",
    # Prefix analysis
    "tokenizer": "Tokenizer",
    "log.format": "Format",
    "cache.block_size": "Block size",
    "cache.ttl_seconds": "TTL",
    "cache.capacity_tokens": "Cache capacity",
    "cache.replicas": "Replicas",
    "cache.gpu": "GPU and model",
    # Cache TTL
    "ttl.gaps_seconds": "Gaps",
    "ttl.gap_median_seconds": "Median gap between turns",
    "ttl.gap_sigma": "Spread of the gaps",
    "ttl.log": "Session log",
    "ttl.turns_per_session": "Turns per session",
    "ttl.prefix_tokens": "Cached prefix",
    "ttl.sessions_per_month": "Sessions per month",
    "ttl.model": "Serverless offer",
    # Replay
    "replay.prompts": "Prompt log",
    "replay.request_rate": "Request rate",
    "replay.base_url": "Base URL",
    "replay.model": "Model",
    "replay.concurrency": "Concurrency levels",
    # Capacity: the roofline's assumptions
    "roofline.bandwidth_efficiency": "Bandwidth efficiency",
    "roofline.decode_flops_efficiency": "Decode FLOP/s efficiency",
    "roofline.prefill_flops_efficiency": "Prefill FLOP/s efficiency",
    "roofline.tp_overhead": "Tensor-parallel overhead",
    "roofline.speculative_speedup": "Speculative decoding speed-up",
    # Measurements: the latency target, and a result file's missing conditions
    "target.percentile": "Percentile",
    "target.ttft_ms": "TTFT at most (ms)",
    "target.tokens_per_s_per_user": "Tokens/s per user at least",
    "measurement.gpu": "GPU",
    "measurement.gpu_count": "GPU count",
    "measurement.prefix_share": "Prefix share",
    "measurement.precision": "Precision",
    "measurement.model": "Model",
    "measurement.engine": "Engine",
}
"""Core field -> the label the app shows beside its input (or the section it is set in)."""

OPTIONS: dict[str, str] = {
    "serverless": "Serverless API",
    "dedicated": "Dedicated endpoint",
    "gpu_vm": "GPU virtual machine (self-hosted)",
}
"""A scenario's option, as the core names it when it leaves one out -> the sidebar's label for it."""

MESSAGES: dict[str, str] = {
    "hybrid_needs_serverless": "a hybrid plan needs a serverless API for the turns the owned capacity does not take; "
    "choose one on the Compare page",
    "hybrid_needs_self_hosted": "a hybrid plan that owns self-hosted GPUs needs a GPU virtual machine; choose one "
    "on the Compare page",
    "hybrid_needs_dedicated": "a hybrid plan that owns a dedicated endpoint needs one; choose it on the Compare page",
    "no_option": "choose at least one option on the Compare page: a serverless API, a dedicated endpoint or a GPU "
    "virtual machine",
}
"""A core sentence the app says in its own words, by the problem's code (the core's sentence names a scenario
file's keys)."""

ADVICE: dict[str, str] = {
    "tokenizer_factors": (
        "set the token factors in the sidebar under **Advanced**, *Token counts* (one for the serverless model, "
        "one for the GPU options' model), to count it"
    ),
    "best_case_hit_rate": "measure yours on the **Prefix analysis** page, or lower the cache hit rate",
    "closed_model": "choose the record they are sized from under **Self-hosting and capacity**, or a model in a "
    "scenario file (self-hosting model)",
    "no_same_model": "choose a record under **Self-hosting and capacity**, or a roofline estimate of a model "
    "under **Advanced**",
}
"""What a user of the app can do about a warning, by its code."""


PYDANTIC_WORDS = {
    "missing": "required; give it",
    "extra_forbidden": "not a setting this app knows",
    "model_type": "should be a group of settings",
    "model_attributes_type": "should be a group of settings",
    "dict_type": "should be a group of settings",
    "tuple_type": "should be a list",
    "list_type": "should be a list",
    "int_parsing": "should be a whole number",
    "int_type": "should be a whole number",
    "int_from_float": "should be a whole number",
    "float_parsing": "should be a number",
    "float_type": "should be a number",
    "bool_parsing": "should be true or false",
    "string_type": "should be text",
}
"""Pydantic's messages that name its own terms (a model's class, "extra inputs"), in words; others state
the limit plainly ("Input should be less than or equal to 1") and are kept."""


SECTIONS = frozenset({"scenario", "evidence", "roofline", "target", "cache", "ttl", "replay", "measurement"})
"""Where a page's own inputs sit (see :func:`invalid`): a field under one is named without it."""


RECORD_FIELDS = {
    "model": "the model",
    "precision": "the precision",
    "gpu": "the GPU",
    "gpu_count": "the GPU count",
    "params_total_b": "the model's total parameters",
    "params_active_b": "the model's active parameters",
}
"""A throughput record's fields, as a sentence names what a record does not state."""


def record_fields(fields: list[str]) -> str:
    """``the model, the GPU and the GPU count``: a record's missing fields in words."""
    words = [RECORD_FIELDS.get(f, label(f).lower()) for f in fields]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def label(field: str) -> str:
    """The label the page shows for a core field; a field missing from :data:`FIELDS` in plain words, with
    the part it belongs to (``prefix.requests`` -> ``Prefix requests``)."""
    if field in FIELDS:
        return FIELDS[field]
    parts = [part for part in field.split(".") if part and not part.isdigit()]
    whole = len(parts) > 1 and parts[-2] not in SECTIONS and not parts[-1].startswith(parts[-2])
    named = parts[-2:] if whole else parts[-1:]
    words = " ".join(named).replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else "Input"


def message(problem: InputError | Problem) -> str:
    """What is wrong, without the field: the core's sentence, or the app's where the core's names keys."""
    found = problem.problem if isinstance(problem, InputError) else problem
    return MESSAGES.get(found.code or "", found.text())


def say(problem: InputError | Problem) -> str:
    """``**Within-hour burst**: 0.5 is below 1 ...``: a problem as the page names it (markdown)."""
    found = problem.problem if isinstance(problem, InputError) else problem
    return f"**{label(found.field)}**: {message(found)}"


def invalid(exc: ValidationError, under: str) -> list[str]:
    """A page's own inputs refused by a model, one line each as :func:`say` puts it: ``under`` is where the
    model sits among the fields (``cache`` for the prefix cache's settings, ``scenario`` for a whole scenario)."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = [str(part) for part in err["loc"] if not isinstance(part, int)]
        field = ".".join(loc) if under == "scenario" else ".".join([under, *loc])
        text = PYDANTIC_WORDS.get(err["type"], str(err["msg"]))
        lines.append(f"**{label(field or under)}**: {text}")
    return lines


def left_out(option: str, problem: InputError) -> str:
    """An option the page could not price, left out and said why (``option`` as the core names it)."""
    name = OPTIONS.get(option, option)
    if problem.field == "as_of":  # the price date is the reason, not a setting of the option
        return f"**Price date** (`asof`): the {name} option is left out: {message(problem)}"
    return f"The {name} option is left out: {say(problem)}"


def warning(problem: Problem) -> str:
    """A warning's sentence with the app's advice, where it has some."""
    advice = ADVICE.get(problem.code or "")
    text = problem.text()
    return f"{text.rstrip('.')}; {advice}." if advice else text


def unexpected(exc: BaseException) -> str:
    """What an unexpected failure means, without Python's wording: no class name, no server-side path."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (at byte {exc.start:,}); save it as UTF-8"
    if isinstance(exc, OSError):  # its filename is the server's, never the user's
        return (exc.strerror or "the file could not be read or written").rstrip(".").lower()
    if isinstance(exc, MemoryError):
        return "it needs more memory than this server has"
    text = str(exc).strip()
    return text or "an unexpected problem, with no detail given"
