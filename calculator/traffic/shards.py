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
import mmap
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast

import numpy as np

from calculator.catalog.download import shown_text
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
        size += len(line) + 1  # a blank line costs a tuple too
        if size >= chars:
            yield shard
            shard, size = [], 0
    if shard:
        yield shard


def in_order(
    pool: Pool,
    fn: Callable[..., R],
    shared: Any,
    tasks: Iterable[Any],
    here: Callable[[Any], R] | None = None,
) -> Iterator[R]:
    """``fn(shared, task)`` for each task on the pool, results in the tasks' order, at most two tasks a
    worker in flight (so a slow consumer holds back the reading, and memory stays bounded).

    ``here`` (a task's result computed in this process): while the next result is not ready, this process
    takes the next task itself instead of waiting. A local pool then needs one process fewer than the
    cores: the reading process works whenever it is not consuming, and no core runs two processes by turns
    (which costs each of them its caches)."""
    window = 2 * pool.workers + 1
    running: collections.deque[_Slot[R]] = collections.deque()
    waiting = 0
    """Tasks on the pool whose result has not been taken yet."""
    todo = iter(tasks)
    more = True
    while True:
        while more and waiting < 2 * pool.workers and len(running) < window + 1:
            task = next(todo, _END)
            if task is _END:
                more = False
                break
            running.append(_Slot(pool.submit(fn, shared, task)))
            waiting += 1
        if not running:
            return
        head = running[0]
        if here is not None and more and len(running) <= window and not (head.future is None or head.future.done()):
            task = next(todo, _END)
            if task is not _END:
                running.append(_Slot(None, here(task)))
                continue
            more = False
        running.popleft()
        if head.future is None:
            yield cast(R, head.value)
        else:
            waiting -= 1
            yield head.future.result()


_END = object()


class _Slot(Generic[R]):
    """A task's place in :func:`in_order`: its future on the pool, or the result computed here."""

    __slots__ = ("future", "value")

    def __init__(self, future: Any, value: R | None = None) -> None:
        self.future = future
        self.value = value


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


CLUSTER_SCHEMES = ("tcp",)
"""Scheduler addresses read: Dask's tcp:// (a bare ``host:port`` means it too)."""
_MAX_HANDSHAKE = 1 << 20
"""A Dask handshake is a small dict: its first 8 bytes give its length, well under a megabyte."""


def _in_this_process(address: str) -> bool:
    """Whether ``address`` (inproc://) names a scheduler listening in this process."""
    from distributed.comm.inproc import global_manager

    try:
        return global_manager.get_listener_for(address.removeprefix("inproc://")) is not None  # type: ignore[no-untyped-call]
    except ValueError:  # another process's (or a made-up) address
        return False


def _probe(field: str, shown: str, host: str, port: int) -> None:
    """Whether a Dask scheduler answers at ``host:port``, within :data:`CONNECT_TIMEOUT_S`: a Dask server
    speaks first (its handshake, a message whose first 8 bytes are its length), so a server that says
    nothing (a web server), or something else (an SSH banner), is named as not a scheduler instead of
    being waited on for ever."""
    import socket
    import struct

    unreachable = InputError(
        field,
        f"no Dask scheduler answered at {shown!r} within {CONNECT_TIMEOUT_S} s; "
        "check the address and that the scheduler is running",
    )
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S) as probe:
            head = b""
            while len(head) < 8:
                more = probe.recv(8 - len(head))
                if not more:
                    break
                head += more
    except TimeoutError:
        raise InputError(
            field, f"what answers at {shown!r} is not a Dask scheduler (it sent nothing in {CONNECT_TIMEOUT_S} s)"
        ) from None
    except OSError:
        raise unreachable from None
    if len(head) < 8 or not 0 < struct.unpack("<Q", head)[0] < _MAX_HANDSHAKE:
        raise InputError(field, f"what answers at {shown!r} is not a Dask scheduler (it does not speak its protocol)")


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
    shown = shown_text(address[:200])
    try:
        scheme, where = parse_address(address)
        if scheme in CLUSTER_SCHEMES:
            host, port = parse_host_port(where)  # a port is needed (Dask's own check, before anything connects)
    except (ValueError, TypeError) as exc:
        raise InputError(
            field, f"{shown!r} is not a Dask scheduler address ({exc}); give one like tcp://10.0.0.5:8786"
        ) from None
    if scheme in CLUSTER_SCHEMES:
        _probe(field, shown, host, int(port))
    elif not (scheme == "inproc" and _in_this_process(address)):  # a scheduler this process runs: no probe
        raise InputError(
            field,
            f"{scheme}:// is not read here (inproc:// is one process, ucx:// and tls:// need a set-up this command "
            "does not take); give the scheduler's tcp:// address, like tcp://10.0.0.5:8786",
        )
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError):
        raise InputError(
            field,
            f"no Dask scheduler answered at {shown!r} within {CONNECT_TIMEOUT_S} s; "
            "check the address and that the scheduler is running",
        ) from None
    try:
        if not client.nthreads():  # type: ignore[no-untyped-call]
            raise InputError(field, f"the Dask scheduler at {shown!r} has no workers; start some (dask worker ...)")
        yield _DaskPool(client)
    finally:
        client.close()  # type: ignore[no-untyped-call]


# --- shards of a plain file, read where they are hashed ---------------------------------------------------


def byte_ranges(path: Path, chars: int | None = None) -> Iterator[tuple[int, int, int]]:
    """(start, end, first line number) of runs of whole lines of a plain file, about ``chars`` bytes each:
    a worker reads its own run, so the text never passes through the reading process. Runs end after a
    ``\\n`` (never inside ``\\r\\n``); lines are counted as :func:`text_lines` counts them (``\\n``, ``\\r\\n``
    and ``\\r`` each end one).

    The file is mapped, not read: finding a line break near each cut is a search from there, and counting
    the line breaks runs in numpy (the reading process hashes too, so what it spends here is taken from that).
    """
    chars = chars or SHARD_CHARS
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            size = len(data)
            start, line = 0, 1
            while start < size:
                limit = start + chars
                if limit >= size:
                    cut = size
                else:
                    last = data.rfind(b"\n", start, limit)
                    if last < 0:  # a line longer than a run makes a run of its own
                        last = data.find(b"\n", limit)
                    cut = size if last < 0 else last + 1
                yield start, cut, line
                line += _line_breaks(data, start, cut)
                start = cut


def _line_breaks(data: mmap.mmap, start: int, end: int) -> int:
    """Line breaks in bytes ``start`` to ``end``: each ``\\n``, and each ``\\r`` not followed by one there."""
    view = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
    try:
        breaks = int(np.count_nonzero(view == _LF))
        if data.find(b"\r", start, end) >= 0:  # rare: \r alone ends a line too, \r\n only once
            returns = view == _CR
            breaks += int(np.count_nonzero(returns)) - int(np.count_nonzero(returns[:-1] & (view[1:] == _LF)))
        return breaks
    finally:
        del view  # the map cannot close while numpy holds it


_LF, _CR = np.uint8(10), np.uint8(13)


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
