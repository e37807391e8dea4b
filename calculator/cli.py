"""The command line: ``python -m calculator COMMAND``.

Commands: turn, sheets, gpus, records, presets, compare, models, fit, measurements import, prefix,
bench, profile, hybrid, growth, ttl, schemas.

Every command prints a readable table, or JSON with ``--json`` (money and rates as JSON numbers).
Bad input exits with status 2 and one line naming the flag or field and what is allowed; a
traceback is a bug.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError

from . import console, flags
from .compare import OPTION_LABELS, Catalogs, Comparison, break_even_by_prefix_share, compare
from .datafile import DataFileError, validation_lines
from .deploy import cents
from .errors import InputError
from .gpus import load_gpu_specs
from .measurements import load_records
from .money import format_money, format_small
from .pinning import pin_prices, reprice
from .prices import (
    DedicatedOffer,
    GpuVmOffer,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    TokenPrices,
    load_price_sheets,
)
from .scenario import (
    DedicatedChoice,
    GpuVmChoice,
    Scenario,
    ServerlessChoice,
    dump_scenario,
    list_presets,
    load_preset,
)
from .scenario_args import scenario_from_args
from .turn import TurnCost, TurnShape, compare_turn

__all__ = ["main"]


class UsageError(Exception):
    """A command-line mistake; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


# --- JSON helpers --------------------------------------------------------------------------------


def _prices_json(prices: TokenPrices) -> dict[str, Any]:
    return {
        "input": console.num(prices.input),
        "cached_input": console.num(prices.cached_input),
        "cache_write": console.num(prices.write_price()) if prices.cache_write else None,
        "cache_write_by_ttl": {k: float(v) for k, v in (prices.cache_write or {}).items()},
        "output": console.num(prices.output),
        "cache_storage_per_hour": console.num(prices.cache_storage_per_hour),
    }


def _serverless_version_json(version: ServerlessPriceVersion) -> dict[str, Any]:
    data = {
        "effective": version.effective.isoformat(),
        "prices": _prices_json(version.prices),
        "long_context": [{"above_tokens": t.above_tokens, **_prices_json(t)} for t in version.long_context],
        "batch_discount": console.num(version.batch_discount),
        "source": version.source.url or version.source.document,
        "read": version.source.read.isoformat(),
        "note": version.note,
    }
    return data


# --- commands ------------------------------------------------------------------------------------


def _turn_json(cost: TurnCost, turns: int) -> dict[str, Any]:
    return {
        "cost_per_turn": float(cost.cost_per_turn),
        "total": float(cents(cost.cost_per_turn * turns)),
        "parts": {k: float(v) for k, v in cost.parts.model_dump().items()},
        "tokens": {
            "input": cost.shape.input_tokens,
            "cached": float(cost.cached_tokens),
            "uncached": float(cost.uncached_tokens),
            "cache_written": float(cost.written_tokens),
            "output": cost.shape.output_tokens,
        },
        "long_context_tier": cost.tier,
    }


