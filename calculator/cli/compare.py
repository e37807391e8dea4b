"""The ``compare`` command: serverless, dedicated and self-hosted per month for one scenario."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calculator.catalog.fx import CODES, rate_field
from calculator.catalog.prices import STALE_AFTER_DAYS, is_stale, price_age_text
from calculator.cli import console, flags, folders, words
from calculator.cli.scenario_args import scenario_from_args, with_cheapest
from calculator.cli.turn import turn_json
from calculator.errors import InputError
from calculator.present.money import format_money, format_small
from calculator.present.shown_currency import turn_currency
from calculator.pricing.compare import (
    OPTION_LABELS,
    Comparison,
    break_even_by_prefix_share,
    compare,
    crossing_runs,
    load_catalogs,
)
from calculator.pricing.option import OptionCost
from calculator.pricing.side_by_side import ServerlessRow, serverless_side_by_side
from calculator.scenario.changes import followed
from calculator.scenario.inputs import AUTO_RECORD, monthly_turns
from calculator.scenario.model import (
    DedicatedChoice,
    GpuVmChoice,
    Scenario,
    ServerlessChoice,
    dump_scenario,
    in_currency,
)

__all__ = ["add_compare_parser", "cmd_compare"]


def _scenario_from_args(args: argparse.Namespace) -> Scenario:
    scenario = scenario_from_args(args)
    preset = scenario if args.preset else None
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
    if args.users is not None:
        traffic["users"] = args.users
    if args.turns_per_day is not None:
        traffic["turns_per_month"] = monthly_turns(args.turns_per_day, "day")
    if args.turns_per_user_per_day is not None:
        if args.turns_per_month is not None or args.turns_per_day is not None:
            raise flags.UsageError(
                "compare: --turns-per-user-per-day sets the volume; leave out --turns-per-month and --turns-per-day"
            )
        if not traffic.get("users"):
            raise flags.UsageError("compare: --turns-per-user-per-day needs --users (how many people send them)")
        traffic["turns_per_month"] = monthly_turns(args.turns_per_user_per_day, "user", traffic["users"])
    for flag in ("record", "target_utilisation", "spare_replicas", "engineer_share", "build_minutes_per_change"):
        if getattr(args, flag) is not None:
            hosting[flag] = getattr(args, flag)
    if args.self_hosted_model is not None:
        # the model the GPU options run (a closed API model's substitute, or another open one): chosen by
        # ``record: auto``, which sizes it from a measurement of it or else estimates it; --record overrides
        hosting["model"] = args.self_hosted_model
        hosting["estimate"] = None
        if args.record is None:
            hosting["record"] = AUTO_RECORD
    if args.autoscale:
        hosting["autoscale"] = True
    offers = getattr(args, "serverless", None) or []
    if offers and (args.provider or args.model):
        raise flags.UsageError(
            "compare: give the serverless offer as --serverless PROVIDER/MODEL or --provider/--model"
        )
    if offers:
        kept = {k: v for k, v in (data.get("serverless") or {}).items() if k not in ("provider", "model")}
        data["serverless"] = ServerlessChoice(provider=offers[0][0], model=offers[0][1], **kept)
    if args.provider or args.model:
        current = data.get("serverless") or {}
        provider = args.provider or current.get("provider")
        model = args.model or current.get("model")
        if not provider or not model:
            raise flags.UsageError("compare: --provider and --model go together (the serverless offer)")
        data["serverless"] = ServerlessChoice(provider=provider, model=model)
    if args.dedicated:
        data["dedicated"] = DedicatedChoice(provider=args.dedicated[0], offer=args.dedicated[1])
    if args.gpu_vm:
        data["gpu_vm"] = GpuVmChoice(provider=args.gpu_vm[0], offer=args.gpu_vm[1])
    if args.as_of:
        data["as_of"] = args.as_of
    own = _own_prices(args, dict(data.get("own_prices") or {}))
    if own:
        data["own_prices"] = own
    rates = dict(data.get("fx") or {})
    if args.usd_per_eur:
        rates["usd_per_eur"] = args.usd_per_eur
    for code, rate in args.fx or ():
        rates[rate_field(code)] = rate
    if rates:
        data["fx"] = rates
    missing = [f for f in ("input_tokens", "prefix_share", "output_tokens") if f not in workload]
    if missing or "turns_per_month" not in traffic:
        need = [f"--{m.replace('_', '-')}" for m in missing] + (
            ["--turns-per-month"] if "turns_per_month" not in traffic else []
        )
        raise flags.UsageError(f"compare: give --preset, --scenario, or {', '.join(need)}")
    data.update(workload=workload, traffic=traffic, self_hosting=hosting)
    try:
        scenario = Scenario.model_validate(data)
        # the scenario's own amounts (the engineer's cost) are in its currency: shown in another, converted
        scenario = in_currency(scenario, args.currency) if args.currency else scenario
    except ValidationError as exc:
        raise words.invalid(exc) from None
    if preset is not None:  # a preset's name and description stand while its inputs do
        scenario = followed(preset, scenario)
    return scenario


_OWN_FLAGS = {
    "serverless_discount": "serverless_discount",
    "dedicated_hour_price": "dedicated_gpu_hour",
    "gpu_hour_price": "gpu_hour",
    "own_price_name": "name",
}


def _own_prices(args: argparse.Namespace, own: dict[str, Any]) -> dict[str, Any]:
    """The scenario's own prices with the flags' on top (a flag replaces what the file gives for it)."""
    prices = getattr(args, "serverless_price", None)
    if prices is not None and not isinstance(prices, dict):  # argparse drops a bare '--' value unconverted
        raise flags.UsageError("--serverless-price: give IN,CACHED,OUT per million tokens, such as 1.40,0.26,4.40")
    if prices is not None:
        own.pop("serverless_discount", None)
        own["serverless"] = prices
    for flag, field in _OWN_FLAGS.items():
        value = getattr(args, flag, None)
        if value is None:
            continue
        if field == "serverless_discount" and prices is not None:
            raise flags.UsageError("compare: --serverless-price and --serverless-discount: give one of them")
        if field == "serverless_discount":
            own.pop("serverless", None)
            own.pop("serverless_long_context", None)
        own[field] = value
    return own


_PRICE_LIMIT = Decimal("99999999")


def _decimal(text: str, what: str) -> Decimal:
    try:
        value = Decimal(text.strip().replace(",", "") if what == "a percentage" else text.strip())
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{flags.echo(text)} is not {what}") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"{flags.echo(text)} is not {what}")
    return value


def serverless_ref(text: str) -> tuple[str, str]:
    """``PROVIDER/MODEL`` (the model may hold slashes itself: ``together/meta-llama/Llama-3.3-70B-Instruct-Turbo``)."""
    provider, sep, model = text.strip().partition("/")
    if not sep or not provider or not model:
        raise argparse.ArgumentTypeError(
            f"{flags.echo(text)} should be PROVIDER/MODEL, for example lyceum/GLM-5.3 (see: sheets --kind serverless)"
        )
    return provider, model


def own_price(text: str) -> Decimal:
    """A price of 0 or more, at most 6 decimal places (per million tokens or per hour)."""
    value = _decimal(text, "a price (a number such as 1.40)")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{flags.echo(text)} is negative; a price is 0 or more")
    if value > _PRICE_LIMIT:
        raise argparse.ArgumentTypeError(f"{flags.echo(text)} is larger than any price ({_PRICE_LIMIT:,} at most)")
    if value != value.quantize(Decimal("0.000001")):
        raise argparse.ArgumentTypeError(f"{flags.echo(text)} has more than 6 decimal places")
    return value


def own_token_prices(text: str) -> dict[str, Decimal]:
    """``IN,CACHED,OUT`` per million tokens; CACHED may be ``-`` (no cached-input price: billed as input)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(
            f"{flags.echo(text)} is not IN,CACHED,OUT: give three prices per million tokens, such as 1.40,0.26,4.40"
        )
    prices = {"input": own_price(parts[0]), "output": own_price(parts[2])}
    if parts[1] != "-":
        prices["cached_input"] = own_price(parts[1])
    return prices


