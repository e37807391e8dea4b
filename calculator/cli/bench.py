"""``python -m calculator bench``: replay a prompt log against an OpenAI-compatible endpoint, write records.

``add_bench_parser(sub, common)`` registers the subcommand on the main parser; :func:`main` runs it
standalone (``python -m calculator.cli.bench ...``) with the same error handling: bad input is one
line on stderr and exit status 2. The API key is read from the environment (``OPENAI_API_KEY``, or
the variable ``--api-key-env`` names) and is never printed or written.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from calculator.cli import console, flags, folders
from calculator.errors import InputError
from calculator.measure.bench import (
    BenchConfig,
    LevelResult,
    levels_from,
    public_url,
    read_prompt_log,
    run_benchmark,
    write_records,
)

__all__ = ["add_bench_parser", "cmd_bench"]

PRECISIONS = ["bf16", "fp16", "fp8", "int8", "int4", "fp4"]


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of whole numbers, e.g. 1,4,16,64"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: give whole numbers of 1 or more, e.g. 1,4,16,64")
    return values


def _float_list(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers, e.g. 2,4,8") from None
    if not values or any(not (v > 0 and v < float("inf")) for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: give request rates above 0 (requests per second)")
    return values


def _env_name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an environment variable name (give its name, not a key)")
    return text


def add_bench_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``bench`` on the subparsers ``sub`` with the shared ``common`` parent (``--json`` ...)."""
    p: argparse.ArgumentParser = sub.add_parser(
        "bench",
        parents=[common],
        help="replay a prompt log against an OpenAI-compatible endpoint; write one record per load level",
        description="Replay a prompt log at rising load against an OpenAI-compatible endpoint (vLLM, SGLang, "
        "trtllm-serve, a provider's API) and write one throughput record per level. The API key is read from "
        "the environment, never from the command line.",
    )
    p.add_argument("--base-url", required=True, help="endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", required=True, help="model name the server expects (also the record's model)")
    p.add_argument("--prompts", type=Path, required=True, help="JSON Lines: chat request bodies or {'prompt': ...}")
    p.add_argument("--concurrency", type=_int_list, default=[], help="levels of requests in flight, e.g. 1,4,16,64")
    p.add_argument(
        "--request-rate",
        type=_float_list,
        default=[],
        help="Poisson arrivals (req/s): one rate, or one per --concurrency level (which then caps requests in flight)",
    )
    p.add_argument(
        "--requests-per-level", type=flags.at_least_one, help="measured requests per level (default 4x, >= 32)"
    )
    p.add_argument("--warmup", type=flags.count, default=4, help="requests sent first and not counted (4)")
    p.add_argument("--seed", type=int, default=0, help="fixes prompt order, arrivals and the request seed (0)")
    p.add_argument("--max-tokens", type=flags.at_least_one, help="max_tokens for every request (default: the log's)")
    p.add_argument("--timeout", type=flags.seconds, default=300.0, help="per-request limit in seconds (300)")
    p.add_argument(
        "--workers", type=flags.at_least_one, default=1, help="client processes to spread the streams over (1)"
    )
    p.add_argument(
        "--max-error-rate", type=flags.float_share, default=0.1, help="above it a level is marked unreliable (0.1)"
    )
    p.add_argument("--api-key-env", type=_env_name, default="OPENAI_API_KEY", help="variable holding the API key")
    p.add_argument("--out", type=console.save_path, required=True, help="measurement YAML file to write (atomically)")
    p.add_argument("--gpu", help="GPU id the server runs on (see: gpus); not guessed")
    folders.add_data_folders(p, "gpu_specs")
    p.add_argument("--gpu-count", type=flags.at_least_one, help="GPUs in one replica of the server")
    p.add_argument("--precision", choices=PRECISIONS, help="weight precision the server runs")
    p.add_argument("--engine", default="unknown", help="vllm, sglang, tensorrt-llm, a provider ... (unknown)")
    p.add_argument("--engine-version")
    p.add_argument("--id-prefix", help="record id prefix (default bench-MODEL-YYYYMMDD)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_bench)
    return p


def _config(args: argparse.Namespace) -> BenchConfig:
    if not args.gpu:
        folders.refuse_unread(args, "bench", ["gpu_specs"], "with --gpu (to check the GPU id)")
    if not args.concurrency and not args.request_rate:
        raise InputError("--concurrency", "give load levels, e.g. --concurrency 1,4,16,64 (or --request-rate)")
    levels = levels_from(args.concurrency, args.request_rate)
    if args.id_prefix is not None and not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,60}", args.id_prefix):
        raise InputError("--id-prefix", f"{args.id_prefix!r}: use lower-case letters, digits, '.', '_' and '-'")
    out: Path = args.out
    try:
        if out.is_dir():
            raise InputError("--out", f"{out} is a folder; give a file such as {out / 'my-bench.yaml'}")
        if not out.parent.is_dir():
            raise InputError("--out", f"folder {out.parent} does not exist")
    except OSError as exc:  # a name longer than the file system takes
        raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}") from None
    if out.suffix != ".yaml":
        raise InputError("--out", f"{out.name}: name it *.yaml so the records folder loads it")
    console.check_save(out, "--out")  # before the first request: a run is not measured to be lost at the write
    if args.gpu:
        from calculator.catalog.gpus import load_gpu_specs

        load_gpu_specs(args.gpu_specs).get(args.gpu)  # an unknown GPU id is an error, named
    key = os.environ.get(args.api_key_env)
    if key is None and args.api_key_env != "OPENAI_API_KEY":
        raise InputError("--api-key-env", f"environment variable {args.api_key_env} is not set")
    from calculator.measure.bench import chat_url

    chat_url(args.base_url)  # a bad URL is an error, named
    return BenchConfig(
        base_url=args.base_url,
        model=args.model,
        levels=tuple(levels),
        requests_per_level=args.requests_per_level,
        warmup=args.warmup,
        seed=args.seed,
        max_tokens=args.max_tokens,
        timeout_s=args.timeout,
        workers=args.workers,
        max_error_rate=args.max_error_rate,
        api_key=key or None,
        gpu=args.gpu,
        gpu_count=args.gpu_count,
        precision=args.precision,
        engine=args.engine,
        engine_version=args.engine_version,
        id_prefix=args.id_prefix,
        prompts_name=args.prompts.name,
    )


