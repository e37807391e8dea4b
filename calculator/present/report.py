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


def answer_sentences(
    result: Comparison, switches: list[tuple[float, str, str]] | None = None, *, cheapest: bool = True
) -> list[str]:
    """The answers in words (markdown bold with ``**``): cheapest (unless ``cheapest`` is False: the
    headline above says it, :mod:`calculator.present.headline`), break-even volumes, the prefix share."""
    s = result.scenario
    cur = s.currency
    volume = s.traffic.turns_per_month
    out: list[str] = []
    if result.cheapest and cheapest:
        best = result.option(result.cheapest)
        assert best is not None
        out.append(
            f"At **{volume:,} turns a month** ({volume / DAYS_PER_MONTH:,.0f} a day) the cheapest is "
            f"**{OPTION_LABELS[result.cheapest]}** ({best.provider} {best.offer}) at "
            f"**{format_money(best.monthly, cur)}** a month."
        )
    out += _crossing_sentences(result)
    if result.stays_cheapest and len(result.options) > 1 and (cheapest or result.stays_cheapest[0] != result.cheapest):
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


PT_MM = 25.4 / 72
"""Millimetres per typographic point."""
LEADING = 1.25
"""Line height over font size: a line of DejaVu (ascent and descent about 1.17 of the size) never reaches the
next one."""
TABLE_COLUMNS = (
    ("Section", 0.11),
    ("Assumption", 0.22),
    ("Value", 0.25),
    ("Price version", 0.10),
    ("Source", 0.22),
    ("Read", 0.10),
)
"""The PDF's assumptions table: each column's share of the page's width (every value wraps within its cell)."""


def _line(size: float) -> float:
    """The line height (mm) of text ``size`` points high."""
    return size * PT_MM * LEADING


def _text_height(pdf: _Pdf, width: float, text: str, size: float, style: str = "") -> float:
    """How tall ``text`` wraps to in a cell ``width`` mm wide at ``size`` points (nothing drawn)."""
    pdf.set_font(pdf.family, style, size)
    lines = pdf.multi_cell(width, _line(size), pdf.text_ok(text), align="L", dry_run=True, output="LINES")
    assert isinstance(lines, list)
    return len(lines) * _line(size)


def _write(pdf: _Pdf, x: float, y: float, width: float, text: str, size: float, style: str = "") -> float:
    """Write ``text`` wrapped within ``width`` mm from (x, y); returns the y under it."""
    pdf.set_font(pdf.family, style, size)
    pdf.set_xy(x, y)
    pdf.multi_cell(width, _line(size), pdf.text_ok(text), align="L", new_x="LEFT", new_y="NEXT")
    return pdf.get_y()


def _paragraph(pdf: _Pdf, text: str, size: float, style: str = "", after: float = 0.0) -> None:
    """A paragraph across the page from the current y."""
    y = _write(pdf, pdf.l_margin, pdf.get_y(), pdf.epw, text, size, style)
    pdf.set_xy(pdf.l_margin, y + after)


def _png_size(png: io.BytesIO) -> tuple[int, int]:
    from PIL import Image

    with Image.open(png) as picture:
        size = picture.size
    png.seek(0)
    return size


def _metric_boxes(result: Comparison) -> list[tuple[str, str, str]]:
    """(title, value, what it is) per option, and the turn pair: the PDF's boxes."""
    s, cur = result.scenario, result.scenario.currency
    boxes: list[tuple[str, str, str]] = []
    for opt in result.options:
        per = format_small(opt.cost_per_1000_turns, cur) if opt.cost_per_1000_turns is not None else "-"
        title = OPTION_LABELS[opt.option] + (" (cheapest)" if opt.option == result.cheapest else "")
        runs = f"{opt.provider} {opt.offer}" + (f" · {opt.model}" if opt.model else "")
        boxes.append((title, format_money(opt.monthly, cur) + " a month", f"{per} per 1,000 turns · {runs}"))
    if result.turn is not None:
        from calculator.present.shown_currency import turn_currency

        t = result.turn
        tc, convert = turn_currency(t, s)
        boxes.append(
            (
                "One turn: no reuse, then reused prefix",
                f"{format_small(convert(t.no_reuse.cost_per_turn), tc)} no reuse · "
                f"{format_small(convert(t.reused.cost_per_turn), tc)} reused",
                f"{t.price.provider} {t.price.model}, price version {t.price.effective.isoformat()}",
            )
        )
    return boxes