def own_discount(text: str) -> Decimal:
    """A discount in percent, 0 to 100."""
    value = _decimal(text.rstrip("% "), "a percentage")
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(
            f"{flags.echo(text)} is outside 0-100; a discount is a percentage of the price"
        )
    return value


def _comparison_json(result: Comparison) -> dict[str, Any]:
    turn = result.turn
    users = result.scenario.traffic.users
    return {
        "scenario": result.scenario.name,
        "as_of": result.as_of.isoformat(),
        "currency": result.scenario.currency,
        "turns_per_month": result.scenario.traffic.turns_per_month,
        "users": users,
        "turns_per_user_per_day": result.scenario.traffic.turns_per_user_per_day,
        "turn": (
            {
                "no_reuse": turn_json(turn.no_reuse, 1000),
                "reused": turn_json(turn.reused, 1000),
                "currency": turn.price.currency,
            }
            if turn
            else None
        ),
        "options": [_option_json(o, result) for o in result.options],
        "cheapest": result.cheapest,
        "break_even": [c.model_dump() for c in result.crossings],
        "stays_cheapest_above": (
            {"option": result.stays_cheapest[0], "turns_per_month": result.stays_cheapest[1]}
            if result.stays_cheapest
            else None
        ),
        "warnings": [words.warning(w) for w in result.warnings],
        "problems": [dataclasses.asdict(w) for w in result.warnings],
        "estimate_range": _estimate_range_json(result),
    }


