"""Every assumption behind a comparison, with the dated price version behind every price: the Compare page's
table, its CSV download and the PDF's table (the app's and ``compare --pdf``'s) are this one frame."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd

from calculator.catalog.fx import quote_unit, quoted
from calculator.catalog.limits import shown
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, ServerlessOffer, price_age_days
from calculator.present.charts import turn_currency
from calculator.present.money import format_money, format_price, format_small
from calculator.pricing.compare import OPTION_LABELS, Catalogs, Comparison
from calculator.pricing.own_prices import with_own_prices
from calculator.pricing.resolve import ResolvedScenario
from calculator.pricing.turn import PriceRef
from calculator.scenario.evidence import OWN_RECORD
from calculator.scenario.inputs import AUTO_RECORD, LatencyTarget
from calculator.scenario.model import Scenario

COLUMNS = ["Section", "Assumption", "Value", "Price version", "Source", "Read"]


def _row(
    section: str,
    name: str,
    value: object,
    ref: PriceRef | None = None,
    source: str = "",
    read: dt.date | None = None,
) -> dict[str, str]:
    return {
        "Section": section,
        "Assumption": name,
        "Value": str(value),
        "Price version": ref.effective.isoformat() if ref else "",
        "Source": ref.source if ref else source,
        "Read": ref.read.isoformat() if ref else (read.isoformat() if read else ""),
    }


def _per_m(value: Decimal | None, currency: str) -> str:
    return "-" if value is None else f"{format_price(value, currency)} per 1M tokens"


def _serverless_rows(result: Comparison, cat: Catalogs) -> list[dict[str, str]]:
    """Cache write share and lifetime, batch pricing and cache storage: each where the offer charges it."""
    s = result.scenario
    w = s.workload
    opt = result.option("serverless")
    if opt is None or not opt.prices or s.serverless is None:
        return []
    ref = opt.prices[0]
    _, offer = cat.prices.offer(ref.provider, ref.offer, "serverless")
    assert isinstance(offer, ServerlessOffer)
    version = offer.version_at(result.as_of)
    p = version.prices
    section = "Serverless cache and batch"
    rows = []
    if p.cache_write:
        rows.append(_row(section, "Cache write share", f"{float(w.cache_write_share):g}"))
        ttl = w.cache_ttl or f"shortest sold ({p.default_ttl})"
        rows.append(_row(section, "Cache lifetime (TTL)", ttl))
    if version.batch_discount is not None:
        discount = f"{float(version.batch_discount):.0%} off"
        rows.append(
            _row(section, "Batch pricing", f"yes ({discount})" if w.batch else f"no (the offer sells {discount})")
        )
    elif w.batch:
        rows.append(_row(section, "Batch pricing", "asked for, but this offer has no batch discount (not applied)"))
    if p.cache_storage_per_hour is not None:
        held = s.serverless.distinct_prefixes
        rows += [
            _row(section, "Distinct cached prefixes", f"{held:,}" + ("" if held else " (no storage charged)")),
            _row(section, "Hours held per month", f"{s.serverless.prefix_hold_hours:g}"),
        ]
    return rows


def record_origin(scenario: Scenario, record: ThroughputRecord) -> str:
    """Whose measurement a record is: the user's (kept in the scenario, or typed in) or a published one."""
    if record.id == OWN_RECORD:
        return "your own throughput figures"
    if any(r.id == record.id for r in scenario.evidence.records):
        return "your measurement record (kept in the scenario)"
    return "measured throughput record"


def record_link(record: ThroughputRecord) -> str:
    """Where a record was published or run: its URL or document, without the note on how it was read."""
    return record.source.url or record.source.document or ""


def record_source(record: ThroughputRecord) -> str:
    """The record's source with its note (the assumptions table: how the figures were read from it)."""
    note = record.source.note
    return record_link(record) + (f" ({note})" if note else "")


