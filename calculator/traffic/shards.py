"""Running the tokenise-and-hash stage of prefix analysis over shards of a log, on every core or on a
Dask cluster, and taking the results back in the log's order.

The reading process cuts the log into shards of whole lines (:func:`shards`) and sends each to a worker:
a process of a local pool (:func:`local_pool`), or a worker of a Dask cluster (:func:`dask_cluster`, the
optional ``cluster`` extra). A worker sends back block hashes and counts, never prompt text. Results are
taken in the order the shards were cut, a few shards ahead at most (:func:`in_order`), so the cache
simulation sees the requests in the log's own order and memory stays bounded whatever the log's size.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import gc
import io
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from calculator.catalog.textfile import raw_lines
from calculator.errors import InputError

__all__ = [
    "SHARD_CHARS",
    "Pool",
    "byte_ranges",
    "dask_cluster",
    "default_workers",
    "in_order",
    "local_pool",
    "range_lines",
    "shards",
    "worker_state",
]

SHARD_CHARS = 2_000_000
"""Text per shard: large enough that a worker hashes wide batches, small enough that the cores stay even."""
CONNECT_TIMEOUT_S = 10
"""How long to wait for a cluster's scheduler before saying it cannot be reached."""

T = TypeVar("T")
R = TypeVar("R")


class Pool(Protocol):
    """Where shards go: ``submit(fn, *args)`` gives a future with ``result()``; ``workers`` run at once."""

    workers: int

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def share(self, value: Any) -> Any:
        """``value`` as an argument every worker can use (sent once, where the engine allows)."""
        ...


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS and Windows
        return os.cpu_count() or 1


def shards(lines: Iterable[tuple[int, str]], chars: int | None = None) -> Iterator[list[tuple[int, str]]]:
    """Numbered lines in runs of about ``chars`` characters (default :data:`SHARD_CHARS`; a long line
    makes a shard of its own)."""
    chars = chars or SHARD_CHARS
    shard: list[tuple[int, str]] = []
    size = 0
    for number, line in lines:
        shard.append((number, line))
        size += len(line)
        if size >= chars:
            yield shard
            shard, size = [], 0
    if shard:
        yield shard


def in_order(pool: Pool, fn: Callable[..., R], shared: Any, tasks: Iterable[Any]) -> Iterator[R]:
    """``fn(shared, task)`` for each task on the pool, results in the tasks' order, at most two tasks a
    worker in flight (so a slow consumer holds back the reading, and memory stays bounded)."""
    window = 2 * pool.workers + 1
    running: collections.deque[Any] = collections.deque()
    for task in tasks:
        running.append(pool.submit(fn, shared, task))
        if len(running) >= window:
            yield running.popleft().result()
    while running:
        yield running.popleft().result()


# --- state a worker keeps between shards ---------------------------------------------------------------

_local = threading.local()
_given: Any = None
"""The value a local pool's worker processes were started with (:func:`local_pool`)."""


def worker_state(key: Any, make: Callable[[], T]) -> T:
    """An object a worker keeps between shards (a tokenizer's segment cache), one per thread and ``key``:
    Dask runs several tasks at once in one process, so nothing here is shared between threads."""
    kept: dict[int, tuple[Any, Any]] = getattr(_local, "kept", None) or {}
    _local.kept = kept
    found = kept.get(id(key))
    if found is None or found[0] is not key:
        found = kept[id(key)] = (key, make())
    return found[1]


def given() -> Any:
    """What :func:`local_pool` started this worker process with."""
    return _given


def _start(value: Any) -> None:
    global _given
    _given = value
    # What the worker inherits stays as it is: the collector never walks it, so its pages stay shared.
    gc.freeze()


# --- engines ---------------------------------------------------------------------------------------------


class _LocalPool:
    def __init__(self, executor: concurrent.futures.ProcessPoolExecutor, workers: int) -> None:
        self.executor = executor
        self.workers = workers

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.executor.submit(fn, *args)

    def share(self, value: Any) -> Any:
        return None  # the processes were started with it: see given()


