"""The ``deploy`` command: the cheapest GPU deployment of the scenario's model that meets a latency target.

``--json`` prints the list of every configuration that fits, sorted by monthly cost; each item has
``provider``, ``offer``, ``gpu``, ``gpus_per_replica``, ``precision``, ``replicas``, ``monthly``,
``tokens_per_s_per_user``, ``ttft_ms``, ``meets_target`` and ``evidence`` (and a few more). Offers
left out (no GPU spec, no price on the date) are named on stderr, as notes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from calculator.cli import console, flags, folders
from calculator.cli.scenario_args import required_scenario

__all__ = ["add_deploy_parser", "cmd_deploy", "deployment_json"]

TOP = 10
"""Configurations meeting the target printed without ``--all``."""
PRECISION_CHOICES = ("bf16", "fp8", "int8", "int4", "fp4")


def speedup(text: str) -> float:
    """A speculative-decoding decode speed-up: more than 1, at most 5 (what the roofline's what-if takes)."""
    value = flags.number(text, "a speed-up such as 1.5")
    if not 1 < value <= 5:
        raise argparse.ArgumentTypeError(f"{flags.echo(text)} is outside 1..5; give a speed-up above 1, such as 1.5")
    return value


def deployment_json(d: Any) -> dict[str, Any]:
    """One configuration as JSON: the keys the issue names first, then what else explains it."""
    return {
        "provider": d.provider,
        "offer": d.offer,
        "gpu": d.gpu,
        "gpus_per_replica": d.gpus_per_replica,
        "precision": d.precision,
        "replicas": d.replicas,
        "monthly": console.num(d.monthly),
        "tokens_per_s_per_user": d.tokens_per_s_per_user,
        "ttft_ms": d.ttft_ms,
        "meets_target": d.meets_target,
        "evidence": d.evidence,
        "kind": d.kind,
        "price_kind": d.price_kind,
        "attention": d.attention,
        "feature": d.feature,
        "what_if": d.what_if,
        "model": d.model,
        "gpus": d.gpus,
        "currency": d.currency,
        "evidence_kind": d.evidence_kind,
        "record": d.record_id,
        "requests_per_s_per_replica": d.requests_per_s_per_replica,
        "latency_note": d.latency_note,
        "latency_percentile": d.latency_percentile,
        "ttft_ms_percentiles": _percentiles(d.ttft_percentiles_ms),
        "tpot_ms_percentiles": _percentiles(d.tpot_percentiles_ms),
        "requests_per_s_at_target": d.requests_per_s_at_target,
        "mean_batch_at_target": d.mean_batch_at_target,
    }


def _percentiles(p: Any) -> dict[str, float] | None:
    """A simulated latency's p50, p90, p95 and p99 in ms (None where the row was not simulated)."""
    return None if p is None else {"p50": p.p50, "p90": p.p90, "p95": p.p95, "p99": p.p99}


def _target_text(target: Any) -> str:
    if target is None:
        return "no latency target: every configuration counts"
    parts = []
    if target.ttft_ms is not None:
        parts.append(f"TTFT {target.percentile} at most {target.ttft_ms:,.0f} ms")
    if target.tokens_per_s_per_user is not None:
        parts.append(f"at least {target.tokens_per_s_per_user:,.1f} tokens/s per user ({target.percentile})")
    return "target: " + ", ".join(parts)


def _row(rank: int, d: Any) -> list[str]:
    from calculator.present.money import format_money

    speed = "-" if d.tokens_per_s_per_user is None else f"{d.tokens_per_s_per_user:,.1f}"
    ttft = "-" if d.ttft_ms is None else f"{d.ttft_ms:,.0f}"
    return [
        str(rank),
        f"{d.provider}/{d.offer}",
        f"{'dedicated' if d.kind == 'dedicated' else 'GPU VM'}, {d.price_kind.replace('_', '-')}",
        f"{d.gpus_per_replica}x {d.gpu}"
        + (f" ({d.gpus_per_replica // 8} nodes)" if d.gpus_per_replica > 8 else "")
        + (", DP attn" if d.attention == "dp" else ""),
        d.precision.upper() + (" spec.what-if" if d.what_if else ""),
        str(d.replicas),
        str(d.gpus),
        format_money(d.monthly, d.currency),
        speed,
        ttft,
        "yes" if d.meets_target else "no",
        "measured" if d.evidence_kind == "measurement" else "estimate",
    ]


HEADERS = [
    "#", "Offer", "Kind", "Replica", "Precision", "Replicas", "GPUs", "Per month", "Tok/s/user", "TTFT ms", "Meets",
    "Evidence",
]  # fmt: skip


def _headers(target: Any) -> list[str]:
    """The table's headers; with a target, the latency columns say its percentile (an estimate is simulated at
    it, a measurement shows the level's figure at it where the record has one)."""
    if target is None:
        return HEADERS
    pct = target.percentile
    return [f"Tok/s/user {pct}" if h == "Tok/s/user" else f"TTFT {pct} ms" if h == "TTFT ms" else h for h in HEADERS]


def _latency(args: argparse.Namespace, scenario: Any) -> Any:
    from calculator.scenario.inputs import LatencyTarget

    given = args.ttft_ms is not None or args.tokens_per_s_per_user is not None
    if not given:
        if args.latency_percentile is not None:
            current = scenario.self_hosting.latency_target
            if current is None:
                raise flags.UsageError("deploy: --latency-percentile needs --ttft-ms or --tokens-per-s-per-user")
            return current.model_copy(update={"percentile": args.latency_percentile})
        return None
    return LatencyTarget(
        percentile=args.latency_percentile or "p95",
        ttft_ms=args.ttft_ms,
        tokens_per_s_per_user=args.tokens_per_s_per_user,
    )


def cmd_deploy(args: argparse.Namespace) -> int:
    from calculator.catalog.catalogs import load_catalogs
    from calculator.pricing.deployments import find_deployments

    scenario = required_scenario(args)
    if args.as_of:
        scenario = scenario.model_copy(update={"as_of": args.as_of})
    catalogs = load_catalogs(args.sheets, args.gpu_specs, args.records, args.models)
    precisions = tuple(dict.fromkeys(args.precision)) if args.precision else ("bf16", "fp8")
    result = find_deployments(
        scenario,
        catalogs,
        args.model,
        _latency(args, scenario),
        spot=args.spot,
        precisions=precisions,
        speculative_speedup=args.speculative_speedup,
    )
    _skipped(result.skipped, scenario.price_date)
    if args.json:
        console.emit([deployment_json(d) for d in result.deployments])
        return 0
    _print(result, scenario, args.all)
    return 0


def _skipped(skipped: Any, when: Any) -> None:
    """Offers left out, on stderr: each without a GPU spec (or for another model) by name; those without a price
    on the date counted, with the first as an example (a date before the sheets began leaves out most)."""
    unpriced = [s for s in skipped if s.kind == "no_price"]
    for s in skipped:
        if s.kind != "no_price":
            print(f"note: skipped {s.provider}/{s.offer}: {s.reason}", file=sys.stderr)
    if unpriced:
        first = unpriced[0]
        print(
            f"note: skipped {len(unpriced)} offer(s) with no price on {when.isoformat()}, "
            f"for example {first.provider}/{first.offer}: {first.reason}",
            file=sys.stderr,
        )


def _print(result: Any, scenario: Any, show_all: bool) -> None:
    from calculator.present.money import format_money

    traffic = scenario.traffic
    peak = traffic.peak_rps(traffic.turns_per_month)
    print(
        f"Deploy {result.model} for {scenario.name}: {traffic.turns_per_month:,} turns a month, peak {peak:,.2f} "
        f"requests/s, prices as of {scenario.price_date.isoformat()}"
        + (", spot prices included" if result.spot else "")
    )
    print(f"Model: {result.model}, {result.model_reason}")
    text = _target_text(result.target)
    print(text[:1].upper() + text[1:])
    meeting = result.meeting
    shown = list(result.deployments) if show_all else list(meeting[:TOP])
    if not meeting:
        _no_configuration_meets(result)
        shown = list(result.deployments[:TOP]) if not show_all else shown
    else:
        best = meeting[0]
        print(
            ("Cheapest meeting it: " if result.target is not None else "Cheapest: ")
            + f"{best.label}, {best.replicas} replica(s), "
            f"{format_money(best.monthly, best.currency)} a month"
        )
    print()
    print(console.table([_row(i + 1, d) for i, d in enumerate(shown)], _headers(result.target)))
    rest = len(result.deployments) - len(shown)
    if rest > 0:
        print(
            f"{rest} more configuration(s) fit ({len(result.deployments) - len(meeting)} in all do not meet the "
            "target); --all lists every one, --json gives them all"
        )
    print(
        "\nReplicas: ceil(peak / (replica capacity x target utilisation)), plus spares for GPU VMs; the bill as "
        "Compare prices it (self-hosted includes the engineer's share)."
    )
    print("Evidence: 'measured' = a throughput record of this model on this GPU setup; 'estimate' = the roofline.")
    for d in shown[:3]:
        print(f"  {d.label}: {d.evidence}; latency: {d.latency_note}")
    if result.speculative_speedup:
        from calculator.pricing.deployments import SPECULATIVE_SOURCE

        print(
            f"Speculative decoding rows are a what-if at {result.speculative_speedup:g}x decode; "
            f"see {SPECULATIVE_SOURCE}"
        )


def _no_configuration_meets(result: Any) -> None:
    fastest, quickest, closest = result.best_speed(), result.best_ttft(), result.closest()
    print("No configuration meets the target.")
    if fastest is not None:
        print(f"  Best achievable per-user speed: {fastest.tokens_per_s_per_user:,.1f} tokens/s ({fastest.label})")
    if quickest is not None:
        print(f"  Best achievable TTFT: {quickest.ttft_ms:,.0f} ms ({quickest.label})")
    if closest is not None:
        print(f"  Closest to the target: {closest.label} ({closest.evidence_kind})")
    print("  Relax the target, or add a measurement of a faster setup (see: measurements import).")


def add_deploy_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    dep = sub.add_parser(
        "deploy", parents=[common], help="the cheapest GPU deployment of the scenario's model under a latency target"
    )
    folders.add_data_folders(dep, *folders.DATA_FOLDERS)
    dep.add_argument("--scenario", help="scenario YAML file")
    dep.add_argument("--preset", help="a bundled scenario (see: presets)")
    dep.add_argument("--model", help="model id to deploy (see: models); default: the scenario's open model")
    dep.add_argument("--ttft-ms", type=flags.positive, help="time to first token at most this (ms)")
    dep.add_argument("--tokens-per-s-per-user", type=flags.positive, help="output tokens/s per user at least this")
    dep.add_argument(
        "--latency-percentile",
        choices=["p50", "p90", "p95", "p99"],
        help="of the target (default p95); estimates are sized to it by simulating the engine's batching",
    )
    dep.add_argument("--as-of", type=flags.iso_date, help="prices in force on this date (default: the scenario's)")
    dep.add_argument("--spot", action="store_true", help="include spot (interruptible) GPU prices")
    dep.add_argument(
        "--precision", action="append", choices=PRECISION_CHOICES, help="weight precision to try, repeatable "
        "(default: bf16 and fp8)"
    )  # fmt: skip
    dep.add_argument(
        "--speculative-speedup",
        type=speedup,
        help="add what-if rows with speculative decoding this many times faster at decode (e.g. 1.5; an assumption)",
    )
    dep.add_argument("--all", action="store_true", help="list every configuration that fits, not the ten cheapest")
    dep.set_defaults(func=cmd_deploy)
