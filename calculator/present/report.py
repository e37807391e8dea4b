"""A one-page PDF summary of a comparison: the answers, two charts and the assumptions.

Built with fpdf2; the Altair charts are rendered to PNG by vl-convert (no browser, no Node).
No streamlit import: the app's download button calls :func:`summary_pdf`, and so can a script.
The answers in words (:func:`answer_sentences`, :func:`price_age_line`) import neither pandas nor Altair:
the Compare page shows its first costs with them before either is loaded.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from calculator.catalog.prices import STALE_AFTER_DAYS, is_stale, price_age_text
from calculator.present.money import fmt_volume, format_money, format_price, format_small
from calculator.pricing.billing import DAYS_PER_MONTH
from calculator.pricing.compare import OPTION_LABELS, Catalogs, Comparison, crossing_runs, curves
from calculator.pricing.pinning import Repricing
from calculator.scenario.model import Scenario

__all__ = [
    "answer_sentences",
    "plain",
    "price_age_line",
    "price_changes_frame",
    "repricing_sentences",
    "stale_price_warnings",
    "summary_pdf",
]


def answer_sentences(result: Comparison, switches: list[tuple[float, str, str]] | None = None) -> list[str]:
    """The answers in words (markdown bold with ``**``): cheapest, break-even volumes, the prefix share."""
    s = result.scenario
    cur = s.currency
    volume = s.traffic.turns_per_month
    out: list[str] = []
    if result.cheapest:
        best = result.option(result.cheapest)
        assert best is not None
        out.append(
            f"At **{volume:,} turns a month** ({volume / DAYS_PER_MONTH:,.0f} a day) the cheapest is "
            f"**{OPTION_LABELS[result.cheapest]}** ({best.provider} {best.offer}) at "
            f"**{format_money(best.monthly, cur)}** a month."
        )
    out += _crossing_sentences(result)
    if result.stays_cheapest and len(result.options) > 1:
        name, above = result.stays_cheapest
        if any(c.cheaper_above == name for c in result.crossings):
            out.append(f"Above {fmt_volume(above)} turns a month, {OPTION_LABELS[name]} stays cheapest.")
        else:
            out.append(f"{OPTION_LABELS[name]} is cheapest at every volume from 1,000 to 10 billion turns a month.")
    if switches is not None and len(result.options) > 1:
        share = float(s.workload.prefix_share)
        if switches:
            for point, below, cheaper in switches:
                out.append(
                    f"At this volume, **{OPTION_LABELS[cheaper]}** is cheapest once the prefix share passes "
                    f"**{point:.0%}** (below it, {OPTION_LABELS[below]}); yours is {share:.0%}."
                )
        else:
            out.append("At this volume the prefix share (0 to 100%) does not change which option is cheapest.")
    return out


def _crossing_sentences(result: Comparison) -> list[str]:
    """One sentence per break-even volume, except that two options swapping places again and again at their
    replica steps get one for all their swaps (:func:`~calculator.pricing.compare.crossing_runs`): five lines
    of "A becomes cheaper than B" and back read as noise to the person choosing, where what matters is the
    range and which of the two ends up cheaper. ``compare --json``'s ``break_even`` keeps every volume."""
    out: list[str] = []
    for run in crossing_runs(result.crossings):
        first, last = run[0], run[-1]
        if len(run) == 1:
            other = first.b if first.cheaper_above == first.a else first.a
            out.append(
                f"{OPTION_LABELS[first.cheaper_above]} becomes cheaper than {OPTION_LABELS[other]} above "
                f"**{fmt_volume(first.turns_per_month)} turns a month** "
                f"({first.turns_per_month / DAYS_PER_MONTH:,.0f} a day)."
            )
        else:
            out.append(
                f"{OPTION_LABELS[first.a]} and {OPTION_LABELS[first.b]} swap places {len(run)} times between "
                f"**{fmt_volume(first.turns_per_month)}** and **{fmt_volume(last.turns_per_month)} turns a month** "
                f"(each replica added is a step up in a GPU bill); above that, {OPTION_LABELS[last.cheaper_above]} "
                "stays the cheaper of the two."
            )
    return out


