"""Cache-TTL advisor: which cache lifetime to buy where an offer sells several (5 minutes, 1 hour).

Providers with explicit prompt caching (Anthropic) charge for cache writes by lifetime: a 5-minute
write costs 1.25x the input price, a 1-hour write 2x, and every read 0.1x. Which is cheaper depends
on the time between the turns of a session. The model, per session of ``n`` turns sharing a prefix
of ``P`` tokens, for a lifetime of ``T`` seconds::

    turn 1                   writes the prefix (nothing is cached yet)
    turn k > 1, gap <= T     reads it: the next turn came within T of the last use; the read
                             refreshes the lifetime, as providers do
    turn k > 1, gap >  T     the prefix expired: a miss rewrites it (and that write starts a new T)

Because every use (read or write) restarts the lifetime, a turn hits exactly when the gap since the
previous turn is at most ``T``. With ``F(T)`` the share of gaps at most ``T``::

    writes per session  W = 1 + (n - 1) * (1 - F(T))
    reads per session   R = (n - 1) * F(T)
    cost per session      = P / 1e6 * (W * write_price(T) + R * read_price)
    without caching       = P / 1e6 * n * input_price

The gaps come from a list (the gaps of a typical session), a lognormal or exponential distribution
given by its median, or a log: JSON Lines with a session id and a timestamp, or a Mooncake trace
(``timestamp`` in milliseconds; requests sharing the first ``hash_ids`` entry are one session, and a
request's gap is the time since the previous request of that session).

Break-even: when a gap falls between the two lifetimes, the short one rewrites the prefix on every
such turn while the long one, written once, reads it. Writing the long lifetime costs
``w_long - w_short`` more and each such read saves ``w_short - read``, so the long lifetime pays off
from ``(w_long - w_short) / (w_short - read)`` such reads per write (Anthropic: 0.75 / 1.15 = 0.65,
one read is enough). Against no caching at all a lifetime pays off from ``(w - input) / (input - read)``
reads per write.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, Literal, cast, overload

import numpy as np
import numpy.typing as npt

from calculator.catalog.limits import CONTEXT, SESSIONS_PER_MONTH, TURNS_PER_MONTH, TURNS_PER_SESSION
from calculator.catalog.prices import PriceSheet, ServerlessOffer, ServerlessPriceVersion, ttl_minutes
from calculator.catalog.textfile import Malformed, json_lines
from calculator.errors import InputError
from calculator.pricing.billing import DAYS_PER_MONTH  # one month length everywhere: 365/12 days, as GPUs are billed
from calculator.pricing.turn import PriceRef, price_ref, whole_units
from calculator.traffic.prefix import parse_timestamp

__all__ = [
    "DAYS_PER_MONTH",
    "EmpiricalGaps",
    "ExponentialGaps",
    "GapDistribution",
    "Gaps",
    "LogGaps",
    "LognormalGaps",
    "TtlAdvice",
    "TtlBreakEven",
    "TtlOutcome",
    "advise_ttl",
    "break_even_reads_per_write",
    "break_even_reads_vs_no_cache",
    "expected_uses",
    "parse_gap_list",
    "read_session_log",
    "sessions_from_timestamps",
]

MILLION = 1_000_000
DEFAULT_SESSIONS_PER_MONTH = 1000
SESSION_KEYS = ("session_id", "session", "conversation_id", "thread_id", "chat_id")
"""Keys read as the session id of a JSON Lines log, first found wins."""
TIME_KEYS = ("timestamp", "created", "time", "ts")
"""Keys read as a line's time (Unix seconds or ISO 8601) in a JSON Lines log; ``timestamp_ms`` is milliseconds."""


# --- gap distributions ------------------------------------------------------------------------------


