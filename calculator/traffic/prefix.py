"""Measure the repeated start of prompts from a request log, and simulate a prefix cache.

Two numbers of the turn (DESIGN.md, "The turn") come out of a log instead of a guess:

- ``s``, the prefix share: the share of all input tokens that repeats the start of an earlier
  request, as an unlimited cache on one replica would serve it;
- ``s * h``, the token hit share a real cache serves: finite (LRU eviction, capacity in tokens per
  replica), with a time-to-live, over several replicas with round-robin, random or prefix-aware
  routing. ``h`` is the ratio of the two.

Matching works like vLLM's automatic prefix caching: the prompt is cut into blocks of ``block_size``
tokens; each *full* block is named by a hash of (its parent block's hash, its own tokens), so a block
matches only together with everything before it, and a partial trailing block never matches. A
request's hit is its longest run of cached blocks from the start, in tokens.

Cache model: on each request the replica's cache serves the matched blocks, then holds every full
block of the request (vLLM and SGLang keep a finished request's blocks as evictable cache). Eviction
is least-recently-used by block; a request's blocks are touched tail first, so that under pressure a
prompt's tail is evicted before its start (as vLLM's free-block queue does). With a TTL, a block not
used for more than ``ttl_seconds`` (by request timestamps) is dropped. Requests are never concurrent
here: there is no queueing model, and the blocks of running requests are not reserved; the KV budget
from :func:`calculator.capacity.memory.fit` is therefore an upper bound for the cache.

Input is read as a stream (:class:`LogReader`): OpenAI chat-completions request bodies, plain prompts,
Mooncake traces, genai-perf input files or ShareGPT-style conversations (:mod:`.conversations`), from
one file or many, JSON Lines, a JSON array or Parquet, plain or compressed, local or in an object store
(:mod:`.logsource`). All cache configurations are simulated
in one pass, so a large log is read and tokenized once and never held in memory. A hit-rate curve over
many capacities comes from one set of stack distances (:class:`LruProfile`) wherever the routing does
not read the caches; only prefix-aware routing over several replicas is simulated per capacity.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import gzip
import itertools
import math
import operator
import random
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, computed_field

from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import (
    MAX_REPORTED,
    LineError,
    Malformed,
    Source,
    check_readable,
    json_values,
    parse_json,
    text_lines,
)
from calculator.errors import InputError
from calculator.traffic.batches import BATCH_CHARS, BATCH_REQUESTS, Pending, RequestBatch, TokenCache, build
from calculator.traffic.conversations import GENAI_PERF_TEXT, genai_perf_prompt, sharegpt_turns
from calculator.traffic.hashing import chain, chained_blocks, int_lanes
from calculator.traffic.logsource import Columns, LogInput, LogPart, records, shown_location
from calculator.traffic.shards import (
    Pool,
    byte_ranges,
    dask_cluster,
    given,
    in_order,
    local_pool,
    range_lines,
    shards,
    worker_state,
)
from calculator.traffic.tokens import ApproxTokenizer, Tokenizer, render_chat

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "FORMATS",
    "MOONCAKE_BLOCK_SIZE",
    "PROGRESS_EVERY",
    "parse_timestamp",
    "CacheConfig",
    "CacheResult",
    "CurvePoint",
    "HistogramBin",
    "LogReader",
    "LruProfile",
    "MalformedReport",
    "PrefixReport",
    "ReplicaResult",
    "Request",
    "RequestLog",
    "analyse",
    "analyse_log",
    "block_hashes",
    "capacity_from_fit",
    "chain_block_ids",
    "match_per_request",
    "request_from_tokens",
    "requests_of",
    "simulate",
    "stack_distances_apply",
]

DEFAULT_BLOCK_SIZE = 16
"""vLLM's default KV block size on GPUs."""
MOONCAKE_BLOCK_SIZE = 512
"""Tokens per hash id in the published Mooncake traces."""
FORMATS = ("openai", "prompt", "mooncake", "sharegpt", "genai-perf")
MAX_REPORTED_LINES = MAX_REPORTED
"""Malformed lines listed one by one; beyond this they are only counted (as every log reader does)."""
Routing = Literal["round_robin", "random", "prefix_aware"]


# --- requests and block hashes --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the simulator sees it: the prefix-chained hashes of its full blocks."""

    blocks: tuple[int, ...]
    input_tokens: int
    output_tokens: int | None = None
    timestamp: float | None = None
    """Seconds (any origin); needed only for a TTL."""
    line: int | None = None


def block_hashes(tokens: Sequence[int], block_size: int = DEFAULT_BLOCK_SIZE) -> tuple[int, ...]:
    """Hashes of the full blocks of ``tokens``, each chained to its parent: ``hash((parent, tuple(block)))``
    from a fixed root (computed over arrays by :mod:`calculator.traffic.hashing`, equal bit for bit)."""
    if block_size < 1:
        raise InputError("cache.block_size", f"must be 1 or more tokens, got {block_size}")
    [hashes] = chained_blocks([int_lanes(tokens)], block_size)
    return tuple(hashes.tolist())


def chain_block_ids(ids: Iterable[int]) -> tuple[int, ...]:
    """Chain given block ids (e.g. Mooncake ``hash_ids``) so a block matches only after the same parents:
    ``hash((parent, block_id))``."""
    [hashes] = chain([int_lanes(list(ids))])
    return tuple(hashes.tolist())


def requests_of(batch: RequestBatch) -> Iterator[Request]:
    """The requests of a batch (from :func:`calculator.traffic.batches.build`), in order."""
    blocks = batch.blocks.tolist()
    at = 0
    for n, inp, out, ts, line in zip(
        batch.block_counts, batch.input_tokens, batch.output_tokens, batch.timestamps, batch.lines, strict=True
    ):
        yield Request(tuple(blocks[at : at + n]), inp, out, ts, line)
        at += n


def request_from_tokens(
    tokens: Sequence[int],
    block_size: int = DEFAULT_BLOCK_SIZE,
    timestamp: float | None = None,
    output_tokens: int | None = None,
    line: int | None = None,
) -> Request:
    return Request(block_hashes(tokens, block_size), len(tokens), output_tokens, timestamp, line)


# --- reading logs as streams -----------------------------------------------------------------------