def _draw_boxes(pdf: _Pdf, boxes: list[tuple[str, str, str]]) -> None:
    """The metric boxes, four a row at most, each as tall as the tallest of its row needs: every line wraps
    within its box."""
    gap, pad, sizes = 3.0, 1.6, (7.0, 10.5, 6.5)
    w = pdf.epw
    for start in range(0, len(boxes), 4):
        row = boxes[start : start + 4]
        bw = (w - gap * (len(row) - 1)) / len(row)
        inner = bw - 2 * pad
        heights = [
            sum(
                _text_height(pdf, inner, text, size, "B" if i == 1 else "")
                for i, (text, size) in enumerate(zip(box, sizes, strict=True))
            )
            for box in row
        ]
        tall = max(heights) + 2 * pad + 1.0
        y0 = pdf.get_y()
        for i, box in enumerate(row):
            x = pdf.l_margin + i * (bw + gap)
            pdf.set_draw_color(200, 200, 200)
            pdf.rect(x, y0, bw, tall)
            y = y0 + pad
            for j, (text, size) in enumerate(zip(box, sizes, strict=True)):
                y = _write(pdf, x + pad, y, inner, text, size, "B" if j == 1 else "") + (0.5 if j == 1 else 0.0)
        pdf.set_xy(pdf.l_margin, y0 + tall + 2)


def _charts(pdf: _Pdf, result: Comparison, sweep: pd.DataFrame, room: float) -> None:
    """The volume chart on the left, the turn's parts and the prefix-share sweep on the right, each picture
    scaled to keep its proportions within its column and within ``room`` mm of height."""
    from calculator.present import charts

    s, cur = result.scenario, result.scenario.currency
    half = (pdf.epw - 4) / 2
    y = pdf.get_y()
    left = [
        _png(
            charts.volume_chart(curves(result.resolution), float(s.traffic.turns_per_month), result, cur).properties(
                width=420, height=230
            )
        )
    ]
    right = []
    if result.turn is not None:
        right.append(_png(charts.turn_parts_chart(result.turn, s).properties(width=420, height=120)))
        share = charts.share_sweep_chart(sweep, "prefix_share", float(s.workload.prefix_share), cur)
        right.append(_png(share.properties(width=420, height=110)))
    columns = [(pdf.l_margin, left), (pdf.l_margin + half + 4, right)]
    natural = [
        sum(half * h / w_ for w_, h in map(_png_size, pictures)) + 2 * (len(pictures) - 1) for _, pictures in columns
    ]
    scale = min(1.0, room / max(max(natural), 1.0))
    bottom = y
    for x, pictures in columns:
        top = y
        for png in pictures:
            w_px, h_px = _png_size(png)
            width = half * scale
            height = width * h_px / w_px
            pdf.image(png, x=x, y=top, w=width, h=height)
            top += height + 2
        bottom = max(bottom, top)
    pdf.set_xy(pdf.l_margin, bottom + 1)