def cmd_turn(args: argparse.Namespace) -> int:
    catalog = load_price_sheets(args.sheets)
    sheet, offer = catalog.serverless(args.provider, args.model)
    as_of = args.as_of or dt.date.today()
    try:
        shape = TurnShape(
            input_tokens=args.input_tokens,
            prefix_share=args.prefix_share,
            hit_rate=args.hit_rate,
            output_tokens=args.output_tokens,
            cache_write_share=args.cache_write_share,
            cache_ttl=args.cache_ttl,
            batch=args.batch,
        )
    except ValidationError as exc:
        raise UsageError(validation_lines(exc, "turn")[0]) from None
    result = compare_turn(sheet, offer, as_of, shape)
    cur = sheet.currency
    if args.json:
        ref = result.price
        console.emit(
            {
                "provider": sheet.provider,
                "model": offer.model,
                "as_of": as_of.isoformat(),
                "currency": cur,
                "turns": args.turns,
                "no_reuse": _turn_json(result.no_reuse, args.turns),
                "reused": _turn_json(result.reused, args.turns),
                "saving_share": float(result.saving_share),
                "price_version": {
                    "provider": ref.provider,
                    "model": ref.model,
                    "effective": ref.effective.isoformat(),
                    "source": ref.source,
                    "read": ref.read.isoformat(),
                    "note": ref.note,
                },
            }
        )
        return 0
    rows = []
    for label, cost in (("Nothing reused", result.no_reuse), ("Start reused", result.reused)):
        p = cost.parts
        rows.append(
            [
                label,
                format_small(p.uncached_input, cur),
                format_small(p.cache_write, cur),
                format_small(p.cached_input, cur),
                format_small(p.output, cur),
                format_small(cost.cost_per_turn, cur),
                format_money(cents(cost.cost_per_turn * args.turns), cur),
            ]
        )
    print(f"{offer.model} on {sheet.name}, prices as of {as_of.isoformat()}")
    print(
        console.table(
            rows, ["Case", "Input", "Cache write", "Cached input", "Output", "Per turn", f"{args.turns:,} turns"]
        )
    )
    print(f"\nReuse saves {float(result.saving_share):.0%} per turn.")
    print(f"Price version: effective {result.price.effective.isoformat()}, source {result.price.source}")
    print(f"  (read {result.price.read.isoformat()})")
    return 0


def _offer_json(sheet: PriceSheet, offer: Any, as_of: dt.date, history: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": offer.kind,
        "provider": sheet.provider,
        "id": offer.id,
        "currency": sheet.currency,
        "region": offer.region,
    }
    try:
        version = offer.version_at(as_of)
    except InputError:
        version = None  # not yet priced on that date; history still lists it
    if isinstance(offer, ServerlessOffer):
        data.update(model=offer.model, open_weights=offer.open_weights)
        if version is not None:
            data["prices"] = _prices_json(version.prices)
            data["long_context"] = _serverless_version_json(version)["long_context"]
            data["batch_discount"] = console.num(version.batch_discount)
        if history:
            data["history"] = [_serverless_version_json(v) for v in offer.versions]
    else:
        data["gpu"] = offer.gpu
        if isinstance(offer, GpuVmOffer):
            data.update(gpus_per_instance=offer.gpus_per_instance, billing=offer.billing, pricing=offer.pricing)
        elif isinstance(offer, DedicatedOffer):
            data.update(model=offer.model, gpus_per_replica=offer.gpus_per_replica, min_replicas=offer.min_replicas)
        if version is not None:
            data["prices"] = {
                "per_gpu_hour": console.num(getattr(version, "per_gpu_hour", None)),
                "per_replica_hour": console.num(getattr(version, "per_replica_hour", None)),
            }
        if history:
            data["history"] = [
                {
                    "effective": v.effective.isoformat(),
                    "per_gpu_hour": console.num(getattr(v, "per_gpu_hour", None)),
                    "per_replica_hour": console.num(getattr(v, "per_replica_hour", None)),
                    "source": v.source.url or v.source.document,
                    "read": v.source.read.isoformat(),
                    "note": v.note,
                }
                for v in offer.versions
            ]
    if version is not None:
        data.update(
            effective=version.effective.isoformat(),
            source=version.source.url or version.source.document,
            read=version.source.read.isoformat(),
            note=version.note,
        )
    return data


