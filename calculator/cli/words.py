"""How the command line says a problem: a core field as the flag that sets it, and its own advice.

The core names fields by what they are (``load_profile.burst``, ``workload.prefix_share``); a user at
the command line knows them by their flags. This is the one table between the two, so no command
rewrites a message's text.
"""

from __future__ import annotations

from pydantic import ValidationError

from calculator.errors import InputError, Problem

__all__ = ["ADVICE", "FLAGS", "flag", "invalid", "say", "warning"]

FLAGS: dict[str, str] = {
    # the scenario, as compare's flags set it
    "preset": "--preset",
    "record": "--record",
    "as_of": "--as-of",
    "workload.input_tokens": "--input-tokens",
    "workload.prefix_share": "--prefix-share",
    "workload.hit_rate": "--hit-rate",
    "workload.output_tokens": "--output-tokens",
    "workload.cache_write_share": "--cache-write-share",
    "workload.cache_ttl": "--cache-ttl",
    "traffic.turns_per_month": "--turns-per-month",
    "traffic.peak_to_average": "--peak-to-average",
    "traffic.active_hours_per_day": "--active-hours-per-day",
    "self_hosting.target_utilisation": "--target-utilisation",
    "self_hosting.spare_replicas": "--spare-replicas",
    "self_hosting.engineer_share": "--engineer-share",
    "self_hosting.build_minutes_per_change": "--build-minutes-per-change",
    "self_hosting.record": "--record",
    "self_hosting.model": "--self-hosted-model",
    "fx.usd_per_eur": "--usd-per-eur",
    "fx.usd_per_gbp": "--fx GBP=",
    "fx.usd_per_jpy": "--fx JPY=",
    "fx.usd_per_inr": "--fx INR=",
    "serverless.provider": "--provider",
    "serverless.model": "--model",
    "dedicated.provider": "--dedicated",
    "dedicated.offer": "--dedicated",
    "gpu_vm.provider": "--gpu-vm",
    "gpu_vm.offer": "--gpu-vm",
    # offers, models and GPUs, as turn, fit and sheets name them
    "provider": "--provider",
    "model": "--model",
    "gpu": "--gpu",
    "gpus": "--gpus",
    "context": "--context",
    "precision": "--precision",
    "kv_dtype_bytes": "--kv-dtype",
    "utilisation": "--memory-utilisation",
    "engine": "--engine",
    "attention": "--attention",
    "cache_ttl": "--cache-ttl",
    # one setup estimated (the estimate command)
    "cached_share": "--cached-share",
    "latency": "--ttft-ms/--tpot-ms",
    "load": "--concurrency/--offline/--ttft-ms",
    "concurrency": "--concurrency",
    "max_batch": "--max-batch",
    "estimator": "--estimator",
    "latency_percentile": "--latency-percentile",
    # planning
    "load_profile": "--profile",
    "load_profile.burst": "--burst",
    "load_profile.bucket_seconds": "--bucket-seconds",
    "hybrid.percentile": "--percentile",
    "growth.months": "--months",
    "growth.growth_per_month": "--growth-per-month",
    "growth.start_turns_per_month": "--start-turns-per-month",
    # prompt logs and the cache simulation
    "tokenizer": "--tokenizer",
    "log.format": "--format",
    "cache.block_size": "--block-size",
    "cache.ttl_seconds": "--ttl-seconds",
    "cache.capacity_tokens": "--capacity-tokens",
    "cache.gpu": "--gpu",
    # the cache-TTL advisor
    "ttl.gaps_seconds": "--gaps-seconds",
    "ttl.gap_median_seconds": "--gap-median-seconds",
    "ttl.gap_sigma": "--gap-sigma",
    "ttl.log": "--log",
    "ttl.turns_per_session": "--turns-per-session",
    "ttl.prefix_tokens": "--prefix-tokens",
    "ttl.sessions_per_month": "--sessions-per-month",
    "ttl.model": "--model",
    # the replay client
    "replay.prompts": "--prompts",
    "replay.request_rate": "--request-rate",
    "replay.base_url": "--base-url",
    # a benchmark file's missing conditions
    "measurement.gpu": "--gpu",
    "measurement.gpu_count": "--gpu-count",
    "measurement.prefix_share": "--prefix-share",
    "measurement.precision": "--precision",
    "measurement.model": "--model",
    "measurement.engine": "--engine",
    # sheets refresh
    "price_list.source": "--from",
    "price_list.read_on": "--read-on",
}
"""Core field -> the flag that sets it (fields without a flag are printed as they are)."""

ADVICE: dict[str, str] = {
    "tokenizer_factors": "set token_factors in the scenario file to count it",
    "best_case_hit_rate": "measure yours with the prefix command, or give --hit-rate",
    "closed_model": "choose the open model they run with --self-hosted-model (self_hosting.model) or --record",
    "nearest_model_spec": "choose another with --self-hosted-model (self_hosting.model in the scenario file)",
    "no_same_model": "choose the model with --self-hosted-model (self_hosting.model), or --record",
}
"""What a user at the command line can do about a warning, by its code."""


def flag(field: str) -> str:
    return FLAGS.get(field, field)


def say(problem: Problem) -> str:
    """``--burst: 0.5 is below 1; ...``: the problem as the command line names it."""
    return f"{flag(problem.field)}: {problem.text()}"


def warning(problem: Problem) -> str:
    """A warning's sentence with the command line's advice, where it has some."""
    advice = ADVICE.get(problem.code or "")
    text = problem.text()
    return f"{text.rstrip('.')}; {advice}." if advice else text


def invalid(exc: ValidationError, under: str = "") -> InputError:
    """A model's first validation error as the command line says it: the field (``under`` the path the
    model has in a scenario, ``workload`` for a turn) and pydantic's message, which states the limit."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    field = ".".join([under, *loc] if under else loc) or under or "input"
    message = "required; give it" if err["type"] == "missing" else str(err["msg"])
    return InputError(field, message)
