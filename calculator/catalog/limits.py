"""The range of each kind of number a user gives, as the domain allows it, the same on every path.

A number can pass every type check and still mean nothing: 10^28 turns a month, a peak 10^308 times
the mean, a context of 321 digits. It does not fail where it was typed; it overflows three layers
down, or runs for hours. So each kind of input has one :class:`Limit` here, with why it is where it
is, and every way in applies that one: the pydantic models (scenario files, presets, the app's
pages) through ``Annotated[int, TOKENS]``, code that takes a bare number through
:meth:`Limit.check`, and the command line's flag converters (``cli/flags.py``) through
:meth:`Limit.problem`. The limits are wide: they refuse what cannot be meant, never a real workload.

It sits with the catalogues, the lowest data layer, because measurement records and model specs
need the same limits as the scenario above them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from calculator.errors import InputError

__all__ = [
    "ACTIVE_HOURS",
    "BALANCE",
    "BATCH",
    "CACHE_TOKENS",
    "CONTEXT",
    "DAYS_PER_WEEK",
    "DESCRIPTION_LENGTH",
    "ENGINEER_MONTHLY_COST",
    "ENGINEER_SHARE",
    "GPUS_PER_REPLICA",
    "MINUTES",
    "MODEL_CHANGES",
    "MEAN_TOKENS",
    "NAME_LENGTH",
    "PARAMETERS_B",
    "PEAK_TO_AVERAGE",
    "PRESET_NAME",
    "RATE",
    "REPLICAS",
    "SESSIONS_PER_MONTH",
    "SIMULATED_REPLICAS",
    "SPEC_COUNT",
    "TOKENS",
    "TURNS",
    "TURNS_PER_DAY",
    "TURNS_PER_MONTH",
    "TURNS_PER_SESSION",
    "TURNS_PER_USER_PER_DAY",
    "USD_PER_EUR",
    "USERS",
    "USD_PER_GBP",
    "USD_PER_INR",
    "USD_PER_JPY",
    "USD_PER_UNIT",
    "UNITS_PER_USD",
    "JPY_PER_USD",
    "INR_PER_USD",
    "UTILISATION",
    "Description",
    "Limit",
    "Name",
    "ScenarioName",
    "shown",
]


_HUGE = 10**4000  # made once: building it took most of a check on every sized sweep point


def shown(value: float | int | Decimal) -> str:
    """A number as an error message quotes it: whole numbers with separators, a huge one by its size."""
    if isinstance(value, int) and not isinstance(value, bool):
        digits = len(str(abs(value))) if abs(value) < _HUGE else None  # str() refuses > 4,300 digits
        if digits is None or digits > 24:
            return f"a {digits or 'several-thousand'}-digit number"
        return f"{value:,}"
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() and abs(value.adjusted()) < 24 else f"{value:.6g}"
    number = float(value)
    if math.isfinite(number) and number.is_integer() and abs(number) < 1e16:
        return f"{int(number):,}"
    return f"{number:g}"


@dataclass(frozen=True)
class Limit:
    """The allowed range of one kind of number: ``low`` to ``high``, and why the ends are where they are.

    Used as pydantic metadata (``Annotated[int, TOKENS]``) it checks the field and puts the range in
    the JSON Schema editors read.
    """

    low: float
    high: float
    unit: str
    """What the number counts (``tokens``, ``turns a month``), said after it."""
    why: str
    """Why nothing above ``high`` makes sense."""
    why_low: str = ""
    """Why nothing below ``low`` makes sense, when that is not obvious."""
    low_allowed: bool = True
    """False: ``low`` itself is refused (greater than, not at least)."""
    low_text: str | None = None
    """How ``low`` is written when it is not a round number (``1/60``)."""

    @property
    def allowed(self) -> str:
        low = self.low_text or shown(self.low)
        prefix = "" if self.low_allowed else "more than "
        return f"{prefix}{low} to {shown(self.high)} {self.unit}".rstrip()

    def problem(self, value: float | int | Decimal, as_typed: str | None = None) -> str | None:
        """What is wrong with ``value`` (one sentence), or None when it is within the limit.

        ``as_typed``: the text the value was read from, quoted instead of the value (``1e999``, not ``inf``).
        """
        text = as_typed or shown(value)
        if isinstance(value, float | Decimal) and not (
            value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)
        ):
            return f"{text} is not a number you can plan with; give a finite number"
        low: float | Decimal = self.low
        high: float | Decimal = self.high
        if isinstance(value, Decimal):  # the bounds as written (0.01), not as binary floats (0.0100000000000000002)
            low, high = Decimal(repr(self.low)), Decimal(repr(self.high))
        if value > high:
            return f"{text} is more than {shown(self.high)} {self.unit}: {self.why}".replace("  ", " ")
        if self.low == 0 and self.low_allowed and value < 0:
            return f"{text} is negative; give 0 or more"
        if value < low or (value == low and not self.low_allowed):
            what = "less than" if self.low_allowed else "not more than"
            written = self.low_text or shown(self.low)
            return f"{text} is {what} {written}" + (f": {self.why_low}" if self.why_low else "")
        return None

    def check(self, value: Any, field: str) -> Any:
        """``value`` unchanged, or an :class:`InputError` naming ``field`` and the allowed range."""
        problem = self.problem(value)
        if problem:
            raise InputError(field, problem, self.allowed)
        return value

    def _validated(self, value: Any) -> Any:
        problem = self.problem(value)
        if problem:
            raise PydanticCustomError(
                "limit", "{problem} (allowed: {allowed})", {"problem": problem, "allowed": self.allowed}
            )
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._validated, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["minimum" if self.low_allowed else "exclusiveMinimum"] = self.low
        json_schema["maximum"] = self.high
        return json_schema


# --- volumes ---------------------------------------------------------------------------------------

# ChatGPT answered about 2.5 billion prompts a day in 2025: under 10^11 a month.
TURNS_PER_MONTH = Limit(
    0,
    10**12,
    "turns a month",
    "that is 380,000 requests a second all month, ten times what the largest public LLM service serves",
)
TURNS = replace(TURNS_PER_MONTH, unit="turns", why="no month holds more (10^12 turns a month is the limit)")
"""Turns to total (``turn --turns``): at most a month's worth of the largest service."""
TURNS_PER_DAY = replace(
    TURNS_PER_MONTH,
    high=TURNS_PER_MONTH.high * 12 // 365,
    unit="turns a day",
    why="a month of them would pass 10^12 turns a month",
)
SESSIONS_PER_MONTH = replace(
    TURNS_PER_MONTH, unit="sessions a month", why="each session is at least one turn, and a month has at most 10^12"
)
USERS = Limit(
    1,
    10**10,
    "users",
    "more than everyone alive; the cost per user divides the month's bill by this",
    why_low="count at least 1 user, or leave users out",
)
"""People (seats) the traffic serves: only a divisor for the cost per user."""
TURNS_PER_USER_PER_DAY = Limit(
    0,
    86_400,
    "turns per user a day",
    "one turn a second all day and night is more than one person sends",
)
TURNS_PER_SESSION = Limit(
    1,
    10**6,
    "turns",
    "a million turns, one every 2.6 seconds, fill a whole month",
    why_low="a session has at least 1 turn",
)