class GapDistribution:
    """The time between consecutive turns of a session, in seconds."""

    kind: str = "distribution"

    def cdf(self, seconds: float) -> float:
        """Share of gaps at most ``seconds`` long (the chance a turn finds a cache of that lifetime)."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


class Gaps(Sequence[float]):
    """Gaps in seconds, sorted, in one float64 array: 8 bytes a gap, so a log of millions of turns
    stays small, and the share of gaps up to a lifetime is a binary search. Immutable and hashable."""

    __slots__ = ("_values",)

    def __init__(self, values: Iterable[float] | npt.NDArray[np.float64]) -> None:
        array = np.sort(np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.float64))
        array.flags.writeable = False
        self._values = array

    @property
    def values(self) -> npt.NDArray[np.float64]:
        return self._values

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> Gaps: ...
    def __getitem__(self, index: int | slice) -> float | Gaps:
        if isinstance(index, slice):
            return Gaps(self._values[index])
        return float(self._values[index])

    def __iter__(self) -> Iterator[float]:
        return iter(self._values.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Gaps):
            return bool(np.array_equal(self._values, other._values))
        if isinstance(other, Sequence) and not isinstance(other, str):
            return bool(np.array_equal(self._values, np.sort(np.asarray(list(other), dtype=np.float64))))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values.tobytes())

    def __repr__(self) -> str:
        return f"Gaps({len(self):,} gaps)"

    def share_at_most(self, seconds: float) -> float:
        return float(np.searchsorted(self._values, seconds, side="right")) / len(self._values)


@dataclass(frozen=True)
class EmpiricalGaps(GapDistribution):
    """Measured or listed gaps; each counts equally (held sorted, as :class:`Gaps`)."""

    gaps: Sequence[float]
    kind: str = "list"

    def __post_init__(self) -> None:
        gaps = self.gaps if isinstance(self.gaps, Gaps) else Gaps(self.gaps)
        object.__setattr__(self, "gaps", gaps)
        if not len(gaps):
            raise InputError("ttl.gaps_seconds", "give at least one gap (a session of one turn has none)")
        bad = gaps.values[~(np.isfinite(gaps.values) & (gaps.values >= 0))]
        if len(bad):
            raise InputError("ttl.gaps_seconds", f"a gap must be 0 seconds or more, got {float(bad[0])}")

    @property
    def _sorted(self) -> Gaps:
        assert isinstance(self.gaps, Gaps)
        return self.gaps

    def cdf(self, seconds: float) -> float:
        return self._sorted.share_at_most(seconds)

    @property
    def median(self) -> float:
        return float(np.median(self._sorted.values))

    def describe(self) -> str:
        return f"{len(self.gaps):,} gaps, median {_duration(self.median)}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "count": len(self.gaps), "median_seconds": self.median}


def _check_median(median: float) -> None:
    if not math.isfinite(median) or median <= 0:
        raise InputError("ttl.gap_median_seconds", f"the median gap must be greater than 0 seconds, got {median}")


@dataclass(frozen=True)
class LognormalGaps(GapDistribution):
    """Lognormal gaps: ``ln(gap)`` is normal with mean ``ln(median)`` and standard deviation ``sigma``."""

    median: float
    sigma: float = 1.0
    kind: str = "lognormal"

    def __post_init__(self) -> None:
        _check_median(self.median)
        if not math.isfinite(self.sigma) or self.sigma <= 0:
            raise InputError("ttl.gap_sigma", f"the spread must be greater than 0, got {self.sigma}")

    def cdf(self, seconds: float) -> float:
        if seconds <= 0:
            return 0.0
        z = (math.log(seconds) - math.log(self.median)) / self.sigma
        return 0.5 * (1 + math.erf(z / math.sqrt(2)))

    def describe(self) -> str:
        return f"lognormal gaps, median {_duration(self.median)}, sigma {self.sigma:g}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "median_seconds": self.median, "sigma": self.sigma}


@dataclass(frozen=True)
class ExponentialGaps(GapDistribution):
    """Exponential gaps (turns arriving at random at a constant rate): ``F(t) = 1 - 2^(-t / median)``."""

    median: float
    kind: str = "exponential"

    def __post_init__(self) -> None:
        _check_median(self.median)

    def cdf(self, seconds: float) -> float:
        if seconds <= 0:
            return 0.0
        return 1 - 2 ** (-seconds / self.median)

    def describe(self) -> str:
        return f"exponential gaps, median {_duration(self.median)} (mean {_duration(self.median / math.log(2))})"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "median_seconds": self.median}


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


# --- logs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogGaps:
    """Sessions measured from a log."""

    path: str
    format: Literal["jsonl", "mooncake"]
    sessions: int
    turns: int
    gaps: Sequence[float]
    """Time between consecutive requests of a session, sorted (:class:`Gaps`)."""
    span_seconds: float
    """From the first to the last request of the log."""
    malformed: int = 0
    problems: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.gaps, Gaps):
            object.__setattr__(self, "gaps", Gaps(self.gaps))

    @property
    def turns_per_session(self) -> float:
        return self.turns / self.sessions

    @property
    def sessions_per_month(self) -> float | None:
        """The log's session rate extrapolated to an average month; None when the log has no time span."""
        if self.span_seconds <= 0:
            return None
        return self.sessions / self.span_seconds * DAYS_PER_MONTH * 86400

    def distribution(self) -> EmpiricalGaps:
        if not self.gaps:
            raise InputError(
                "ttl.log",
                f"{self.path}: no session has more than one request ({self.sessions} sessions), so there is no "
                "gap between turns to measure",
            )
        return EmpiricalGaps(self.gaps)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "sessions": self.sessions,
            "turns": self.turns,
            "gaps": len(self.gaps),
            "span_seconds": self.span_seconds,
            "malformed_lines": self.malformed,
        }


