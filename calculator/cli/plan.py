"""``python -m calculator profile | hybrid | growth``: load over the day, hybrid plans, growth.

Registered by :func:`add_plan_parsers`; each takes ``--preset NAME`` or ``--scenario FILE`` like
``compare`` and prints a table, or JSON with ``--json`` (money as JSON numbers). Bad input raises
InputError / DataFileError (or an argparse error), which the main command line turns into one line
and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from calculator.cli import console, flags, folders, words
from calculator.cli.scenario_args import required_scenario, with_cheapest
from calculator.planning.growth import MAX_MONTHS, MIN_MONTHS, GrowthPlan, grow
from calculator.planning.hybrid import HybridPlan, HybridResult, Owned, hybrid_plan
from calculator.planning.load_profile import (
    PRESETS,
    LoadProfile,
    ProfileCosts,
    load_profile,
    profile_costs,
)
from calculator.present.money import format_money
from calculator.pricing.compare import OPTION_LABELS, Catalogs, load_catalogs
from calculator.pricing.option import OptionCost
from calculator.scenario.model import Scenario

__all__ = ["add_plan_parsers", "cmd_growth", "cmd_hybrid", "cmd_profile"]


# --- argument types ------------------------------------------------------------------------------


def _percentile(text: str) -> float:
    value = flags.number(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..100 (80 = the p80 hour)")
    return value


def _months(text: str) -> int:
    value = flags.whole_number(text, "a whole number of months")
    if not MIN_MONTHS <= value <= MAX_MONTHS:
        raise argparse.ArgumentTypeError(f"{text} is outside {MIN_MONTHS}..{MAX_MONTHS}")
    return value


def _rate(text: str) -> float:
    value = flags.number(text)
    if not -0.5 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is outside -0.5..1 (0.05 = 5% a month)")
    return value


# --- shared helpers --------------------------------------------------------------------------------


def _scenario(args: argparse.Namespace) -> Scenario:
    scenario = required_scenario(args)
    if getattr(args, "as_of", None):
        scenario = scenario.model_copy(update={"as_of": args.as_of})
    turns = getattr(args, "turns_per_month", None)
    if turns is not None:
        scenario = scenario.model_copy(
            update={"traffic": scenario.traffic.model_copy(update={"turns_per_month": turns})}
        )
    return scenario


def _catalogs(args: argparse.Namespace) -> Catalogs:
    return load_catalogs(args.sheets, args.gpu_specs, args.records, args.models)


def _priced(scenario: Scenario, args: argparse.Namespace) -> tuple[Scenario, Catalogs]:
    """The scenario as priced (``offer: cheapest`` picked by the deployment search) and the catalogues."""
    catalogs = _catalogs(args)
    return with_cheapest(scenario, catalogs)[0], catalogs


def _profile(args: argparse.Namespace, scenario: Scenario) -> LoadProfile:
    if args.profile in (None, "scenario"):
        base = scenario.load_profile  # the profile the scenario holds, else its traffic model
        return base.with_burst(args.burst) if args.burst is not None else base
    return load_profile(args.profile, args.burst, args.daily_shape)


def _autoscale(args: argparse.Namespace) -> bool | None:
    return True if args.autoscale else (False if args.always_on else None)


def _profile_json(p: LoadProfile) -> dict[str, Any]:
    return {
        "name": p.name,
        "source": p.source,
        "weights": list(p.weights),
        "shares": [float(x) for x in p.shares],
        "days_per_week": p.days_per_week,
        "burst": p.burst,
        "within_hour_measured": p.within_hour is not None,
        "daily_peak_to_average": p.daily_peak_to_average,
        "peak_to_average": p.peak_to_average,
        "notes": list(p.notes),
    }


def _option_json(o: OptionCost | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {
        "option": o.option,
        "provider": o.provider,
        "offer": o.offer,
        "model": o.model,
        "monthly": float(o.monthly),
        "breakdown": {k: float(v) for k, v in o.breakdown.items()},
        "replicas": o.replicas,
        "gpus": o.gpus,
        "instances": o.instances,
        "gpu_hours": o.gpu_hours,
        "notes": list(o.notes),
    }


def _profile_lines(p: LoadProfile) -> list[str]:
    from calculator.planning.load_profile import weights_text

    lines = [
        f"Load profile {p.name}: {p.source}",
        f"  hours 00..23  |{weights_text(p.weights)}|  ({p.days_per_week:g} day(s) a week)",
        f"  peak-to-average {p.peak_to_average:.2f}: busiest hour {float(p.hourly_factors.max()):.2f}x the day's "
        f"mean x within-hour burst {p.burst:.2f}" + (" x 7/days a week" if p.days_per_week < 7 else ""),
    ]
    lines += [f"  note: {n}" for n in p.notes]
    return lines


# --- profile -------------------------------------------------------------------------------------


def _costs_json(c: ProfileCosts) -> dict[str, Any]:
    return {
        "turns_per_month": c.turns_per_month,
        "currency": c.currency,
        "profile": _profile_json(c.profile),
        "serverless": _option_json(c.serverless),
        "dedicated": _option_json(c.dedicated),
        "self_hosted_always_on": _option_json(c.self_hosted_always_on),
        "self_hosted_autoscaled": _option_json(c.self_hosted_autoscaled),
        "autoscale": c.autoscale,
        "hours": c.frame().to_dict(orient="records"),
        "warnings": [words.warning(w) for w in c.warnings],
        "problems": [dataclasses.asdict(w) for w in c.warnings],
    }


def cmd_profile(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    profile = _profile(args, scenario)
    costs = profile_costs(*_priced(scenario, args), profile, autoscale=_autoscale(args))
    if args.json:
        console.emit(_costs_json(costs))
        return 0
    cur = costs.currency
    print(f"{scenario.name}: {costs.turns_per_month:,} turns a month")
    print("\n".join(_profile_lines(profile)))
    frame = costs.frame()
    rows = []
    for r in frame.to_dict(orient="records"):
        rows.append(
            [
                f"{int(r['hour']):02d}:00",
                f"{r['share']:.1%}",
                f"{r['load_rps']:.3f}",
                f"{r['peak_rps']:.3f}",
                str(int(r["replicas"])) if "replicas" in r else "-",
                str(int(r["instances_autoscaled"])) if "instances_autoscaled" in r else "-",
            ]
        )
    print()
    print(console.table(rows, ["Hour", "Share", "Req/s", "Peak req/s", "Replicas", "Instances (autoscaled)"]))
    print()
    options = [
        ("Serverless API", costs.serverless),
        ("Dedicated endpoint (always on)", costs.dedicated),
        ("Self-hosted GPUs, always on", costs.self_hosted_always_on),
        ("Self-hosted GPUs, autoscaled", costs.self_hosted_autoscaled),
    ]
    table = [
        [
            label,
            format_money(o.monthly, cur),
            "-" if o.gpus is None else str(o.gpus),
            "-" if o.gpu_hours is None else f"{o.gpu_hours:,.0f}",
        ]
        for label, o in options
        if o is not None
    ]
    print(console.table(table, ["Option", "Per month", "GPUs at peak", "GPU hours"]))
    for w in costs.warnings:
        print(f"\nWarning: {words.warning(w)}")
    return 0


# --- hybrid --------------------------------------------------------------------------------------


def _plan_json(plan: HybridPlan) -> dict[str, Any]:
    return {
        "percentile": plan.percentile,
        "owned_option": plan.owned_option,
        "owned_replicas": plan.owned_replicas,
        "autoscale": plan.autoscale,
        "owned_monthly": float(plan.owned_monthly),
        "owned": _option_json(plan.owned),
        "overflow_turns": plan.overflow_turns,
        "overflow_share": plan.overflow_share,
        "overflow_monthly": float(plan.overflow_monthly),
        "monthly": float(plan.monthly),
        "hours": [h.model_dump() for h in plan.hours],
    }


def _hybrid_json(result: HybridResult) -> dict[str, Any]:
    return {
        "scenario": result.scenario,
        "currency": result.currency,
        "turns_per_month": result.turns_per_month,
        "profile": _profile_json(result.profile),
        "plan": _plan_json(result.plan),
        "best": {
            "percentile": result.best.percentile,
            "percentiles": list(result.best_percentiles),
            "owned_replicas": result.best.owned_replicas,
            "monthly": float(result.best.monthly),
        },
        "pure": {k: float(v) for k, v in result.pure_monthly().items()},
        "pure_self_hosted": {
            "always_on": console.num(
                result.pure.self_hosted_always_on.monthly if result.pure.self_hosted_always_on else None
            ),
            "autoscaled": console.num(
                result.pure.self_hosted_autoscaled.monthly if result.pure.self_hosted_autoscaled else None
            ),
        },
        "curve": [{"percentile": p, "monthly": float(m)} for p, m in result.curve],
        # the warnings were notes before they were structured; they stay in the list for scripts reading it
        "notes": [*result.notes, *(words.warning(w) for w in result.warnings)],
        "warnings": [words.warning(w) for w in result.warnings],
    }


def cmd_hybrid(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    profile = _profile(args, scenario)
    owned: Owned = "dedicated" if args.owned == "dedicated" else "self_hosted"
    result = hybrid_plan(
        *_priced(scenario, args), profile, percentile=args.percentile, owned=owned, autoscale=_autoscale(args)
    )
    if args.json:
        console.emit(_hybrid_json(result))
        return 0
    cur = result.currency
    plan = result.plan
    print(f"{result.scenario}: {result.turns_per_month:,} turns a month")
    print("\n".join(_profile_lines(profile)))
    what = OPTION_LABELS[plan.owned_option]
    asked = "asked for" if args.percentile is not None else "cheapest"
    print(
        f"\nHybrid at the p{plan.percentile:g} hour ({asked}): {plan.owned_replicas} owned replica(s) "
        f"({what}{', autoscaled' if plan.autoscale else ''}), {plan.overflow_share:.1%} of turns "
        f"({plan.overflow_turns:,}) overflow to the serverless API"
    )
    rows = [
        [
            f"{h.hour:02d}:00",
            f"{h.load_rps:.3f}",
            f"{h.peak_rps:.3f}",
            str(h.needed_replicas),
            str(h.owned_replicas),
            f"{h.owned_capacity_rps:.3f}",
            f"{h.overflow_rps:.3f}",
        ]
        for h in plan.hours
    ]
    print(console.table(rows, ["Hour", "Req/s", "Peak", "Needs", "Owned", "Owned cap. req/s", "Overflow req/s"]))
    print()
    table = [
        [
            f"Hybrid p{plan.percentile:g}",
            format_money(plan.owned_monthly, cur),
            format_money(plan.overflow_monthly, cur),
            format_money(plan.monthly, cur),
        ],
    ]
    if plan is not result.best and result.best.percentile != plan.percentile:
        b = result.best
        table.append(
            [
                f"Hybrid p{b.percentile:g} (cheapest)",
                format_money(b.owned_monthly, cur),
                format_money(b.overflow_monthly, cur),
                format_money(b.monthly, cur),
            ]
        )
    for name, cost in result.pure.options().items():
        table.append([f"{OPTION_LABELS[name]} only", "", "", format_money(cost.monthly, cur)])
    print(console.table(table, ["Plan", "Owned", "Overflow", "Per month"]))
    lo, hi = result.best_percentiles
    span = f"p{lo:g}" if lo == hi else f"p{lo:g}..p{hi:g}"
    print(f"\nCheapest: {span} at {format_money(result.best.monthly, cur)} a month.")
    for n in result.notes:
        print(f"  {n}")
    for w in result.warnings:
        print(f"  warning: {words.warning(w)}")
    return 0


# --- growth --------------------------------------------------------------------------------------


def _growth_json(plan: GrowthPlan) -> dict[str, Any]:
    return {
        "scenario": plan.scenario,
        "currency": plan.currency,
        "months": plan.months,
        "growth_per_month": plan.growth_per_month,
        "start_turns_per_month": plan.start_turns_per_month,
        "rows": [
            {
                "month": r.month,
                "turns_per_month": r.turns_per_month,
                "monthly": {k: float(v) for k, v in r.monthly.items()},
                "cumulative": {k: float(v) for k, v in r.cumulative.items()},
                "cheapest": r.cheapest,
            }
            for r in plan.rows
        ],
        "becomes_cheapest": plan.becomes_cheapest,
        "stays_cheapest": (
            {"option": plan.stays_cheapest[0], "from_month": plan.stays_cheapest[1]} if plan.stays_cheapest else None
        ),
        "crossings": [c.model_dump() for c in plan.crossings],
        "totals": {k: float(v) for k, v in plan.totals.items()},
        "notes": list(plan.notes),
    }


def cmd_growth(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    plan = grow(*_priced(scenario, args), args.months, args.growth_per_month, args.start_turns_per_month)
    if args.json:
        console.emit(_growth_json(plan))
        return 0
    cur = plan.currency
    names = list(plan.totals)
    print(f"{plan.scenario}: {plan.growth_per_month:+.1%} a month over {plan.months} months")
    rows = [
        [str(r.month), f"{r.turns_per_month:,}"]
        + [format_money(r.monthly[n], cur) + (" *" if r.cheapest == n else "") for n in names]
        for r in plan.rows
    ]
    print(console.table(rows, ["Month", "Turns"] + [OPTION_LABELS[n] for n in names]))
    print("* cheapest that month\n")
    print(
        console.table(
            [
                [
                    OPTION_LABELS[n],
                    format_money(plan.totals[n], cur),
                    "never" if plan.becomes_cheapest[n] is None else f"month {plan.becomes_cheapest[n]}",
                ]
                for n in names
            ],
            ["Option", f"Total over {plan.months} months", "First cheapest"],
        )
    )
    if plan.stays_cheapest:
        name, month = plan.stays_cheapest
        print(f"\n{OPTION_LABELS[name]} is cheapest from month {month} to the end.")
    for c in plan.crossings:
        print(
            f"  {OPTION_LABELS[c.a]} = {OPTION_LABELS[c.b]} at {c.turns_per_month:,.0f} turns: "
            f"month {c.month}, then {OPTION_LABELS[c.cheaper_after]} is cheaper"
        )
    for n in plan.notes:
        print(f"  {n}")
    return 0


# --- parsers -------------------------------------------------------------------------------------


def _add_scenario_args(p: argparse.ArgumentParser) -> None:
    folders.add_data_folders(p, *folders.DATA_FOLDERS)
    p.add_argument("--preset", help="a bundled scenario (see: presets)")
    p.add_argument("--scenario", help="scenario YAML file")
    p.add_argument("--as-of", type=flags.iso_date, help="price date YYYY-MM-DD (default: the scenario's, else today)")


def _add_profile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        help=f"load over the day: {', '.join(PRESETS)}, or a request log (CSV with TIMESTAMP, JSON Lines with "
        "timestamp); default: the scenario's own load profile, else its active hours and peak-to-average",
    )
    p.add_argument(
        "--burst",
        type=flags.peak_to_average,
        help="within-hour peak-to-average (default: 1 for presets, measured for logs)",
    )
    p.add_argument(
        "--daily-shape",
        default="flat",
        choices=list(PRESETS),
        help="daily shape to use with a log shorter than a day (default flat)",
    )
    p.add_argument("--turns-per-month", type=flags.turns_per_month, help="monthly volume (default: the scenario's)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--autoscale", action="store_true", help="self-hosted GPUs follow the hourly load")
    mode.add_argument("--always-on", action="store_true", help="self-hosted GPUs stay up for the busiest hour")


def add_plan_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``profile``, ``hybrid`` and ``growth`` on ``sub`` (the main parser's subparsers)."""
    prof = sub.add_parser(
        "profile",
        parents=[common],
        help="a 24-hour load profile and what it does to GPU costs (always on vs autoscaled)",
    )
    _add_scenario_args(prof)
    _add_profile_args(prof)
    prof.set_defaults(func=cmd_profile)

    hyb = sub.add_parser(
        "hybrid",
        parents=[common],
        help="owned GPUs for a percentile hour, the overflow to the serverless API",
        description="Owned capacity sized for the P-th percentile hour of the load profile; traffic above "
        "it goes to the scenario's serverless offer. Without --percentile, searches 0..100 for the cheapest.",
    )
    _add_scenario_args(hyb)
    _add_profile_args(hyb)
    hyb.add_argument("--percentile", type=_percentile, help="size owned capacity for this hour (default: the best)")
    hyb.add_argument(
        "--owned", choices=["self-hosted", "dedicated"], default="self-hosted", help="what the owned part is"
    )
    hyb.set_defaults(func=cmd_hybrid)

    gro = sub.add_parser(
        "growth", parents=[common], help="monthly cost of each option as traffic compounds over 12-36 months"
    )
    _add_scenario_args(gro)
    gro.add_argument("--months", type=_months, default=24, help=f"{MIN_MONTHS}..{MAX_MONTHS} (default 24)")
    gro.add_argument("--growth-per-month", type=_rate, default=0.05, help="compound rate a month (default 0.05)")
    gro.add_argument(
        "--start-turns-per-month", type=flags.turns_per_month, help="month 1's volume (default: the scenario's)"
    )
    gro.set_defaults(func=cmd_growth)