# --- tokens ----------------------------------------------------------------------------------------

TOKENS = Limit(
    0,
    10**7,
    "tokens",
    "the longest context windows sold hold 10 million tokens (Llama 4 Scout), so no prompt, output, "
    "prefix or sequence is longer",
)
CONTEXT = replace(TOKENS, low=1, why_low="a sequence holds at least 1 token")
"""A sequence's context, a cached prefix, a cache block: at least one token."""
CACHE_TOKENS = Limit(
    0,
    10**12,
    "tokens",
    "a trillion tokens of KV cache is petabytes, more than any cache tier (GPU, CPU or disk) holds per replica",
)

# --- load over time --------------------------------------------------------------------------------

PEAK_TO_AVERAGE = Limit(
    1,
    730 * 3600,
    "times the mean rate",
    "a month has 2,628,000 seconds, so a higher peak would put more than the month's turns into one second",
    why_low="the busiest moment carries at least the mean rate",
)
"""Peak-to-average ratios and within-hour bursts; also the month's peak over its mean, whatever sets it."""
ACTIVE_HOURS = Limit(
    1 / 60,
    24,
    "hours a day",
    "a day has 24 hours",
    why_low="traffic that arrives within less than a minute a day is a burst; give it as peak-to-average",
    low_text="1/60 (a minute)",
)
DAYS_PER_WEEK = Limit(
    7 * 12 / 365,
    7,
    "days a week",
    "a week has 7 days",
    why_low="traffic on less than one day a month is not a monthly load",
    low_text="0.23 (a day a month)",
)

# --- owned capacity --------------------------------------------------------------------------------

