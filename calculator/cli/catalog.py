"""Commands that list and check the data catalogues: sheets, gpus, records, presets, models,
measurements import, schemas."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import load_records
from calculator.catalog.prices import (
    DedicatedOffer,
    GpuVmOffer,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    TokenPrices,
    load_price_sheets,
    price_age_days,
)
from calculator.catalog.textfile import check_regular
from calculator.cli import console, flags, folders
from calculator.errors import InputError
from calculator.present.money import format_price
from calculator.scenario.model import (
    Scenario,
    list_presets,
    load_preset,
)

__all__ = ["add_catalog_parsers", "schema_files", "cmd_schemas"]


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
        "batch_applies_to": list(version.batch_applies_to) if version.batch_discount is not None else [],
        "source": version.source.url or version.source.document,
        "read": version.source.read.isoformat(),
        "note": version.note,
    }
    return data


def _with_age(entries: list[dict[str, Any]], as_of: dt.date) -> list[dict[str, Any]]:
    """Each history entry with ``age_days`` on the date asked for."""
    return [{**e, "age_days": price_age_days(dt.date.fromisoformat(e["read"]), as_of)} for e in entries]


def _offer_json(sheet: PriceSheet, offer: Any, as_of: dt.date, history: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": offer.kind,
        "provider": sheet.provider,
        "id": offer.id,
        "currency": sheet.currency,
        "region": offer.region,
    }
    try:
        version = offer.listed_version(as_of)  # a retired offer is listed with its mark, not priced
    except InputError:
        version = None  # not yet priced on that date; history still lists it
    if offer.retired is not None:
        end = offer.retired
        data["retired"] = {
            "date": end.date.isoformat(),
            "in_force": offer.retired_on(as_of),
            "successor": end.successor,
            "successor_model": end.successor_model,
            "source": end.source.url or end.source.document,
            "read": end.source.read.isoformat(),
        }
    if isinstance(offer, ServerlessOffer):
        data.update(
            model=offer.model,
            open_weights=offer.open_weights,
            min_cacheable_tokens=offer.min_cacheable_tokens,
            cache_increment_tokens=offer.cache_increment_tokens,
        )
        if version is not None:
            listed = _serverless_version_json(version)
            data["prices"] = listed["prices"]
            data["long_context"] = listed["long_context"]
            data["batch_discount"] = listed["batch_discount"]
            data["batch_applies_to"] = listed["batch_applies_to"]
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
            age_days=price_age_days(version.source.read, as_of),
            note=version.note,
        )
    if history:
        data["history"] = _with_age(data["history"], as_of)
    newest = offer.latest.source.read
    data.update(newest_read=newest.isoformat(), newest_age_days=price_age_days(newest, as_of))
    return data


def _price_text(prices: dict[str, Any], currency: str) -> str:
    """One price version in a row of the sheets table, as the sheet states it."""

    def money(value: float | None) -> str:
        return "-" if value is None else format_price(value, currency)

    if "input" in prices:
        text = f"in {money(prices['input'])} / cached {money(prices['cached_input'])} / out {money(prices['output'])}"
        text += " per 1M"
        if prices.get("cache_write_by_ttl"):
            text += " / write " + ", ".join(f"{k} {money(v)}" for k, v in prices["cache_write_by_ttl"].items())
        return text
    if prices.get("per_gpu_hour") is not None:
        return f"{money(prices['per_gpu_hour'])} per GPU-hour"
    return f"{money(prices.get('per_replica_hour'))} per replica-hour"


def _retired_text(retired: dict[str, Any]) -> str:
    text = f"retired on {retired['date']}"
    if retired.get("successor"):
        return text + f" (successor: {retired['successor']})"
    if retired.get("successor_model"):
        return text + f" (the provider's replacement: {retired['successor_model']}, not in this sheet)"
    return text


def cmd_sheets(args: argparse.Namespace) -> int:
    if (args.action == "refresh") != (args.from_list is not None) or (args.read_on and args.action != "refresh"):
        raise flags.UsageError("sheets: refresh needs --from FILE|URL, and --from and --read-on go with refresh")
    if args.action == "refresh":
        from calculator.cli.refresh import run_refresh

        if args.kind or args.history:
            raise flags.UsageError("sheets refresh: --kind and --history are not read (a refresh lists its own diff)")
        return run_refresh(args)
    if args.action == "import-genai-prices":
        from calculator.cli.extras import run_genai_import

        return run_genai_import(args)
    if args.write or args.model:
        raise flags.UsageError("sheets: --write and --model go with the actions import-genai-prices and refresh")
    catalog = load_price_sheets(args.sheets)
    as_of = args.as_of or dt.date.today()
    if args.provider:
        catalog.sheet(args.provider)  # an unknown provider is an error, not an empty list
    older_than: int | None = getattr(args, "older_than", None)
    rows = [
        _offer_json(sheet, offer, as_of, args.history)
        for sheet, offer in catalog.offers(args.kind)
        if (not args.provider or sheet.provider == args.provider.lower())
        and (older_than is None or price_age_days(offer.latest.source.read, as_of) > older_than)
    ]
    if args.json:
        console.emit(rows)
        return 0
    table = []
    for r in rows:
        price = _price_text(r["prices"], r["currency"]) if "prices" in r else "-"
        what = r.get("model") or r.get("gpu") or ""
        retired = r.get("retired") or {}
        offer_id = r["id"] + (" (retired)" if retired.get("in_force") else "")
        age = f"{r['age_days']} d" if "age_days" in r else "-"
        table.append(
            [r["kind"], r["provider"], offer_id, what, r["currency"], price, r.get("effective", "not yet priced"), age]
        )
        if args.history:
            for h in r["history"]:
                table.append(
                    [
                        *([""] * 5),
                        "  " + _price_text(h.get("prices") or h, r["currency"]),
                        h["effective"],
                        f"{h['age_days']} d",
                    ]
                )
    headers = ["Kind", "Provider", "Offer", "Model/GPU", "Cur", "Prices", "Effective", "Read ago"]
    print(console.table(table, headers))
    older = f" whose newest version was read more than {older_than} days before then" if older_than is not None else ""
    print(f"\n{len(rows)} offers, prices in force on {as_of.isoformat()}{older}. Sources: --json.")
    for r in rows:
        if (r.get("retired") or {}).get("in_force"):
            print(f"{r['provider']}/{r['id']}: {_retired_text(r['retired'])}; listed, not priced.")
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
            r.publisher or "you",
        ]
        for r in catalog.records
    ]
    print(console.table(rows, ["Id", "Model", "Precision", "GPUs", "Engine", "Req/s per replica", "Published by"]))
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
    from calculator.catalog.models import load_model_specs

    if args.action == "import":
        from calculator.cli.model_import import cmd_models_import

        folders.refuse_unread(args, "models import", ["models"], "when listing (models without an action)")
        return cmd_models_import(args)
    if args.config is not None or args.context is not None:
        raise flags.UsageError("models: a config.json and --context go with the action import")

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


def cmd_measurements_import(args: argparse.Namespace) -> int:
    from calculator.capacity.saturation import three_figures
    from calculator.measure.importers import import_file

    if not args.gpu:
        folders.refuse_unread(args, "measurements import", ["gpu_specs"], "with --gpu (to check the GPU id)")
    check_regular(Path(args.file))  # by type before it is opened: a FIFO would block, a device never end
    records = import_file(
        args.file,
        model=args.model,
        gpu=args.gpu,
        gpu_count=args.gpu_count,
        precision=args.precision,
        engine=args.engine,
        engine_version=args.engine_version,
        prefix_share=None if args.prefix_share is None else float(args.prefix_share),
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
            three_figures(r.requests_per_s),
            f"{r.output_tokens_per_s:,.0f}" if r.output_tokens_per_s else "-",
            f"{r.ttft_ms.p50:,.0f}" if r.ttft_ms.p50 is not None else "-",
            r.prefix_share_text,
            "complete" if r.complete else "missing " + ", ".join(r.missing),
        ]
        for r in records
    ]
    print(
        console.table(
            rows, ["Record", "Engine", "Load", "Req/s", "Output tok/s", "TTFT p50 ms", "Prefix share", "Status"]
        )
    )
    warned = [(r.id, w) for r in records for w in r.warnings or ()]
    if warned:
        print("\nWhat the file holds that was not read:")
        print("\n".join(f"  {rid}: {w}" for rid, w in warned))
    doubtful = [(r.id, m) for r in records for m in r.mismatches or ()]
    if doubtful:
        print("\nThe file's own figures disagree (the records keep them as the file states them):")
        print("\n".join(f"  {rid}: {m}" for rid, m in doubtful))
    if any(not r.complete for r in records):
        print("\nThe file does not say everything: give --gpu, --gpu-count, --precision (and --model) to complete it.")
    if any(r.prefix_share is None for r in records):
        print(
            "\nThe file does not say how much its prompts share: prefix share unknown (sizing assumes none "
            "and says so); give --prefix-share S (0 to 1) if you know it."
        )
    return 0


def schema_files() -> dict[Path, str]:
    """The JSON Schemas editors use to check the data files as they are typed, with each field's docstring
    as its description: read in a fresh interpreter that builds the models with their docstrings (every
    other run skips reading them, see :mod:`calculator.catalog.field_docs`)."""
    from calculator.catalog import field_docs

    if field_docs.FIELD_DOCS:
        return _schema_texts()
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        field_docs.ENV: "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    code = (
        "import json, sys; from calculator.cli.catalog import schema_files; "
        "json.dump({str(k): v for k, v in schema_files().items()}, sys.stdout)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return {Path(k): v for k, v in json.loads(done.stdout).items()}


def _schema_texts() -> dict[Path, str]:
    from calculator.capacity.calibration import CASES_PATH, CaseFile
    from calculator.catalog.gpus import DEFAULT_GPU_DIR, GpuFile
    from calculator.catalog.measurements import DEFAULT_MEASUREMENTS_DIR, MeasurementFile
    from calculator.catalog.models import DEFAULT_MODELS_DIR, ModelFile
    from calculator.catalog.prices import DEFAULT_SHEETS_DIR, PriceSheet
    from calculator.scenario.model import DEFAULT_PRESETS_DIR

    models: dict[Path, type[BaseModel]] = {
        DEFAULT_SHEETS_DIR: PriceSheet,
        DEFAULT_GPU_DIR: GpuFile,
        DEFAULT_MEASUREMENTS_DIR: MeasurementFile,
        DEFAULT_MODELS_DIR: ModelFile,
        DEFAULT_PRESETS_DIR: Scenario,
    }
    texts = {d / ".schema.json": json.dumps(m.model_json_schema(), indent=2) + "\n" for d, m in models.items()}
    cases = CASES_PATH.with_name("roofline_cases.schema.json")
    return texts | {cases: json.dumps(CaseFile.model_json_schema(), indent=2) + "\n"}


def cmd_schemas(args: argparse.Namespace) -> int:
    for path, text in schema_files().items():
        console.save(path, text, "schemas")
        print(f"wrote {path}")
    return 0


def add_catalog_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    sheets = sub.add_parser("sheets", parents=[common], help="list offers and their prices")
    folders.add_data_folders(sheets, "sheets")
    sheets.add_argument(
        "action",
        nargs="?",
        choices=["import-genai-prices", "refresh"],
        help="propose prices from the genai-prices package, or refresh from a price list (--from)",
    )
    sheets.add_argument(
        "--from",
        dest="from_list",
        metavar="FILE|URL|genai-prices|litellm",
        help="with refresh: genai-prices' data.json or LiteLLM's model_prices_and_context_window.json, "
        "or genai-prices / litellm for the list the installed package bundles",
    )
    sheets.add_argument(
        "--read-on",
        type=flags.iso_date,
        metavar="DATE",
        help="with refresh: the list's date (default: the date the list's data gives, or the HTTP Date; "
        "never a file's timestamp)",
    )
    sheets.add_argument("--write", action="store_true", help="with import-genai-prices or refresh: write the proposals")
    sheets.add_argument("--model", action="append", help="with import-genai-prices or refresh: only these models")
    sheets.add_argument("--kind", choices=["serverless", "dedicated", "gpu_vm"])
    sheets.add_argument("--provider")
    sheets.add_argument("--as-of", type=flags.iso_date, help="show prices in force on this date (default today)")
    sheets.add_argument("--history", action="store_true", help="every price version, with sources")
    sheets.add_argument(
        "--older-than",
        type=flags.count,
        metavar="DAYS",
        help="only the offers whose newest version was read more than DAYS days before the as-of date",
    )
    sheets.set_defaults(func=cmd_sheets)

    gpus = sub.add_parser("gpus", parents=[common], help="list GPU specs")
    folders.add_data_folders(gpus, "gpu_specs")
    gpus.set_defaults(func=cmd_gpus)
    records = sub.add_parser("records", parents=[common], help="list throughput records")
    folders.add_data_folders(records, "records")
    records.set_defaults(func=cmd_records)
    presets = sub.add_parser("presets", parents=[common], help="list bundled scenarios")
    folders.add_data_folders(presets)
    presets.set_defaults(func=cmd_presets)

    models = sub.add_parser("models", parents=[common], help="list model architecture specs, or import a config.json")
    folders.add_data_folders(models, "models")
    models.add_argument("action", nargs="?", choices=["import"], help="read a Hugging Face config.json")
    models.add_argument("config", nargs="?", metavar="CONFIG.json", help="with import: the config.json to read")
    models.add_argument(
        "--context",
        type=flags.context,
        help="with import: tokens per sequence for the KV figure (default: the maximum)",
    )
    models.set_defaults(func=cmd_models)

    meas = sub.add_parser("measurements", help="benchmark results as measurement records")
    meas_sub = meas.add_subparsers(dest="action", required=True, parser_class=flags.Parser)
    imp = meas_sub.add_parser(
        "import",
        parents=[common],
        help="read a benchmark tool's result file (vLLM, SGLang, genai-perf, AIPerf, GuideLLM JSON or YAML, "
        "vLLM nightly summaries, InferenceMAX results, llmperf summaries and per-request files, the calculator's "
        "own records)",
    )
    imp.add_argument("file", type=Path)
    folders.add_data_folders(imp, "gpu_specs")
    imp.add_argument("--gpu", help="GPU id the run used (files do not say)")
    imp.add_argument("--gpu-count", type=flags.gpus, help="GPUs per replica in the run")
    imp.add_argument("--model", help="model the run served, where the file does not say")
    imp.add_argument("--precision", choices=["bf16", "fp16", "fp8", "int8", "int4", "fp4"])
    imp.add_argument("--engine")
    imp.add_argument("--engine-version")
    imp.add_argument(
        "--prefix-share",
        type=flags.share,
        metavar="S",
        help="share of the input tokens the run's prompts repeat (0 to 1), where the file does not say",
    )
    imp.set_defaults(func=cmd_measurements_import)

    schemas = sub.add_parser("schemas", help="rewrite the JSON Schemas of the data folders (for editors)")
    folders.add_data_folders(schemas)
    schemas.set_defaults(func=cmd_schemas)
