"""Replay a prompt log against any OpenAI-compatible endpoint and measure it, one record per load level.

The client streams chat completions (server-sent events, ``stream_options.include_usage``) with
httpx and times each request: time to first token (the first chunk that carries content), the
gaps between content chunks (inter-token latency), end-to-end latency, output tokens (from the
usage chunk, counted from chunks when the server sends none) and cached prompt tokens
(``usage.prompt_tokens_details.cached_tokens``). Each level (a fixed concurrency, or Poisson
arrivals at a request rate with an optional concurrency cap) becomes one
:class:`~calculator.catalog.measurements.ThroughputRecord` the calculator sizes GPUs from directly.

Faults (timeouts, HTTP errors, malformed chunks, dropped connections) are counted per level with
their reasons and never stop the run; a level whose error rate passes ``max_error_rate`` is marked
unreliable in its notes. The client watches itself: a ticker task measures event-loop lag, and a
level whose lag would distort TTFT is marked in its notes. ``workers > 1`` spreads the streams over
that many processes. The API key is sent as a bearer token and nowhere else: it is kept out of
reprs, records, notes and messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import math
import multiprocessing as mp
import random
import re
import signal
import ssl
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import certifi
import httpx
import yaml

from calculator.catalog.datafile import DataFileError, write_atomically
from calculator.catalog.measurements import Latency, MeasurementFile, ThroughputRecord
from calculator.catalog.prices import Source
from calculator.catalog.textfile import LineError, parse_json, text_lines
from calculator.errors import InputError

__all__ = [
    "BenchConfig",
    "Level",
    "LevelResult",
    "Prompt",
    "RequestResult",
    "TOOL",
    "chat_url",
    "levels_from",
    "read_prompt_log",
    "run_benchmark",
    "write_records",
]

TOOL = "python -m calculator bench"
LAG_TICK_S = 0.005
"""How often the event-loop lag ticker wakes."""
LAG_LIMIT_MS = 5.0
LAG_SHARE_OF_TTFT = 0.10
LAG_FLOOR_MS = 1.0
"""A level is marked when the client's p99 event-loop lag exceeds 5 ms, or 10% of the median TTFT
(lag under 1 ms is timer noise and never marks a level)."""
CPU_BUSY_SHARE = 0.85
"""A client process busier than this share of one core may be the bottleneck."""


# --- prompt log ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """One request to replay: chat messages, plus sampling fields the log carried (max_tokens ...)."""

    messages: tuple[dict[str, Any], ...]
    params: dict[str, Any] = field(default_factory=dict)


_KEPT_PARAMS = ("max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "n", "presence_penalty")


def read_prompt_log(path: Path, name: str | None = None, max_chars: int | None = None) -> list[Prompt]:
    """Read JSON Lines of OpenAI chat request bodies (``messages``) or plain prompts (``prompt``).

    A line may also wrap the body as ``{"body": {...}}`` (the OpenAI batch input format). A plain
    prompt becomes one user message. Sampling fields a chat body carries are kept; ``model``,
    ``stream`` and the rest are set by the client. Blank lines are skipped; a bad line is an
    :class:`InputError` naming its line number. ``name`` is how messages name the file (an upload's
    own name, not the temporary copy's path); the file is read like every other log
    (:mod:`calculator.catalog.textfile`).
    """
    shown = name or str(path)
    prompts: list[Prompt] = []
    try:
        for number, line in text_lines(Path(path), shown, max_chars):
            if not line.strip():
                continue
            where = f"{shown}:{number}"
            try:
                data = parse_json(line)
            except LineError as exc:
                raise InputError("replay.prompts", f"{where}: {exc}") from None
            prompts.append(_prompt(data, where))
    except DataFileError as exc:
        raise InputError("replay.prompts", exc.lines[0]) from None
    if not prompts:
        raise InputError("replay.prompts", f"{shown} holds no prompts")
    return prompts


def _prompt(data: Any, where: str) -> Prompt:
    if isinstance(data, dict) and isinstance(data.get("body"), dict):
        data = data["body"]
    if not isinstance(data, dict):
        raise InputError("replay.prompts", f"{where}: expected a JSON object with 'messages' or 'prompt'")
    if "messages" in data:
        messages = data["messages"]
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            raise InputError("replay.prompts", f"{where}: 'messages' must be a non-empty list of objects")
        params = {k: data[k] for k in _KEPT_PARAMS if k in data}
        return Prompt(tuple(messages), params)
    if "prompt" in data:
        if not isinstance(data["prompt"], str) or not data["prompt"]:
            raise InputError("replay.prompts", f"{where}: 'prompt' must be a non-empty string")
        return Prompt(({"role": "user", "content": data["prompt"]},))
    raise InputError("replay.prompts", f"{where}: expected 'messages' (chat request body) or 'prompt'")


# --- configuration -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """One load level: a fixed concurrency, or Poisson arrivals at ``request_rate`` capped at ``concurrency``."""

    concurrency: int | None
    request_rate: float | None = None

    @property
    def label(self) -> str:
        if self.request_rate is None:
            return f"concurrency {self.concurrency}"
        cap = f", at most {self.concurrency} in flight" if self.concurrency else ""
        return f"rate {self.request_rate:g}/s{cap}"

    @property
    def slug(self) -> str:
        if self.request_rate is None:
            return f"c{self.concurrency}"
        return f"r{self.request_rate:g}".replace(".", "p") + (f"-c{self.concurrency}" if self.concurrency else "")


def levels_from(concurrency: Sequence[int], rates: Sequence[float]) -> list[Level]:
    """Pair the concurrency and rate lists; a single value is used for every level of the other list."""
    if not rates:
        return [Level(c) for c in concurrency]
    if not concurrency:
        return [Level(None, r) for r in rates]
    if len(concurrency) == 1:
        return [Level(concurrency[0], r) for r in rates]
    if len(rates) == 1:
        return [Level(c, rates[0]) for c in concurrency]
    if len(rates) != len(concurrency):
        raise InputError(
            "replay.request_rate", f"give one rate, or one per concurrency level ({len(concurrency)}), not {len(rates)}"
        )
    return [Level(c, r) for c, r in zip(concurrency, rates, strict=True)]


@dataclass(frozen=True)
class BenchConfig:
    base_url: str
    model: str
    levels: tuple[Level, ...]
    requests_per_level: int | None = None
    """Measured requests per level; by default 4 x the level's concurrency, at least 32."""
    warmup: int = 4
    seed: int = 0
    max_tokens: int | None = None
    timeout_s: float = 300.0
    workers: int = 1
    max_error_rate: float = 0.10
    ramp_ms: float = 1.0
    """Fixed concurrency: the level's streams start this far apart, not as one synchronized burst."""
    api_key: str | None = field(default=None, repr=False)
    gpu: str | None = None
    gpu_count: int | None = None
    precision: str | None = None
    engine: str = "unknown"
    engine_version: str | None = None
    id_prefix: str | None = None
    prompts_name: str = "prompts"

    def requests_for(self, level: Level) -> int:
        if self.requests_per_level:
            return self.requests_per_level
        return max(32, 4 * (level.concurrency or math.ceil((level.request_rate or 1) * 10)))


def url_problem(exc: ValueError) -> str:
    """What ``urlsplit`` found wrong with a URL, in words (its own text reads "Port could not be cast ...");
    reading ``.port`` is what checks the port, so callers ask for it and pass on the error."""
    text = str(exc)
    if "IPv6" in text:
        return "an IPv6 address needs its closing ]"
    if "out of range" in text:
        return "the port is outside 0 to 65535"
    if "Port" in text:
        return "the port is not a number"
    return text


def chat_url(base_url: str) -> str:
    """``http://host:8000`` or ``http://host:8000/v1`` -> ``http://host:8000/v1/chat/completions``."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError("replay.base_url", f"{base_url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked: 99999 raised later, mid-run
    except ValueError as exc:
        raise InputError(
            "replay.base_url", f"{base_url!r} is not a usable URL ({url_problem(exc)}), e.g. http://127.0.0.1:8000/v1"
        ) from None
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    if not path:
        path = "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path + "/chat/completions", parts.query, ""))


def public_url(url: str) -> str:
    """The URL without credentials or query string, for records and messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# --- one request ---------------------------------------------------------------------------------


@dataclass
class RequestResult:
    """What one streamed request did; times are ``time.perf_counter()`` seconds (system-wide monotonic)."""

    start: float
    end: float = 0.0
    error: str | None = None
    first_token: float | None = None
    itl: list[float] = field(default_factory=list)
    chunks: int = 0
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _StreamError(Exception):
    pass


MAX_EVENT_BYTES = 1 << 20
"""A server-sent event longer than this is a fault of its request (real chunks are far under a
kilobyte), so a server that never ends a line cannot grow the client's memory."""
MAX_USAGE_TOKENS = 100_000_000
"""A usage count above this (past any model's context) is a malformed report, not a measurement."""


def _text(value: Any) -> bool:
    """Whether a delta field carries text; a value that is neither text nor absent is malformed."""
    if value is None or isinstance(value, str):
        return bool(value)
    raise _StreamError("malformed chunk")


def _content_of(chunk: dict[str, Any]) -> bool:
    """Whether a chunk carries generated text (content, or a reasoning model's reasoning text).

    A chunk whose shape is not a chat completion chunk's (``choices`` not a list of objects, a
    ``delta`` that is not an object) is a fault of its request, never an exception in the run.
    """
    choices = chunk.get("choices")
    if choices is None:
        return False
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise _StreamError("malformed chunk")
    if not choices:
        return False
    delta = choices[0].get("delta")
    if delta is None:
        return False
    if not isinstance(delta, dict):
        raise _StreamError("malformed chunk")
    return any([_text(delta.get(key)) for key in ("content", "reasoning_content", "reasoning")])


def _token_count(value: Any) -> int | None:
    """A usage count: a whole number from 0 to :data:`MAX_USAGE_TOKENS`, or None when absent.

    Text, booleans, fractions, negatives, NaN and infinities (``1e999`` parses as one) are malformed:
    one such report would otherwise skew or break the level's averages.
    """
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_USAGE_TOKENS:
        raise _StreamError("malformed usage")
    return value


def _read_usage(usage: Any, result: RequestResult) -> None:
    if usage is None:
        return
    if not isinstance(usage, dict):
        raise _StreamError("malformed usage")
    details = usage.get("prompt_tokens_details")
    if details is not None and not isinstance(details, dict):
        raise _StreamError("malformed usage")
    prompt = _token_count(usage.get("prompt_tokens"))
    cached = _token_count(details.get("cached_tokens")) if details else None
    if prompt is not None and cached is not None and cached > prompt:
        raise _StreamError("malformed usage")  # more prompt tokens from cache than in the prompt
    result.prompt_tokens = prompt
    result.output_tokens = _token_count(usage.get("completion_tokens"))
    if cached is not None:
        result.cached_tokens = cached


async def stream_request(client: httpx.AsyncClient, url: str, body: bytes, timeout_s: float) -> RequestResult:
    """Send one streaming chat completion and time it; every failure becomes ``error``, never an exception.

    Whatever the server sends (a chunk of the wrong shape, usage as text or NaN, an endless line, an
    error body of any size) is a fault of this request, counted by its reason; the run goes on.
    """
    result = RequestResult(start=time.perf_counter())
    done = False
    last: float | None = None
    try:
        async with asyncio.timeout(timeout_s):
            async with client.stream("POST", url, content=body) as response:
                if response.status_code != 200:
                    raise _StreamError(f"HTTP {response.status_code}")  # the body is not read: it may be endless
                buffer = b""
                data_lines: list[bytes] = []
                pending = 0
                async for raw in response.aiter_bytes():
                    now = time.perf_counter()
                    buffer += raw
                    *lines, buffer = buffer.split(b"\n")
                    if len(buffer) > MAX_EVENT_BYTES:
                        raise _StreamError("oversized chunk")
                    for line in lines:
                        line = line.rstrip(b"\r")
                        if line.startswith(b"data:"):
                            data_lines.append(line[5:].lstrip(b" "))
                            pending += len(line)
                            if pending > MAX_EVENT_BYTES:
                                raise _StreamError("oversized chunk")
                            continue
                        if line or not data_lines:
                            continue  # comments, event names, keep-alive blank lines
                        payload = b"\n".join(data_lines)
                        data_lines, pending = [], 0
                        if payload == b"[DONE]":
                            done = True
                            continue
                        try:
                            chunk = json.loads(payload)
                        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
                            raise _StreamError("malformed chunk") from None
                        if not isinstance(chunk, dict):
                            raise _StreamError("malformed chunk")
                        if "error" in chunk:
                            raise _StreamError("error event in stream")
                        if _content_of(chunk):
                            result.chunks += 1
                            if result.first_token is None:
                                result.first_token = now
                            elif last is not None:
                                result.itl.append(now - last)
                            last = now
                        _read_usage(chunk.get("usage"), result)
                if data_lines and data_lines[-1] == b"[DONE]":
                    done = True
                if not done:
                    raise _StreamError("stream ended without [DONE]")
    except _StreamError as exc:
        result.error = str(exc)
    except TimeoutError:
        result.error = "timeout"
    except httpx.TimeoutException:
        result.error = "timeout"
    except httpx.RemoteProtocolError:
        result.error = "connection dropped"
    except (httpx.ReadError, httpx.WriteError):
        result.error = "connection dropped"
    except httpx.ConnectError:
        result.error = "connect error"
    except httpx.HTTPError as exc:
        result.error = type(exc).__name__
    except Exception as exc:  # what a server sends must never end the run, only this request
        result.error = f"client error ({type(exc).__name__})"
    result.end = time.perf_counter()
    if result.error is None and result.first_token is None:
        result.error = "no content"
    if result.output_tokens is None and result.error is None:
        result.output_tokens = result.chunks
    return result


class Clients:
    """One single-connection httpx client per stream in flight, reused across requests.

    A stream never waits for another's connection, and no pool is scanned per request: one shared
    pool with many connections costs httpcore time in proportion to its size on every request, and
    that overhead alone made a 64-stream client its own bottleneck. The TLS context is shared.
    """

    def __init__(self, cfg: BenchConfig) -> None:
        host = urlsplit(cfg.base_url).hostname or ""
        self.local = host in ("127.0.0.1", "localhost", "::1")
        self.headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if cfg.api_key:
            self.headers["authorization"] = f"Bearer {cfg.api_key}"
        self.timeout = httpx.Timeout(cfg.timeout_s)
        self.ssl = ssl.create_default_context(cafile=certifi.where())
        self.free: list[httpx.AsyncClient] = []
        self.all: list[httpx.AsyncClient] = []

    def acquire(self) -> httpx.AsyncClient:
        if self.free:
            return self.free.pop()
        client = httpx.AsyncClient(
            headers=self.headers,
            timeout=self.timeout,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            trust_env=not self.local,
            verify=self.ssl,
        )
        self.all.append(client)
        return client

    def release(self, client: httpx.AsyncClient) -> None:
        self.free.append(client)

    async def aclose(self) -> None:
        for client in self.all:
            await client.aclose()
        self.all.clear()
        self.free.clear()

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# --- one level in one process ---------------------------------------------------------------------


@dataclass
class Shard:
    """This process's part of a level: request bodies (and arrival offsets in rate mode), its concurrency."""

    bodies: list[bytes]
    concurrency: int | None
    offsets: list[float] | None = None
    t0: float = 0.0
    ramp_first: float = 0.0
    ramp_step: float = 0.0
    """Fixed concurrency: stream j of this shard starts at t0 + ramp_first + j * ramp_step."""


@dataclass
class ShardResult:
    results: list[RequestResult]
    lags: list[float]
    cpu_s: float
    wall_s: float


async def _lag_ticker(lags: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    expected = loop.time() + LAG_TICK_S
    while not stop.is_set():
        await asyncio.sleep(max(expected - loop.time(), 0))
        now = loop.time()
        lags.append(max(now - expected, 0.0))
        expected = now + LAG_TICK_S


async def run_shard(
    clients: Clients,
    url: str,
    shard: Shard,
    timeout_s: float,
    progress: Callable[[RequestResult], None] | None = None,
) -> ShardResult:
    """Run this process's share of a level, from ``shard.t0`` (a perf_counter time) on."""
    lags: list[float] = []
    stop = asyncio.Event()
    results: list[RequestResult] = []
    await asyncio.sleep(max(shard.t0 - time.perf_counter(), 0))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    ticker = asyncio.create_task(_lag_ticker(lags, stop))

    async def one(body: bytes) -> None:
        client = clients.acquire()
        try:
            result = await stream_request(client, url, body, timeout_s)
        finally:
            clients.release(client)
        results.append(result)
        if progress:
            progress(result)

    try:
        if shard.offsets is None:
            queue = deque(shard.bodies)

            async def user(j: int) -> None:
                await asyncio.sleep(max(shard.t0 + shard.ramp_first + j * shard.ramp_step - time.perf_counter(), 0))
                while queue:
                    await one(queue.popleft())

            await asyncio.gather(*(user(j) for j in range(min(shard.concurrency or 1, len(shard.bodies)))))
        else:
            limit = asyncio.Semaphore(shard.concurrency or len(shard.bodies) or 1)
            tasks: list[asyncio.Task[None]] = []

            async def limited(body: bytes) -> None:
                try:
                    await one(body)
                finally:
                    limit.release()

            for body, offset in zip(shard.bodies, shard.offsets, strict=True):
                await asyncio.sleep(max(shard.t0 + offset - time.perf_counter(), 0))
                await limit.acquire()
                tasks.append(asyncio.create_task(limited(body)))
            await asyncio.gather(*tasks)
    finally:
        stop.set()
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
    return ShardResult(results, lags, time.process_time() - cpu0, time.perf_counter() - wall0)


# --- worker processes ----------------------------------------------------------------------------


def _worker_main(conn: Connection, cfg: BenchConfig) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the run and terminates us
    asyncio.run(_worker_loop(conn, cfg))


async def _worker_loop(conn: Connection, cfg: BenchConfig) -> None:
    url = chat_url(cfg.base_url)
    async with Clients(cfg) as clients:
        conn.send(("ready", None))
        while True:
            message = conn.recv()
            if message is None:
                return
            shard: Shard = message
            reporter = _Reporter(conn)
            out = await run_shard(clients, url, shard, cfg.timeout_s, reporter)
            conn.send(("result", out))


class _Reporter:
    """Sends a worker's progress to the parent at most five times a second."""

    def __init__(self, conn: Connection) -> None:
        self.conn, self.done, self.failed, self.last = conn, 0, 0, time.perf_counter()

    def __call__(self, result: RequestResult) -> None:
        self.done += 1
        self.failed += 0 if result.ok else 1
        now = time.perf_counter()
        if now - self.last > 0.2:
            self.conn.send(("progress", (self.done, self.failed)))
            self.done = self.failed = 0
            self.last = now


class _Pool:
    """``n`` client processes, each with its own event loop and connection pool."""

    def __init__(self, cfg: BenchConfig, n: int) -> None:
        ctx = mp.get_context("spawn")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(child, cfg), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
        for conn in self.conns:
            if conn.recv()[0] != "ready":
                raise RuntimeError("bench worker failed to start")

    def run(self, shards: list[Shard], progress: Callable[[int, int], None]) -> list[ShardResult]:
        busy = {}
        for conn, shard in zip(self.conns, shards, strict=True):
            conn.send(shard)
            busy[id(conn)] = conn
        out: dict[int, ShardResult] = {}
        while busy:
            for ready in wait(list(busy.values()), timeout=0.5):
                assert isinstance(ready, Connection)
                kind, payload = ready.recv()
                if kind == "progress":
                    progress(*payload)
                elif kind == "result":
                    out[id(ready)] = payload
                    del busy[id(ready)]
                    progress(0, 0)
        return [out[id(c)] for c in self.conns]

    def close(self, terminate: bool = False) -> None:
        if not terminate:
            for conn in self.conns:
                with contextlib.suppress(OSError, ValueError):
                    conn.send(None)
        for proc in self.procs:
            proc.join(timeout=0 if terminate else 2)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2)
        for conn in self.conns:
            conn.close()


# --- aggregation ---------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def latency_ms(seconds: Iterable[float]) -> Latency:
    values = sorted(s * 1000 for s in seconds)
    if not values:
        return Latency()
    return Latency(
        mean=round(sum(values) / len(values), 3),
        p50=round(percentile(values, 50), 3),
        p90=round(percentile(values, 90), 3),
        p95=round(percentile(values, 95), 3),
        p99=round(percentile(values, 99), 3),
    )


@dataclass
class LevelResult:
    """A finished level: its record (None when no request succeeded) and the figures behind it."""

    level: Level
    record: ThroughputRecord | None
    sent: int
    completed: int
    errors: Counter[str]
    lag_p50_ms: float
    lag_p99_ms: float
    client_cpu_share: float
    duration_s: float
    notes: list[str]

    @property
    def failed(self) -> int:
        return sum(self.errors.values())

    @property
    def error_rate(self) -> float:
        return self.failed / self.sent if self.sent else 0.0

    @property
    def unreliable(self) -> bool:
        return any(n.startswith("UNRELIABLE") for n in self.notes)

    @property
    def client_limited(self) -> bool:
        return any(n.startswith("CLIENT-LIMITED") for n in self.notes)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._") or "model"


def _summarise(
    cfg: BenchConfig,
    level: Level,
    shards: list[ShardResult],
    prompt_notes: list[str],
    today: dt.date,
    chars_per_prompt: float = 4.0,
) -> LevelResult:
    results = [r for s in shards for r in s.results]
    ok = [r for r in results if r.ok]
    errors = Counter(r.error for r in results if r.error is not None)
    lags = sorted(lag for s in shards for lag in s.lags)
    lag_p50 = percentile(lags, 50) * 1000 if lags else 0.0
    lag_p99 = percentile(lags, 99) * 1000 if lags else 0.0
    cpu_share = max((s.cpu_s / s.wall_s for s in shards if s.wall_s > 0), default=0.0)
    start = min((r.start for r in results), default=0.0)
    end = max((r.end for r in results), default=0.0)
    duration = max(end - start, 1e-9)
    notes: list[str] = []
    sent = len(results)
    mode = f"fixed concurrency {level.concurrency}" if level.request_rate is None else f"Poisson {level.label}"
    notes.append(
        f"{TOOL} (seed {cfg.seed}, {cfg.workers} client process{'es' if cfg.workers > 1 else ''}): {mode}, "
        f"{sent} requests ({cfg.warmup} warm-up requests before the first level not counted), "
        f"{len(ok)} completed in {duration:.2f} s."
    )
    if errors:
        detail = ", ".join(f"{reason} x{count}" for reason, count in errors.most_common())
        notes.append(f"{sum(errors.values())} failed: {detail}.")
    if sent and sum(errors.values()) / sent > cfg.max_error_rate:
        notes.append(
            f"UNRELIABLE: {sum(errors.values()) / sent:.0%} of requests failed "
            f"(threshold {cfg.max_error_rate:.0%}); the figures describe the survivors only."
        )
    ttft = [r.first_token - r.start for r in ok if r.first_token is not None]
    ttft_p50_ms = percentile(sorted(ttft), 50) * 1000 if ttft else 0.0
    if lags and (lag_p99 > LAG_LIMIT_MS or (ttft and lag_p99 > max(LAG_SHARE_OF_TTFT * ttft_p50_ms, LAG_FLOOR_MS))):
        notes.append(
            f"CLIENT-LIMITED: the client's event-loop lag reached p99 {lag_p99:.1f} ms (median TTFT "
            f"{ttft_p50_ms:.1f} ms); TTFT and ITL include client delay. Use more worker processes or a bigger client."
        )
    elif cpu_share > CPU_BUSY_SHARE:
        notes.append(f"CLIENT-LIMITED: a client process used {cpu_share:.0%} of a core; use more worker processes.")
    notes.extend(prompt_notes)
    if not ok:
        return LevelResult(level, None, sent, 0, errors, lag_p50, lag_p99, cpu_share, duration, notes)

    with_usage = [r for r in ok if r.prompt_tokens]
    if len(with_usage) < len(ok):
        notes.append(
            f"{len(ok) - len(with_usage)} of {len(ok)} responses carried no usage; output tokens counted from chunks"
            + ("" if with_usage else ", input tokens estimated at 4 characters per token")
            + "."
        )
    input_tokens = (
        sum(r.prompt_tokens or 0 for r in with_usage) / len(with_usage)
        if with_usage
        else max(chars_per_prompt / _CHARS_PER_TOKEN, 1.0)
    )
    output_tokens = sum(r.output_tokens or r.chunks for r in ok) / len(ok)
    cached = [r for r in with_usage if r.cached_tokens is not None]
    prefix_share: float | None = None
    if cached:
        prefix_share = sum(r.cached_tokens or 0 for r in cached) / sum(r.prompt_tokens or 0 for r in cached)
        if len(cached) < len(with_usage):
            notes.append(f"cached tokens reported for {len(cached)} of {len(with_usage)} responses.")
    else:
        notes.append("The server reported no cached tokens; prefix share not known (left unstated, not 0).")
    out_total = sum(r.output_tokens or r.chunks for r in ok)
    in_total = input_tokens * len(ok)
    prefix = cfg.id_prefix or f"bench-{_slug(cfg.model)[:40]}-{today:%Y%m%d}"
    record = ThroughputRecord(
        id=f"{prefix}-{level.slug}"[:80].rstrip("-._"),
        model=cfg.model,
        precision=cfg.precision,
        gpu=cfg.gpu,
        gpu_count=cfg.gpu_count,
        engine=cfg.engine,
        engine_version=cfg.engine_version,
        tool=TOOL,
        input_tokens=max(round(input_tokens, 1), 0.1),
        output_tokens=max(round(output_tokens, 1), 0.1),
        prefix_share=None if prefix_share is None else round(min(max(prefix_share, 0.0), 1.0), 4),
        concurrency=level.concurrency if level.request_rate is None else None,
        request_rate=level.request_rate,
        requests_per_s=round(len(ok) / duration, 4) or 1e-4,
        output_tokens_per_s=round(out_total / duration, 2) or None,
        total_tokens_per_s=round((in_total + out_total) / duration, 2) or None,
        ttft_ms=latency_ms(ttft),
        itl_ms=latency_ms(gap for r in ok for gap in r.itl),
        e2e_ms=latency_ms(r.end - r.start for r in ok),
        failed=sum(errors.values()),
        measured=today,
        source=Source(
            document=f"own run against {public_url(cfg.base_url)} with prompt log {cfg.prompts_name}",
            read=today,
        ),
        notes=_scrub(" ".join(notes), cfg.api_key),
    )
    return LevelResult(level, record, sent, len(ok), errors, lag_p50, lag_p99, cpu_share, duration, notes)


_CHARS_PER_TOKEN = 4.0


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


# --- the run -------------------------------------------------------------------------------------


@dataclass
class _Plan:
    warm: list[bytes]
    levels: list[list[bytes]]
    notes: list[list[str]]
    chars_per_prompt: float


def _body(cfg: BenchConfig, prompt: Prompt, index: int) -> bytes:
    body: dict[str, Any] = {
        "model": cfg.model,
        "messages": list(prompt.messages),
        **prompt.params,
        "stream": True,
        "stream_options": {"include_usage": True},
        "seed": cfg.seed,
    }
    if cfg.max_tokens is not None:
        body.pop("max_completion_tokens", None)
        body["max_tokens"] = cfg.max_tokens
    return json.dumps(body, separators=(",", ":")).encode()


def _plan(cfg: BenchConfig, prompts: Sequence[Prompt]) -> _Plan:
    """Warm-up bodies and per-level bodies: the log shuffled by the seed, walked in order across levels."""
    order = list(range(len(prompts)))
    random.Random(cfg.seed).shuffle(order)
    total = cfg.warmup + sum(cfg.requests_for(level) for level in cfg.levels)
    picks = [order[i % len(order)] for i in range(total)]
    bodies = [_body(cfg, prompts[p], i) for i, p in enumerate(picks)]
    chars = [sum(len(str(m.get("content", ""))) for m in prompts[p].messages) for p in picks]
    warm, rest = bodies[: cfg.warmup], bodies[cfg.warmup :]
    per_level: list[list[bytes]] = []
    notes: list[list[str]] = []
    used = cfg.warmup
    for level in cfg.levels:
        n = cfg.requests_for(level)
        per_level.append(rest[:n])
        rest = rest[n:]
        used += n
        if used > len(prompts):
            notes.append(
                [
                    f"The log has {len(prompts)} prompts and the run sent {used} so far; repeated prompts "
                    "may have been served from the server's prefix cache."
                ]
            )
        else:
            notes.append([])
    return _Plan(warm, per_level, notes, sum(chars) / len(chars) if chars else 4.0)


def _offsets(n: int, rate: float, rng: random.Random) -> list[float]:
    t, out = 0.0, []
    for _ in range(n):
        out.append(t)
        t += rng.expovariate(rate)
    return out


def _shards(cfg: BenchConfig, level: Level, bodies: list[bytes], t0: float) -> list[Shard]:
    n = max(cfg.workers, 1)
    offsets = (
        _offsets(len(bodies), level.request_rate, random.Random(f"{cfg.seed}-{level.slug}"))
        if level.request_rate
        else None
    )
    # Fewer streams than workers: the extra workers get no requests, so concurrency stays as asked
    # (each worker process still needs a shard, even an empty one).
    active = n if level.concurrency is None else max(1, min(n, level.concurrency))
    shards = []
    for i in range(n):
        on = i < active
        conc = None if level.concurrency is None else level.concurrency // active + (i < level.concurrency % active)
        shards.append(
            Shard(
                bodies=bodies[i::active] if on else [],
                concurrency=conc if on else 0,
                offsets=None if offsets is None else (offsets[i::active] if on else []),
                t0=t0,
                ramp_first=i * cfg.ramp_ms / 1000,
                ramp_step=active * cfg.ramp_ms / 1000,
            )
        )
    return shards


class Progress:
    """A plain-text progress line on a stream (stderr): a bar while it is a terminal, one line per level otherwise."""

    def __init__(self, stream: Any | None) -> None:
        self.stream = stream
        self.tty = bool(stream and getattr(stream, "isatty", lambda: False)())
        self.total = self.done = self.failed = 0
        self.label = ""
        self.last = 0.0

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.failed = label, total, 0, 0
        self.draw(force=True)

    def add(self, done: int, failed: int) -> None:
        self.done += done
        self.failed += failed
        self.draw()

    def draw(self, force: bool = False) -> None:
        if not self.stream or not self.tty:
            return
        now = time.perf_counter()
        if not force and now - self.last < 0.1 and self.done < self.total:
            return
        self.last = now
        width = 30
        filled = width * self.done // self.total if self.total else width
        self.stream.write(
            f"\r{self.label:<34} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
            f"{f', {self.failed} failed' if self.failed else ''}   "
        )
        self.stream.flush()

    def finish(self, line: str) -> None:
        if not self.stream:
            return
        self.stream.write(("\r" if self.tty else "") + line + (" " * 20 if self.tty else "") + "\n")
        self.stream.flush()


def run_benchmark(
    cfg: BenchConfig,
    prompts: Sequence[Prompt],
    *,
    on_level: Callable[[list[LevelResult]], None] | None = None,
    progress_stream: Any | None = None,
    today: dt.date | None = None,
) -> list[LevelResult]:
    """Run every level in order; ``on_level`` gets the finished levels after each one (write them there).

    A KeyboardInterrupt (or cancellation) propagates once worker processes are stopped; the levels
    already handed to ``on_level`` are the finished ones. All warm-up requests failing is an
    :class:`InputError` (a wrong URL, model or key), since nothing could be measured.
    """
    day = today or dt.date.today()
    plan = _plan(cfg, prompts)
    progress = Progress(progress_stream)
    workers = max(cfg.workers, 1)
    done: list[LevelResult] = []

    def finished(level: Level, shards: list[ShardResult], notes: list[str]) -> None:
        _after_level(cfg, level, _summarise(cfg, level, shards, notes, day, plan.chars_per_prompt), progress, done)
        if on_level:
            on_level(done)

    if workers > 1:
        pool = _Pool(cfg, workers)
        clean = False
        try:
            if plan.warm:
                progress.start("warm-up", len(plan.warm))
                _check_warm(
                    pool.run(_shards(cfg, _warm_level(cfg), plan.warm, time.perf_counter() + 0.05), progress.add)
                )
            for level, bodies, notes in zip(cfg.levels, plan.levels, plan.notes, strict=True):
                progress.start(level.label, len(bodies))
                finished(level, pool.run(_shards(cfg, level, bodies, time.perf_counter() + 0.05), progress.add), notes)
            clean = True
        finally:
            pool.close(terminate=not clean)
        return done

    async def main() -> None:
        url = chat_url(cfg.base_url)
        async with Clients(cfg) as clients:

            def tick(r: RequestResult) -> None:
                progress.add(1, 0 if r.ok else 1)

            async def run(level: Level, bodies: list[bytes]) -> list[ShardResult]:
                (shard,) = _shards(cfg, level, bodies, time.perf_counter())
                return [await run_shard(clients, url, shard, cfg.timeout_s, tick)]

            if plan.warm:
                progress.start("warm-up", len(plan.warm))
                _check_warm(await run(_warm_level(cfg), plan.warm))
            for level, bodies, notes in zip(cfg.levels, plan.levels, plan.notes, strict=True):
                progress.start(level.label, len(bodies))
                finished(level, await run(level, bodies), notes)

    asyncio.run(main())
    return done


def _warm_level(cfg: BenchConfig) -> Level:
    most = max((lv.concurrency or 0 for lv in cfg.levels), default=0)
    return Level(max(min(cfg.warmup, most or cfg.warmup), 1))


def _after_level(
    cfg: BenchConfig, level: Level, result: LevelResult, progress: Progress, done: list[LevelResult]
) -> None:
    done.append(result)
    r = result.record
    figures = (
        f"{r.requests_per_s:.2f} req/s, {r.output_tokens_per_s or 0:,.0f} output tok/s, "
        f"TTFT p50 {r.ttft_ms.p50 or 0:.0f} ms"
        if r
        else "no request succeeded, no record"
    )
    flags = [flag for flag, on in (("unreliable", result.unreliable), ("client-limited", result.client_limited)) if on]
    errors = f", {result.failed} failed" if result.failed else ""
    progress.finish(
        f"{level.label}: {result.completed}/{result.sent} ok{errors}, {figures}" + "".join(f" [{f}]" for f in flags)
    )


def _check_warm(warm_results: list[ShardResult]) -> None:
    results = [r for s in warm_results for r in s.results]
    if results and not any(r.ok for r in results):
        reasons = Counter(r.error for r in results)
        detail = ", ".join(f"{k} x{v}" for k, v in reasons.most_common())
        raise InputError("replay.base_url", f"all {len(results)} warm-up requests failed ({detail}); nothing measured")


# --- output --------------------------------------------------------------------------------------


def write_records(path: Path, records: Sequence[ThroughputRecord], *, header: str | None = None) -> None:
    """Write records as a measurement file (``schema_version: 1``) atomically: a temp file, then rename.

    The file loads with :func:`calculator.catalog.measurements.load_records` when it sits in a records
    folder. An interrupted write leaves the old file (or none), never a half-written one.
    """
    document = MeasurementFile(schema_version=1, records=tuple(records))  # validates; at least one record
    data = {
        "schema_version": 1,
        "records": [r.model_dump(mode="json", exclude_none=True) for r in document.records],
    }
    text = (f"# {header}\n" if header else "") + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)
    write_atomically(Path(path), text)