@contextlib.contextmanager
def local_pool(workers: int, value: Any) -> Iterator[Pool]:
    """A pool of ``workers`` processes on this machine, each started with ``value`` (:func:`given`).
    Forked where the system can (the workers inherit what is imported), started afresh elsewhere."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(workers, context, initializer=_start, initargs=(value,)) as executor:
        try:
            yield _LocalPool(executor, workers)
        except BaseException:
            executor.shutdown(wait=True, cancel_futures=True)
            raise


class _DaskPool:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.workers = max(1, sum(client.nthreads().values()))

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def share(self, value: Any) -> Any:
        return self.client.scatter(value, broadcast=True)


@contextlib.contextmanager
def dask_cluster(address: str, field: str = "--cluster") -> Iterator[Pool]:
    """The workers of the Dask cluster whose scheduler is at ``address`` (``tcp://host:8786``); a clear
    :class:`InputError` when Dask is not installed or the scheduler does not answer in time."""
    try:
        from distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise InputError(
            field,
            "running on a cluster needs Dask distributed (pip install 'inference-cost-calculator[cluster]', "
            "or pip install 'distributed'); without it, leave --cluster out to use this machine's cores",
        ) from None
    try:
        scheme, where = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(where)  # a port is needed (Dask's own check, before anything connects)
    except ValueError as exc:
        raise InputError(
            field, f"{address!r} is not a Dask scheduler address ({exc}); give one like tcp://10.0.0.5:8786"
        ) from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError):
        raise InputError(
            field,
            f"no Dask scheduler answered at {address!r} within {CONNECT_TIMEOUT_S} s; "
            "check the address and that the scheduler is running",
        ) from None
    try:
        if not client.nthreads():  # type: ignore[no-untyped-call]
            raise InputError(field, f"the Dask scheduler at {address!r} has no workers; start some (dask worker ...)")
        yield _DaskPool(client)
    finally:
        client.close()  # type: ignore[no-untyped-call]


# --- shards of a plain file, read where they are hashed ---------------------------------------------------


def byte_ranges(path: Path, chars: int | None = None) -> Iterator[tuple[int, int, int]]:
    """(start, end, first line number) of runs of whole lines of a plain file, about ``chars`` bytes each:
    a worker reads its own run, so the text never passes through the reading process. Runs end after a
    ``\\n`` (never inside ``\\r\\n``); lines are counted as :func:`text_lines` counts them (``\\n``, ``\\r\\n``
    and ``\\r`` each end one)."""
    chars = chars or SHARD_CHARS
    start, line = 0, 1
    with path.open("rb") as fh:
        held = b""
        while True:
            data = fh.read(chars)
            held = held + data if held else data
            cut = held.rfind(b"\n") + 1
            if data and (not cut or len(held) < chars):
                continue  # read on to a line break (a line longer than a run makes a run of its own)
            if not data:
                cut = len(held)
            if cut:
                yield start, start + cut, line
                line += held.count(b"\n", 0, cut)
                if held.find(b"\r", 0, cut) >= 0:  # rare: \r alone ends a line too, \r\n only once
                    line += held.count(b"\r", 0, cut) - held.count(b"\r\n", 0, cut)
                start += cut
                held = held[cut:]
            if not data:
                return


def range_lines(path: Path, name: str, start: int, end: int, first: int) -> Iterator[tuple[int, str]]:
    """The numbered lines of bytes ``start`` to ``end`` of a plain file (from :func:`byte_ranges`), as
    :func:`text_lines` gives them: universal line breaks, undecodable bytes kept as surrogates, the byte-order
    mark dropped at the file's start, the same limit on a line's length."""
    with path.open("rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape", newline=None)
    for number, line in raw_lines(text, name, first=first):
        line = line.rstrip("\n")
        yield number, line.removeprefix("\ufeff") if number == 1 else line
