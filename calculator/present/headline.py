"""The answer a product manager reads first: the cheapest option and its month, the turn with and without the
reused prefix and what each costs a month, and what the break-even means, in three sentences.

The Compare page shows them above everything else and the PDF prints them under its title; how the GPUs were
sized is for the engineer, below. No pandas, no Altair: the page shows these before either is imported.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculator.present.money import fmt_volume, format_money, format_small
from calculator.present.shown_currency import turn_currency
from calculator.pricing.billing import DAYS_PER_MONTH
from calculator.pricing.compare import OPTION_LABELS, Comparison

__all__ = ["Headline", "headline"]

EVERY_VOLUME = "from 1,000 to 10 billion turns a month"
"""The volumes the break-even search covers (:func:`calculator.pricing.compare.compare`)."""


@dataclass(frozen=True)
class Headline:
    """Each sentence in Markdown (``**`` for the figures); None where the scenario has nothing to say."""

    cheapest: str
    turn: str | None
    break_even: str | None

    @property
    def sentences(self) -> list[str]:
        return [s for s in (self.cheapest, self.turn, self.break_even) if s]


def headline(result: Comparison) -> Headline:
    """The three sentences for ``result``, figures in the scenario's currency.

    The seed's coding agent (1,000,000 turns a month on lyceum GLM-5.3): a turn is $0.0302 with nothing reused,
    $30,200 a month, and $0.00968 with the prefix reused, $9,680 a month."""
    s = result.scenario
    cur, volume = s.currency, s.traffic.turns_per_month
    per_day = f"{volume / DAYS_PER_MONTH:,.0f} a day"
    best = result.option(result.cheapest) if result.cheapest else None
    if best is None and result.options:
        best = result.options[0]
    if best is None:
        cheapest = "No option could be priced for this scenario."
    else:
        label = OPTION_LABELS[best.option]
        verb = "is the cheapest way to buy this" if len(result.options) > 1 else "is the only option chosen"
        cheapest = (
            f"**{label}** ({best.provider} {best.offer}) {verb}: **{format_money(best.monthly, cur)} a month** "
            f"for {volume:,} turns ({per_day})."
        )
    turn_sentence = None
    if result.turn is not None:
        t = result.turn
        tc, convert = turn_currency(t, s)
        no_reuse, reused = convert(t.no_reuse.cost_per_turn), convert(t.reused.cost_per_turn)
        repeated = int(t.no_reuse.shape.input_tokens * s.workload.prefix_share)
        turn_sentence = (
            f"On the serverless API ({t.price.provider} {t.price.model}), a turn of "
            f"{t.no_reuse.shape.input_tokens:,} input tokens ({repeated:,} of them repeating the last prompt's start) "
            f"costs **{format_small(no_reuse, tc)}** with nothing reused, **{format_money(no_reuse * volume, tc)} a "
            f"month**, and **{format_small(reused, tc)}** with the repeated start read from the cache, "
            f"**{format_money(reused * volume, tc)} a month**"
            + (f" ({float(t.saving_share):.0%} less)." if t.saving_share else ".")
        )
    return Headline(cheapest, turn_sentence, _break_even(result))


def _break_even(result: Comparison) -> str | None:
    """What the break-even volume means for the option that is cheapest now, in one sentence."""
    if len(result.options) < 2 or not result.cheapest:
        return None
    best, volume = result.cheapest, result.scenario.traffic.turns_per_month
    name = OPTION_LABELS[best]
    mine = [c for c in result.crossings if best in (c.a, c.b)]
    above = sorted((c for c in mine if c.turns_per_month > volume and c.cheaper_above != best), key=_turns)
    if above:
        c = above[0]
        times = c.turns_per_month / volume if volume else 0.0
        return (
            f"Break-even: above **{fmt_volume(c.turns_per_month)} turns a month**"
            + (f" ({times:,.1f} times this volume)" if volume else "")
            + f", {OPTION_LABELS[c.cheaper_above]} would cost less than {name}; below it, {name} stays cheaper."
        )
    below = sorted((c for c in mine if c.turns_per_month <= volume and c.cheaper_above == best), key=_turns)
    if below:
        c = below[-1]
        other = c.b if c.a == best else c.a
        return (
            f"Break-even: {name} became cheaper than {OPTION_LABELS[other]} at "
            f"**{fmt_volume(c.turns_per_month)} turns a month**; this volume is above it, so {name} is the cheaper "
            "of the two, and stays so as the volume grows."
        )
    return (
        f"No break-even: {name} is the cheapest at every volume {EVERY_VOLUME}, so no other way to buy "
        "pays for itself at any volume of this workload."
    )


def _turns(c: object) -> float:
    return float(getattr(c, "turns_per_month", 0.0))