def cmd_sheets(args: argparse.Namespace) -> int:
    if args.action == "import-genai-prices":
        from .extras_cli import run_genai_import

        return run_genai_import(args)
    if args.write or args.model:
        raise UsageError("sheets: --write and --model go with the action import-genai-prices")
    catalog = load_price_sheets(args.sheets)
    as_of = args.as_of or dt.date.today()
    if args.provider:
        catalog.sheet(args.provider)  # an unknown provider is an error, not an empty list
    rows = [
        _offer_json(sheet, offer, as_of, args.history)
        for sheet, offer in catalog.offers(args.kind)
        if not args.provider or sheet.provider == args.provider.lower()
    ]
    if args.json:
        console.emit(rows)
        return 0
    table = []
    for r in rows:
        p = r.get("prices", {})
        if r["kind"] == "serverless":
            price = f"in {p.get('input')} / cached {p.get('cached_input')} / out {p.get('output')} per 1M"
            if p.get("cache_write_by_ttl"):
                price += " / write " + ", ".join(f"{k} {v}" for k, v in p["cache_write_by_ttl"].items())
        else:
            hourly = p.get("per_gpu_hour") or p.get("per_replica_hour")
            price = f"{hourly} per {'GPU' if p.get('per_gpu_hour') else 'replica'}-hour" if p else "-"
        what = r.get("model") or r.get("gpu") or ""
        table.append(
            [r["kind"], r["provider"], r["id"], what, r["currency"], price, r.get("effective", "not yet priced")]
        )
        if args.history:
            for h in r["history"]:
                hp = h.get("prices") or {"per_gpu_hour": h.get("per_gpu_hour")}
                table.append(["", "", "", "", "", f"  {json.dumps(hp)}", h["effective"]])
    print(console.table(table, ["Kind", "Provider", "Offer", "Model/GPU", "Cur", "Prices", "Effective"]))
    print(f"\n{len(rows)} offers, prices in force on {as_of.isoformat()}. Sources: --json.")
    return 0


def cmd_gpus(args: argparse.Namespace) -> int:
    catalog = load_gpu_specs(args.gpu_specs)
    if args.json:
        console.emit([g.model_dump(mode="json") for g in catalog.gpus])
        return 0
    rows = [
        [
            g.id,
            g.name,
            f"{g.memory_gb:g}",
            f"{g.memory_bandwidth_tbs:g}",
            f"{g.bf16_dense_tflops:g}",
            f"{g.fp8_dense_tflops:g}" if g.fp8_dense_tflops else "-",
            g.interconnect[:40],
        ]
        for g in catalog.gpus
    ]
    print(console.table(rows, ["Id", "Name", "GB", "TB/s", "BF16 TFLOP/s", "FP8 TFLOP/s", "Interconnect"]))
    print("\nTFLOP/s are dense (no sparsity). Sources: --json.")
    return 0


