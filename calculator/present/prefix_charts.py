"""Tables and Altair charts for the app's Prefix analysis page (no Streamlit here).

Also the small pieces of plumbing the page needs around :mod:`calculator.traffic.prefix`: reading a
log with a progress callback and the app's size limit (an upload is in memory, a bundled trace on disk;
any format and compression the command line reads), the command that analyses a log past the limit,
and running the chosen cache with every routing policy so the page can show them side by side.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, Any

import altair as alt
import pandas as pd

from calculator.catalog.textfile import APP_MAX_CHARS, TooLarge, unpacked_length
from calculator.present.chart_spec import Spec, layer, rows
from calculator.present.money import format_money
from calculator.pricing.compare import OPTION_LABELS, Comparison
from calculator.traffic.prefix import CacheConfig, CacheResult, PrefixReport, RequestLog
from calculator.traffic.tokens import Tokenizer

__all__ = [
    "ROUTINGS",
    "Analysis",
    "analysis_of",
    "cost_frame",
    "curve_capacities",
    "curve_chart",
    "curve_frame",
    "histogram_chart",
    "histogram_frame",
    "policy_frame",
    "read_log",
    "replica_chart",
    "replica_frame",
    "cli_command",
    "run_analysis",
]

ROUTINGS = {"round_robin": "Round robin", "random": "Random", "prefix_aware": "Prefix-aware"}
WIDTH = 560
HEIGHT = 300
HIST_HEIGHT = 340
BLUE = "#1f6feb"

Progress = Callable[[float, str], None]
"""Called with the share of the work done (0 to 1) and what is being done."""


# --- reading ------------------------------------------------------------------------------------------


class _Watched(io.RawIOBase):
    """A binary handle that reports the share of its ``size`` read so far, at most every ``every`` bytes
    (the packed bytes: for a compressed upload that share tracks the unpacked one)."""

    def __init__(self, handle: IO[bytes], size: int, progress: Callable[[float], None], every: int = 1 << 20) -> None:
        self.handle, self.size, self.progress, self.every = handle, size, progress, every
        self.shown = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self.handle.seekable())

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    def readinto(self, buffer: Any) -> int:
        data = self.handle.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        at = self.handle.tell() if self.handle.seekable() else self.shown + n
        if at - self.shown >= self.every and self.size > 0:
            self.shown = at
            self.progress(min(at / self.size, 1.0))
        return n


def curve_capacities(chosen: int | None, lowest: int = 10_000, highest: int = 1_000_000_000) -> list[int]:
    """Capacities for the hit-rate curve: 1-3-10 steps from ``lowest`` to ``highest``, plus the chosen one."""
    caps: set[int] = set()
    value = lowest
    while value <= highest:
        caps.update({value, value * 3} if value * 3 <= highest else {value})
        value *= 10
    if chosen:
        caps.add(chosen)
    return sorted(caps)


# --- one analysis: the chosen cache, the curve, and every routing policy ------------------------------


@dataclass(frozen=True)
class Analysis:
    report: PrefixReport
    policies: dict[str, CacheResult]
    """Routing policy -> the chosen cache under that policy (only the chosen one with a single replica)."""


Opener = Callable[[], AbstractContextManager[tuple[IO[bytes], int]]]
"""Opens the log afresh: a binary handle at its start and its size in bytes (for progress), as a context
manager (a file on disk is closed after the pass; an upload, kept in memory, is not)."""


def read_log(
    opener: Opener,
    name: str,
    *,
    format: str = "auto",
    block_size: int | None = None,
    tokenizer: Tokenizer | None = None,
    progress: Progress | None = None,
    max_chars: int = APP_MAX_CHARS,
) -> RequestLog:
    """The log's requests, read once and kept, so the page can try cache after cache on them.

    At most ``max_chars`` of text, unpacked (:class:`TooLarge` past it): a file that unpacks to more is
    refused before anything is analysed (a 1 MB archive of 1 GB, in a second or two); a stream that
    cannot be measured first (a pipe) is stopped at the limit."""
    report = progress

    def tick(share: float) -> None:
        if report is not None:
            report(share, "Reading the log")

    with opener() as (handle, size):
        if handle.seekable() and unpacked_length(handle, name, max_chars) > max_chars:
            raise TooLarge(name, max_chars)
        watched = io.BufferedReader(_Watched(handle, size, tick), 1 << 20)
        log = RequestLog.read(watched, format, tokenizer, block_size, name, max_chars)
    tick(1.0)
    return log


def cli_command(
    name: str,
    config: CacheConfig,
    *,
    format: str = "auto",
    block_size: int | None = None,
    tokenizer: str | None = None,
) -> str:
    """The ``prefix`` command that analyses the log ``name`` under ``config``, for a log too large for the
    app: the command line streams any size. Options left at their default are left out."""
    words = ["python", "-m", "calculator", "prefix", name]
    if format != "auto":
        words += ["--format", format]
    if block_size:
        words += ["--block-size", str(block_size)]
    if tokenizer:
        words += ["--tokenizer", tokenizer]
    if config.capacity_tokens is not None:
        words += ["--capacity-tokens", str(config.capacity_tokens)]
    if config.ttl_seconds is not None:
        words += ["--ttl-seconds", f"{config.ttl_seconds:g}"]
    if config.replicas > 1:
        words += ["--replicas", str(config.replicas), "--routing", config.routing]
        if config.routing == "prefix_aware" and config.balance != CacheConfig().balance:
            words += ["--balance", f"{config.balance:g}"]
    return shlex.join(words)


def analysis_of(log: RequestLog, config: CacheConfig) -> Analysis:
    """Prefix share, the chosen cache and its hit-rate curve; with more than one replica, the same cache
    under the other routing policies. Kept stack distances make a new capacity cheap (see RequestLog)."""
    report = log.analyse(config, curve_capacities(config.capacity_tokens))
    policies: dict[str, CacheResult] = {config.routing: report.scenario}
    if config.replicas > 1:
        for routing in ROUTINGS:
            if routing != config.routing:
                policies[routing] = log.result(config.model_copy(update={"routing": routing}))
    return Analysis(report, {r: policies[r] for r in ROUTINGS if r in policies})


def run_analysis(
    opener: Opener,
    name: str,
    config: CacheConfig,
    *,
    format: str = "auto",
    block_size: int | None = None,
    tokenizer: Tokenizer | None = None,
    progress: Progress | None = None,
) -> Analysis:
    """:func:`read_log`, then :func:`analysis_of`."""
    log = read_log(opener, name, format=format, block_size=block_size, tokenizer=tokenizer, progress=progress)
    return analysis_of(log, config)


def _rate(hit_share: float, prefix_share: float) -> float | None:
    return hit_share / prefix_share if prefix_share > 0 else None


# --- frames -------------------------------------------------------------------------------------------


def curve_frame(report: PrefixReport) -> pd.DataFrame:
    """The hit-rate curve, cut after the first capacity that already holds everything the log reuses."""
    rows = [
        {
            "capacity": p.capacity_tokens,
            "token_hit_share": p.token_hit_share,
            "hit_rate": p.hit_rate,
            "chosen": p.capacity_tokens == report.scenario.config.capacity_tokens,
        }
        for p in report.curve
        if p.capacity_tokens > 0
    ]
    df = pd.DataFrame(rows, columns=["capacity", "token_hit_share", "hit_rate", "chosen"])
    if df.empty:
        return df
    top = df["token_hit_share"].max()
    full = df.index[df["token_hit_share"] >= top - 1e-12]
    last = max(int(full[0]), int(df.index[df["chosen"]].max()) if df["chosen"].any() else 0)
    return df.loc[:last].reset_index(drop=True)


def policy_frame(analysis: Analysis) -> pd.DataFrame:
    """One row per routing policy: token hit share s*h, hit rate h, and how evenly the load spread."""
    share = analysis.report.prefix_share
    chosen = analysis.report.scenario.config.routing
    rows = []
    for routing, result in analysis.policies.items():
        loads = [r.requests for r in result.replicas]  # idle replicas are not listed: they count in the mean
        mean = result.requests / result.config.replicas
        rate = _rate(result.token_hit_share, share)
        rows.append(
            {
                "Routing": ROUTINGS[routing] + (" (chosen)" if routing == chosen else ""),
                "Token hit share s*h": f"{result.token_hit_share:.1%}",
                "Hit rate h": "-" if rate is None else f"{rate:.1%}",
                "Busiest / mean load": f"{max(loads) / mean:.2f}x" if mean else "-",
            }
        )
    return pd.DataFrame(rows)


def replica_frame(analysis: Analysis) -> pd.DataFrame:
    """Hit share and requests of every replica under every routing policy (long form, for a chart)."""
    rows = [
        {
            "routing": ROUTINGS[routing],
            "replica": rep.replica + 1,
            "hit_share": rep.hit_share,
            "requests": rep.requests,
            "input_tokens": rep.input_tokens,
        }
        for routing, result in analysis.policies.items()
        for rep in result.replicas
    ]
    return pd.DataFrame(rows, columns=["routing", "replica", "hit_share", "requests", "input_tokens"])


def _short(tokens: int) -> str:
    for size, unit in ((1 << 20, "M"), (1 << 10, "k")):
        if tokens >= size and tokens % size == 0:
            return f"{tokens // size}{unit}"
    return f"{tokens:,}"


def _bin_label(low: int, high: int) -> str:
    """``0``, ``16-31``, ``512-1k``, ``1k-2k``: bins double in width (k = 1,024 tokens)."""
    return "0" if low == 0 else f"{_short(low)}-{_short(high)}"


def histogram_frame(report: PrefixReport) -> pd.DataFrame:
    """Requests by matched start (tokens), with an unlimited cache and with the chosen cache."""
    rows = []
    for cache, result in (("Unlimited cache", report.unlimited), ("Your cache", report.scenario)):
        for order, b in enumerate(result.matched_histogram):
            rows.append(
                {
                    "bin": _bin_label(b.low_tokens, b.high_tokens),
                    "order": order,
                    "cache": cache,
                    "requests": b.requests,
                    "share": b.requests / result.requests if result.requests else 0.0,
                }
            )
    return pd.DataFrame(rows, columns=["bin", "order", "cache", "requests", "share"])


def cost_frame(assumed: Comparison, measured: Comparison, currency: str) -> pd.DataFrame:
    """Monthly cost of each option with the assumed reuse and with the measured one, and the change."""
    rows = []
    for before, after in zip(assumed.options, measured.options, strict=True):
        change = Decimal(after.monthly) - Decimal(before.monthly)
        share = float(change / Decimal(before.monthly)) if before.monthly else None
        rows.append(
            {
                "Option": OPTION_LABELS[before.option],
                "Offer": f"{before.provider} {before.offer}",
                "Assumed": format_money(before.monthly, currency),
                "Measured": format_money(after.monthly, currency),
                "Change": format_money(change, currency, plus=True) + ("" if share is None else f" ({share:+.1%})"),
            }
        )
    return pd.DataFrame(rows, columns=["Option", "Offer", "Assumed", "Measured", "Change"])


# --- charts -------------------------------------------------------------------------------------------


def curve_chart(df: pd.DataFrame, prefix_share: float) -> Spec:
    """Hit rate h against cache capacity per replica (log x); the chosen capacity is marked.

    Written as a Vega-Lite dict, as Compare's charts are: building it through Altair objects was a sixth of
    a Prefix analysis rerun (the chart tests check the spec against the schema)."""
    x = {
        "field": "capacity",
        "type": "quantitative",
        "title": "Cache capacity per replica (tokens, log scale)",
        "scale": {"type": "log"},
        "axis": {"values": [int(c) for c in df["capacity"]], "format": "~s", "grid": False},
    }
    y = {
        "field": "hit_rate",
        "type": "quantitative",
        "title": "Hit rate h",
        "scale": {"domain": [0, 1]},
        "axis": {"format": "%"},
    }
    tooltip = [
        {"field": "capacity", "type": "quantitative", "title": "Capacity (tokens)", "format": ","},
        {"field": "hit_rate", "type": "quantitative", "title": "Hit rate h", "format": ".1%"},
        {"field": "token_hit_share", "type": "quantitative", "title": "Token hit share s*h", "format": ".1%"},
    ]
    columns = ["capacity", "hit_rate", "token_hit_share"]
    data = rows({c: df[c].tolist() for c in columns}, len(df))
    layers = [
        layer(data, {"type": "line", "color": BLUE}, {"x": x, "y": y}),
        layer(data, {"type": "point", "filled": True, "color": BLUE, "size": 50}, {"x": x, "y": y, "tooltip": tooltip}),
    ]
    chosen = df[df["chosen"]]
    if not chosen.empty:
        marked = rows({c: chosen[c].tolist() for c in columns}, len(chosen))
        red = "#cf222e"
        layers.append(
            layer(
                marked,
                {"type": "point", "shape": "diamond", "size": 160, "filled": True, "color": red},
                {"x": x, "y": y, "tooltip": tooltip},
            )
        )
        layers.append(
            layer(
                marked,
                {"type": "text", "align": "left", "dx": 8, "dy": -10, "color": red},
                {"x": x, "y": y, "text": {"value": "your cache"}},
            )
        )
    title = {
        "text": "Hit rate against cache size",
        "subtitle": f"Share of the reusable start (s = {prefix_share:.1%}) a cache of this size still serves",
    }
    return Spec({"$schema": alt.SCHEMA_URL, "layer": layers, "width": WIDTH, "height": HEIGHT, "title": title})


def _bars(
    df: pd.DataFrame, columns: list[str], encoding: dict[str, Any], height: int, title: str | dict[str, str]
) -> Spec:
    """One bar chart with its rows inline."""
    return Spec(
        {
            "$schema": alt.SCHEMA_URL,
            "data": {"values": rows({c: df[c].tolist() for c in columns}, len(df))},
            "mark": {"type": "bar"},
            "encoding": encoding,
            "width": WIDTH,
            "height": height,
            "title": title,
        }
    )


def replica_chart(df: pd.DataFrame) -> Spec:
    """Token hit share of each replica, the routing policies side by side."""
    policies = list(ROUTINGS.values())
    encoding = {
        "x": {"field": "replica", "type": "ordinal", "title": "Replica", "axis": {"labelAngle": 0}},
        "xOffset": {"field": "routing", "type": "nominal", "sort": policies},
        "y": {
            "field": "hit_share",
            "type": "quantitative",
            "title": "Token hit share on the replica",
            "axis": {"format": "%"},
        },
        "color": {
            "field": "routing",
            "type": "nominal",
            "title": "Routing",
            "sort": policies,
            "scale": {"domain": policies, "range": [BLUE, "#bf8700", "#1a7f37"]},
            "legend": {"orient": "top", "title": None},
        },
        "tooltip": [
            {"field": "routing", "type": "nominal", "title": "Routing"},
            {"field": "replica", "type": "ordinal", "title": "Replica"},
            {"field": "hit_share", "type": "quantitative", "title": "Token hit share", "format": ".1%"},
            {"field": "requests", "type": "quantitative", "title": "Requests", "format": ","},
            {"field": "input_tokens", "type": "quantitative", "title": "Input tokens", "format": ","},
        ],
    }
    columns = ["routing", "replica", "hit_share", "requests", "input_tokens"]
    return _bars(df, columns, encoding, HEIGHT, "Hit share per replica and routing policy")


def histogram_chart(df: pd.DataFrame, block_size: int) -> Spec:
    """Requests by how many tokens of their start were found in the cache (bins double in width)."""
    order = list(df.sort_values("order")["bin"].drop_duplicates())
    caches = ["Unlimited cache", "Your cache"]
    encoding = {
        "x": {
            "field": "bin",
            "type": "nominal",
            "sort": order,
            "title": "Matched start (tokens; k = 1,024)",
            "axis": {"labelAngle": 0},
        },
        "xOffset": {"field": "cache", "type": "nominal", "sort": caches},
        "y": {
            "field": "requests",
            "type": "quantitative",
            "title": "Requests (square-root scale)",
            "scale": {"type": "sqrt"},
        },
        "color": {
            "field": "cache",
            "type": "nominal",
            "title": None,
            "sort": caches,
            "scale": {"domain": caches, "range": ["#8c959f", BLUE]},
            "legend": {"orient": "top"},
        },
        "tooltip": [
            {"field": "cache", "type": "nominal", "title": "Cache"},
            {"field": "bin", "type": "nominal", "title": "Matched tokens"},
            {"field": "requests", "type": "quantitative", "title": "Requests", "format": ","},
            {"field": "share", "type": "quantitative", "title": "Share of requests", "format": ".1%"},
        ],
    }
    title = {
        "text": "How much of each prompt's start was cached",
        "subtitle": f"Whole blocks of {block_size:,} tokens only; 0 means nothing matched",
    }
    return _bars(df, ["bin", "cache", "requests", "share"], encoding, HIST_HEIGHT, title)