def price_age_line(result: Comparison, today: dt.date) -> str:
    """The price version each option used and how old it is: "lyceum glm-5.3: version of 2026-10-05, read
    31 days ago; ..." (relative to the price date when it is not today)."""
    return f"Prices in force on {result.as_of.isoformat()}: " + "; ".join(
        f"{p.provider} {p.offer}: version of {p.effective.isoformat()}, {price_age_text(p.read, result.as_of, today)}"
        for o in result.options
        for p in o.prices[:1]
    )


def stale_price_warnings(result: Comparison, today: dt.date) -> list[str]:
    """One sentence per chosen price read more than :data:`STALE_AFTER_DAYS` days before the price date."""
    return [
        f"{OPTION_LABELS[o.option]}: the price of {p.provider} {p.offer} was "
        f"{price_age_text(p.read, result.as_of, today)} (on {p.read.isoformat()}), more than {STALE_AFTER_DAYS} "
        "days: check the provider's current price before relying on it."
        for o in result.options
        for p in o.prices[:1]
        if is_stale(p.read, result.as_of)
    ]


def _more_or_less(then: Decimal, now: Decimal) -> str:
    if not then:
        return "no saved cost to compare with"
    share = float(now / then - 1)
    if abs(share) < 0.0005:
        return "the same"
    return f"{abs(share):.1%} {'more' if share > 0 else 'less'}"


def repricing_sentences(repricing: Repricing, scenario: Scenario) -> list[str]:
    """Per option of a pinned scenario: "priced with the sheets of D; with today's prices it costs X (Y% less)"."""
    cur = scenario.currency
    offers: dict[str, str] = {p.option: f"{p.provider} {p.offer}" for p in scenario.prices_used}
    out = []
    for option, then in repricing.monthly_then.items():
        now = repricing.monthly_now.get(option)
        label = f"{OPTION_LABELS.get(option, option)} ({offers.get(option, '')})"
        gone = next((r for r in repricing.retired if r.option == option), None)
        if gone is not None:
            out.append(
                f"{label}: priced with the sheets of {repricing.priced_on.isoformat()} at "
                f"{format_money(then, cur)} a month; **retired on {gone.date.isoformat()}**"
                + (f" ({gone.successor})" if gone.successor else "")
                + ", so not priced today: choose another offer."
            )
            continue
        if now is None:
            out.append(
                f"{label}: priced with the sheets of {repricing.priced_on.isoformat()} at "
                f"{format_money(then, cur)} a month; not priced today (the option is no longer chosen)."
            )
            continue
        out.append(
            f"{label}: priced with the sheets of **{repricing.priced_on.isoformat()}** at "
            f"{format_money(then, cur)} a month; with today's prices ({repricing.today.isoformat()}) it costs "
            f"**{format_money(now, cur)}** ({_more_or_less(then, now)})."
        )
    return out


FIELD_LABELS = {
    "input": "input per 1M tokens",
    "cached_input": "cached input per 1M tokens",
    "output": "output per 1M tokens",
    "cache_storage_per_hour": "cache storage per 1M tokens per hour",
    "per_gpu_hour": "per GPU-hour",
    "per_replica_hour": "per replica-hour",
}


def _field_label(field: str) -> str:
    if field.startswith("cache_write_"):
        return f"cache write ({field.removeprefix('cache_write_')}) per 1M tokens"
    return FIELD_LABELS.get(field, field.replace("_", " "))


def price_changes_frame(repricing: Repricing, scenario: Scenario) -> pd.DataFrame:
    """One row per price that changed since the scenario was pinned, in the sheet's currency."""
    import pandas as pd  # here, not at the top: the app's first costs are shown before pandas is needed

    currency: dict[tuple[str, str, str], str] = {
        (p.option, p.provider, p.offer): p.currency for p in scenario.prices_used
    }
    rows = []
    for c in repricing.changes:
        cur = currency.get((c.option, c.provider, c.offer), scenario.currency)
        share = c.change_share
        rows.append(
            {
                "Option": OPTION_LABELS.get(c.option, c.option),
                "Offer": f"{c.provider} {c.offer}",
                "Price": _field_label(c.field),
                "Then": format_price(c.before, cur) if c.before is not None else "-",
                "Now": format_price(c.after, cur) if c.after is not None else "-",
                "Change": f"{share:+.1%}" if share is not None else ("new" if c.before is None else "removed"),
                "Versions": f"{c.effective_before.isoformat()} -> {c.effective_after.isoformat()}",
            }
        )
    for r in repricing.retired:
        rows.append(
            {
                "Option": OPTION_LABELS.get(r.option, r.option),
                "Offer": f"{r.provider} {r.offer}",
                "Price": "the offer itself" + (f" ({r.successor})" if r.successor else ""),
                "Then": "sold",
                "Now": f"retired on {r.date.isoformat()}",
                "Change": "retired",
                "Versions": f"{r.effective_before.isoformat()} -> none",
            }
        )
    return pd.DataFrame(rows, columns=["Option", "Offer", "Price", "Then", "Now", "Change", "Versions"])