def cmd_records(args: argparse.Namespace) -> int:
    catalog = load_records(args.records)
    if args.json:
        console.emit([r.model_dump(mode="json") for r in catalog.records])
        return 0
    rows = [
        [
            r.id,
            r.model or "?",
            r.precision or "?",
            f"{r.gpu_count or '?'}x {r.gpu or '?'}",
            r.engine,
            f"{r.requests_per_s:g}",
        ]
        for r in catalog.records
    ]
    print(console.table(rows, ["Id", "Model", "Precision", "GPUs", "Engine", "Req/s per replica"]))
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    names = list_presets()
    if args.json:
        console.emit(
            [{"name": n, "title": load_preset(n).name, "description": load_preset(n).description} for n in names]
        )
        return 0
    for n in names:
        print(f"{n:24} {load_preset(n).name}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from .models import load_model_specs

    catalog = load_model_specs(args.models)
    if args.json:
        console.emit([m.model_dump(mode="json") for m in catalog.models])
        return 0
    rows = [
        [
            m.id,
            f"{m.params_total_b:g}B" + (f" ({m.params_active_b:g}B active)" if m.is_moe else ""),
            str(m.layers),
            "MLA" if m.mla else f"{m.kv_heads} KV heads",
            f"{m.kv_bytes_per_token(2.0) / 1024:.1f} KiB",
            f"{m.default_context:,}",
            m.source.url or m.source.document or "",
        ]
        for m in catalog.models
    ]
    print(console.table(rows, ["Id", "Parameters", "Layers", "Attention", "KV/token (BF16)", "Context", "Source"]))
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    from .memory import fit
    from .models import load_model_specs

    model = load_model_specs(args.models).get(args.model)
    gpu = load_gpu_specs(args.gpu_specs).get(args.gpu)
    result = fit(
        model, gpu, args.precision, args.context, args.gpu_count, args.kv_dtype, float(args.memory_utilisation)
    )
    if args.json:
        console.emit(result.model_dump(mode="json"))
        return 0
    verdict = "fits" if result.fits else "does NOT fit"
    print(f"{model.id} at {result.precision.upper()} on {result.gpus}x {gpu.id}, context {result.context:,}: {verdict}")
    rows = [
        ["weights (all experts resident)", f"{result.weights_gb:,.1f} GB", f"{result.weights_per_gpu_gb:,.1f} GB"],
        ["KV cache per token", f"{result.kv_bytes_per_token / 1024:,.1f} KiB", ""],
        ["KV per sequence at the context", "", f"{result.kv_per_sequence_per_gpu_gb:,.2f} GB"],
        ["KV budget", "", f"{result.kv_budget_per_gpu_gb:,.1f} GB"],
        ["concurrent sequences at the context", f"{result.max_sequences:,}", ""],
        ["tokens the KV cache holds", f"{result.max_cached_tokens:,}", ""],
    ]
    print(console.table(rows, ["", "whole model", "per GPU"]))
    if result.kv_replicated:
        print("The KV cache is replicated on every GPU (MLA latent, or fewer KV heads than GPUs).")
    if not result.fits:
        print(f"Short by {result.shortfall_gb:,.1f} GB per GPU. Would fit: " + "; or ".join(result.suggestions))
    print("Assumptions: " + "; ".join(result.assumptions))
    return 0


def cmd_measurements_import(args: argparse.Namespace) -> int:
    from .importers import import_file

    records = import_file(
        args.file,
        model=args.model,
        gpu=args.gpu,
        gpu_count=args.gpu_count,
        precision=args.precision,
        engine=args.engine,
        engine_version=args.engine_version,
    )
    if args.gpu:
        load_gpu_specs(args.gpu_specs).get(args.gpu)  # an unknown GPU id is an error, named
    if args.json:
        console.emit([{**r.model_dump(mode="json"), "complete": r.complete, "missing": r.missing} for r in records])
        return 0
    rows = [
        [
            r.id,
            r.engine,
            f"{r.concurrency:g}" if r.concurrency else (f"{r.request_rate:g}/s" if r.request_rate else "max"),
            f"{r.requests_per_s:.3g}",
            f"{r.output_tokens_per_s:,.0f}" if r.output_tokens_per_s else "-",
            f"{r.ttft_ms.p50:,.0f}" if r.ttft_ms.p50 is not None else "-",
            "complete" if r.complete else "missing " + ", ".join(r.missing),
        ]
        for r in records
    ]
    print(console.table(rows, ["Record", "Engine", "Load", "Req/s", "Output tok/s", "TTFT p50 ms", "Status"]))
    if any(not r.complete for r in records):
        print("\nThe file does not say everything: give --gpu, --gpu-count, --precision (and --model) to complete it.")
    return 0


def schema_files() -> dict[Path, str]:
    """The JSON Schemas editors use to check the data files as they are typed."""
    from .gpus import DEFAULT_GPU_DIR, GpuFile
    from .measurements import DEFAULT_MEASUREMENTS_DIR, MeasurementFile
    from .models import DEFAULT_MODELS_DIR, ModelFile
    from .prices import DEFAULT_SHEETS_DIR, PriceSheet
    from .scenario import DEFAULT_PRESETS_DIR

    models: dict[Path, type[BaseModel]] = {
        DEFAULT_SHEETS_DIR: PriceSheet,
        DEFAULT_GPU_DIR: GpuFile,
        DEFAULT_MEASUREMENTS_DIR: MeasurementFile,
        DEFAULT_MODELS_DIR: ModelFile,
        DEFAULT_PRESETS_DIR: Scenario,
    }
    return {d / ".schema.json": json.dumps(m.model_json_schema(), indent=2) + "\n" for d, m in models.items()}


def cmd_schemas(args: argparse.Namespace) -> int:
    for path, text in schema_files().items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


def _scenario_from_args(args: argparse.Namespace) -> Scenario:
    scenario = scenario_from_args(args)
    data: dict[str, Any] = scenario.model_dump() if scenario else {}
    workload = dict(data.get("workload", {}))
    traffic = dict(data.get("traffic", {}))
    hosting = dict(data.get("self_hosting", {}))
    for flag in ("input_tokens", "prefix_share", "hit_rate", "output_tokens", "cache_write_share", "cache_ttl"):
        if getattr(args, flag) is not None:
            workload[flag] = getattr(args, flag)
    if args.batch:
        workload["batch"] = True
    for flag in ("turns_per_month", "peak_to_average", "active_hours_per_day"):
        if getattr(args, flag) is not None:
            traffic[flag] = getattr(args, flag)
    if args.turns_per_day is not None:
        traffic["turns_per_month"] = round(args.turns_per_day * 365 / 12)
    for flag in ("record", "target_utilisation", "spare_replicas", "engineer_share", "build_minutes_per_change"):
        if getattr(args, flag) is not None:
            hosting[flag] = getattr(args, flag)
    if args.autoscale:
        hosting["autoscale"] = True
    if args.provider or args.model:
        current = data.get("serverless") or {}
        provider = args.provider or current.get("provider")
        model = args.model or current.get("model")
        if not provider or not model:
            raise UsageError("compare: --provider and --model go together (the serverless offer)")
        data["serverless"] = ServerlessChoice(provider=provider, model=model)
    if args.dedicated:
        data["dedicated"] = DedicatedChoice(provider=args.dedicated[0], offer=args.dedicated[1])
    if args.gpu_vm:
        data["gpu_vm"] = GpuVmChoice(provider=args.gpu_vm[0], offer=args.gpu_vm[1])
    if args.as_of:
        data["as_of"] = args.as_of
    if args.currency:
        data["currency"] = args.currency
    if args.usd_per_eur:
        data["fx"] = {"usd_per_eur": args.usd_per_eur}
    missing = [f for f in ("input_tokens", "prefix_share", "output_tokens") if f not in workload]
    if missing or "turns_per_month" not in traffic:
        need = [f"--{m.replace('_', '-')}" for m in missing] + (
            ["--turns-per-month"] if "turns_per_month" not in traffic else []
        )
        raise UsageError(f"compare: give --preset, --scenario, or {', '.join(need)}")
    data.update(workload=workload, traffic=traffic, self_hosting=hosting)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise UsageError(validation_lines(exc, "compare")[0]) from None


def _comparison_json(result: Comparison) -> dict[str, Any]:
    turn = result.turn
    return {
        "scenario": result.scenario.name,
        "as_of": result.as_of.isoformat(),
        "currency": result.scenario.currency,
        "turns_per_month": result.scenario.traffic.turns_per_month,
        "turn": (
            {
                "no_reuse": _turn_json(turn.no_reuse, 1000),
                "reused": _turn_json(turn.reused, 1000),
                "currency": turn.price.currency,
            }
            if turn
            else None
        ),
        "options": [
            {
                "option": o.option,
                "provider": o.provider,
                "offer": o.offer,
                "model": o.model,
                "monthly": float(o.monthly),
                "cost_per_1000_turns": console.num(o.cost_per_1000_turns),
                "breakdown": {k: float(v) for k, v in o.breakdown.items()},
                "replicas": o.replicas,
                "gpus": o.gpus,
                "instances": o.instances,
                "gpu_hours": o.gpu_hours,
                "utilisation": o.utilisation,
                "capacity_requests_per_s": o.capacity.requests_per_s if o.capacity else None,
                "capacity_method": o.capacity.method if o.capacity else None,
                "price_versions": [p.model_dump(mode="json") for p in o.prices],
                "notes": list(o.notes),
            }
            for o in result.options
        ],
        "cheapest": result.cheapest,
        "break_even": [c.model_dump() for c in result.crossings],
        "stays_cheapest_above": (
            {"option": result.stays_cheapest[0], "turns_per_month": result.stays_cheapest[1]}
            if result.stays_cheapest
            else None
        ),
        "warnings": list(result.warnings),
    }


def cmd_compare(args: argparse.Namespace) -> int:
    scenario = _scenario_from_args(args)
    catalogs = Catalogs(load_price_sheets(args.sheets), load_gpu_specs(args.gpu_specs), load_records(args.records))
    result = compare(scenario, catalogs)
    by_share = break_even_by_prefix_share(scenario, catalogs) if args.by_prefix_share else None
    repricing = reprice(scenario, catalogs) if scenario.prices_used else None
    if args.save:
        _write_atomically(Path(args.save), dump_scenario(pin_prices(scenario, catalogs, result)))
    if args.json:
        data = _comparison_json(result)
        if repricing is not None:
            data["repricing"] = {
                "priced_on": repricing.priced_on.isoformat(),
                "today": repricing.today.isoformat(),
                "monthly_then": {k: float(v) for k, v in repricing.monthly_then.items()},
                "monthly_now": {k: float(v) for k, v in repricing.monthly_now.items()},
                "changes": [
                    {
                        "option": c.option,
                        "offer": f"{c.provider}/{c.offer}",
                        "field": c.field,
                        "before": console.num(c.before),
                        "after": console.num(c.after),
                        "effective_before": c.effective_before.isoformat(),
                        "effective_after": c.effective_after.isoformat(),
                    }
                    for c in repricing.changes
                ],
            }
        if by_share is not None:
            data["break_even_by_prefix_share"] = [
                {"prefix_share": s, "break_even": [c.model_dump() for c in found]} for s, found, _ in by_share
            ]
        console.emit(data)
        return 0
    cur = scenario.currency
    s = scenario
    print(f"{s.name}: {s.traffic.turns_per_month:,} turns a month, prices as of {result.as_of.isoformat()}")
    print(
        f"Turn: {s.workload.input_tokens:,} input tokens ({float(s.workload.prefix_share):.0%} repeated, "
        f"hit rate {float(s.workload.hit_rate):.0%}), {s.workload.output_tokens:,} output\n"
    )
    rows = []
    for o in result.options:
        rows.append(
            [
                OPTION_LABELS[o.option] + (" *" if o.option == result.cheapest else ""),
                f"{o.provider}/{o.offer}",
                o.model or "-",
                format_money(o.monthly, cur),
                format_small(o.cost_per_1000_turns, cur) if o.cost_per_1000_turns is not None else "-",
                "-" if o.gpus is None else f"{o.gpus} ({o.replicas} replicas)",
                "-" if o.utilisation is None else f"{o.utilisation:.0%}",
            ]
        )
    print(console.table(rows, ["Option", "Offer", "Model", "Per month", "Per 1,000 turns", "GPUs", "Avg. utilisation"]))
    print("* cheapest")
    if result.turn:
        t = result.turn
        print(
            f"\nPer turn on {t.price.provider}/{t.price.model}: no reuse {format_small(t.no_reuse.cost_per_turn, cur)},"
            f" reused prefix {format_small(t.reused.cost_per_turn, cur)} ({float(t.saving_share):.0%} less)"
        )
    if result.crossings:
        print("\nBreak-even (turns per month):")
        for c in result.crossings:
            print(
                f"  {OPTION_LABELS[c.a]} = {OPTION_LABELS[c.b]} at {c.turns_per_month:,.0f}; "
                f"above it {OPTION_LABELS[c.cheaper_above]} is cheaper"
            )
    if result.stays_cheapest:
        name, vol = result.stays_cheapest
        print(f"  {OPTION_LABELS[name]} stays cheapest above {vol:,.0f} turns a month.")
    if by_share:
        print("\nBreak-even by prefix share:")
        for share, found, _ in by_share:
            text = "; ".join(f"{c.a}/{c.b} at {c.turns_per_month:,.0f}" for c in found) or "no crossing"
            print(f"  {share:.0%}: {text}")
    print("\nPrice versions used:")
    for o in result.options:
        for p in o.prices:
            print(f"  {o.option}: {p.provider}/{p.offer} effective {p.effective} - {p.source} (read {p.read})")
        for note in o.notes:
            print(f"    {note}")
    if repricing is not None:
        print("\nSince this scenario was saved:")
        for line in repricing.summary(cur):
            print(f"  {line}")
        for change in repricing.changes:
            moved = f" ({change.change_share:+.1%})" if change.change_share is not None else ""
            where = f"{change.provider}/{change.offer} {change.field}"
            print(f"  {where}: {console.num(change.before)} -> {console.num(change.after)}{moved}")
        if not repricing.changes:
            print("  no price it used has changed")
    for w in result.warnings:
        print(f"\nWarning: {w}")
    if args.save:
        print(f"\nSaved with its prices pinned: {args.save}")
    return 0


def _write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a failed write never leaves half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError("--save", f"cannot write {path}: {exc.strerror or exc}") from None


# --- parser --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m calculator", description=__doc__.splitlines()[0])
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--sheets", type=Path, default=None, help="price sheet folder (default: bundled)")
    common.add_argument("--gpu-specs", type=Path, default=None, help="GPU spec folder (default: bundled)")
    common.add_argument("--records", type=Path, default=None, help="throughput record folder (default: bundled)")
    common.add_argument("--models", type=Path, default=None, help="model spec folder (default: bundled)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    turn = sub.add_parser("turn", parents=[common], help="price one turn, reused prefix beside no reuse")
    turn.add_argument("--provider", required=True)
    turn.add_argument("--model", required=True)
    turn.add_argument("--as-of", type=flags.iso_date, help="price date YYYY-MM-DD (default today)")
    turn.add_argument("--input-tokens", type=flags.count, required=True)
    turn.add_argument(
        "--prefix-share", type=flags.share, required=True, help="share of input repeating an earlier start"
    )
    turn.add_argument("--hit-rate", type=flags.share, default=Decimal(1), help="chance the start is still cached")
    turn.add_argument("--output-tokens", type=flags.count, required=True, help="reasoning tokens included")
    turn.add_argument("--turns", type=flags.count, default=1000, help="how many turns to total (default 1000)")
    turn.add_argument("--cache-write-share", type=flags.share, default=Decimal(1))
    turn.add_argument("--cache-ttl", help="cache lifetime where an offer sells several, e.g. 5m or 1h")
    turn.add_argument("--batch", action="store_true", help="apply the offer's batch discount")
    turn.set_defaults(func=cmd_turn)

    sheets = sub.add_parser("sheets", parents=[common], help="list offers and their prices")
    sheets.add_argument(
        "action", nargs="?", choices=["import-genai-prices"], help="propose prices from the genai-prices package"
    )
    sheets.add_argument("--write", action="store_true", help="with import-genai-prices: append the proposals")
    sheets.add_argument("--model", action="append", help="with import-genai-prices --write: only these models")
    sheets.add_argument("--kind", choices=["serverless", "dedicated", "gpu_vm"])
    sheets.add_argument("--provider")
    sheets.add_argument("--as-of", type=flags.iso_date, help="show prices in force on this date (default today)")
    sheets.add_argument("--history", action="store_true", help="every price version, with sources")
    sheets.set_defaults(func=cmd_sheets)

    gpus = sub.add_parser("gpus", parents=[common], help="list GPU specs")
    gpus.set_defaults(func=cmd_gpus)
    records = sub.add_parser("records", parents=[common], help="list throughput records")
    records.set_defaults(func=cmd_records)
    presets = sub.add_parser("presets", parents=[common], help="list bundled scenarios")
    presets.set_defaults(func=cmd_presets)

    models = sub.add_parser("models", parents=[common], help="list model architecture specs")
    models.set_defaults(func=cmd_models)

    fit_ = sub.add_parser("fit", parents=[common], help="does a model fit; how many sequences fit in the KV cache")
    fit_.add_argument("--model", required=True, help="model id (see: models)")
    fit_.add_argument("--gpu", required=True, help="GPU id (see: gpus)")
    fit_.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp8", "int8", "int4", "fp4"])
    fit_.add_argument("--context", type=flags.count, help="tokens per sequence (default: the model's default context)")
    fit_.add_argument("--gpus", dest="gpu_count", type=flags.count, default=1, help="tensor-parallel GPUs (default 1)")
    fit_.add_argument("--kv-dtype", choices=["bf16", "fp16", "fp8", "int8"], help="KV cache precision")
    fit_.add_argument("--memory-utilisation", type=flags.share, default=Decimal("0.9"), help="share of memory (0.9)")
    fit_.set_defaults(func=cmd_fit)

    meas = sub.add_parser("measurements", help="benchmark results as measurement records")
    meas_sub = meas.add_subparsers(dest="action", required=True, parser_class=_Parser)
    imp = meas_sub.add_parser("import", parents=[common], help="read a benchmark tool's result file")
    imp.add_argument("file", type=Path)
    imp.add_argument("--gpu", help="GPU id the run used (files do not say)")
    imp.add_argument("--gpu-count", type=flags.count, help="GPUs per replica in the run")
    imp.add_argument("--model", help="model the run served, where the file does not say")
    imp.add_argument("--precision", choices=["bf16", "fp16", "fp8", "int8", "int4", "fp4"])
    imp.add_argument("--engine")
    imp.add_argument("--engine-version")
    imp.set_defaults(func=cmd_measurements_import)

    from .bench_cli import add_bench_parser
    from .plan_cli import add_plan_parsers
    from .prefix_cli import add_prefix_parser

    add_prefix_parser(sub, common)
    add_bench_parser(sub, common)
    add_plan_parsers(sub, common)

    from .extras_cli import add_ttl_parser

    add_ttl_parser(sub, common)

    schemas = sub.add_parser("schemas", help="rewrite the JSON Schemas of the data folders (for editors)")
    schemas.set_defaults(func=cmd_schemas)

    cmp_ = sub.add_parser("compare", parents=[common], help="serverless vs dedicated vs self-hosted per month")
    cmp_.add_argument("--scenario", help="scenario YAML file")
    cmp_.add_argument("--preset", help="a bundled scenario (see: presets)")
    cmp_.add_argument("--provider", help="serverless provider")
    cmp_.add_argument("--model", help="serverless model")
    cmp_.add_argument("--dedicated", type=flags.offer_ref, help="dedicated offer as PROVIDER:OFFER")
    cmp_.add_argument("--gpu-vm", type=flags.offer_ref, help="GPU VM offer as PROVIDER:OFFER")
    cmp_.add_argument("--record", help="throughput record id (see: records)")
    cmp_.add_argument("--as-of", type=flags.iso_date)
    cmp_.add_argument("--currency", choices=["USD", "EUR"])
    cmp_.add_argument("--usd-per-eur", type=flags.positive)
    cmp_.add_argument("--input-tokens", type=flags.count)
    cmp_.add_argument("--prefix-share", type=flags.share)
    cmp_.add_argument("--hit-rate", type=flags.share)
    cmp_.add_argument("--output-tokens", type=flags.count)
    cmp_.add_argument("--cache-write-share", type=flags.share)
    cmp_.add_argument("--cache-ttl")
    cmp_.add_argument("--batch", action="store_true")
    cmp_.add_argument("--turns-per-month", type=flags.count)
    cmp_.add_argument("--turns-per-day", type=flags.count)
    cmp_.add_argument("--peak-to-average", type=flags.positive)
    cmp_.add_argument("--active-hours-per-day", type=flags.positive)
    cmp_.add_argument("--target-utilisation", type=flags.share)
    cmp_.add_argument("--spare-replicas", type=flags.count)
    cmp_.add_argument("--engineer-share", type=flags.positive)
    cmp_.add_argument("--build-minutes-per-change", type=flags.positive)
    cmp_.add_argument("--autoscale", action="store_true", help="scale GPUs down outside the active hours")
    cmp_.add_argument("--by-prefix-share", action="store_true", help="also show break-even by prefix share")
    cmp_.add_argument("--save", help="write the scenario to this YAML file with the prices it used pinned")
    cmp_.set_defaults(func=cmd_compare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except (UsageError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except DataFileError as exc:
        print(
            f"error: {exc.lines[0]}" + (f" (and {len(exc.lines) - 1} more)" if len(exc.lines) > 1 else ""),
            file=sys.stderr,
        )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