def _level_json(result: LevelResult) -> dict[str, Any]:
    return {
        "level": result.level.label,
        "concurrency": result.level.concurrency,
        "request_rate": result.level.request_rate,
        "sent": result.sent,
        "completed": result.completed,
        "failed": result.failed,
        "errors": dict(result.errors),
        "error_rate": result.error_rate,
        "unreliable": result.unreliable,
        "client_limited": result.client_limited,
        "client_lag_p99_ms": round(result.lag_p99_ms, 3),
        "client_cpu_share": round(result.client_cpu_share, 3),
        "record": result.record.model_dump(mode="json", exclude_none=True) if result.record else None,
    }


def cmd_bench(args: argparse.Namespace) -> int:
    cfg = _config(args)
    prompts = read_prompt_log(args.prompts)
    out: Path = args.out
    written: list[int] = [0]
    header = (
        f"Written by python -m calculator bench against {public_url(cfg.base_url)} (model {cfg.model}, "
        f"prompts {cfg.prompts_name}, seed {cfg.seed})."
    )

    unsaved: list[str] = []

    def save(done: list[LevelResult]) -> None:
        records = [r.record for r in done if r.record is not None]
        if records and len(records) != written[0]:
            try:
                write_records(out, records, header=header)
            except OSError as exc:
                # the run goes on and the next level retries with every record; --json still carries them
                unsaved[:] = [f"cannot write {out}: {exc.strerror or exc}"]
                return
            unsaved.clear()
            written[0] = len(records)

    done: list[LevelResult] = []

    def keep(levels: list[LevelResult]) -> None:
        done[:] = levels
        save(levels)

    interrupted = False
    try:
        run_benchmark(cfg, prompts, on_level=keep, progress_stream=None if args.quiet else sys.stderr)
    except KeyboardInterrupt:
        interrupted = True
    if args.json:
        console.emit(
            {
                "out": str(out) if written[0] else None,
                "records_written": written[0],
                "interrupted": interrupted,
                "levels": [_level_json(r) for r in done],
            }
        )
    else:
        for result in done:
            r = result.record
            print(
                f"{result.level.label}: {result.completed}/{result.sent} ok"
                + (
                    f", {result.failed} failed ({', '.join(f'{k} x{v}' for k, v in result.errors.items())})"
                    if result.failed
                    else ""
                )
                + (
                    f"; {r.requests_per_s:.2f} req/s, {r.output_tokens_per_s or 0:,.0f} output tok/s, "
                    f"TTFT p50 {r.ttft_ms.p50 or 0:.0f} ms, prefix share {r.prefix_share_text}"
                    if r
                    else "; no record (nothing succeeded)"
                )
                + (" [unreliable]" if result.unreliable else "")
                + (" [client-limited]" if result.client_limited else "")
            )
        if written[0]:
            print(f"{written[0]} record{'s' if written[0] != 1 else ''} written to {out}")
    if unsaved:
        kept = sum(r.record is not None for r in done) - written[0]
        print(
            f"error: --out: {unsaved[0]}; the last {kept} level(s) are not in it"
            + ("" if args.json else " (rerun with --json to keep every record on stdout)"),
            file=sys.stderr,
        )
        return 2
    if interrupted:
        print(f"interrupted: {written[0]} finished level(s) kept in {out}", file=sys.stderr)
        return 130
    if not written[0]:
        print("error: no level produced a record (every request failed)", file=sys.stderr)
        return 1
    return 0