def parse_timestamp(value: Any, what: str) -> float | None:
    """Seconds from a number (Unix seconds) or an ISO 8601 string; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"'{what}' must be a number of seconds or an ISO 8601 time")
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # an integer beyond any float
            seconds = math.inf
        if not math.isfinite(seconds):
            raise ValueError(f"'{what}' is not a finite number")
        return seconds
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"'{what}' {value!r} is not an ISO 8601 time") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return parsed.timestamp()
    raise ValueError(f"'{what}' must be a number of seconds or an ISO 8601 time")


def _count(obj: dict[str, Any], key: str, required: bool) -> int | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise ValueError(f"'{key}' is missing")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"'{key}' must be a whole number 0 or more, got {value!r}")
    return value


def _body(obj: dict[str, Any]) -> dict[str, Any]:
    """The request body: the object itself, or its ``body`` (a Batch API line)."""
    inner = obj.get("body")
    return inner if isinstance(inner, dict) else obj


def _detect(obj: dict[str, Any]) -> str | None:
    body = _body(obj)
    if "messages" in body:
        return "openai"
    if "hash_ids" in obj:
        return "mooncake"
    if "prompt" in body:
        return "prompt"
    if "conversations" in obj or "conversation" in obj:
        return "sharegpt"
    if any(k in obj for k in GENAI_PERF_TEXT):
        return "genai-perf"
    return None


class LogReader:
    """Requests of a JSON Lines log, read lazily, line by line.

    ``source`` is a path, folder, glob or URL, a :class:`LogInput` or one of its parts, a binary handle
    or an iterable of lines (an upload), read as every log is (:mod:`.logsource`; compression by its magic
    bytes, limits on lines and JSON); ``columns`` names a Parquet log's columns. Malformed
    lines are skipped, counted in ``malformed`` and described in ``problems`` (``name:line: what``,
    the first :data:`MAX_REPORTED_LINES`); once the stream is exhausted, a log with no valid request
    raises :class:`DataFileError`. ``format`` is resolved from the first usable line when "auto".
    ``max_chars`` caps the text read (the app's uploads), counted unpacked.

    Timestamps: Mooncake's ``timestamp`` is milliseconds; in the other formats ``timestamp`` (or
    ``created``) is Unix seconds or an ISO 8601 string. OpenAI lines may be bare request bodies or
    Batch API lines (``{"custom_id", "body": {...}}``); a logged ``usage.completion_tokens`` (or
    ``response.body.usage``) gives the output tokens. A ``prompt`` may be a string or a list of
    token ids (already tokenized; used as they are).

    ``pool`` (a context manager giving a :class:`calculator.traffic.shards.Pool`: this machine's cores or a
    Dask cluster) tokenises and hashes the log in shards elsewhere; the requests, problems and counts are the
    same as read here, in the same order. A ``local`` pool (this machine's) is started only for a log longer
    than one shard, and its workers read their own parts of a plain file (the text never passes through
    here); a cluster's workers are sent the lines.
    """

    def __init__(
        self,
        source: Source | LogInput | LogPart,
        format: str = "auto",
        tokenizer: Tokenizer | None = None,
        block_size: int | None = None,
        name: str | None = None,
        max_chars: int | None = None,
        columns: Columns | None = None,
        *,
        pool: Callable[[Any], AbstractContextManager[Pool]] | None = None,
        local: bool = True,
        cache: TokenCache | None = None,
    ) -> None:
        if format not in ("auto", *FORMATS):
            raise InputError("log.format", f"unknown format {format!r}; choose auto, {', '.join(FORMATS)}")
        if block_size is not None and block_size < 1:
            raise InputError("cache.block_size", f"must be 1 or more tokens, got {block_size}")
        self.source = source
        shown = source.name if isinstance(source, LogInput | LogPart) else None
        self.name = name or shown or (shown_location(str(source)) if isinstance(source, Path | str) else "<log>")
        self.columns = columns or Columns()
        self.format = format
        self.tokenizer: Tokenizer = tokenizer or ApproxTokenizer()
        self._block_size = block_size
        self.max_chars = max_chars
        self.valid = 0
        self._malformed = Malformed(self.name)
        self._cache = cache
        self._pool = pool
        self._local = local

    @property
    def malformed(self) -> int:
        return self._malformed.count

    @property
    def problems(self) -> list[str]:
        return self._malformed.lines

    @property
    def block_size(self) -> int:
        """Tokens per block: as given; otherwise 512 for a Mooncake trace, 16 for the text formats."""
        if self._block_size is not None:
            return self._block_size
        return MOONCAKE_BLOCK_SIZE if self.format == "mooncake" else DEFAULT_BLOCK_SIZE

    @property
    def tokenized(self) -> bool:
        return self.format != "mooncake"

    def report(self) -> MalformedReport:
        return MalformedReport(count=self.malformed, lines=tuple(self.problems))

    def __iter__(self) -> Iterator[Request]:
        if self._pool is not None and self._shardable():
            batches = self._sharded(self._pool)
        else:
            read = records(self.source, self.name, self._malformed, self.max_chars, self.columns)
            batches = self.batches((number, obj) for _part, number, obj in read)
        for batch in batches:
            yield from requests_of(batch)
        self._malformed.name = self.name
        if self.valid == 0:
            raise self._malformed.error("no requests in the file (it is empty)")

    def _sharded(self, pool: Callable[[Any], AbstractContextManager[Pool]]) -> Iterator[RequestBatch]:
        """The batches of :meth:`batches`, from shards hashed on ``pool`` (here when there is one shard)."""
        if not self._local:  # a cluster: its workers hash every shard, each keeping its own segment cache
            with pool(self.tokenizer) as workers:
                shared = workers.share(self.tokenizer)
                for result in in_order(workers, _hash_shard, shared, self._shard_tasks()):
                    yield from self._merge(result)
            return
        tasks = self._range_tasks() if self._plain_file() else self._shard_tasks()
        first = next(tasks, None)
        second = next(tasks, None)
        cache = TokenCache(self.tokenizer)
        if second is None:  # a short log: starting workers would cost more than it saves
            if first is not None:
                yield from self._merge(_hash_shard(self.tokenizer, first, cache))
            return
        # This process hashes too, whenever the next result is not ready: the pool has one process fewer than
        # the cores, so no core runs two processes by turns. (Hashing the first shard here before forking, so
        # that the workers start with a warm segment cache, measured slower: the other core waits meanwhile.)
        here = functools.partial(_hash_shard, self.tokenizer, cache=cache)
        with pool(TokenCache(self.tokenizer)) as workers:
            for result in in_order(workers, _hash_shard, None, itertools.chain([first, second], tasks), here):
                yield from self._merge(result)

    def _shard_tasks(self) -> Iterator[_ShardTask]:
        """Shards of the log's lines to hash. While the format is unknown it is found here too (the first
        usable line), and the shards up to it are read as "auto" so that each line is judged as here."""
        for lines in shards(text_lines(cast(Path | str, self.source), self.name, self.max_chars)):
            fmt = self.format
            if fmt == "auto":
                for _, line in lines:
                    try:
                        obj = parse_json(line) if line.strip() else None
                    except LineError:
                        continue
                    found = _detect(obj) if isinstance(obj, dict) else None
                    if found is not None:
                        self.format = found
                        break
            yield _ShardTask(self.name, fmt, self._block_size, lines, None)

    def _shardable(self) -> bool:
        """Whether the log is one local file of JSON Lines, plain or gzip, that shards split by line. Other
        inputs (folders, globs, object stores, Parquet, zstd, JSON arrays, uploads) are read here, in order."""
        if not isinstance(self.source, Path | str) or self.max_chars is not None:
            return False
        path = Path(self.source)
        try:
            if not path.is_file():
                return False
            with path.open("rb") as fh:
                start = fh.read(2)
                if start == b"\x1f\x8b":
                    fh.seek(0)
                    with gzip.open(fh) as unpacked:
                        start = unpacked.read(64)
                else:
                    start += fh.read(62)
        except (OSError, EOFError):
            return False
        return start.lstrip()[:1] in (b"{", b"")

    def _plain_file(self) -> bool:
        """Whether the source is a whole uncompressed file that workers can read in parts."""
        if not isinstance(self.source, Path | str) or self.max_chars is not None:
            return False
        path = Path(self.source)
        check_readable(path, self.name)
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with path.open("rb") as fh:
            return fh.read(2) != b"\x1f\x8b"

    def _range_tasks(self) -> Iterator[_ShardTask]:
        """Byte ranges of a plain file to hash where they are read; the format is found first, if need be
        (the ranges up to its first usable line are read as "auto", so that each line is judged as here)."""
        found_at = None
        if self.format == "auto":
            for number, line in text_lines(cast(Path | str, self.source), self.name):
                try:
                    obj = parse_json(line) if line.strip() else None
                except LineError:
                    continue
                found = _detect(obj) if isinstance(obj, dict) else None
                if found is not None:
                    self.format, found_at = found, number
                    break
        path = Path(cast(Path | str, self.source))
        for start, end, first in byte_ranges(path):
            fmt = "auto" if found_at is None or first <= found_at else self.format
            yield _ShardTask(self.name, fmt, self._block_size, None, (str(path), start, end, first))

    def _merge(self, result: _ShardResult) -> Iterator[RequestBatch]:
        self._malformed.merge(result.malformed)
        self.valid += result.valid
        yield from result.batches

    def read_lines(self, lines: Iterable[tuple[int, str]]) -> Iterator[RequestBatch]:
        """:meth:`batches` of numbered lines of JSON."""
        return self.batches(json_values(lines, self._malformed))

    def batches(self, numbered: Iterable[tuple[int, Any]]) -> Iterator[RequestBatch]:
        """The valid requests among numbered records, tokenised and hashed a batch at a time; the others
        are counted in :attr:`malformed`."""
        problem = self._malformed.add
        pending: list[Pending] = []
        chars = 0
        for number, obj in numbered:
            if not isinstance(obj, dict):
                problem(number, f"expected a JSON object (one request per line), got {type(obj).__name__}")
                continue
            if self.format == "auto":
                found = _detect(obj)
                if found is None:
                    problem(
                        number,
                        "not a request: no 'messages', 'prompt', 'hash_ids', 'conversations' or 'text'",
                    )
                    continue
                self.format = found
            try:
                found_requests = self._requests(obj, number)
            except ValueError as exc:
                problem(number, str(exc))
                continue
            for request in found_requests:
                self.valid += 1
                pending.append(request)
                chars += request.chars
            if len(pending) >= BATCH_REQUESTS or chars >= BATCH_CHARS:
                yield self._build(pending)
                pending, chars = [], 0
        if pending:
            yield self._build(pending)

    def _build(self, pending: list[Pending]) -> RequestBatch:
        if self._cache is None and self.tokenized:
            self._cache = TokenCache(self.tokenizer)
        return build(pending, self._cache, self.block_size)

    def _requests(self, obj: dict[str, Any], number: int) -> list[Pending]:
        """The requests one record stands for: one, or a conversation's user turns (ShareGPT)."""
        if self.format == "sharegpt":
            out = []
            for messages, answer in sharegpt_turns(obj):
                output = None if answer is None else len(self.tokenizer.encode(answer))
                out.append(Pending(number, None, output, segments=render_chat(messages)))
            return out
        if self.format == "genai-perf":
            text, seconds, output = genai_perf_prompt(obj)
            return [Pending(number, seconds, output, segments=[text])]
        return [self._parse(obj, number)]

    def _parse(self, obj: dict[str, Any], number: int) -> Pending:
        if self.format == "mooncake":
            return self._mooncake(obj, number)
        body = _body(obj)
        ts = parse_timestamp(obj.get("timestamp", obj.get("created", body.get("timestamp"))), "timestamp")
        output = self._output_tokens(obj)
        if self.format == "openai":
            if "messages" not in body:
                raise ValueError("'messages' is missing (an OpenAI chat-completions request body)")
            tools = body.get("tools")
            if tools is not None and not isinstance(tools, list):
                raise ValueError("'tools' must be a list")
            return Pending(number, ts, output, segments=render_chat(body["messages"], tools))
        prompt = body.get("prompt")
        if isinstance(prompt, str):
            return Pending(number, ts, output, segments=[prompt])
        if isinstance(prompt, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
            return Pending(number, ts, output, ids=prompt)
        raise ValueError("'prompt' must be a string or a list of token ids")

    @staticmethod
    def _output_tokens(obj: dict[str, Any]) -> int | None:
        usage = obj.get("usage")
        response = obj.get("response")
        if usage is None and isinstance(response, dict):
            usage = _body(response).get("usage")
        if isinstance(usage, dict):
            return _count(usage, "completion_tokens", required=False)
        return _count(obj, "output_tokens", required=False)

    def _mooncake(self, obj: dict[str, Any], number: int) -> Pending:
        length = _count(obj, "input_length", required=True)
        assert length is not None
        output = _count(obj, "output_length", required=False)
        ts = obj.get("timestamp")
        seconds = parse_timestamp(ts, "timestamp")
        ids = obj.get("hash_ids")
        if not isinstance(ids, list) or not set(map(type, ids)) <= {int}:  # whole numbers, not true/false
            raise ValueError("'hash_ids' must be a list of whole numbers")
        bs = self.block_size
        if len(ids) != math.ceil(length / bs):
            raise ValueError(
                f"'hash_ids' has {len(ids)} blocks, but input_length {length} needs ceil({length}/{bs}) = "
                f"{math.ceil(length / bs)} (is the block size {bs}?)"
            )
        # Only full blocks can match: a partial trailing block is left out.
        ts = None if seconds is None else seconds / 1000
        return Pending(number, ts, output, block_ids=ids[: length // bs], input_tokens=length)


@dataclass(frozen=True, slots=True)
class _ShardTask:
    name: str
    format: str
    block_size: int | None
    lines: list[tuple[int, str]] | None
    """The shard's numbered lines, or None: the worker reads ``where``."""
    where: tuple[str, int, int, int] | None
    """(path, start byte, end byte, first line number) of a plain file."""


@dataclass(frozen=True, slots=True)
class _ShardResult:
    """What a worker sends back: block hashes and counts, the malformed lines' numbers and reasons; no text."""

    batches: list[RequestBatch]
    malformed: Malformed
    valid: int


def _hash_shard(tokenizer: Tokenizer | None, task: _ShardTask, cache: TokenCache | None = None) -> _ShardResult:
    """Tokenise and hash one shard (in a worker; ``tokenizer`` None: a local pool's worker, which was
    started with a segment cache; a worker keeps its segment cache from shard to shard unless one is given)."""
    if tokenizer is None:  # a local pool's worker: the segment cache it was started with goes on
        cache = cache or cast(TokenCache, given())
        tok = cache.tokenizer
    else:
        tok = tokenizer
        cache = cache or worker_state(tok, lambda: TokenCache(tok))
    reader = LogReader((), task.format, tok, task.block_size, task.name, cache=cache)
    if task.lines is not None:
        lines: Iterable[tuple[int, str]] = task.lines
    else:
        assert task.where is not None
        path, start, end, first = task.where
        lines = range_lines(Path(path), task.name, start, end, first)
    batches = list(reader.read_lines(lines))
    return _ShardResult(batches, reader._malformed, reader.valid)


# --- results -----------------------------------------------------------------------------------------


class CacheConfig(BaseModel):
    """One cache to simulate. ``capacity_tokens`` is per replica; None means unlimited."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capacity_tokens: int | None = Field(default=None, ge=0)
    ttl_seconds: float | None = Field(default=None, gt=0)
    replicas: int = Field(default=1, ge=1)
    routing: Routing = "round_robin"
    balance: float = Field(default=0.2, ge=0)
    """Prefix-aware routing: the replica with the longest cached match wins, unless it has served more
    than ``balance`` x the mean number of requests (plus one) beyond the least-loaded replica; then the
    longest match among the others (ties: the least loaded). Loads are request counts so far (no
    queueing model). 0.2: a replica may run 20% of the mean ahead of the idlest one."""
    seed: int = 0
    """Random routing."""

    def describe(self) -> str:
        cap = "unlimited" if self.capacity_tokens is None else f"{self.capacity_tokens:,} tokens"
        text = f"{cap} per replica"
        if self.ttl_seconds is not None:
            text += f", TTL {self.ttl_seconds:g} s"
        if self.replicas > 1:
            text += f", {self.replicas} replicas, {self.routing.replace('_', '-')} routing"
            if self.routing == "prefix_aware":
                text += f" (balance {self.balance:.0%})"
        return text


class ReplicaResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    replica: int
    requests: int
    input_tokens: int
    hit_tokens: int
    hit_share: float
    """Token hit share on this replica: hit_tokens / input_tokens."""


class HistogramBin(BaseModel):
    """Requests whose matched start is ``low_tokens <= matched < high_tokens`` (the first bin is exactly 0)."""

    model_config = ConfigDict(frozen=True)

    low_tokens: int
    high_tokens: int
    requests: int
    matched_tokens: int


class CacheResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    config: CacheConfig
    requests: int
    input_tokens: int
    hit_tokens: int
    token_hit_share: float
    """s x h: the share of all input tokens served from cache."""
    hit_rate: float | None = None
    """h = token_hit_share / prefix_share (None when nothing repeats: h does not matter then)."""
    replicas: tuple[ReplicaResult, ...]
    """Every replica that served at least one request, by index (an idle one holds nothing to show)."""
    matched_histogram: tuple[HistogramBin, ...]
    idle_replicas: int = 0
    """Replicas that served no request (more replicas than requests, or routing that left them out)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def token_hit_rate(self) -> float:
        """The same share under the name the prefix-analysis issue gave it (scripts may read either)."""
        return self.token_hit_share


class CurvePoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    capacity_tokens: int
    token_hit_share: float
    hit_rate: float | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def token_hit_rate(self) -> float:
        """The same share under the name the prefix-analysis issue gave it (scripts may read either)."""
        return self.token_hit_share


class MalformedReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    count: int = 0
    lines: tuple[str, ...] = ()
    """``file:line: what is wrong``, the first few."""


class PrefixReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str
    format: str
    block_size: int
    tokenizer: str | None
    """None when the log carries block hashes (Mooncake) and nothing was tokenized."""
    tokenizer_exact: bool | None
    requests: int
    input_tokens: int
    output_tokens: int | None
    """Sum over the requests that say (None when none does)."""
    mean_input_tokens: float
    mean_output_tokens: float | None
    prefix_share: float
    """s: the share of input tokens an unlimited cache on one replica serves."""
    unlimited: CacheResult
    scenario: CacheResult
    curve: tuple[CurvePoint, ...]
    malformed: MalformedReport

    @property
    def hit_rate(self) -> float:
        """h for a scenario: 1 when nothing repeats (then h has no effect)."""
        return 1.0 if self.scenario.hit_rate is None else self.scenario.hit_rate

    def scenario_values(self) -> dict[str, float]:
        """The workload values to put in a scenario, rounded to 3 decimals."""
        return {"prefix_share": round(self.prefix_share, 3), "hit_rate": round(self.hit_rate, 3)}


# --- the simulator -------------------------------------------------------------------------------------


class _Cache:
    """One replica's cache: block hash -> last use, in LRU order (oldest first).

    With prefix-aware routing, ``holders`` (shared by the replicas of one run) maps each cached block to
    the replicas holding it, so a request finds its longest match without asking every replica.
    """

    __slots__ = ("capacity", "entries", "holders", "replica", "seen", "ttl")

    def __init__(
        self, capacity_blocks: int | None, ttl: float | None, replica: int = 0, holders: _Holders | None = None
    ) -> None:
        self.capacity = capacity_blocks
        self.ttl = ttl
        self.entries: OrderedDict[int, float] = OrderedDict()
        kept = capacity_blocks is None and ttl is None and holders is None
        self.seen: set[int] | None = set() if kept else None
        """Used instead of ``entries`` when nothing is ever dropped: the order of use is never read then."""
        self.replica = replica
        self.holders = holders

    def _drop(self, h: int) -> None:
        if self.holders is not None:
            held = self.holders[h]
            held.discard(self.replica)
            if not held:
                del self.holders[h]

    def expire(self, now: float) -> None:
        if self.ttl is None:
            return
        entries = self.entries
        limit = now - self.ttl
        while entries:
            oldest = next(iter(entries))
            if entries[oldest] >= limit:
                break
            del entries[oldest]
            self._drop(oldest)

    def match(self, blocks: tuple[int, ...]) -> int:
        """How many of ``blocks``, from the first, are held: the index of the first one not held."""
        entries = self.entries if self.seen is None else self.seen
        if not blocks or blocks[0] not in entries:
            return 0
        # The look-ups run in C (``map`` of the container's own test), stopping at the first block not held:
        # the parent process's share of a sharded run, which the workers cannot take.
        try:
            return operator.indexOf(map(entries.__contains__, blocks), False)
        except ValueError:
            return len(blocks)

    def insert(self, blocks: tuple[int, ...], now: float, matched: int = 0) -> None:
        """Use ``blocks`` at ``now``; the first ``matched`` of them are the request's match here."""
        if self.seen is not None:
            self.seen.update(blocks[matched:])  # the matched ones are held already
            return
        entries = self.entries
        holders = self.holders
        move = entries.move_to_end
        replica = self.replica
        if holders is None:  # the same as below without the index, in the tightest loops
            if self.ttl is None:  # then every block's last use stays 0.0
                for h in reversed(blocks):  # tail first: the start ends up most recent, evicted last
                    if h in entries:
                        move(h)
                    else:
                        entries[h] = now
            else:
                for h in reversed(blocks):
                    if h in entries:
                        move(h)
                    entries[h] = now
            if self.capacity is not None:
                pop = entries.popitem
                for _ in range(len(entries) - self.capacity):
                    pop(False)
            return
        for h in reversed(blocks):  # tail first: the start ends up most recent, evicted last
            if h in entries:
                move(h)
            elif holders is not None:
                held = holders.get(h)
                if held is None:
                    holders[h] = {replica}
                else:
                    held.add(replica)
            entries[h] = now
        if self.capacity is not None:
            pop = entries.popitem
            for _ in range(len(entries) - self.capacity):  # none when it fits
                oldest, _ = pop(last=False)
                if holders is not None:
                    held = holders[oldest]
                    held.discard(replica)
                    if not held:
                        del holders[oldest]


_Holders = dict[int, set[int]]
_ASK_EACH_CACHE = 8
"""Prefix-aware routing over at most this many replicas asks each replica's cache for its match."""


class _Loads:
    """Requests served per replica, grouped by count, for the least-loaded replica among a set."""

    def __init__(self) -> None:
        self.of: dict[int, int] = {}
        self.groups: dict[int, set[int]] = {}
        self.counts: list[int] = []
        """The request counts some replica has, ascending."""

    def add(self, replica: int) -> None:
        before = self.of.get(replica, 0)
        if before:
            group = self.groups[before]
            group.discard(replica)
            if not group:
                del self.groups[before]
                del self.counts[bisect.bisect_left(self.counts, before)]
        after = before + 1
        self.of[replica] = after
        if after not in self.groups:
            self.groups[after] = set()
            bisect.insort(self.counts, after)
        self.groups[after].add(replica)

    def least(self, among: set[int], limit: float) -> int | None:
        """The least-loaded replica of ``among`` (lowest index on a tie), if it has served at most ``limit``."""
        of = self.of
        if len(among) <= 32:
            best = min(among, key=lambda i: (of[i], i))
            return best if of[best] <= limit else None
        for count in self.counts:
            if count > limit:
                break
            found = among & self.groups[count]
            if found:
                return min(found)
        return None


class _Run:
    """One cache configuration over the request stream. A replica's cache and counts exist once it
    serves a request: memory follows the replicas used, never the replica count asked for."""

    def __init__(self, config: CacheConfig, block_size: int) -> None:
        self.config = config
        self.block_size = block_size
        self.capacity = None if config.capacity_tokens is None else config.capacity_tokens // block_size
        self.caches: dict[int, _Cache] = {}
        self.loads = _Loads()
        self.inputs: dict[int, int] = {}
        self.hits: dict[int, int] = {}
        # Block -> replicas holding it pays off over many replicas; up to a few, asking each cache is cheaper.
        many = config.routing == "prefix_aware" and config.replicas > _ASK_EACH_CACHE
        self.holders: _Holders | None = {} if many else None
        self.bins: dict[int, list[int]] = {}
        self.rng = random.Random(config.seed)
        self.now = 0.0
        self.count = 0

    def _cache(self, replica: int) -> _Cache:
        cache = self.caches.get(replica)
        if cache is None:
            cache = self.caches[replica] = _Cache(self.capacity, self.config.ttl_seconds, replica, self.holders)
        return cache

    def _prefix_aware(self, blocks: tuple[int, ...]) -> tuple[int, int]:
        """The replica with the longest cached match among those not too far ahead in load (ties: the least
        loaded, then the lowest index), and that match in blocks. Replicas not used yet have served 0."""
        c = self.config
        holders = self.holders
        used = len(self.caches)  # prefix-aware routing uses replicas in index order
        least = 0 if used < c.replicas else self.loads.counts[0]
        limit = least + c.balance * self.count / c.replicas + 1
        if holders is None:  # few replicas: each cache's match, the same sets as the holders give
            matches = {r: cache.match(blocks) for r, cache in self.caches.items()}
            for depth in range(max(matches.values(), default=0), 0, -1):
                best = self.loads.least({r for r, m in matches.items() if m >= depth}, limit)
                if best is not None:
                    return best, depth
            if used < c.replicas:
                return used, 0
            return min(self.loads.groups[least]), 0
        chain: list[set[int]] = []
        held = holders.get(blocks[0]) if blocks else None
        while held:
            chain.append(held)
            if len(chain) == len(blocks):
                break
            deeper = holders.get(blocks[len(chain)])
            if not deeper:
                break
            held = held & deeper
        for depth in range(len(chain), 0, -1):
            best = self.loads.least(chain[depth - 1], limit)
            if best is not None:
                return best, depth
        if used < c.replicas:
            return used, 0
        return min(self.loads.groups[least]), 0

    def _route(self, blocks: tuple[int, ...]) -> tuple[int, int]:
        """(replica, matched blocks there)."""
        c = self.config
        if c.replicas == 1:
            r = 0
        elif c.routing == "round_robin":
            r = self.count % c.replicas
        elif c.routing == "random":
            r = self.rng.randrange(c.replicas)
        else:
            return self._prefix_aware(blocks)
        cache = self.caches.get(r)
        return r, 0 if cache is None else cache.match(blocks)

    def feed(self, request: Request) -> int:
        if self.config.ttl_seconds is not None:
            if request.timestamp is None:
                where = f"line {request.line}" if request.line is not None else "a request"
                raise InputError("cache.ttl_seconds", f"a time-to-live needs request timestamps; {where} has none")
            self.now = max(self.now, request.timestamp)
            for cache in self.caches.values():
                cache.expire(self.now)
        r, blocks = self._route(request.blocks)
        matched = min(blocks * self.block_size, request.input_tokens)
        self._cache(r).insert(request.blocks, self.now, blocks)
        self.count += 1
        self.loads.add(r)
        self.inputs[r] = self.inputs.get(r, 0) + request.input_tokens
        self.hits[r] = self.hits.get(r, 0) + matched
        k = (matched // self.block_size).bit_length()
        b = self.bins.setdefault(k, [0, 0])
        b[0] += 1
        b[1] += matched
        return matched

    def result(self) -> CacheResult:
        return _result(self.config, self.block_size, self.count, self.loads.of, self.inputs, self.hits, self.bins)


def _result(
    config: CacheConfig,
    bs: int,
    count: int,
    loads: dict[int, int],
    inputs_of: dict[int, int],
    hits_of: dict[int, int],
    bin_of: dict[int, list[int]],
) -> CacheResult:
    inputs, hits = sum(inputs_of.values()), sum(hits_of.values())
    bins = []
    for k in range(max(bin_of, default=0) + 1):
        n, tokens = bin_of.get(k, [0, 0])
        low, high = (0, 1) if k == 0 else (bs << (k - 1), bs << k)
        bins.append(HistogramBin(low_tokens=low, high_tokens=high, requests=n, matched_tokens=tokens))
    served = sorted(loads)
    return CacheResult(
        config=config,
        requests=count,
        input_tokens=inputs,
        hit_tokens=hits,
        token_hit_share=hits / inputs if inputs else 0.0,
        replicas=tuple(
            ReplicaResult(
                replica=i,
                requests=loads[i],
                input_tokens=inputs_of[i],
                hit_tokens=hits_of[i],
                hit_share=hits_of[i] / inputs_of[i] if inputs_of[i] else 0.0,
            )
            for i in served
        ),
        matched_histogram=tuple(bins),
        idle_replicas=config.replicas - len(served),
    )


# --- every LRU capacity in one pass: stack distances ------------------------------------------------------


def stack_distances_apply(config: CacheConfig) -> bool:
    """Whether :class:`LruProfile` gives ``config``'s results at every capacity: when the replica serving a
    request does not depend on what is cached (one replica, round-robin or random routing), with or without
    a TTL. Prefix-aware routing reads the caches, so each of its capacities needs its own simulation."""
    return config.replicas == 1 or config.routing != "prefix_aware"


_CHUNK_BITS = 10


class _Stack:
    """One replica's LRU stack over all the blocks it has seen (Mattson): each block's last-use tick, and the
    dead ticks (no longer their block's last use), so a block's stack distance (1 + the blocks used since) is
    the ticks since its own less the dead ones. Dead ticks are flagged in a bytearray and counted per chunk
    of 1,024 ticks in a Fenwick tree: a re-used block costs a flag, a request one tree update per chunk it
    touches, a distance one tree query and one count of flags within a chunk. Both double as ticks grow."""

    __slots__ = ("dead", "flags", "last", "stamp", "tick", "tree")

    def __init__(self) -> None:
        self.last: dict[int, int] = {}
        self.stamp: dict[int, float] = {}
        self.flags = bytearray(1 << 16)
        """1 at a dead tick."""
        self.tree = [0] * ((len(self.flags) >> _CHUNK_BITS) + 1)
        """Fenwick tree over chunks (chunk c at position c + 1): the dead ticks in each."""
        self.tick = 0
        self.dead = 0


class LruProfile:
    """LRU results at every capacity from one pass over the requests (stack distances, Mattson et al. 1970).

    Under LRU a block is cached at capacity C (blocks) exactly when its stack distance is at most C: the
    cache is always the top of one recency stack, whatever C (requests' blocks are touched tail first, then
    the cache is cut to C; a TTL drops the stack's bottom, so with one a block must also be young enough).
    A request's match at capacity C is therefore the number of leading blocks whose running maximum
    distance is at most C. The results equal :func:`simulate`'s block for block, for every config where
    :func:`stack_distances_apply`; the capacity in ``config`` is ignored.

    Which case uses which: one replica, round-robin and random routing, with or without a TTL, come from
    this one pass at every capacity; prefix-aware routing over several replicas is simulated per capacity.
    ``keep`` keeps each request's running distances so :meth:`result` can give a whole
    :class:`CacheResult` (per replica, histogram) at any capacity; without it only :meth:`hit_tokens`.
    """

    def __init__(
        self,
        config: CacheConfig,
        block_size: int = DEFAULT_BLOCK_SIZE,
        keep: bool = False,
        track: Sequence[int | None] = (),
    ) -> None:
        if not stack_distances_apply(config):
            raise ValueError("stack distances need routing that does not read the caches")
        if block_size < 1:
            raise InputError("cache.block_size", f"must be 1 or more tokens, got {block_size}")
        self.config = config
        self.block_size = block_size
        self.keep = keep
        self.stacks: dict[int, _Stack] = {}
        self.rng = random.Random(config.seed)
        self.now = 0.0
        self.count = 0
        self.input_tokens = 0
        self.gain: dict[int, int] = {}
        """Running maximum distance -> the tokens that become hits at that capacity (in blocks) and above."""
        self.requests: list[tuple[int, int, tuple[int, ...]]] = []
        """With ``keep``: (replica, input tokens, running maximum distances) per request whose start was
        cached at some size (tuples: the garbage collector stops scanning them)."""
        self.loads: dict[int, int] = {}
        self.inputs: dict[int, int] = {}
        """Requests and input tokens per replica (the same at every size)."""
        self._sorted: tuple[list[int], list[int]] | None = None
        self.tracked: dict[int | None, tuple[dict[int, int], dict[int, list[int]]]] = {cap: ({}, {}) for cap in track}
        """Capacities (tokens; None: unlimited) whose whole results are added up as the requests come, without
        ``keep``: (hit tokens per replica, histogram bins)."""

    @classmethod
    def of(
        cls, requests: Iterable[Request], config: CacheConfig, block_size: int = DEFAULT_BLOCK_SIZE, keep: bool = False
    ) -> LruProfile:
        profile = cls(config, block_size, keep)
        for request in requests:
            profile.feed(request)
        return profile

    def feed(self, request: Request) -> None:
        c = self.config
        ttl = c.ttl_seconds
        if ttl is not None:
            if request.timestamp is None:
                where = f"line {request.line}" if request.line is not None else "a request"
                raise InputError("cache.ttl_seconds", f"a time-to-live needs request timestamps; {where} has none")
            self.now = max(self.now, request.timestamp)
        if c.replicas == 1:
            r = 0
        elif c.routing == "round_robin":
            r = self.count % c.replicas
        else:
            r = self.rng.randrange(c.replicas)
        stack = self.stacks.get(r)
        if stack is None:
            stack = self.stacks[r] = _Stack()
        last, stamp, tree, flags = stack.last, stack.stamp, stack.tree, stack.flags
        blocks = request.blocks
        limit = None if ttl is None else self.now - ttl
        # A block's distance: the live ticks from its own up, (tick - t + 1) less the dead ones among them.
        tick, dead = stack.tick, stack.dead
        marks: list[int] = []
        top = d = 0
        before = -1
        for h in blocks:
            t = last.get(h)
            if t is None or (limit is not None and stamp[h] < limit):
                break
            if t == before - 1:  # used just before the previous block (the usual case): one deeper
                d += 1
            else:
                chunk = t >> _CHUNK_BITS
                below = flags.count(1, chunk << _CHUNK_BITS, t)  # dead ticks before t: in its chunk...
                i = chunk
                while i:  # ... and in the chunks before
                    below += tree[i]
                    i &= i - 1
                d = tick - t + 1 - (dead - below)
            before = t
            if d > top:
                top = d
            marks.append(top)
        while tick + len(blocks) >= len(flags):  # double: the new top node covers everything, the others nothing yet
            flags.extend(bytes(len(flags)))
            size = len(tree) - 1
            tree.extend([0] * size)
            tree[2 * size] = tree[size]
        size = len(tree) - 1
        now = self.now
        killed: dict[int, int] = {}
        for h in reversed(blocks):
            t = last.get(h)
            if t is not None:  # its last use is no longer one: a dead tick
                flags[t] = 1
                chunk = (t >> _CHUNK_BITS) + 1
                killed[chunk] = killed.get(chunk, 0) + 1
            tick += 1
            last[h] = tick
        if ttl is not None:
            for h in blocks:
                stamp[h] = now
        for i, n in killed.items():
            dead += n
            while i <= size:
                tree[i] += n
                i += i & -i
        stack.tick, stack.dead = tick, dead
        self.count += 1
        inp = request.input_tokens
        self.input_tokens += inp
        bs = self.block_size
        gain = self.gain
        if len(marks) * bs <= inp:  # every matched block is whole tokens
            for d in marks:
                gain[d] = gain.get(d, 0) + bs
        else:
            for k, d in enumerate(marks):
                got = min((k + 1) * bs, inp) - min(k * bs, inp)
                if got:
                    gain[d] = gain.get(d, 0) + got
        self._sorted = None
        if self.keep or self.tracked:
            self.loads[r] = self.loads.get(r, 0) + 1
            self.inputs[r] = self.inputs.get(r, 0) + inp
            if marks and self.keep:
                self.requests.append((r, inp, tuple(marks)))
        for capacity, (hits, bins) in self.tracked.items():
            cap = self._blocks(capacity)
            n = len(marks) if cap is None else bisect.bisect_right(marks, cap)
            matched = min(n * bs, inp)
            hits[r] = hits.get(r, 0) + matched
            b = bins.setdefault((matched // bs).bit_length(), [0, 0])
            b[0] += 1
            b[1] += matched

    def _blocks(self, capacity_tokens: int | None) -> int | None:
        return None if capacity_tokens is None else capacity_tokens // self.block_size

    def hit_tokens(self, capacity_tokens: int | None) -> int:
        """Tokens served from cache at this capacity per replica (None: unlimited)."""
        cap = self._blocks(capacity_tokens)
        if self._sorted is None:
            keys = sorted(self.gain)
            sums, total = [], 0
            for k in keys:
                total += self.gain[k]
                sums.append(total)
            self._sorted = (keys, sums)
        keys, sums = self._sorted
        n = len(keys) if cap is None else bisect.bisect_right(keys, cap)
        return sums[n - 1] if n else 0

    def result(self, capacity_tokens: int | None, config: CacheConfig | None = None) -> CacheResult:
        """The whole result :func:`simulate` gives for this config at this capacity (needs ``keep``, or the
        capacity ``track``-ed); ``config`` names it otherwise (the unlimited cache, when one replica)."""
        config = config or self.config.model_copy(update={"capacity_tokens": capacity_tokens})
        if capacity_tokens in self.tracked:
            hits_of, bins_of = self.tracked[capacity_tokens]
            hits = dict.fromkeys(self.loads, 0) | hits_of
            return _result(config, self.block_size, self.count, self.loads, self.inputs, hits, bins_of)
        if not self.keep:
            raise ValueError("LruProfile(keep=True) is needed for whole results")
        cap = self._blocks(capacity_tokens)
        bs = self.block_size
        hits = dict.fromkeys(self.loads, 0)
        none = self.count - len(self.requests)  # requests whose start was never cached: no hit at any size
        bins: dict[int, list[int]] = {}
        for r, inp, marks in self.requests:
            n = len(marks) if cap is None else bisect.bisect_right(marks, cap)
            if not n:
                none += 1
                continue
            matched = min(n * bs, inp)
            hits[r] += matched
            b = bins.setdefault((matched // bs).bit_length(), [0, 0])
            b[0] += 1
            b[1] += matched
        if none:
            bins.setdefault(0, [0, 0])[0] += none
        return _result(config, bs, self.count, self.loads, self.inputs, hits, bins)


def match_per_request(
    requests: Iterable[Request], config: CacheConfig | None = None, block_size: int = DEFAULT_BLOCK_SIZE
) -> Iterator[int]:
    """Matched tokens of each request, in order, under ``config`` (default: unlimited, one replica)."""
    run = _Run(config or CacheConfig(), block_size)
    for request in requests:
        yield run.feed(request)


def simulate(
    requests: Iterable[Request], configs: Sequence[CacheConfig], block_size: int = DEFAULT_BLOCK_SIZE
) -> list[CacheResult]:
    """Run every cache configuration over the request stream in a single pass."""
    if block_size < 1:
        raise InputError("cache.block_size", f"must be 1 or more tokens, got {block_size}")
    # The same config twice (the default scenario is the unlimited cache) is simulated once.
    runs = {c: _Run(c, block_size) for c in configs}
    for request in requests:
        for run in runs.values():
            run.feed(request)
    results = {c: run.result() for c, run in runs.items()}
    return [results[c] for c in configs]


def _with_rate(result: CacheResult, share: float) -> CacheResult:
    return result.model_copy(update={"hit_rate": result.token_hit_share / share if share > 0 else None})


def _curve_configs(scenario: CacheConfig, capacities: Sequence[int]) -> list[CacheConfig]:
    for cap in capacities:
        if cap < 0:
            raise InputError("cache.capacity_tokens", f"must be 0 or more tokens, got {cap}")
    return [scenario.model_copy(update={"capacity_tokens": cap}) for cap in sorted(set(capacities))]


@dataclass
class _Totals:
    requests: int = 0
    output: int = 0
    with_output: int = 0

    def add(self, request: Request) -> None:
        self.requests += 1
        if request.output_tokens is not None:
            self.output += request.output_tokens
            self.with_output += 1


def _report(
    unlimited: CacheResult,
    scen: CacheResult,
    curve: Sequence[tuple[CacheConfig, int]],
    totals: _Totals,
    block_size: int,
    source: str,
    format: str,
    tokenizer: Tokenizer | None,
    malformed: MalformedReport | None,
) -> PrefixReport:
    """The report from the unlimited cache, the scenario and the curve's (config, hit tokens)."""
    share = unlimited.token_hit_share
    n = unlimited.requests
    inputs = unlimited.input_tokens
    return PrefixReport(
        source=source,
        format=format,
        block_size=block_size,
        tokenizer=None if tokenizer is None else tokenizer.name,
        tokenizer_exact=None if tokenizer is None else tokenizer.exact,
        requests=n,
        input_tokens=inputs,
        output_tokens=totals.output if totals.with_output else None,
        mean_input_tokens=inputs / n if n else 0.0,
        mean_output_tokens=totals.output / totals.with_output if totals.with_output else None,
        prefix_share=share,
        unlimited=_with_rate(unlimited, share),
        scenario=_with_rate(scen, share),
        curve=tuple(
            CurvePoint(
                capacity_tokens=c.capacity_tokens or 0,
                token_hit_share=hits / inputs if inputs else 0.0,
                hit_rate=(hits / inputs if inputs else 0.0) / share if share > 0 else None,
            )
            for c, hits in curve
        ),
        malformed=malformed or MalformedReport(),
    )


def analyse(
    requests: Iterable[Request],
    scenario: CacheConfig | None = None,
    capacities: Sequence[int] = (),
    block_size: int = DEFAULT_BLOCK_SIZE,
    *,
    source: str = "<requests>",
    format: str = "requests",
    tokenizer: Tokenizer | None = None,
    malformed: MalformedReport | None = None,
) -> PrefixReport:
    """Prefix share (unlimited cache), the scenario's hit share, and a hit-rate curve over
    ``capacities`` (tokens per replica; the scenario's TTL, replicas and routing), in one pass.

    The curve costs about one simulation whatever its length where :func:`stack_distances_apply` (one
    replica, round-robin or random routing, TTL or not): an :class:`LruProfile`. With prefix-aware routing
    over several replicas each capacity is simulated."""
    scenario = scenario or CacheConfig()
    curve_configs = _curve_configs(scenario, capacities)
    totals = _Totals()

    def counted() -> Iterator[Request]:
        for request in requests:
            totals.add(request)
            yield request

    if stack_distances_apply(scenario) and curve_configs:
        # The whole curve and the scenario from one pass (stack distances); on one replica without a TTL the
        # unlimited cache is that profile's too, otherwise it is simulated beside it.
        alone = scenario.replicas == 1 and scenario.ttl_seconds is None
        track = [scenario.capacity_tokens, *([None] if alone else [])]
        profile = LruProfile(scenario, block_size, track=track)
        runs = [] if alone else [_Run(CacheConfig(), block_size)]
        for request in counted():
            for run in runs:
                run.feed(request)
            profile.feed(request)
        unlimited = profile.result(None, CacheConfig()) if alone else runs[0].result()
        scen = profile.result(scenario.capacity_tokens)
        hit_tokens = [profile.hit_tokens(c.capacity_tokens) for c in curve_configs]
    else:
        unlimited, scen, *points = simulate(counted(), [CacheConfig(), scenario, *curve_configs], block_size)
        hit_tokens = [p.hit_tokens for p in points]
    curve = list(zip(curve_configs, hit_tokens, strict=True))
    return _report(unlimited, scen, curve, totals, block_size, source, format, tokenizer, malformed)


class RequestLog:
    """A log's requests held in memory, to be analysed under one cache after another (the app).

    The unlimited cache, and each cache's stack distances (:class:`LruProfile`, per TTL, replicas, routing
    and seed), are computed once and kept: a new capacity then costs no pass over the requests where
    :func:`stack_distances_apply`; prefix-aware routing over several replicas is simulated each time.
    The answers equal :func:`analyse` and :func:`simulate` over the same requests.
    """

    def __init__(
        self,
        requests: Iterable[Request],
        block_size: int = DEFAULT_BLOCK_SIZE,
        *,
        source: str = "<requests>",
        format: str = "requests",
        tokenizer: Tokenizer | None = None,
        malformed: MalformedReport | None = None,
    ) -> None:
        if block_size < 1:
            raise InputError("cache.block_size", f"must be 1 or more tokens, got {block_size}")
        self.requests = tuple(requests)
        self.block_size = block_size
        self.source = source
        self.format = format
        self.tokenizer = tokenizer
        self.malformed = malformed or MalformedReport()
        self.totals = _Totals()
        for request in self.requests:
            self.totals.add(request)
        self._unlimited: CacheResult | None = None
        self._profiles: dict[str, LruProfile] = {}

    @classmethod
    def read(
        cls,
        source: Source | LogInput | LogPart,
        format: str = "auto",
        tokenizer: Tokenizer | None = None,
        block_size: int | None = None,
        name: str | None = None,
        max_chars: int | None = None,
        columns: Columns | None = None,
    ) -> RequestLog:
        """The requests of a log (see :class:`LogReader`); :class:`DataFileError` when none is valid."""
        reader = LogReader(source, format, tokenizer, block_size, name, max_chars, columns)
        requests = list(reader)
        return cls(
            requests,
            reader.block_size,
            source=reader.name,
            format=reader.format,
            tokenizer=reader.tokenizer if reader.tokenized else None,
            malformed=reader.report(),
        )

    def _profile(self, config: CacheConfig) -> LruProfile:
        key = config.model_copy(update={"capacity_tokens": None}).model_dump_json()
        profile = self._profiles.get(key)
        if profile is None:
            profile = self._profiles[key] = LruProfile.of(self.requests, config, self.block_size, keep=True)
        return profile

    def result(self, config: CacheConfig) -> CacheResult:
        """What :func:`simulate` gives for ``config`` over these requests."""
        if stack_distances_apply(config):
            return self._profile(config).result(config.capacity_tokens)
        [result] = simulate(self.requests, [config], self.block_size)
        return result

    def analyse(self, scenario: CacheConfig | None = None, capacities: Sequence[int] = ()) -> PrefixReport:
        """What :func:`analyse` reports over these requests."""
        scenario = scenario or CacheConfig()
        curve_configs = _curve_configs(scenario, capacities)
        if self._unlimited is None:
            [self._unlimited] = simulate(self.requests, [CacheConfig()], self.block_size)
        scen = self.result(scenario)
        if stack_distances_apply(scenario):
            profile = self._profile(scenario)
            hit_tokens = [profile.hit_tokens(c.capacity_tokens) for c in curve_configs]
        else:
            hit_tokens = [r.hit_tokens for r in simulate(self.requests, curve_configs, self.block_size)]
        curve = list(zip(curve_configs, hit_tokens, strict=True))
        return _report(
            self._unlimited,
            scen,
            curve,
            self.totals,
            self.block_size,
            self.source,
            self.format,
            self.tokenizer,
            self.malformed,
        )


PROGRESS_EVERY = 10_000
"""Requests between two calls of :func:`analyse_log`'s ``progress``."""


def analyse_log(
    source: Source | LogInput | LogPart,
    format: str = "auto",
    scenario: CacheConfig | None = None,
    capacities: Sequence[int] = (),
    block_size: int | None = None,
    tokenizer: Tokenizer | None = None,
    name: str | None = None,
    max_chars: int | None = None,
    columns: Columns | None = None,
    *,
    workers: int = 1,
    cluster: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PrefixReport:
    """:func:`analyse` over a log file (or its lines), streamed; malformed lines are reported, and the
    run fails with :class:`DataFileError` only when no valid request is left. ``max_chars`` caps the
    text read (the app's uploads). ``progress`` is told the requests and input tokens read so far, every
    :data:`PROGRESS_EVERY` requests (the command line shows a few lines of it on a long log).

    ``workers`` > 1 tokenises and hashes shards of the log on that many processes (this one included),
    ``cluster`` (a Dask scheduler's address) on a cluster's workers; the cache simulation runs here over the
    requests in the log's order, so the report is the same as from one process."""
    pool: Callable[[Any], AbstractContextManager[Pool]] | None = None
    if cluster is not None:
        pool = functools.partial(_on_cluster, cluster)
    elif workers > 1:  # this process is one of them (it hashes while it waits for the others)
        pool = functools.partial(local_pool, workers - 1)
    reader = LogReader(
        source, format, tokenizer, block_size, name, max_chars, columns, pool=pool, local=cluster is None
    )
    # The block size is known once the format is (auto-detected on the first usable line).
    stream = iter(reader)
    first = next(stream, None)
    if first is None:  # pragma: no cover - the reader raises when nothing is valid
        raise DataFileError([f"{reader.name}: no requests"])

    def all_requests() -> Iterator[Request]:
        yield first
        if progress is None:
            yield from stream
            return
        count, tokens = 1, first.input_tokens
        for request in stream:
            count += 1
            tokens += request.input_tokens
            if count % PROGRESS_EVERY == 0:
                progress(count, tokens)
            yield request

    report = analyse(
        all_requests(),
        scenario,
        capacities,
        reader.block_size,
        source=reader.name,
        format=reader.format,
        tokenizer=reader.tokenizer if reader.tokenized else None,
    )
    return report.model_copy(update={"malformed": reader.report()})


def _on_cluster(address: str, tokenizer: Tokenizer) -> AbstractContextManager[Pool]:
    return dask_cluster(address)


def capacity_from_fit(max_cached_tokens: int, field: str = "cache.gpu") -> int:
    """The cache capacity per replica from a memory fit (``calculator.capacity.memory.fit(...).max_cached_tokens``)."""
    if max_cached_tokens <= 0:
        raise InputError(field, "the model leaves no memory for a KV cache on this GPU; nothing can be cached")
    return max_cached_tokens
