"""Problems a user can cause and fix, structured so each front end says them in its own words.

A :class:`Problem` names the field (a path in the scenario, ``workload.prefix_share``, or an input's
domain name, ``load_profile.burst``), what is wrong, what is allowed, and how serious it is. The core
never names a command-line flag or a page's label: the command line renders a field as its flag
(``--burst``), the app as the label beside the input ("Within-hour burst"). Warnings carry a stable
``code`` so a front end can add its own advice ("set token_factors in the scenario" on the command
line, "Advanced > Token factors" in the app) without rewriting the core's sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CalculatorError", "InputError", "Problem", "Severity"]

Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Problem:
    field: str
    """What the problem is about: a scenario path (``traffic.turns_per_month``) or an input's domain name."""
    message: str
    """What is wrong, in plain words, without naming a flag or a page's label."""
    allowed: str | None = None
    """What would be accepted (``0 to 1``, ``12 to 36``), when it can be said."""
    severity: Severity = "error"
    code: str | None = None
    """A stable name for the kind of problem (``tokenizer_factors``), for front ends that add advice."""

    def text(self) -> str:
        """The message with what is allowed, when the message does not already say it."""
        if self.allowed and self.allowed not in self.message:
            return f"{self.message} (allowed: {self.allowed})"
        return self.message

    def __str__(self) -> str:
        return self.text()


class CalculatorError(Exception):
    """The base of every error the package raises on purpose: a value, a file, a flag or a path the user can
    fix, with a message that says what is wrong and what is allowed. ``except CalculatorError`` catches all of
    them and none of the bugs (a ``KeyError`` or ``TypeError`` from the package is a bug to report).

    Its kinds: :class:`InputError` (a value; ``.field`` names it), ``DataFileError`` (a data file, one
    ``file:line: field: message`` a problem), ``QuantityError`` (text that is not a number), ``LineError``
    (one line of a log), ``UnwritablePath`` (a path refused for writing, also an ``OSError``) and the command
    line's ``UsageError``."""


class InputError(CalculatorError, ValueError):
    """A value the user gave is not allowed.

    ``field`` names the input (``workload.hit_rate``, ``load_profile.burst``) so that the command line,
    the app and the scenario loader can all point at it, each in its own words.
    """

    def __init__(self, field: str, message: str, allowed: str | None = None, code: str | None = None) -> None:
        self.problem = Problem(field, message, allowed, "error", code)
        self.field = field
        self.message = message
        self.allowed = allowed
        super().__init__(f"{field}: {self.problem.text()}")