UTILISATION = Limit(
    0.01,
    1,
    "",
    "a replica cannot serve more than its capacity",
    why_low="planning to use under 1% of a replica at peak is 100x headroom; no latency target needs that much",
)
REPLICAS = Limit(
    0, 100_000, "replicas", "the largest GPU clusters hold about 100,000 GPUs, so no deployment has more replicas"
)
SIMULATED_REPLICAS = replace(REPLICAS, low=1, why_low="a cache runs on at least 1 replica")
GPUS_PER_REPLICA = Limit(
    1,
    1024,
    "GPUs",
    "no engine shards one replica over more than about a thousand GPUs (an NVL72 rack holds 72)",
    why_low="a replica runs on at least 1 GPU",
)
BATCH = Limit(1, 100_000, "sequences", "engines cap a batch at a few thousand sequences", why_low="at least 1")
RATE = Limit(
    1e-6,
    10**7,
    "requests per second",
    "no replica's network takes ten million requests a second",
    why_low="a replica that completes under one request in 11 days has not been measured",
)
"""A replica's measured throughput."""
BALANCE = Limit(
    0,
    REPLICAS.high,
    "times the mean load",
    "with at most 100,000 replicas no replica can run further ahead than that, so a larger slack means none",
)
MINUTES = Limit(0, 24 * 60, "minutes", "a start-up or engine build of more than a day is not part of running one")
MODEL_CHANGES = Limit(0, 730, "changes a month", "more than one an hour (730 a month) is not a deployment")
ENGINEER_SHARE = Limit(
    0, 5, "engineers", "five full-time engineers on one model's serving stack is a team, not a share of one"
)
ENGINEER_MONTHLY_COST = Limit(
    0, 10**7, "a month", "ten million a month pays a thousand engineers, not one; give one engineer's cost"
)
USD_PER_EUR = Limit(
    0.01,
    100,
    "US dollars per euro",
    "the rate has stayed between 0.8 and 1.6 since 1999; check the figure",
    why_low="the rate has stayed between 0.8 and 1.6 since 1999; check the figure",
)
USD_PER_GBP = Limit(
    0.01,
    100,
    "US dollars per pound",
    "the pound has cost between 1.03 and 2.65 dollars since it floated in 1972; check the figure",
    why_low="the pound has cost between 1.03 and 2.65 dollars since it floated in 1972; check the figure",
)
USD_PER_JPY = Limit(
    0.0001,
    1,
    "US dollars per yen",
    "a yen has cost between 75 and 360 to the dollar since 1971, never a dollar: give dollars per yen "
    "(150 yen a dollar is 1/150 = 0.00667), not yen per dollar",
    why_low="that is more than 10,000 yen to the dollar; the most since 1971 was 360",
)
USD_PER_INR = Limit(
    0.0001,
    1,
    "US dollars per rupee",
    "a rupee has cost between 7 and 100 to the dollar since 1971, never a dollar: give dollars per rupee "
    "(90 rupees a dollar is 1/90 = 0.0111), not rupees per dollar",
    why_low="that is more than 10,000 rupees to the dollar; the most since 1971 was under 100",
)
USD_PER_UNIT: dict[str, Limit] = {"EUR": USD_PER_EUR, "GBP": USD_PER_GBP, "JPY": USD_PER_JPY, "INR": USD_PER_INR}
JPY_PER_USD = Limit(
    1,
    10_000,
    "yen per US dollar",
    "that is a yen worth a hundredth of a cent; the most since 1971 was 360 to the dollar",
    why_low="a yen has never cost a dollar (75 to 360 yen a dollar since 1971): give yen per dollar, about 150",
)
INR_PER_USD = Limit(
    1,
    10_000,
    "rupees per US dollar",
    "that is a rupee worth a hundredth of a cent; the most since 1971 was under 100 to the dollar",
    why_low="a rupee has never cost a dollar (7 to 100 rupees a dollar since 1971): give rupees per dollar, about 90",
)
UNITS_PER_USD: dict[str, Limit] = {"JPY": JPY_PER_USD, "INR": INR_PER_USD}
"""The rates markets quote as units per dollar (USD/JPY 156.8), by code: the page takes these that way round."""
"""Each currency's exchange rate, US dollars per unit, by code (the dollar itself is 1)."""
SPEC_COUNT = Limit(
    1,
    10**9,
    "",
    "no model has a billion layers, heads or experts, and a vocabulary or context of a billion is none either",
    why_low="at least 1",
)
"""A model architecture's whole numbers (layers, heads, widths, experts): bounded so sizes stay finite."""
PARAMETERS_B = Limit(
    0, 10**6, "billion parameters", "a quadrillion parameters is a thousand times the largest model", low_allowed=False
)
MEAN_TOKENS = replace(TOKENS, low_allowed=False)
"""A measured traffic's mean tokens per request: above 0, and no longer than a context."""

# --- names -----------------------------------------------------------------------------------------

NAME_LENGTH = 120
"""A scenario's name is a title (the app's name input takes as many characters)."""
DESCRIPTION_LENGTH = 2000
"""A scenario's description: a paragraph or two."""
ScenarioName = Annotated[str, Field(min_length=1, max_length=NAME_LENGTH)]
Description = Annotated[str, Field(max_length=DESCRIPTION_LENGTH)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
"""A provider, model or offer as a user names it; matched against the catalogues, which list the known ones."""
PRESET_NAME = r"^[a-z0-9][a-z0-9._-]{0,79}$"
"""A preset name is a slug, as the file names of the bundled scenarios: it cannot name a path."""