def _evidence_rows(s: Scenario) -> list[dict[str, str]]:
    """The user's own evidence the scenario holds, with where each part came from."""
    ev, rows = s.evidence, []
    if ev.prefix is not None:
        p = ev.prefix
        measured = f"prefix share {float(p.prefix_share):g}"
        if p.hit_rate is not None:
            measured += f", hit rate {float(p.hit_rate):g}"
        if p.mean_input_tokens is not None:
            measured += f", {p.mean_input_tokens:,} input tokens per turn"
        if p.mean_output_tokens is not None:
            measured += f", {p.mean_output_tokens:,} output"
        rows += [
            _row(
                "Evidence",
                "Prefix analysis",
                f"{p.source}: {p.requests:,} requests",
                source=p.source,
                read=p.analysed_on,
            ),
            _row("Evidence", "Prefix analysis measured", measured, source=p.source, read=p.analysed_on),
        ]
        if p.tokenizer:
            rows.append(_row("Evidence", "Prefix analysis tokens", f"counted by {p.tokenizer}", source=p.source))
    if ev.records:
        rows.append(
            _row("Evidence", "Your measurement records", f"{len(ev.records)}: " + ", ".join(r.id for r in ev.records))
        )
    if ev.load_profile is not None:
        lp = ev.load_profile
        rows.append(
            _row(
                "Evidence",
                "Load profile",
                f"{lp.name}: peak-to-average {lp.peak_to_average:.2f}; the GPU options are sized and billed hour "
                "by hour under it, here and on the Plan page",
                source=lp.source,
            )
        )
    return rows


def _latency_target(target: LatencyTarget) -> str:
    parts = []
    if target.ttft_ms is not None:
        parts.append(f"time to first token at most {target.ttft_ms:g} ms")
    if target.tokens_per_s_per_user is not None:
        parts.append(f"at least {target.tokens_per_s_per_user:g} tokens/s per user")
    return f"{target.percentile}: " + " and ".join(parts)