def _option_json(o: OptionCost, result: Comparison, option: str | None = None) -> dict[str, Any]:
    users = result.scenario.traffic.users
    return {
        "option": option or o.option,
        "kind": o.option,
        "provider": o.provider,
        "offer": o.offer,
        "model": o.model,
        "monthly": float(o.monthly),
        "annual": float(o.annual),
        "monthly_per_user": console.num(o.monthly_per_user(users)),
        "cost_per_1000_turns": console.num(o.cost_per_1000_turns),
        "breakdown": {k: float(v) for k, v in o.breakdown.items()},
        "replicas": o.replicas,
        "gpus": o.gpus,
        "instances": o.instances,
        "gpu_hours": o.gpu_hours,
        "utilisation": o.utilisation,
        "capacity_requests_per_s": o.capacity.requests_per_s if o.capacity else None,
        "capacity_method": o.capacity.method if o.capacity else None,
        "capacity_bound": o.capacity.bound if o.capacity else None,
        "price_versions": [{**p.model_dump(mode="json"), "age_days": p.age_days(result.as_of)} for p in o.prices],
        "notes": list(o.notes),
    }


# --- several serverless offers side by side ---------------------------------------------------------------


def _turn_costs(result: Comparison) -> dict[str, Any] | None:
    if result.turn is None:
        return None
    return {
        "no_reuse": float(result.turn.no_reuse.cost_per_turn),
        "reused": float(result.turn.reused.cost_per_turn),
        "currency": result.turn.price.currency,
    }


def _side_by_side_json(rows: list[ServerlessRow], data: dict[str, Any]) -> None:
    """Each other serverless offer as an option (kind ``serverless``), with its turn and break-evens, and the
    cheapest of all options."""
    for row in rows[1:]:
        entry = _option_json(row.cost, row.result, row.option)
        data["options"].append(entry)
    for row, entry in zip(rows, [o for o in data["options"] if o["kind"] == "serverless"], strict=True):
        entry["turn"] = _turn_costs(row.result)
        entry["break_even"] = [c.model_dump() for c in row.crossings]
        entry["same_model"] = row.same_model
    every = [(o["monthly"], o["option"]) for o in data["options"]]
    data["cheapest"] = min(every)[1] if every else None
    data["cheapest_serverless"] = min((r.cost.monthly, r.option) for r in rows)[1] if rows else None


def _print_side_by_side(rows: list[ServerlessRow], cur: str) -> None:
    cheapest = min(rows, key=lambda r: r.cost.monthly)
    print("\nServerless offers side by side:")
    table = []
    for row in rows:
        turn = row.result.turn
        tc_turn = turn_currency(turn, row.result.scenario) if turn else None
        no_reuse = reused = "-"
        if turn is not None and tc_turn is not None:
            tc, convert = tc_turn
            no_reuse = format_small(convert(turn.no_reuse.cost_per_turn), tc)
            reused = format_small(convert(turn.reused.cost_per_turn), tc)
        model = row.cost.model or "-"
        if not row.same_model:
            model += " (another model)"
        above = [
            f"{OPTION_LABELS[c.b if c.a == 'serverless' else c.a]} at {c.turns_per_month:,.0f}" for c in row.crossings
        ]
        table.append(
            [
                f"{row.cost.provider}/{row.cost.offer}" + (" *" if row is cheapest else ""),
                model,
                format_money(row.cost.monthly, cur),
                no_reuse,
                reused,
                "; ".join(above[:2]) + (f" (+{len(above) - 2} more)" if len(above) > 2 else "") or "none",
            ]
        )
    print(console.table(table, ["Offer", "Model", "Per month", "No-reuse turn", "Reused turn", "Break-even with"]))
    print("* the cheapest serverless offer")


