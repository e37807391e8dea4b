"""Every assumption behind a comparison, with the dated price version behind every price (no streamlit)."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd

from calculator.charts import fmt_money, fmt_price, fmt_turn_cost
from calculator.compare import OPTION_LABELS, Catalogs, Comparison
from calculator.prices import DedicatedOffer, GpuVmOffer, ServerlessOffer
from calculator.turn import PriceRef

COLUMNS = ["Section", "Assumption", "Value", "Price version", "Source", "Read"]


def _row(section: str, name: str, value: object, ref: PriceRef | None = None, source: str = "") -> dict[str, str]:
    return {
        "Section": section,
        "Assumption": name,
        "Value": str(value),
        "Price version": ref.effective.isoformat() if ref else "",
        "Source": ref.source if ref else source,
        "Read": ref.read.isoformat() if ref else "",
    }


def _per_m(value: Decimal | None, currency: str) -> str:
    return "-" if value is None else f"{fmt_price(value, currency)} per 1M tokens"


def assumptions_frame(result: Comparison, cat: Catalogs) -> pd.DataFrame:
    s = result.scenario
    w, t, h = s.workload, s.traffic, s.self_hosting
    rows = [
        _row("Scenario", "Name", s.name),
        _row("Scenario", "Price date (as of)", result.as_of.isoformat()),
        _row("Scenario", "Currency", s.currency),
        _row("Scenario", "Exchange rate", f"{s.fx.usd_per_eur} USD per EUR"),
        _row("Turn", "Input tokens", f"{w.input_tokens:,}"),
        _row("Turn", "Prefix share", f"{float(w.prefix_share):g}"),
        _row("Turn", "Cache hit rate", f"{float(w.hit_rate):g}"),
        _row("Turn", "Output tokens", f"{w.output_tokens:,}"),
        _row("Turn", "Cache write share", f"{float(w.cache_write_share):g}"),
        _row("Turn", "Batch pricing", "yes" if w.batch else "no"),
        _row("Traffic", "Turns per month", f"{t.turns_per_month:,}"),
        _row("Traffic", "Active hours per day", f"{t.active_hours_per_day:g}"),
        _row("Traffic", "Peak-to-average", f"{t.peak_to_average:g}"),
        _row("Traffic", "Peak request rate", f"{float(t.peak_rps(float(t.turns_per_month))):.2f} req/s"),
    ]
    if s.dedicated or s.gpu_vm:
        try:
            record = cat.records.get(h.record)
            rows.append(_row("Capacity", "Throughput record", record.label, source=record.source.label))
        except ValueError:
            rows.append(_row("Capacity", "Throughput record", h.record))
        rows += [
            _row("Capacity", "Utilisation target", f"{h.target_utilisation:g}"),
            _row("Self-hosting", "Spare replicas", h.spare_replicas),
            _row("Self-hosting", "Autoscale", "yes" if h.autoscale else "no (always on for the peak)"),
            _row("Self-hosting", "Engineer share", f"{h.engineer_share:g}"),
            _row("Self-hosting", "Engineer monthly cost", fmt_money(h.engineer_monthly_cost, s.currency)),
            _row("Self-hosting", "Model changes per month", f"{h.model_changes_per_month:g}"),
            _row("Self-hosting", "Engine build minutes per change", f"{h.build_minutes_per_change:g}"),
        ]
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
                    f"{fmt_price(v.per_replica_hour, sheet.currency)} per replica-hour"
                    if v.per_replica_hour is not None
                    else f"{fmt_price(v.per_gpu_hour or 0, sheet.currency)} per GPU-hour"
                )
                rows.append(_row(section, f"{ref.provider} {offer.id} ({offer.gpu})", price, ref))
            elif isinstance(offer, GpuVmOffer):
                v2 = offer.version_at(result.as_of)
                rows.append(
                    _row(
                        section,
                        f"{ref.provider} {offer.id} ({offer.gpus_per_instance}x {offer.gpu}, "
                        f"billed per {offer.billing})",
                        f"{fmt_price(v2.per_gpu_hour, sheet.currency)} per GPU-hour",
                        ref,
                    )
                )
            if ref.note:
                rows.append(_row(section, "Price note", ref.note, ref))
        for note in opt.notes:
            rows.append(_row(f"Result: {OPTION_LABELS[opt.option]}", "Note", note))
    if result.turn is not None:
        cur = result.turn.price.currency
        rows += [
            _row(
                "Result: turn",
                "No-reuse turn",
                fmt_turn_cost(result.turn.no_reuse.cost_per_turn, cur),
                result.turn.price,
            ),
            _row(
                "Result: turn",
                "Reused-prefix turn",
                fmt_turn_cost(result.turn.reused.cost_per_turn, cur),
                result.turn.price,
            ),
        ]
    for opt in result.options:
        rows.append(_row(f"Result: {OPTION_LABELS[opt.option]}", "Monthly cost", fmt_money(opt.monthly, s.currency)))
    return pd.DataFrame(rows, columns=COLUMNS)
