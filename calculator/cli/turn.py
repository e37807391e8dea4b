"""The ``turn`` command: one turn priced, the reused prefix beside no reuse."""

from __future__ import annotations

import argparse
import datetime as dt
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from calculator.catalog.prices import STALE_AFTER_DAYS, is_stale, load_price_sheets, price_age_text
from calculator.cli import console, flags, folders, words
from calculator.present.money import format_money, format_small
from calculator.pricing.cents import cents
from calculator.pricing.turn import TurnCost, TurnShape, compare_turn

__all__ = ["add_turn_parser", "cmd_turn", "turn_json"]


def turn_json(cost: TurnCost, turns: int) -> dict[str, Any]:
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
        raise words.invalid(exc, "workload") from None
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
                "no_reuse": turn_json(result.no_reuse, args.turns),
                "reused": turn_json(result.reused, args.turns),
                "saving_share": float(result.saving_share),
                "price_version": {
                    "provider": ref.provider,
                    "model": ref.model,
                    "effective": ref.effective.isoformat(),
                    "source": ref.source,
                    "read": ref.read.isoformat(),
                    "age_days": ref.age_days(as_of),
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
    age = price_age_text(result.price.read, as_of, dt.date.today())
    print(f"  ({age}, on {result.price.read.isoformat()})")
    if is_stale(result.price.read, as_of):
        print(f"  older than {STALE_AFTER_DAYS} days: check the provider's current price")
    return 0


def add_turn_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    turn = sub.add_parser("turn", parents=[common], help="price one turn, reused prefix beside no reuse")
    folders.add_data_folders(turn, "sheets")
    turn.add_argument("--provider", required=True)
    turn.add_argument("--model", required=True)
    turn.add_argument("--as-of", type=flags.iso_date, help="price date YYYY-MM-DD (default today)")
    turn.add_argument("--input-tokens", type=flags.tokens, required=True)
    turn.add_argument(
        "--prefix-share", type=flags.share, required=True, help="share of input repeating an earlier start"
    )
    turn.add_argument("--hit-rate", type=flags.share, default=Decimal(1), help="chance the start is still cached")
    turn.add_argument("--output-tokens", type=flags.tokens, required=True, help="reasoning tokens included")
    turn.add_argument("--turns", type=flags.turns, default=1000, help="how many turns to total (default 1000)")
    turn.add_argument("--cache-write-share", type=flags.share, default=Decimal(1))
    turn.add_argument("--cache-ttl", help="cache lifetime where an offer sells several, e.g. 5m or 1h")
    turn.add_argument("--batch", action="store_true", help="apply the offer's batch discount")
    turn.set_defaults(func=cmd_turn)