def _seconds(value: Any, what: str) -> float:
    seconds = parse_timestamp(value, what)
    if seconds is None:
        raise ValueError(f"'{what}' must be a number of seconds or an ISO 8601 time")
    return seconds


def _line_event(obj: Any, fmt: str) -> tuple[str, float]:
    """(session key, time in seconds) of one log line."""
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    if fmt == "mooncake":
        ids = obj.get("hash_ids")
        if not isinstance(ids, list) or not ids or isinstance(ids[0], bool) or not isinstance(ids[0], int):
            raise ValueError("'hash_ids' must be a non-empty list of whole numbers")
        ts = obj.get("timestamp")
        if ts is None or isinstance(ts, str):
            raise ValueError("'timestamp' (milliseconds) is missing or not a number")
        return f"hash:{ids[0]}", _seconds(ts, "timestamp") / 1000
    session = next((obj[k] for k in SESSION_KEYS if obj.get(k) is not None), None)
    if session is None or isinstance(session, dict | list):
        raise ValueError(f"no session id (one of: {', '.join(SESSION_KEYS)})")
    if obj.get("timestamp_ms") is not None:
        return str(session), _seconds(obj["timestamp_ms"], "timestamp_ms") / 1000
    key = next((k for k in TIME_KEYS if obj.get(k) is not None), None)
    if key is None:
        raise ValueError(f"no time (one of: {', '.join(TIME_KEYS)}, timestamp_ms)")
    return str(session), _seconds(obj[key], key)


