"""``python -m calculator prefix LOG``: measure the repeated prompt start and simulate a prefix cache.

Registered by :func:`add_prefix_parser`; bad input raises InputError / DataFileError, which the main
command line turns into one line and exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calculator.cli import console, flags, folders
from calculator.cli.progress import Progress
from calculator.cli.scenario_args import scenario_from_args, with_cheapest
from calculator.errors import InputError
from calculator.present.money import format_money
from calculator.traffic.logsource import Columns, shown_location
from calculator.traffic.prefix import FORMATS, CacheConfig, PrefixReport, analyse_log, capacity_from_fit
from calculator.traffic.shards import default_workers
from calculator.traffic.tokens import load_tokenizer

__all__ = ["add_prefix_parser", "cmd_prefix"]

_FLAGS = {
    "capacity_tokens": "--capacity-tokens",
    "ttl_seconds": "--ttl-seconds",
    "replicas": "--replicas",
    "routing": "--routing",
    "balance": "--balance",
}


def add_prefix_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the ``prefix`` subcommand on ``sub`` (the main parser's subparsers)."""
    p: argparse.ArgumentParser = sub.add_parser(
        "prefix",
        parents=[common],
        help="measure the repeated prompt start of a request log; simulate a prefix cache",
        description="Prefix share of a request log (unlimited cache) and the hit rate of a finite cache "
        "(LRU, TTL, replicas with routing). Formats: OpenAI chat request bodies, prompts, Mooncake traces, "
        "genai-perf input files, ShareGPT conversations; as JSON Lines, a JSON array or Parquet, gzip or zstd "
        "compressed or not; one file, a folder or a glob, local or s3:// and gs:// (credentials from the "
        "store's standard chain). Any size is streamed.",
    )
    # a string, not a Path: a Path would fold s3://bucket into s3:/bucket
    p.add_argument(
        "file", metavar="LOG", help="request log: a file, a folder, a glob ('logs/*.jsonl.gz') or an s3:// or gs:// URL"
    )
    p.add_argument("--messages-column", help="Parquet: the column holding the messages or prompt (default: messages)")
    p.add_argument("--timestamp-column", help="Parquet: the column holding the request time (default: timestamp)")
    # GPU and model specs size the cache with --gpu/--model; all four price --preset/--scenario.
    folders.add_data_folders(p, *folders.DATA_FOLDERS)
    p.add_argument("--format", choices=["auto", *FORMATS], default="auto")
    p.add_argument(
        "--block-size", type=flags.context, help="tokens per cache block (default 16; a Mooncake trace's 512)"
    )
    p.add_argument(
        "--capacity-tokens",
        type=flags.cache_tokens,
        nargs="+",
        metavar="N",
        help="cache size per replica in tokens; several values give a hit-rate curve, the first is the scenario",
    )
    p.add_argument("--gpu", help="derive the capacity from the KV budget of this GPU (with --model)")
    p.add_argument("--model", help="model id for --gpu (see: models)")
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp8", "int8", "int4", "fp4"])
    p.add_argument("--gpus", dest="gpu_count", type=flags.gpus, default=1, help="tensor-parallel GPUs per replica")
    p.add_argument("--ttl-seconds", type=flags.seconds, help="drop cached blocks idle longer than this")
    p.add_argument("--replicas", type=flags.simulated_replicas, default=1)
    p.add_argument("--routing", choices=["round_robin", "random", "prefix_aware"], default="round_robin")
    p.add_argument(
        "--balance", type=flags.balance, default=0.2, help="prefix-aware load slack, share of the mean (0.2)"
    )
    p.add_argument("--tokenizer", type=Path, help="a model's tokenizer.json for exact counts (default: built-in)")
    p.add_argument("--seed", type=flags.whole_number, default=0, help="random routing seed")
    p.add_argument(
        "--workers",
        type=flags.workers,
        default=default_workers(),
        metavar="N",
        help="processes that tokenise and hash the log (default: every core, here %(default)s); 1 for one process",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="tokenise and hash on the workers of this Dask cluster (scheduler address, e.g. tcp://10.0.0.5:8786; "
        "needs the 'cluster' extra); the cache is simulated here",
    )
    p.add_argument("--preset", help="also price this bundled scenario with the measured share and hit rate")
    p.add_argument("--scenario", type=Path, help="also price this scenario file with the measured share and hit rate")
    p.add_argument(
        "--save",
        type=console.save_path,
        help="with --preset or --scenario: write that scenario with the measured reuse and tokens per turn "
        "as its evidence (a YAML file for compare --scenario and the app)",
    )
    p.set_defaults(func=cmd_prefix)
    return p