if TYPE_CHECKING:
    import pandas as pd

    from calculator.present.pdf_page import _Pdf as _Pdf


def __getattr__(name: str) -> Any:
    if name == "_Pdf":  # the page class, imported with fpdf only when asked for
        from calculator.present.pdf_page import _Pdf

        return _Pdf
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _png(chart: object, scale: float = 2.0) -> io.BytesIO:
    import vl_convert as vlc

    from calculator.present.chart_spec import ALTAIR_GLOBALS

    with ALTAIR_GLOBALS:  # a page may be drawing a chart in another thread, with its own data transformer
        spec = chart.to_json()  # type: ignore[attr-defined]
    return io.BytesIO(vlc.vegalite_to_png(spec, scale=scale))


def plain(markdown: str) -> str:
    """The same sentence without its Markdown emphasis, for a terminal or the PDF."""
    return re.sub(r"\*\*(.+?)\*\*", r"\1", markdown).replace("`", "")


def year_and_seat_line(result: Comparison) -> str:
    """Each option's year and, when the scenario counts its users, its cost per user a month, in one line."""
    cur, users = result.scenario.currency, result.scenario.traffic.users
    parts = []
    for opt in result.options:
        per_user = opt.monthly_per_user(users)
        parts.append(
            f"{OPTION_LABELS[opt.option]} {format_money(opt.annual, cur)}"
            + (f" ({format_money(per_user, cur)} per user a month)" if per_user is not None else "")
        )
    counted = f" · {users:,} users" if users else ""
    return "A year: " + "; ".join(parts) + counted