def _table(pdf: _Pdf, assumptions: pd.DataFrame, bottom: float) -> int:
    """The assumptions, each value wrapped within its cell, row by row while a whole row fits above
    ``bottom``; returns how many rows were written (the rest are in the CSV, and the footer says so)."""
    w = pdf.epw
    size, head = 5.6, 6.0
    pdf.set_font(pdf.family, "B", 9)
    _paragraph(pdf, "Assumptions and price versions", 9, "B", after=0.5)
    y = pdf.get_y()
    x = pdf.l_margin
    for col, frac in TABLE_COLUMNS:
        _write(pdf, x, y, w * frac - 1, col, head, "B")
        x += w * frac
    y += _line(head) + 0.6
    pdf.set_draw_color(120, 120, 120)
    pdf.line(pdf.l_margin, y - 0.3, pdf.l_margin + w, y - 0.3)
    rows = assumptions[~assumptions["Assumption"].isin(["Note", "Price note"])]
    shown = 0
    for _, row in rows.iterrows():
        cells = [(str(row[col]) if col in row else "", frac) for col, frac in TABLE_COLUMNS]
        tall = max(_text_height(pdf, w * frac - 1, text, size) for text, frac in cells)
        if y + tall > bottom:
            break
        x = pdf.l_margin
        for text, frac in cells:
            _write(pdf, x, y, w * frac - 1, text, size)
            x += w * frac
        y += tall + 0.4
        shown += 1
    pdf.set_xy(pdf.l_margin, y)
    return len(rows) - shown


def summary_pdf(
    result: Comparison,
    cat: Catalogs,
    assumptions: pd.DataFrame | None = None,
    generated: dt.date | None = None,
) -> bytes:
    """One A4 page: the scenario's name and description, the headline, a box per option and the turn pair, the
    answers in words, three charts and the assumptions with their price versions. Every text wraps within
    its box or cell (nothing is cut short), no picture runs into text, and what does not fit on the page (the
    assumptions' last rows) is counted in the footer. ``assumptions`` defaults to
    :func:`calculator.present.assumptions.assumptions_frame` (the Compare page passes the table it shows)."""
    from calculator.present import charts
    from calculator.present.headline import headline
    from calculator.present.pdf_page import _Pdf

    s = result.scenario
    if assumptions is None:
        from calculator.present.assumptions import assumptions_frame

        assumptions = assumptions_frame(result, cat, result.resolution)
    made_on = generated or dt.date.today()
    pdf = _Pdf()
    pdf.add_page()
    pdf.set_xy(pdf.l_margin, pdf.t_margin)
    _paragraph(pdf, f"LLM inference cost: {s.name}", 14, "B", after=0.5)
    if s.description:
        _paragraph(pdf, s.description, 8.5, after=0.5)
    pdf.set_text_color(90, 90, 90)
    _paragraph(
        pdf,
        f"Prices as of {result.as_of.isoformat()} · {s.currency} · generated {made_on.isoformat()} · every price "
        "names its version below",
        7,
    )
    _paragraph(pdf, price_age_line(result, made_on), 6.5, after=1.2)
    pdf.set_text_color(0, 0, 0)
    for sentence in headline(result).sentences:
        _paragraph(pdf, plain(sentence), 8.5, after=0.4)
    pdf.set_xy(pdf.l_margin, pdf.get_y() + 1.2)
    _draw_boxes(pdf, _metric_boxes(result))
    _paragraph(pdf, year_and_seat_line(result), 7, after=0.6)

    sweep = charts.share_sweep_frame(s, cat, "prefix_share", points=11)
    for sentence in answer_sentences(result, charts.cheapest_switch(sweep), cheapest=False):
        _paragraph(pdf, "• " + plain(sentence), 7.5)
    pdf.set_text_color(150, 90, 0)
    for warning in [problem.text() for problem in result.warnings] + stale_price_warnings(result, made_on):
        _paragraph(pdf, "! " + warning, 7)
    pdf.set_text_color(0, 0, 0)
    pdf.set_xy(pdf.l_margin, pdf.get_y() + 1)

    footer_y = pdf.h - pdf.b_margin - _line(6)
    # the charts take what is left above a few rows of the table (at most their natural size)
    _charts(pdf, result, sweep, max(footer_y - pdf.get_y() - 45, 20))
    rest = _table(pdf, assumptions, footer_y - 1)
    pdf.set_text_color(90, 90, 90)
    tail = f" ({rest} more rows in the CSV download)" if rest > 0 else ""
    _write(
        pdf,
        pdf.l_margin,
        footer_y,
        pdf.epw,
        f"Full assumptions, notes and source URLs: the app's 'Assumptions (CSV)' download{tail}.",
        6,
    )
    written = bytes(pdf.output())
    pdf.close_fonts()
    return written