def _capacities(args: argparse.Namespace) -> list[int]:
    caps = list(args.capacity_tokens or [])
    if args.gpu or getattr(args, "model", None):
        if not (args.gpu and args.model):
            raise InputError("--gpu", "--gpu and --model go together (the KV budget of a model on a GPU)")
        from calculator.capacity.memory import fit
        from calculator.catalog.gpus import load_gpu_specs
        from calculator.catalog.models import load_model_specs

        model = load_model_specs(args.models).get(args.model)
        gpu = load_gpu_specs(args.gpu_specs).get(args.gpu)
        result = fit(model, gpu, args.precision, gpus=args.gpu_count)
        caps.insert(0, capacity_from_fit(result.max_cached_tokens))
    return caps


def _config(args: argparse.Namespace, capacity: int | None) -> CacheConfig:
    try:
        return CacheConfig(
            capacity_tokens=capacity,
            ttl_seconds=args.ttl_seconds,
            replicas=args.replicas,
            routing=args.routing,
            balance=args.balance,
            seed=args.seed,
        )
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = _FLAGS.get(str(err["loc"][0]), str(err["loc"][0])) if err["loc"] else "prefix"
        raise InputError(field, err["msg"]) from None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _print(report: PrefixReport, note: str | None = None) -> None:
    r = report
    tok = "" if r.tokenizer is None else f"; tokens: {r.tokenizer}" + ("" if r.tokenizer_exact else " (approximate)")
    print(f"{r.source}: {r.requests:,} requests ({r.format}), {r.input_tokens:,} input tokens{tok}")
    out = "" if r.mean_output_tokens is None else f", {r.mean_output_tokens:,.0f} output"
    print(f"Mean per request: {r.mean_input_tokens:,.0f} input tokens{out}; block size {r.block_size} tokens")
    if r.malformed.count:
        print(f"Skipped {r.malformed.count:,} malformed line(s):")
        for line in r.malformed.lines:
            print(f"  {line}")
        if r.malformed.count > len(r.malformed.lines):
            print(f"  ... and {r.malformed.count - len(r.malformed.lines):,} more")
    print(f"\nPrefix share s (unlimited cache, one replica): {r.prefix_share:.1%}")
    s = r.scenario
    print(f"Scenario cache: {s.config.describe()}")
    if note:
        print(f"  ({note})")
    print(f"  token hit share s*h: {s.token_hit_share:.1%}   hit rate h = {_pct(s.hit_rate)}")
    if s.config.replicas > 1:
        for rep in s.replicas:
            print(
                f"  replica {rep.replica}: {rep.requests:,} requests, {rep.input_tokens:,} input tokens, "
                f"hit share {rep.hit_share:.1%}"
            )
        if s.idle_replicas:
            print(f"  {s.idle_replicas:,} other replica(s) served no request")
    if r.curve:
        print("\nHit-rate curve (tokens per replica):")
        for point in r.curve:
            print(f"  {point.capacity_tokens:>14,}  s*h {point.token_hit_share:6.1%}  h {_pct(point.hit_rate)}")
    print("\nMatched start per request (unlimited cache):")
    for b in r.unlimited.matched_histogram:
        label = "0" if b.low_tokens == 0 else f"{b.low_tokens:,}-{b.high_tokens - 1:,}"
        print(f"  {label:>16} tokens: {b.requests:,} requests")
    values = r.scenario_values()
    print(f"\nFor a scenario: prefix_share {values['prefix_share']}, hit_rate {values['hit_rate']}")
    if r.scenario.hit_rate is None:
        print("  (nothing repeats, so the hit rate has no effect)")


def _reuse(scenario: Any) -> dict[str, float]:
    return {"prefix_share": float(scenario.workload.prefix_share), "hit_rate": float(scenario.workload.hit_rate)}