def _capacity_rows(result: Comparison, cat: Catalogs, resolved: ResolvedScenario | None) -> list[dict[str, str]]:
    """How the GPU options are sized: a measured record (its source and date) or a roofline estimate; with
    ``record: auto``, what ``resolved`` chose (the serverless model's measurement or estimate)."""
    s = result.scenario
    h, t = s.self_hosting, s.traffic
    side = (resolved.self_hosted or resolved.dedicated) if resolved is not None else None
    auto = h.record == AUTO_RECORD and h.estimate is None
    rows = []
    if auto:
        same = resolved.gpu_model if resolved is not None else None
        chosen = "the same model as the serverless option"
        if same is not None and same.spec is not None and same.stands_for:
            chosen = f"{same.spec.label}, the serverless model {same.stands_for}" + (
                "" if same.exact else " by its nearest spec"
            )
        elif same is not None and same.spec is not None:
            chosen = f"{same.spec.label} (self_hosting.model, your choice)"
        elif same is not None:
            chosen = f"the default record ({same.reason})"
        rows.append(_row("Capacity", "GPU options' model (record: auto)", chosen))
    estimate = h.estimate or (side.setup if side is not None and auto else None)
    record_id = side.record.id if side is not None and auto else h.record
    if estimate is not None:
        e = estimate
        rows += [
            _row("Capacity", "Sizing", "roofline estimate, not a measurement"),
            _row("Capacity", "Estimate: model", f"{e.model} (estimate, not a measurement)"),
            _row("Capacity", "Estimate: precision", e.precision),
            _row("Capacity", "Estimate: GPUs per replica", e.gpus_per_replica),
            _row(
                "Capacity",
                "Estimate: max batch",
                e.max_batch if e.max_batch is not None else "none: as many as fit and the engine schedules",
            ),
            *(
                [_row("Capacity", "Estimate: batch in flight", f"{side.record.concurrency:,.0f} sequences per replica")]
                if side is not None and side.record.concurrency and side.record.engine == "roofline estimate"
                else []
            ),
            _row(
                "Capacity",
                "Estimate: attention layout",
                "data-parallel attention" if e.attention == "dp" else "tensor parallel",
            ),
        ]
        if h.latency_target is not None:
            rows.append(
                _row(
                    "Capacity",
                    "Latency target",
                    _latency_target(h.latency_target) + " (not used: the estimate sizes the GPUs)",
                )
            )
    else:
        try:
            record = cat.records.get(record_id)
        except ValueError:
            rows.append(_row("Capacity", "Throughput record", record_id))
        else:
            src = record.source
            where = src.url or src.document or ""
            rows += [
                _row("Capacity", "Sizing", record_origin(s, record)),
                _row("Capacity", "Throughput record", record.label, source=where, read=src.read),
                _row("Capacity", "Throughput record source", record_source(record), source=where, read=src.read),
                _row(
                    "Capacity",
                    "Throughput record measured",
                    record.measured.isoformat() if record.measured else "not stated in the record",
                    source=where,
                    read=src.read,
                ),
            ]
        if h.latency_target is not None:
            rows.append(
                _row(
                    "Capacity",
                    "Latency target",
                    _latency_target(h.latency_target) + " (the busiest load level of the record's setup that "
                    "meets it sizes the GPUs; the notes name it)",
                )
            )
    rows += [
        _row("Capacity", "Utilisation target", f"{h.target_utilisation:g}"),
        _row("Self-hosting", "Spare replicas", h.spare_replicas),
    ]
    if h.autoscale:
        always_on = " (no effect: the traffic runs 24 hours a day)" if t.active_hours_per_day >= 24 else ""
        rows += [
            _row("Self-hosting", "Autoscale", "yes, outside the active hours" + always_on),
            _row("Self-hosting", "Minimum replicas outside active hours", h.min_replicas),
            _row("Self-hosting", "Start-up minutes per scale-up", f"{h.startup_minutes:g}"),
        ]
    else:
        rows.append(_row("Self-hosting", "Autoscale", "no (always on for the peak)"))
    rows += [
        _row("Self-hosting", "Engineer share", f"{h.engineer_share:g}"),
        _row("Self-hosting", "Engineer monthly cost", format_money(h.engineer_monthly_cost, s.currency)),
        _row("Self-hosting", "Model changes per month", f"{h.model_changes_per_month:g}"),
        _row("Self-hosting", "Engine build minutes per change", f"{h.build_minutes_per_change:g}"),
    ]
    return rows