def _session_gaps(sessions: npt.NDArray[np.int32], times: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The gaps between consecutive requests of each session, from requests in any order."""
    order = np.lexsort((times, sessions))
    in_time = times[order]
    same = sessions[order]
    del order
    following = same[1:] == same[:-1]
    del same
    gaps: npt.NDArray[np.float64] = np.diff(in_time)[following]
    return gaps


class _Sessions:
    """Requests as they stream in: a number per session, each request's (session, time) in 12 bytes, and,
    while every session's requests come in time order (a log written as it happens), the gaps at once."""

    def __init__(self) -> None:
        self.keys: dict[str, int] = {}
        self.last = array("d")
        self.numbers = array("i")
        self.times = array("d")
        self.gaps = array("d")
        self.in_order = True
        self.first, self.latest = math.inf, -math.inf

    def add(self, key: str, seconds: float) -> None:
        number = self.keys.get(key)
        if number is None:
            number = self.keys[key] = len(self.keys)
            self.last.append(seconds)
        else:
            before = self.last[number]
            if seconds < before:
                self.in_order = False
            elif self.in_order:
                self.gaps.append(seconds - before)
            self.last[number] = max(before, seconds)
        self.numbers.append(number)
        self.times.append(seconds)
        self.first, self.latest = min(self.first, seconds), max(self.latest, seconds)

    def result(self) -> tuple[int, int, npt.NDArray[np.float64], float]:
        """(sessions, turns, gaps, span)."""
        turns = len(self.times)
        if self.in_order:
            gaps = np.frombuffer(self.gaps, dtype=np.float64)
        else:
            gaps = _session_gaps(
                np.frombuffer(self.numbers, dtype=np.int32), np.frombuffer(self.times, dtype=np.float64)
            )
        span = self.latest - self.first if turns else 0.0
        return len(self.keys), turns, gaps, span


def sessions_from_timestamps(events: Iterable[tuple[str, float]]) -> tuple[int, int, list[float], float]:
    """(sessions, turns, gaps, span) from (session key, seconds) pairs in any order."""
    found = _Sessions()
    for key, seconds in events:
        found.add(key, seconds)
    sessions, turns, gaps, span = found.result()
    return sessions, turns, gaps.tolist(), span


def read_session_log(
    path: Path | str | IO[bytes],
    fmt: Literal["auto", "jsonl", "mooncake"] = "auto",
    *,
    name: str | None = None,
    max_chars: int | None = None,
) -> LogGaps:
    """Measure the sessions of a JSON Lines log or a Mooncake trace (gzip allowed), as a stream.

    The log is read as every log is (:mod:`calculator.catalog.textfile`); a line that cannot be used is
    skipped and counted, and a log with no usable line is a DataFileError. A request keeps 12 bytes and
    a gap 8 (:class:`_Sessions`); nothing else grows with the log. ``name`` names an upload in problems;
    ``max_chars`` caps what is read.
    """
    label = name or str(path)
    malformed = Malformed(label)
    found = _Sessions()
    resolved: str = fmt
    for number, obj in json_lines(path, label, malformed, max_chars):
        try:
            if resolved == "auto":
                if not isinstance(obj, dict):
                    raise ValueError("not a JSON object")
                resolved = "mooncake" if "hash_ids" in obj else "jsonl"
            key, seconds = _line_event(obj, resolved)
        except ValueError as exc:
            malformed.add(number, str(exc))
            continue
        found.add(key, seconds)
    if not found.times:
        raise malformed.error("no requests in the log")
    sessions, turns, gaps, span = found.result()
    return LogGaps(
        path=label,
        format=cast(Literal["jsonl", "mooncake"], resolved),
        sessions=sessions,
        turns=turns,
        gaps=Gaps(gaps),
        span_seconds=span,
        malformed=malformed.count,
        problems=tuple(malformed.lines),
    )


# --- the advice ------------------------------------------------------------------------------------------


def expected_uses(turns_per_session: float, hit_probability: float) -> tuple[float, float]:
    """(writes, reads) per session: the first turn writes; each later turn reads with the hit probability,
    otherwise rewrites."""
    if turns_per_session < 1:
        raise InputError("ttl.turns_per_session", f"a session has at least 1 turn, got {turns_per_session:g}")
    later = turns_per_session - 1
    return 1 + later * (1 - hit_probability), later * hit_probability


def break_even_reads_per_write(short_write: Decimal, long_write: Decimal, read: Decimal) -> Decimal | None:
    """Reads per long-lifetime write, each on a turn the short lifetime would have rewritten, at which
    the long lifetime costs the same: ``(long_write - short_write) / (short_write - read)``.

    None when a rewrite is no dearer than a read (the long lifetime never pays off)."""
    saving = short_write - read
    if saving <= 0:
        return None
    return max(Decimal(0), (long_write - short_write) / saving)


def break_even_reads_vs_no_cache(write: Decimal, input_price: Decimal, read: Decimal) -> Decimal | None:
    """Reads per write at which caching with this write price costs the same as not caching:
    ``(write - input) / (input - read)``; None when a read is no cheaper than input."""
    saving = input_price - read
    if saving <= 0:
        return None
    return max(Decimal(0), (write - input_price) / saving)


@dataclass(frozen=True)
class TtlOutcome:
    """One cache lifetime, per session and per month."""

    ttl: str
    ttl_seconds: int
    hit_probability: float
    writes_per_session: float
    reads_per_session: float
    written_tokens_per_session: float
    read_tokens_per_session: float
    write_price: Decimal
    read_price: Decimal
    cost_per_session: float
    cost_per_month: float
    break_even_reads_vs_no_cache: Decimal | None

    @property
    def reads_per_write(self) -> float:
        return self.reads_per_session / self.writes_per_session


@dataclass(frozen=True)
class TtlBreakEven:
    """When the longer of two lifetimes pays off."""

    shorter: str
    longer: str
    reads_per_write: Decimal | None
    """Reads (on turns the shorter lifetime would rewrite) per write of the longer lifetime to break even."""
    extra_hit_probability: float
    """Share of gaps between the two lifetimes: turns the longer one reads and the shorter one rewrites."""
    observed_reads_per_write: float
    """Those turns per write of the longer lifetime, in this session pattern."""


@dataclass(frozen=True)
class TtlAdvice:
    price: PriceRef
    prefix_tokens: int
    """The cached prefix, rounded down to the offer's cache increment."""
    turns_per_session: float
    sessions_per_month: float
    sessions_per_month_source: str
    gaps: GapDistribution
    input_price: Decimal
    no_cache_cost_per_session: float
    no_cache_cost_per_month: float
    outcomes: tuple[TtlOutcome, ...]
    break_even: tuple[TtlBreakEven, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def cheapest(self) -> TtlOutcome:
        """The cheaper lifetime (ties go to the shorter one)."""
        return min(self.outcomes, key=lambda o: (round(o.cost_per_session, 12), o.ttl_seconds))

    @property
    def caching_pays(self) -> bool:
        return self.cheapest.cost_per_session < self.no_cache_cost_per_session

    @property
    def saving_per_month(self) -> float:
        """Against the most expensive lifetime sold."""
        return max(o.cost_per_month for o in self.outcomes) - self.cheapest.cost_per_month


def advise_ttl(
    sheet: PriceSheet,
    offer: ServerlessOffer,
    version: ServerlessPriceVersion,
    *,
    prefix_tokens: int,
    gaps: GapDistribution,
    turns_per_session: float,
    sessions_per_month: float = DEFAULT_SESSIONS_PER_MONTH,
    sessions_per_month_source: str = "given",
) -> TtlAdvice:
    """Expected writes, reads and cost of a ``prefix_tokens`` prefix under each cache lifetime the offer sells."""
    CONTEXT.check(prefix_tokens, "ttl.prefix_tokens")
    SESSIONS_PER_MONTH.check(sessions_per_month, "ttl.sessions_per_month")
    TURNS_PER_SESSION.check(turns_per_session, "ttl.turns_per_session")
    if sessions_per_month * turns_per_session > TURNS_PER_MONTH.high:  # the sessions' turns are a month's turns
        raise InputError(
            "ttl.sessions_per_month",
            f"{sessions_per_month:,.0f} sessions of {turns_per_session:g} turns are more than "
            f"{TURNS_PER_MONTH.high:,} turns a month: {TURNS_PER_MONTH.why}",
            f"sessions x turns per session up to {TURNS_PER_MONTH.high:,}",
        )
    notes: list[str] = []
    prefix = int(whole_units(Decimal(prefix_tokens), offer.cache_increment_tokens))
    if prefix != prefix_tokens:
        notes.append(f"prefix rounded down to {prefix:,} tokens (cached in blocks of {offer.cache_increment_tokens})")
    if prefix < max(offer.min_cacheable_tokens, 1):
        raise InputError(
            "ttl.prefix_tokens",
            f"{prefix_tokens:,} tokens is below {offer.model}'s minimum cacheable prompt "
            f"({offer.min_cacheable_tokens:,} tokens): nothing would be cached",
        )
    prices = version.prices_for_prompt(prefix)
    if prices is not version.prices:
        notes.append(f"long-context prices: the prefix alone passes {offer.model}'s long-context threshold")
    if not prices.cache_write:
        sold = "automatic caching with no write fee" if prices.cached_input is not None else "no prompt caching"
        raise InputError(
            "ttl.model",
            f"{offer.model} on {sheet.provider} has {sold}, so there is no cache lifetime to choose; the TTL "
            "advisor is for offers that charge cache writes by lifetime (for example anthropic claude-sonnet-4-5)",
        )
    read = prices.cached_input if prices.cached_input is not None else prices.input
    expected_uses(turns_per_session, 0.0)  # rejects fewer than one turn
    scale = prefix / MILLION
    outcomes = []
    for ttl in sorted(prices.cache_write, key=ttl_minutes):
        write = prices.cache_write[ttl]
        seconds = ttl_minutes(ttl) * 60
        hit = gaps.cdf(seconds)
        writes, reads = expected_uses(turns_per_session, hit)
        per_session = scale * (writes * float(write) + reads * float(read))
        outcomes.append(
            TtlOutcome(
                ttl=ttl,
                ttl_seconds=seconds,
                hit_probability=hit,
                writes_per_session=writes,
                reads_per_session=reads,
                written_tokens_per_session=writes * prefix,
                read_tokens_per_session=reads * prefix,
                write_price=write,
                read_price=read,
                cost_per_session=per_session,
                cost_per_month=per_session * sessions_per_month,
                break_even_reads_vs_no_cache=break_even_reads_vs_no_cache(write, prices.input, read),
            )
        )
    crossings = []
    for short, long in zip(outcomes, outcomes[1:], strict=False):
        extra = long.hit_probability - short.hit_probability
        crossings.append(
            TtlBreakEven(
                shorter=short.ttl,
                longer=long.ttl,
                reads_per_write=break_even_reads_per_write(short.write_price, long.write_price, read),
                extra_hit_probability=extra,
                observed_reads_per_write=(turns_per_session - 1) * extra / long.writes_per_session,
            )
        )
    no_cache = scale * turns_per_session * float(prices.input)
    return TtlAdvice(
        price=price_ref(sheet, offer, version),
        prefix_tokens=prefix,
        turns_per_session=turns_per_session,
        sessions_per_month=sessions_per_month,
        sessions_per_month_source=sessions_per_month_source,
        gaps=gaps,
        input_price=prices.input,
        no_cache_cost_per_session=no_cache,
        no_cache_cost_per_month=no_cache * sessions_per_month,
        outcomes=tuple(outcomes),
        break_even=tuple(crossings),
        notes=tuple(notes),
    )


def parse_gap_list(text: str | Sequence[float]) -> tuple[float, ...]:
    """``"30,120,600"`` -> (30.0, 120.0, 600.0); an InputError names what is wrong."""
    if not isinstance(text, str):
        return tuple(float(x) for x in text)
    values = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise InputError("ttl.gaps_seconds", f"{part!r} is not a number of seconds; give e.g. 30,120,600") from None
        values.append(value)
    return tuple(values)
