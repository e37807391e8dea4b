"""Work on what a user brought (an upload's reading and analysis) in a child process, within a time and a
memory limit, so that the process serving everyone (the app's server) neither waits on it nor runs out of
memory because of it, and so that it can be stopped at any moment.

:class:`Work` starts ``fn(*args, **kwargs)`` in a process of its own (from a fork server: a clean process
with the readers imported, never a copy of a server's threads), its address space limited to
:data:`MEMORY_LIMIT`; the caller polls it (:meth:`Work.poll`, which hands on what the work says of its
progress), stops it (:meth:`Work.stop`) or takes its result (:meth:`Work.result`). Past
:data:`TIME_LIMIT` seconds, or out of memory, the work is stopped and :class:`WorkStopped` says which
limit it met; an error the work raised on purpose (a :class:`~calculator.errors.CalculatorError`) is
raised again here as it was. :func:`run_limited` does all of it for work that needs no progress.
"""

from __future__ import annotations

import multiprocessing
import pickle
import resource
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Literal

from calculator.errors import CalculatorError

__all__ = ["MEMORY_LIMIT", "PRELOAD", "TIME_LIMIT", "Work", "WorkStopped", "run_limited"]

TIME_LIMIT = 600.0
"""Seconds the work on one upload may take (reading and hashing a 1 GB log takes a few minutes here)."""
MEMORY_LIMIT = 3 * 1024**3
"""Address space the work may use (3 GiB: the interpreter, numpy and pyarrow reserve about 1 GiB of it
unused; the readers' own limits keep what a hostile upload makes it hold near 1 GB)."""
PRELOAD = [
    "calculator.present.prefix_charts",
    "calculator.planning.load_profile",
    "calculator.pricing.ttl",
    "calculator.measure.bench",
]
"""Modules the fork server imports once, so that each piece of work starts in a fraction of a second."""
_PROGRESS_EVERY = 0.2
"""Seconds between two progress messages from the work."""

Reason = Literal["time", "memory", "cancelled", "failed"]


class WorkStopped(CalculatorError):
    """The work was stopped before it ended: ``reason`` says whether it met the time limit, the memory limit,
    was cancelled, or failed (its process ended without an answer: a bug); ``str()`` says it in words,
    naming ``what`` and the limit."""

    def __init__(self, what: str, reason: Reason, limit: float | None = None) -> None:
        self.what, self.reason, self.limit = what, reason, limit
        if reason == "time":
            text = f"{what} was stopped after {limit:,.0f} s, the time an upload may take here"
        elif reason == "memory":
            text = (
                f"{what} needed more than {(limit or 0) / 1024**3:,.0f} GiB of memory, the limit here, and was stopped"
            )
        elif reason == "failed":
            text = f"{what} ended without an answer (its process exited with code {limit}); please report it"
        else:
            text = f"{what} was cancelled"
        super().__init__(text)


_context: Any = None


def _fork_server() -> Any:
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        _context = context
    return _context


def _limit_memory(limit: int) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit if hard == resource.RLIM_INFINITY else hard))


def _portable(exc: BaseException) -> tuple[Any, ...]:
    """An exception as what the parent rebuilds it from: its class, arguments and attributes (an error class
    whose ``__init__`` takes other arguments than ``args`` cannot be unpickled as it is)."""
    if isinstance(exc, CalculatorError):
        try:
            state = (type(exc), exc.args, dict(vars(exc)))
            pickle.dumps(state)
            return state
        except Exception:
            pass
    return (RuntimeError, (f"{type(exc).__name__}: {exc}",), {})


def _rebuilt(state: tuple[Any, ...]) -> BaseException:
    cls, args, attributes = state
    exc: BaseException = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(attributes)
    return exc


def _child(
    conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], memory: int
) -> None:
    _limit_memory(memory)
    last = [0.0]

    def progress(share: float, text: str = "") -> None:
        now = time.monotonic()
        if now - last[0] >= _PROGRESS_EVERY:
            last[0] = now
            conn.send(("progress", (float(share), str(text))))

    try:
        if "progress" in kwargs:
            kwargs = {**kwargs, "progress": progress}
        value = fn(*args, **kwargs)
        conn.send(("done", value))
    except MemoryError:
        conn.send(("memory", None))
    except BaseException as exc:
        try:
            conn.send(("error", _portable(exc)))
        except MemoryError:
            conn.send(("memory", None))
    finally:
        conn.close()