def assumptions_frame(result: Comparison, cat: Catalogs, resolved: ResolvedScenario | None = None) -> pd.DataFrame:
    s = result.scenario
    cat = with_own_prices(cat, s)  # the prices the comparison used: the user's own where the scenario has them
    w, t = s.workload, s.traffic
    rows = [
        _row("Scenario", "Name", s.name),
        _row("Scenario", "Price date (as of)", result.as_of.isoformat()),
        _row("Scenario", "Currency", s.currency),
        *(
            _row("Scenario", "Exchange rate", f"{shown(quoted(code, s.fx.usd_per(code)))} {quote_unit(code)}")
            for code in dict.fromkeys(("EUR", s.currency))
            if code != "USD"
        ),
        _row("Turn", "Input tokens", f"{w.input_tokens:,}"),
        _row("Turn", "Prefix share", f"{float(w.prefix_share):g}"),
        _row("Turn", "Cache hit rate", f"{float(w.hit_rate):g}"),
        _row("Turn", "Output tokens", f"{w.output_tokens:,}"),
    ]
    rows += [
        _row("Turn", f"Token factor: {name}", f"x{float(factor):g} tokens per workload token (its tokenizer)")
        for name, factor in s.token_factors.items()
    ]
    rows += _evidence_rows(s)
    rows += _serverless_rows(result, cat)
    rows += [
        _row("Traffic", "Turns per month", f"{t.turns_per_month:,}"),
        _row("Traffic", "Active hours per day", f"{t.active_hours_per_day:g}"),
        _row("Traffic", "Peak-to-average", f"{t.peak_to_average:g}"),
        _row("Traffic", "Peak request rate", f"{float(t.peak_rps(float(t.turns_per_month))):.2f} req/s"),
    ]
    if t.users:
        rows += [
            _row("Traffic", "Users", f"{t.users:,}"),
            _row("Traffic", "Turns per user a day", f"{t.turns_per_user_per_day:,.2f}"),
        ]
    if s.dedicated or s.gpu_vm:
        rows += _capacity_rows(result, cat, resolved)
    for opt in result.options:
        section = f"Prices: {OPTION_LABELS[opt.option]}"
        for ref in opt.prices:
            kind = {"serverless": "serverless", "dedicated": "dedicated", "self_hosted": "gpu_vm"}[opt.option]
            sheet, offer = cat.prices.offer(ref.provider, ref.offer, kind)
            if isinstance(offer, ServerlessOffer):
                p = offer.version_at(result.as_of).prices
                rows += [
                    _row(section, f"{ref.provider} {offer.model}: input", _per_m(p.input, sheet.currency), ref),
                    _row(
                        section,
                        f"{ref.provider} {offer.model}: cached input",
                        _per_m(p.cached_input, sheet.currency),
                        ref,
                    ),
                    _row(
                        section,
                        f"{ref.provider} {offer.model}: cache write",
                        _per_m(p.write_price(w.cache_ttl), sheet.currency),
                        ref,
                    ),
                    _row(section, f"{ref.provider} {offer.model}: output", _per_m(p.output, sheet.currency), ref),
                ]
                if p.cache_storage_per_hour is not None:
                    rows.append(
                        _row(
                            section,
                            f"{ref.provider} {offer.model}: cache storage",
                            _per_m(p.cache_storage_per_hour, sheet.currency) + " per hour",
                            ref,
                        )
                    )
            elif isinstance(offer, DedicatedOffer):
                v = offer.version_at(result.as_of)
                price = (
                    f"{format_price(v.per_replica_hour, sheet.currency)} per replica-hour"
                    if v.per_replica_hour is not None
                    else f"{format_price(v.per_gpu_hour or 0, sheet.currency)} per GPU-hour"
                )
                rows.append(_row(section, f"{ref.provider} {offer.id} ({offer.gpu})", price, ref))
            elif isinstance(offer, GpuVmOffer):
                v2 = offer.version_at(result.as_of)
                rows.append(
                    _row(
                        section,
                        f"{ref.provider} {offer.id} ({offer.gpus_per_instance}x {offer.gpu}, "
                        f"billed per {offer.billing})",
                        f"{format_price(v2.per_gpu_hour, sheet.currency)} per GPU-hour",
                        ref,
                    )
                )
            if ref.note:
                rows.append(_row(section, "Price note", ref.note, ref))
        for note in opt.notes:
            rows.append(_row(f"Result: {OPTION_LABELS[opt.option]}", "Note", note))
    if result.turn is not None:
        cur, convert = turn_currency(result.turn, s)
        rows += [
            _row(
                "Result: turn",
                "No-reuse turn",
                format_small(convert(result.turn.no_reuse.cost_per_turn), cur),
                result.turn.price,
            ),
            _row(
                "Result: turn",
                "Reused-prefix turn",
                format_small(convert(result.turn.reused.cost_per_turn), cur),
                result.turn.price,
            ),
        ]
    for opt in result.options:
        section = f"Result: {OPTION_LABELS[opt.option]}"
        rows.append(_row(section, "Monthly cost", format_money(opt.monthly, s.currency)))
        rows.append(_row(section, "A year", format_money(opt.annual, s.currency)))
        per_user = opt.monthly_per_user(t.users)
        if per_user is not None:
            rows.append(_row(section, "Per user a month", format_money(per_user, s.currency)))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    # a price's age on the price date, by the one rule the command line and the PDF use
    frame["Age (days)"] = [
        str(price_age_days(dt.date.fromisoformat(read), result.as_of)) if version and read else ""
        for version, read in zip(frame["Price version"], frame["Read"], strict=True)
    ]
    return frame
