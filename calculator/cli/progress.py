"""Progress of a long command on stderr: a few lines, never on stdout (which may carry ``--json``).

A line is printed when the run has taken :data:`FIRST_AFTER` seconds, then each time the time taken has
grown :data:`GROWTH` times since the last line (10 s, 30 s, 90 s, 4.5 min, ...): an hour's run says where
it is seven times, a short one not at all, so a command that ends in an error within seconds still
prints its one line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["FIRST_AFTER", "GROWTH", "Progress"]

FIRST_AFTER = 10.0
"""Seconds before the first line."""
GROWTH = 3.0
"""How many times longer the run has taken at each further line."""


class Progress:
    """Called with the requests and input tokens read so far; prints a line to ``stream`` when it is due."""

    def __init__(self, what: str, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.stream, self.clock = what, stream, clock
        self.started = clock()
        self.due = FIRST_AFTER
        self.lines = 0

    def __call__(self, requests: int, tokens: int) -> None:
        took = self.clock() - self.started
        if took < self.due:
            return
        self.due = took * GROWTH
        self.lines += 1
        stream = self.stream or sys.stderr
        print(
            f"{self.what}: {requests:,} requests ({tokens:,} input tokens) read in {took:,.0f} s; still reading",
            file=stream,
            flush=True,
        )