def _estimate_range_json(result: Comparison) -> dict[str, Any] | None:
    """The estimated options' costs and break-evens over the roofline's hold-out error band (None when every
    option rests on a measurement)."""
    band = result.estimate_range
    if band is None:
        return None
    return {
        "options": [
            {"option": c.option, "monthly_low": float(c.low), "monthly_high": float(c.high)} for c in band.costs
        ],
        "break_even": [c.model_dump() for c in band.crossings],
        "cheapest": list(band.cheapest),
        "cheapest_changes": band.cheapest_changes,
        "capacity_error_factors": [band.low_factor, band.high_factor],
        "provenance": band.provenance,
    }


def _print_estimate_range(result: Comparison) -> None:
    band = result.estimate_range
    if band is None:
        return
    cur = result.scenario.currency
    print(f"\nEstimated options as a range ({band.provenance}):")
    for c in band.costs:
        print(f"  {OPTION_LABELS[c.option]}: {format_money(c.low, cur)} - {format_money(c.high, cur)} per month")
    for r in band.crossings:
        print(
            f"  {OPTION_LABELS[r.a]} = {OPTION_LABELS[r.b]} between {r.low_turns_per_month:,.0f} and "
            f"{r.high_turns_per_month:,.0f} turns a month"
        )
    if band.cheapest_changes:
        print("  the cheapest option changes within this range: " + ", ".join(OPTION_LABELS[n] for n in band.cheapest))


_OPTION = {"dedicated": "dedicated", "gpu_vm": "self_hosted"}


def _pick_json(pick: Any) -> dict[str, Any]:
    d = pick.deployment
    return {
        "option": _OPTION[pick.kind],
        "provider": pick.provider,
        "offer": pick.offer,
        "configuration": pick.label,
        "rank": pick.rank,
        "of": pick.of,
        "meets_target": pick.meets_target,
        "evidence": d.evidence_kind if d is not None else "your sizing",
        "monthly": float(pick.monthly),
        "reason": pick.reason,
    }