class Work:
    """``fn(*args, **kwargs)`` running in a child process (see the module's docstring). Give ``progress=True``
    among ``kwargs`` for work that takes a ``progress(share, text)`` callable: what it says is handed on by
    :meth:`poll`."""

    def __init__(
        self,
        what: str,
        fn: Callable[..., Any],
        *args: Any,
        seconds: float | None = None,
        memory: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.what = what
        self.seconds = TIME_LIMIT if seconds is None else seconds
        self.memory = MEMORY_LIMIT if memory is None else memory
        context = _fork_server()
        self._conn, child_conn = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_child, args=(child_conn, fn, args, kwargs, self.memory), daemon=True, name="calculator-work"
        )
        self._process.start()
        child_conn.close()
        self.started = time.monotonic()
        self._outcome: tuple[str, Any] | None = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def done(self) -> bool:
        return self._outcome is not None

    def poll(self, wait: float = 0.25) -> list[tuple[float, str]]:
        """Wait up to ``wait`` seconds for the work; the progress it reported meanwhile, oldest first. Past the
        time limit the work is stopped (:meth:`result` then raises :class:`WorkStopped`)."""
        said: list[tuple[float, str]] = []
        if self._outcome is not None:
            return said
        deadline = min(time.monotonic() + wait, self.started + self.seconds)
        while self._outcome is None:
            left = deadline - time.monotonic()
            try:
                ready = self._conn.poll(max(0.0, left))
                message = self._conn.recv() if ready else None
            except (EOFError, OSError):  # the child ended without a word: killed (by the kernel: memory) or broken
                self._process.join(5)
                code = self._process.exitcode
                self._outcome = ("memory", None) if code == -signal.SIGKILL else ("failed", code)
                break
            except MemoryError:
                self._outcome = ("memory", None)
                break
            if message is None:
                if time.monotonic() >= self.started + self.seconds:
                    self._outcome = ("time", None)
                break
            kind, value = message
            if kind == "progress":
                said.append(value)
                continue
            self._outcome = (kind, value)
        if self._outcome is not None:
            self.stop()
        return said

    def result(self, wait: float | None = None) -> Any:
        """The work's value, waiting for it (up to the time limit); :class:`WorkStopped` when it met a limit, or
        the error it raised."""
        while self._outcome is None:
            self.poll(1.0 if wait is None else wait)
        kind, value = self._outcome
        if kind == "done":
            return value
        if kind == "error":
            raise _rebuilt(value)
        if kind == "time":
            raise WorkStopped(self.what, "time", self.seconds)
        if kind == "cancelled":
            raise WorkStopped(self.what, "cancelled")
        if kind == "failed":
            raise WorkStopped(self.what, "failed", value)
        raise WorkStopped(self.what, "memory", self.memory)

    def stop(self) -> None:
        """End the child now if it is still running (a cancel, a limit, or the caller going away)."""
        if self._outcome is None:
            self._outcome = ("cancelled", None)
        if self._process.is_alive():
            self._process.kill()
        self._process.join(5)
        self._conn.close()

    def __enter__(self) -> Work:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_limited(what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a child process within :data:`TIME_LIMIT` and :data:`MEMORY_LIMIT`, waited for:
    its value, the error it raised, or :class:`WorkStopped` naming the limit it met."""
    with Work(what, fn, *args, **kwargs) as work:
        return work.result()


def prefix_log(path: str, name: str, **kwargs: Any) -> Any:
    """The Prefix analysis page's reading of a log, from a file (an upload's private copy, or a bundled trace),
    as :func:`calculator.present.prefix_charts.read_log` reads it: a function a child process can be given."""
    import contextlib
    from pathlib import Path

    from calculator.present.prefix_charts import read_log

    @contextlib.contextmanager
    def opener() -> Any:
        with Path(path).open("rb") as handle:
            yield handle, Path(path).stat().st_size

    return read_log(opener, name, **kwargs)
