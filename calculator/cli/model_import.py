"""``models import CONFIG.json``: a model spec from a Hugging Face config.json, with what it caches per token."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from calculator.catalog.textfile import check_regular
from calculator.cli import console, flags

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""Largest config.json read: those in tests/fixtures/model_configs are 825 B to 3.8 KB, so 4 MB is no config."""


def import_report(path: str, context: int | None) -> dict[str, Any]:
    """The spec as JSON, with the cache at ``context`` and the importer's warnings."""
    from calculator.catalog.hf_config import import_hf_config

    check_regular(Path(path), path, MAX_CONFIG_BYTES)  # by type and size before it is opened: /dev/zero, a FIFO
    imported = import_hf_config(path)
    spec = imported.spec
    context = spec.default_context if context is None else context
    warnings = list(imported.warnings)
    if context > spec.max_context:
        warnings.append(
            f"context: {context:,} tokens is beyond the model's maximum of {spec.max_context:,} "
            "(max_position_embeddings); the figures are for the longer context anyway"
        )
    return {
        **spec.model_dump(mode="json"),
        "context": context,
        "kv_bytes_per_token": spec.kv_bytes_per_token(2.0, context),
        "kv_bytes_per_sequence": spec.kv_bytes_per_sequence(context, 2.0),
        "params_active_with_embeddings_b": round(spec.params_active_b + imported.embedding_params_b, 3),
        "cache_groups": [g.model_dump(mode="json") for g in spec.cache_groups],
        "warnings": warnings,
    }


def cmd_models_import(args: argparse.Namespace) -> int:
    if args.config is None:
        raise flags.UsageError("models import: give the config.json to read (models import CONFIG.json)")
    report = import_report(args.config, args.context)
    if args.json:
        console.emit(report)
        return 0
    active = report["params_active_b"]
    rows = [
        ["Model", report["id"]],
        ["Parameters", f"{report['params_total_b']:g}B total, {active:g}B active per token"],
        ["Layers", f"{report['layers']}"],
        *[
            [
                f"  {g['kind'].replace('_', ' ')}",
                f"{g['layers']} layers"
                + (f", {g['kv_elements']:,} KV elements per token" if g["kv_elements"] else "")
                + (
                    f", the last {g['window']:,} tokens and one entry per {g['compress_ratio']:,}"
                    if g.get("compress_ratio")
                    else (f", keeping at most {g['window']:,} tokens" if g["window"] else "")
                )
                + (f", {g['state_bytes']:,} bytes of state per sequence" if g["state_bytes"] else ""),
            ]
            for g in report["cache_groups"]
        ],
        *(
            [
                [
                    "  sparse attention",
                    f"indexer keys of {s['indexer_head_dim']} (FP8) in {s['layers']} layers"
                    + (f", one per {s['tokens_per_key']} tokens" if s.get("tokens_per_key", 1) > 1 else "")
                    + f", top {s['top_k']:,}",
                ]
            ]
            if (s := report["sparse_attention"])
            else []
        ),
        ["Context", f"{report['context']:,} tokens (maximum {report['max_context']:,})"],
        ["KV per token (BF16)", f"{report['kv_bytes_per_token']:,.1f} bytes, averaged over the context"],
    ]
    print(console.table(rows, ["", ""]).split("\n", 2)[2])
    for warning in report["warnings"]:
        print(f"warning: {warning}")
    return 0