def summary_pdf(
    result: Comparison, cat: Catalogs, assumptions: pd.DataFrame, generated: dt.date | None = None
) -> bytes:
    """One A4 page: title, metrics per option, the turn pair, answers in words, two charts, assumptions."""
    s = result.scenario
    cur = s.currency
    from calculator.present import charts
    from calculator.present.pdf_page import _Pdf

    pdf = _Pdf()
    pdf.add_page()
    f = pdf.family
    w = pdf.epw

    pdf.set_font(f, "B", 15)
    pdf.cell(w, 7, pdf.text_ok(f"LLM inference cost: {s.name}"), new_x="LMARGIN", new_y="NEXT")
    if s.description:  # a few lines at most: the page has room for one summary
        pdf.set_font(f, "", 9)
        pdf.multi_cell(w, 4, pdf.text_ok(s.description), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font(f, "", 8)
    pdf.set_text_color(90, 90, 90)
    made = (generated or dt.date.today()).isoformat()
    pdf.cell(
        w,
        4,
        pdf.text_ok(
            f"Prices as of {result.as_of.isoformat()} · {cur} · generated {made} · every price names its version below"
        ),
        new_x="LMARGIN",
        new_y="NEXT",
    )
    made_on = generated or dt.date.today()
    pdf.multi_cell(w, 3.6, pdf.text_ok(price_age_line(result, made_on)), new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0, 0, 0)
    pdf.ln(2)

    # metric boxes
    boxes: list[tuple[str, str, str]] = []
    for opt in result.options:
        per = format_small(opt.cost_per_1000_turns, cur) if opt.cost_per_1000_turns is not None else "-"
        title = OPTION_LABELS[opt.option] + (" (cheapest)" if opt.option == result.cheapest else "")
        boxes.append((title, format_money(opt.monthly, cur) + " / month", f"{per} per 1,000 turns · {opt.model or ''}"))
    if result.turn is not None:
        t = result.turn
        tc, convert = charts.turn_currency(t, s)
        boxes.append(
            (
                "One turn: no reuse vs reused prefix",
                f"{format_small(convert(t.no_reuse.cost_per_turn), tc)} vs "
                f"{format_small(convert(t.reused.cost_per_turn), tc)}",
                f"{t.price.provider} {t.price.model}, price version {t.price.effective.isoformat()}",
            )
        )
    per_row = min(len(boxes), 4) or 1
    bw = (w - 3 * (per_row - 1)) / per_row
    y0 = pdf.get_y()
    for i, (title, value, sub) in enumerate(boxes[:4]):
        x = pdf.l_margin + i * (bw + 3)
        pdf.set_draw_color(200, 200, 200)
        pdf.rect(x, y0, bw, 17)
        pdf.set_xy(x + 2, y0 + 1.5)
        pdf.set_font(f, "", 7)
        pdf.cell(bw - 4, 3.5, pdf.text_ok(title))
        pdf.set_xy(x + 2, y0 + 5.5)
        pdf.set_font(f, "B", 11)
        pdf.cell(bw - 4, 5.5, pdf.text_ok(value))
        pdf.set_xy(x + 2, y0 + 11.5)
        pdf.set_font(f, "", 6)
        pdf.cell(bw - 4, 3.5, pdf.text_ok(sub[:70]))
    pdf.set_xy(pdf.l_margin, y0 + 19)
    pdf.set_font(f, "", 7)
    pdf.multi_cell(w, 3.6, pdf.text_ok(year_and_seat_line(result)), new_x="LMARGIN", new_y="NEXT")

    # answers
    sweep = charts.share_sweep_frame(s, cat, "prefix_share", points=11)
    pdf.set_font(f, "", 8)
    for sentence in answer_sentences(result, charts.cheapest_switch(sweep)):
        pdf.multi_cell(w, 3.8, pdf.text_ok("• " + plain(sentence)), new_x="LMARGIN", new_y="NEXT")
    for warning in [problem.text() for problem in result.warnings] + stale_price_warnings(result, made_on):
        pdf.set_text_color(150, 90, 0)
        pdf.multi_cell(w, 3.6, pdf.text_ok("! " + warning), new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0, 0, 0)
    pdf.ln(1)

    # charts
    y = pdf.get_y()
    half = (w - 4) / 2
    volume_chart = charts.volume_chart(curves(result.resolution), float(s.traffic.turns_per_month), result, cur)
    pdf.image(_png(volume_chart.properties(width=420, height=230)), x=pdf.l_margin, y=y, w=half)
    if result.turn is not None:
        turn_chart = charts.turn_parts_chart(result.turn, s).properties(width=420, height=120)
        pdf.image(_png(turn_chart), x=pdf.l_margin + half + 4, y=y, w=half)
        share_chart = charts.share_sweep_chart(sweep, "prefix_share", float(s.workload.prefix_share), cur)
        pdf.image(_png(share_chart.properties(width=420, height=110)), x=pdf.l_margin + half + 4, y=y + 36, w=half)
    pdf.set_y(y + 76)

    # assumptions
    pdf.set_font(f, "B", 9)
    pdf.cell(w, 5, "Assumptions and price versions", new_x="LMARGIN", new_y="NEXT")
    widths = [0.12, 0.27, 0.26, 0.08, 0.19, 0.08]
    cols = ["Section", "Assumption", "Value", "Price version", "Source", "Read"]
    pdf.set_font(f, "B", 6)
    for col, frac in zip(cols, widths, strict=True):
        pdf.cell(w * frac, 3.2, col, border="B")
    pdf.ln(3.2)
    pdf.set_font(f, "", 5.6)
    bottom = pdf.h - pdf.b_margin - 6
    rows = assumptions[~assumptions["Assumption"].isin(["Note", "Price note"])]
    shown = 0
    for _, row in rows.iterrows():
        if pdf.get_y() + 2.8 > bottom:
            break
        for col, frac in zip(cols, widths, strict=True):
            limit = int(w * frac / 1.05)
            text = str(row[col]) if col in row else ""
            text = text if len(text) <= limit else text[: limit - 1] + "…"
            pdf.cell(w * frac, 2.8, pdf.text_ok(text))
        pdf.ln(2.8)
        shown += 1
    pdf.set_y(pdf.h - pdf.b_margin - 5)
    pdf.set_font(f, "", 6)
    pdf.set_text_color(90, 90, 90)
    rest = len(rows) - shown
    tail = f" ({rest} more rows in the CSV download)" if rest > 0 else ""
    pdf.cell(
        w,
        4,
        pdf.text_ok(f"Full assumptions, notes and source URLs: the app's 'Assumptions (CSV)' download{tail}."),
    )
    written = bytes(pdf.output())
    pdf.close_fonts()
    return written