def _bill(args: argparse.Namespace, report: PrefixReport) -> dict[str, Any] | None:
    """Monthly cost of each option with the scenario's guessed reuse, then with the measured one."""
    from calculator.pricing.compare import compare, load_catalogs
    from calculator.scenario.evidence import prefix_evidence
    from calculator.scenario.model import with_prefix_evidence

    scenario = scenario_from_args(args)
    if scenario is None:
        return None
    # the measured shares and the log's own tokens per turn, kept as the scenario's evidence
    measured = with_prefix_evidence(scenario, prefix_evidence(report))
    catalogs = load_catalogs(args.sheets, args.gpu_specs, args.records, args.models)
    # 'cheapest' is picked for each turn: the measured one may be served best by another configuration
    before = compare(with_cheapest(scenario, catalogs)[0], catalogs)
    after = compare(with_cheapest(measured, catalogs)[0], catalogs)
    if args.save is not None:
        from calculator.scenario.model import dump_scenario

        console.save(args.save, dump_scenario(measured), "--save")
    return {
        "scenario": scenario.name,
        "currency": scenario.currency,
        "assumed": {
            "prefix_share": float(scenario.workload.prefix_share),
            "hit_rate": float(scenario.workload.hit_rate),
            "input_tokens": scenario.workload.input_tokens,
            "output_tokens": scenario.workload.output_tokens,
        },
        "measured": {
            "prefix_share": float(measured.workload.prefix_share),
            "hit_rate": float(measured.workload.hit_rate),
            "input_tokens": measured.workload.input_tokens,
            "output_tokens": measured.workload.output_tokens,
        },
        "options": [
            {"option": b.option, "assumed": float(b.monthly), "measured": float(a.monthly)}
            for b, a in zip(before.options, after.options, strict=True)
        ],
    }


def cmd_prefix(args: argparse.Namespace) -> int:
    if args.save is not None:
        if not (args.preset or args.scenario):
            raise InputError(
                "--save", "give --preset NAME or --scenario FILE: the scenario to save with the measurement"
            )
        console.check_save(args.save, "--save")
    if not (args.preset or args.scenario):
        folders.refuse_unread(args, "prefix", ["sheets", "records"], "with --preset or --scenario (to price it)")
        if not (args.gpu or args.model):
            folders.refuse_unread(args, "prefix", ["gpu_specs", "models"], "with --gpu/--model or --preset/--scenario")
    caps = _capacities(args)
    scenario = _config(args, caps[0] if caps else None)
    tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer is not None else None
    columns = Columns(messages=args.messages_column, timestamp=args.timestamp_column)
    report = analyse_log(
        args.file,
        args.format,
        scenario,
        caps,
        args.block_size,
        tokenizer,
        columns=columns,
        workers=args.workers,
        cluster=args.cluster,
        progress=Progress(f"prefix {shown_location(args.file)}"),
    )
    bill = _bill(args, report)
    if args.json:
        data = report.model_dump(mode="json")
        data["scenario_values"] = report.scenario_values()
        if bill is not None:
            data["monthly_cost"] = bill
        console.emit(data)
        return 0
    note = None
    if args.gpu:
        note = (
            f"capacity: the KV budget of {args.model} at {args.precision} on {args.gpu_count}x {args.gpu}; "
            "an upper bound, since running requests share it"
        )
    _print(report, note)
    if bill is not None:
        a, m = bill["assumed"], bill["measured"]
        print(
            f"\nMonthly cost of '{bill['scenario']}': assumed prefix share {a['prefix_share']:.0%} / hit rate "
            f"{a['hit_rate']:.0%}, {a['input_tokens']:,} in / {a['output_tokens']:,} out tokens -> measured "
            f"{m['prefix_share']:.0%} / {m['hit_rate']:.0%}, {m['input_tokens']:,} in / {m['output_tokens']:,} out"
        )
        for row in bill["options"]:
            change = row["measured"] - row["assumed"]
            print(
                f"  {row['option']:12} {format_money(row['assumed'], bill['currency']):>14} -> "
                f"{format_money(row['measured'], bill['currency']):>14}  "
                f"({format_money(change, bill['currency'], plus=True)})"
            )
    return 0