def cmd_compare(args: argparse.Namespace) -> int:
    if args.save:
        console.check_save(args.save, "--save")
    if args.pdf:
        console.check_save(args.pdf, "--pdf")
    asked = _scenario_from_args(args)
    catalogs = load_catalogs(args.sheets, args.gpu_specs, args.records, args.models)
    for provider, model in getattr(args, "serverless", None) or []:
        try:
            catalogs.prices.serverless(provider, model)
        except InputError as exc:  # named as the flag the user typed, not the scenario field
            raise InputError("--serverless", f"{provider}/{model}: {exc.message}", exc.allowed) from None
    scenario, picks = with_cheapest(asked, catalogs)
    result = compare(scenario, catalogs)
    several = len(getattr(args, "serverless", None) or []) > 1
    side = serverless_side_by_side(result, catalogs, args.serverless[1:]) if several else []
    by_share = break_even_by_prefix_share(scenario, catalogs) if args.by_prefix_share else None
    repricing = None
    if scenario.prices_used or args.save:
        # imported here: only a pinned scenario or --save reads prices then and now (its models take a
        # few ms to build, which every other run would pay at start)
        from calculator.pricing.pinning import pin_prices, reprice

        repricing = reprice(scenario, catalogs) if scenario.prices_used else None
    if args.save:
        # the file keeps what was asked ('cheapest' stays a search) with the prices this answer used
        console.save(Path(args.save), dump_scenario(pin_prices(asked, catalogs, result)), "--save")
    if args.pdf:
        # the Compare page's one-page summary, written whole or not at all (imported here: fpdf, the charts'
        # renderer and pandas are needed only for it)
        from calculator.present.report import summary_pdf

        console.save(Path(args.pdf), summary_pdf(result, catalogs), "--pdf")
    if args.json:
        data = _comparison_json(result)
        data["offers_chosen"] = [_pick_json(p) for p in picks]
        if side:
            _side_by_side_json(side, data)
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
                "retired": [
                    {
                        "option": r.option,
                        "offer": f"{r.provider}/{r.offer}",
                        "date": r.date.isoformat(),
                        "successor": r.successor or None,
                        "effective_before": r.effective_before.isoformat(),
                    }
                    for r in repricing.retired
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
    for p in picks:
        print(f"{OPTION_LABELS[_OPTION[p.kind]]} (offer: cheapest): {p.label}, {p.reason}")
    users = s.traffic.users
    for o in result.options:
        per_user = o.monthly_per_user(users)
        print(
            f"{OPTION_LABELS[o.option]}: {format_money(o.annual, cur)} a year"
            + (f", {format_money(per_user, cur)} per user a month" if per_user is not None else "")
        )
    if users:
        print(f"{users:,} users, {s.traffic.turns_per_user_per_day:,.1f} turns per user a day")
    if side:
        _print_side_by_side(side, cur)
    if result.turn:
        t = result.turn
        tc, convert = turn_currency(t, scenario)
        print(
            f"\nPer turn on {t.price.provider}/{t.price.model}: no reuse "
            f"{format_small(convert(t.no_reuse.cost_per_turn), tc)}, reused prefix "
            f"{format_small(convert(t.reused.cost_per_turn), tc)} ({float(t.saving_share):.0%} less)"
        )
    if result.crossings:
        print("\nBreak-even (turns per month):")
        for run in crossing_runs(result.crossings):
            c, last = run[0], run[-1]
            if len(run) == 1:
                print(
                    f"  {OPTION_LABELS[c.a]} = {OPTION_LABELS[c.b]} at {c.turns_per_month:,.0f}; "
                    f"above it {OPTION_LABELS[c.cheaper_above]} is cheaper"
                )
            else:  # replica steps: the range, once (--json lists every volume)
                print(
                    f"  {OPTION_LABELS[c.a]} and {OPTION_LABELS[c.b]} swap places {len(run)} times from "
                    f"{c.turns_per_month:,.0f} to {last.turns_per_month:,.0f}; above it "
                    f"{OPTION_LABELS[last.cheaper_above]} is cheaper"
                )
    if result.stays_cheapest:
        name, vol = result.stays_cheapest
        print(f"  {OPTION_LABELS[name]} stays cheapest above {vol:,.0f} turns a month.")
    _print_estimate_range(result)
    if by_share:
        print("\nBreak-even by prefix share:")
        for share, found, _ in by_share:
            text = "; ".join(f"{c.a}/{c.b} at {c.turns_per_month:,.0f}" for c in found) or "no crossing"
            print(f"  {share:.0%}: {text}")
    print("\nPrice versions used:")
    for o in result.options:
        for p in o.prices:
            age = price_age_text(p.read, result.as_of, dt.date.today())
            print(f"  {o.option}: {p.provider}/{p.offer} effective {p.effective} - {p.source} ({age}, on {p.read})")
            if is_stale(p.read, result.as_of):
                print(f"    older than {STALE_AFTER_DAYS} days: check the provider's current price")
        for note in o.notes:
            print(f"    {note}")
    if repricing is not None:
        # imported here: the report module brings pandas, which only a pinned scenario's table needs
        from calculator.present.report import plain, price_changes_frame, repricing_sentences

        print("\nSince this scenario was saved:")
        for line in repricing_sentences(repricing, scenario):
            print(f"  {plain(line)}")
        for _, row in price_changes_frame(repricing, scenario).iterrows():
            print(f"  {row['Offer']} {row['Price']}: {row['Then']} -> {row['Now']} ({row['Change']})")
        if not repricing.changes and not repricing.retired:
            print("  no price it used has changed")
    for w in result.warnings:
        print(f"\nWarning: {words.warning(w)}")
    if args.save:
        print(f"\nSaved with its prices pinned: {args.save}")
    if args.pdf:
        print(f"One-page summary (PDF): {args.pdf}")
    return 0


def add_compare_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    cmp_ = sub.add_parser("compare", parents=[common], help="serverless vs dedicated vs self-hosted per month")
    folders.add_data_folders(cmp_, *folders.DATA_FOLDERS)
    cmp_.add_argument("--scenario", help="scenario YAML file")
    cmp_.add_argument("--preset", help="a bundled scenario (see: presets)")
    cmp_.add_argument(
        "--serverless",
        action="append",
        type=serverless_ref,
        metavar="PROVIDER/MODEL",
        help="a serverless offer; give it several times to price several side by side (the first is the scenario's)",
    )
    cmp_.add_argument("--provider", help="serverless provider")
    cmp_.add_argument("--model", help="serverless model")
    cmp_.add_argument("--dedicated", type=flags.offer_ref, help="dedicated offer as PROVIDER:OFFER")
    cmp_.add_argument("--gpu-vm", type=flags.offer_ref, help="GPU VM offer as PROVIDER:OFFER")
    cmp_.add_argument("--record", help="throughput record id (see: records)")
    cmp_.add_argument(
        "--self-hosted-model",
        help="model id the dedicated and self-hosted options run (see: models); default: the serverless model "
        "when its weights are open",
    )
    own = cmp_.add_argument_group("own prices", "your negotiated prices, in the scenario's currency")
    own.add_argument(
        "--serverless-price",
        type=own_token_prices,
        metavar="IN,CACHED,OUT",
        help="your per-token prices for the serverless offer, per million tokens (CACHED may be -)",
    )
    own.add_argument("--serverless-discount", type=own_discount, metavar="PCT", help="percent off its listed prices")
    own.add_argument("--dedicated-hour-price", type=own_price, metavar="PRICE", help="your dedicated GPU-hour price")
    own.add_argument("--gpu-hour-price", type=own_price, metavar="PRICE", help="your GPU VM price per GPU-hour")
    own.add_argument("--own-price-name", metavar="TEXT", help='what your prices are ("ACME negotiated, 2026-12")')
    cmp_.add_argument("--as-of", type=flags.iso_date)
    cmp_.add_argument("--currency", choices=list(CODES), help="show every figure in this currency")
    cmp_.add_argument("--usd-per-eur", type=flags.usd_per_eur, help="US dollars per euro (the same as --fx EUR=RATE)")
    cmp_.add_argument(
        "--fx",
        type=flags.fx_rate,
        action="append",
        metavar="CUR=RATE",
        help=f"an exchange rate, repeatable: {flags.FX_FORM}; default: the dated reference rates in data/fx_rates.yaml",
    )
    cmp_.add_argument("--input-tokens", type=flags.tokens)
    cmp_.add_argument("--prefix-share", type=flags.share)
    cmp_.add_argument("--hit-rate", type=flags.share)
    cmp_.add_argument("--output-tokens", type=flags.tokens)
    cmp_.add_argument("--cache-write-share", type=flags.share)
    cmp_.add_argument("--cache-ttl")
    cmp_.add_argument("--batch", action="store_true")
    cmp_.add_argument("--turns-per-month", type=flags.turns_per_month)
    cmp_.add_argument("--turns-per-day", type=flags.turns_per_day)
    cmp_.add_argument("--users", type=flags.users, help="people (seats) served: adds the cost per user")
    cmp_.add_argument(
        "--turns-per-user-per-day",
        type=flags.turns_per_user_per_day,
        help="the volume as turns per user a day (needs --users)",
    )
    cmp_.add_argument("--peak-to-average", type=flags.peak_to_average)
    cmp_.add_argument("--active-hours-per-day", type=flags.active_hours)
    cmp_.add_argument("--target-utilisation", type=flags.utilisation)
    cmp_.add_argument("--spare-replicas", type=flags.replicas)
    cmp_.add_argument("--engineer-share", type=flags.engineer_share)
    cmp_.add_argument("--build-minutes-per-change", type=flags.minutes)
    cmp_.add_argument("--autoscale", action="store_true", help="scale GPUs down outside the active hours")
    cmp_.add_argument("--by-prefix-share", action="store_true", help="also show break-even by prefix share")
    cmp_.add_argument(
        "--save", type=console.save_path, help="write the scenario to this YAML file with the prices it used pinned"
    )
    cmp_.add_argument(
        "--pdf",
        type=console.save_path,
        help="write the one-page summary (the Compare page's PDF) to this file, whole or not at all",
    )
    cmp_.set_defaults(func=cmd_compare)
