"""``python -m calculator ttl`` and ``python -m calculator sheets import-genai-prices``.

:func:`add_ttl_parser` registers the ``ttl`` subcommand; :func:`run_genai_import` is the handler of the
``sheets import-genai-prices`` action. Bad input raises InputError / DataFileError (or argparse's error,
which the main parser turns into a UsageError), so the main command line prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

from calculator.catalog.genai_prices import (
    DiffEntry,
    ImportReport,
    Status,
    WriteResult,
    diff_sheets,
    write_proposals,
)
from calculator.catalog.prices import DEFAULT_SHEETS_DIR, ServerlessPriceVersion, load_price_sheets
from calculator.cli import console, flags, folders
from calculator.errors import InputError
from calculator.present.money import format_money, format_small
from calculator.pricing.ttl import (
    DEFAULT_SESSIONS_PER_MONTH,
    EmpiricalGaps,
    ExponentialGaps,
    GapDistribution,
    LogGaps,
    LognormalGaps,
    TtlAdvice,
    advise_ttl,
    parse_gap_list,
    read_session_log,
)

__all__ = ["add_ttl_parser", "cmd_ttl", "run_genai_import"]

STATUSES: tuple[Status, ...] = ("same", "changed", "new", "missing", "retired", "older")
"""Every status of the diff, in the order the counts are printed."""
ROW_ORDER: tuple[Status, ...] = ("changed", "older", "retired", "same", "missing", "new")
"""The order of the rows: what needs a decision first."""


# --- ttl -------------------------------------------------------------------------------------------------


def add_ttl_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the ``ttl`` subcommand on ``sub`` (the main parser's subparsers)."""
    p: argparse.ArgumentParser = sub.add_parser(
        "ttl",
        parents=[common],
        help="which cache lifetime (5m or 1h) is cheaper for the gaps between a session's turns",
        description="Expected cache writes and reads per session under each cache lifetime an offer sells, "
        "their cost per session and per month, the cheaper lifetime and the break-even reads per write. "
        "Gaps: a list (one typical session), a lognormal or exponential distribution by its median, or a "
        "log (JSON Lines with a session id and timestamp, or a Mooncake trace).",
    )
    folders.add_data_folders(p, "sheets")
    p.add_argument("--provider", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--prefix-tokens", type=flags.context, required=True, help="tokens of the cached prompt start")
    gaps = p.add_mutually_exclusive_group(required=True)
    gaps.add_argument("--gaps-seconds", help="gaps between turns, e.g. 30,120,600 (one session unless --turns-...)")
    gaps.add_argument("--gap-median-seconds", type=flags.positive, help="median gap, with --gap-distribution")
    gaps.add_argument("--log", type=Path, help="JSON Lines log (session id + timestamp) or Mooncake trace; .gz ok")
    p.add_argument("--gap-distribution", choices=["lognormal", "exponential"], default="lognormal")
    p.add_argument("--gap-sigma", type=flags.positive, default=1.0, help="lognormal spread of ln(gap) (default 1.0)")
    p.add_argument("--log-format", choices=["auto", "jsonl", "mooncake"], default="auto")
    p.add_argument(
        "--turns-per-session",
        type=flags.turns_per_session,
        help="turns per session (default: gaps + 1 for a list, the log's mean; needed with a median)",
    )
    p.add_argument(
        "--sessions-per-month",
        type=flags.sessions_per_month,
        help=f"sessions a month (default: the log's rate, else {DEFAULT_SESSIONS_PER_MONTH:,})",
    )
    p.add_argument("--as-of", type=flags.iso_date, help="price date YYYY-MM-DD (default today)")
    p.set_defaults(func=cmd_ttl)
    return p


def _gaps_from_args(args: argparse.Namespace) -> tuple[GapDistribution, float, float, str, LogGaps | None]:
    """(gaps, turns per session, sessions per month, where that came from, the log read)."""
    log: LogGaps | None = None
    turns: float | None = args.turns_per_session
    per_month: float | None = args.sessions_per_month
    source = "given"
    gaps: GapDistribution
    if args.log is not None:
        log = read_session_log(args.log, args.log_format)
        gaps = log.distribution()
        if turns is None:
            turns = log.turns_per_session
        if per_month is None and log.sessions_per_month is not None:
            per_month, source = log.sessions_per_month, "the log's session rate"
    elif args.gaps_seconds is not None:
        listed = EmpiricalGaps(parse_gap_list(args.gaps_seconds))
        gaps = listed
        if turns is None:
            turns = len(listed.gaps) + 1
    else:
        if turns is None:
            raise InputError("--turns-per-session", "give the turns per session with --gap-median-seconds")
        median = args.gap_median_seconds
        gaps = (
            ExponentialGaps(median) if args.gap_distribution == "exponential" else LognormalGaps(median, args.gap_sigma)
        )
    if per_month is None:
        per_month, source = float(DEFAULT_SESSIONS_PER_MONTH), "assumed (--sessions-per-month not given)"
    return gaps, float(turns), per_month, source, log


def advice_json(advice: TtlAdvice, log: LogGaps | None = None) -> dict[str, Any]:
    ref = advice.price
    cheapest = advice.cheapest
    return {
        "provider": ref.provider,
        "model": ref.model,
        "currency": ref.currency,
        "prefix_tokens": advice.prefix_tokens,
        "turns_per_session": advice.turns_per_session,
        "sessions_per_month": advice.sessions_per_month,
        "sessions_per_month_source": advice.sessions_per_month_source,
        "gaps": advice.gaps.to_json(),
        "log": log.to_json() if log else None,
        "ttls": [
            {
                "ttl": o.ttl,
                "ttl_seconds": o.ttl_seconds,
                "hit_probability": o.hit_probability,
                "writes_per_session": o.writes_per_session,
                "reads_per_session": o.reads_per_session,
                "written_tokens_per_session": o.written_tokens_per_session,
                "read_tokens_per_session": o.read_tokens_per_session,
                "write_price": float(o.write_price),
                "read_price": float(o.read_price),
                "cost_per_session": o.cost_per_session,
                "cost_per_month": o.cost_per_month,
                "break_even_reads_per_write_vs_no_cache": console.num(o.break_even_reads_vs_no_cache),
            }
            for o in advice.outcomes
        ],
        "no_cache": {
            "input_price": float(advice.input_price),
            "cost_per_session": advice.no_cache_cost_per_session,
            "cost_per_month": advice.no_cache_cost_per_month,
        },
        "cheapest_ttl": cheapest.ttl,
        "caching_pays": advice.caching_pays,
        "saving_per_month": advice.saving_per_month,
        "break_even": [
            {
                "shorter": b.shorter,
                "longer": b.longer,
                "reads_per_write": console.num(b.reads_per_write),
                "extra_hit_probability": b.extra_hit_probability,
                "observed_reads_per_write": b.observed_reads_per_write,
            }
            for b in advice.break_even
        ],
        "price_version": {
            "effective": ref.effective.isoformat(),
            "source": ref.source,
            "read": ref.read.isoformat(),
            "note": ref.note,
        },
        "notes": list(advice.notes),
    }


def cmd_ttl(args: argparse.Namespace) -> int:
    catalog = load_price_sheets(getattr(args, "sheets", None))
    sheet, offer = catalog.serverless(args.provider, args.model)
    as_of = args.as_of or dt.date.today()
    version = offer.version_at(as_of)
    gaps, turns, per_month, source, log = _gaps_from_args(args)
    advice = advise_ttl(
        sheet,
        offer,
        version,
        prefix_tokens=args.prefix_tokens,
        gaps=gaps,
        turns_per_session=turns,
        sessions_per_month=per_month,
        sessions_per_month_source=source,
    )
    if args.json:
        data = advice_json(advice, log)
        data["as_of"] = as_of.isoformat()
        console.emit(data)
        return 0
    cur = sheet.currency
    print(f"{offer.model} on {sheet.name}, prices as of {as_of.isoformat()}")
    print(
        f"Prefix {advice.prefix_tokens:,} tokens, {turns:.3g} turns per session, {gaps.describe()}; "
        f"{per_month:,.0f} sessions a month ({source})"
    )
    if log is not None:
        print(
            f"Log {log.path} ({log.format}): {log.sessions:,} sessions, {log.turns:,} requests"
            + (f", {log.malformed:,} lines skipped" if log.malformed else "")
        )
    rows = []
    for o in advice.outcomes:
        rows.append(
            [
                o.ttl + (" *" if o is advice.cheapest else ""),
                f"{o.hit_probability:.0%}",
                f"{o.writes_per_session:.2f}",
                f"{o.reads_per_session:.2f}",
                format_small(o.cost_per_session, cur),
                format_money(o.cost_per_month, cur),
            ]
        )
    rows.append(
        [
            "no cache",
            "-",
            "-",
            "-",
            format_small(advice.no_cache_cost_per_session, cur),
            format_money(advice.no_cache_cost_per_month, cur),
        ]
    )
    print()
    print(console.table(rows, ["TTL", "Hit", "Writes/session", "Reads/session", "Per session", "Per month"]))
    print("* cheaper lifetime" + ("" if advice.caching_pays else "; but not caching at all is cheaper still"))
    for b in advice.break_even:
        if b.reads_per_write is None:
            print(f"\n{b.longer} never pays off against {b.shorter}: a rewrite is no dearer than a read.")
            continue
        print(
            f"\n{b.longer} pays off against {b.shorter} from {float(b.reads_per_write):.2f} reads per {b.longer} write "
            f"on turns {b.shorter} would rewrite (gap between {b.shorter} and {b.longer}); this pattern gives "
            f"{b.observed_reads_per_write:.2f} ({b.extra_hit_probability:.0%} of gaps)."
        )
    for o in advice.outcomes:
        if o.break_even_reads_vs_no_cache is not None:
            print(f"{o.ttl} beats not caching from {float(o.break_even_reads_vs_no_cache):.2f} reads per write.")
    for note in advice.notes:
        print(f"Note: {note}")
    ref = advice.price
    print(f"Price version: effective {ref.effective.isoformat()}, source {ref.source} (read {ref.read.isoformat()})")
    return 0


# --- sheets import-genai-prices ----------------------------------------------------------------------


def _version_prices(version: ServerlessPriceVersion | None) -> dict[str, Any] | None:
    if version is None:
        return None
    p = version.prices
    return {
        "effective": version.effective.isoformat(),
        "input": float(p.input),
        "cached_input": console.num(p.cached_input),
        "cache_write": {k: float(v) for k, v in (p.cache_write or {}).items()},
        "output": float(p.output),
        "cache_storage_per_hour": console.num(p.cache_storage_per_hour),
        "long_context": [
            {"above_tokens": t.above_tokens, "input": float(t.input), "output": float(t.output)}
            for t in version.long_context
        ],
        "batch_discount": console.num(version.batch_discount),
        "batch_applies_to": list(version.batch_applies_to) if version.batch_discount is not None else None,
        "source": version.source.url or version.source.document,
        "read": version.source.read.isoformat(),
    }


def _value_json(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value


def _entry_json(e: DiffEntry) -> dict[str, Any]:
    return {
        "provider": e.provider,
        "status": e.status,
        "model": e.model,
        "offer_id": e.offer_id,
        "genai_model": e.genai_id,
        "changes": [{"field": c.field, "old": _value_json(c.old), "new": _value_json(c.new)} for c in e.changes],
        "old": _version_prices(e.old),
        "new": _version_prices(e.proposal.version) if e.proposal else None,
        "kept_from_ours": list(e.proposal.kept) if e.proposal else [],
        "deprecated": e.proposal.deprecated if e.proposal else None,
        "writable": e.writable,
        "write_effective": e.write_effective.isoformat() if e.write_effective else None,
        "reason": e.reason,
    }


def report_json(report: ImportReport, written: list[WriteResult] | None) -> dict[str, Any]:
    counts: dict[str, int] = {s: len(report.by_status(s)) for s in STATUSES}
    counts["not_current"] = sum(len(v) for v in report.not_current.values())
    return {
        "package": {"name": "genai-prices", "version": report.package_version, "document": report.document},
        "as_of": report.as_of.isoformat(),
        "counts": counts,
        "entries": [_entry_json(e) for e in report.entries],
        "providers_without_sheet": report.providers_without_sheet,
        "not_current": report.not_current,
        "written": None
        if written is None
        else [
            {
                "provider": w.provider,
                "path": str(w.path),
                "versions_added": list(w.versions_added),
                "offers_added": list(w.offers_added),
            }
            for w in written
        ],
    }


def _change_text(e: DiffEntry) -> str:
    if e.status == "changed":
        text = "; ".join(f"{c.field} {_short(c.old)} -> {_short(c.new)}" for c in e.changes) or "no price on as-of"
    elif e.status == "new" and e.proposal:
        p = e.proposal.version.prices
        text = f"in {_short(p.input)} / cached {_short(p.cached_input)} / out {_short(p.output)}"
        if p.cache_write:
            text += " / write " + ", ".join(f"{k} {_short(v)}" for k, v in p.cache_write.items())
    else:
        text = e.reason or ""
    if e.status in ("retired", "older"):
        text = e.reason or ""
    if e.reason and e.status in ("changed", "new"):
        text += f" (not writable: {e.reason})"
    return text


def _short(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def run_genai_import(args: argparse.Namespace) -> int:
    """``sheets import-genai-prices [--provider P] [--write] [--json]``: diff genai-prices' bundled data
    against our sheets; with ``--write`` append the proposals (new versions and new offers)."""
    sheets_dir: Path = getattr(args, "sheets", None) or DEFAULT_SHEETS_DIR
    catalog = load_price_sheets(sheets_dir)
    as_of = getattr(args, "as_of", None) or dt.date.today()
    provider = getattr(args, "provider", None)
    models = getattr(args, "model", None)
    if isinstance(models, str):
        models = [models]
    report = diff_sheets(catalog, as_of, providers=[provider] if provider else None, models=models)
    written = write_proposals(report, sheets_dir) if getattr(args, "write", False) else None
    if getattr(args, "json", False):
        console.emit(report_json(report, written))
        return 0
    print(f"{report.document} against the sheets in {sheets_dir}, prices in force on {as_of.isoformat()}")
    rows = [
        [e.status, e.provider, e.model, e.genai_id or "-", _change_text(e)]
        for status in ROW_ORDER
        for e in report.by_status(status)
    ]
    print(console.table(rows, ["Status", "Provider", "Model (ours / new)", "genai-prices id", "Differences"]))
    counts = ", ".join(f"{len(report.by_status(s))} {s}" for s in STATUSES)
    print(f"\n{counts}.")
    if report.not_current:
        undated = sum(len(v) for v in report.not_current.values())
        print(
            f"Not listed: {undated} models no offer here matches that genai-prices gives no sign of selling now "
            "(no batch price, no price start or check date within a year, no model spec here), such as "
            + ", ".join(f"{p} {names[0]}" for p, names in sorted(report.not_current.items()))
            + "."
        )
    if report.providers_without_sheet and not provider:
        print(
            f"genai-prices providers without a sheet here (not compared): {', '.join(report.providers_without_sheet)}"
        )
    if written is None:
        writable = sum(1 for e in report.entries if e.writable)
        if writable:
            print(f"Nothing written. --write would append {writable} proposals (new versions and new offers).")
        return 0
    if not written:
        print("Nothing to write.")
    for w in written:
        print(
            f"Wrote {w.path}: {len(w.versions_added)} new versions ({', '.join(w.versions_added) or '-'}), "
            f"{len(w.offers_added)} new offers."
        )
    return 0
