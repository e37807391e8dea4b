"""Checking values read from the URL: one rule for every page, each problem naming its parameter.

Pure Python (no streamlit), so the pages and their tests share it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from calculator.catalog.limits import shown


class Bounded(Protocol):
    """A numeric input's label, type and allowed range."""

    @property
    def label(self) -> str: ...
    @property
    def kind(self) -> type: ...
    @property
    def min(self) -> float: ...
    @property
    def max(self) -> float: ...


@dataclass(frozen=True)
class NumberParam:
    label: str
    kind: type
    min: float
    max: float
    typed: bool = False
    """A volume or token count typed as text (``3M``): its field reads the link's value and names a problem."""


def echo(raw: str) -> str:
    """A URL value quoted in a message: a long one cut short, so the message stays one readable line."""
    return repr(raw) if len(raw) <= 40 else f"{raw[:32]!r}... ({len(raw):,} characters)"


def check_params(
    params: Mapping[str, str], numbers: Mapping[str, Bounded], choices: Mapping[str, Sequence[str]]
) -> list[str]:
    """Problems with values read from the URL, each naming the parameter; unknown parameters are ignored."""
    problems: list[str] = []
    for key, raw in params.items():
        if key in numbers and not getattr(numbers[key], "typed", False):
            spec = numbers[key]
            try:
                value = float(raw)
            except ValueError:
                problems.append(f"URL parameter `{key}` ({spec.label}): {echo(raw)} is not a number")
                continue
            if not math.isfinite(value):
                problems.append(f"URL parameter `{key}` ({spec.label}): {echo(raw)} is not a finite number")
            elif spec.kind is int and value != int(value):
                problems.append(f"URL parameter `{key}` ({spec.label}): {echo(raw)} must be a whole number")
            elif not spec.min <= value <= spec.max:
                span = f"{shown(spec.min)} to {shown(spec.max)}"
                problems.append(f"URL parameter `{key}` ({spec.label}): {echo(raw)} is outside {span}")
        elif key in choices and raw not in choices[key]:
            allowed = list(choices[key])
            listed = ", ".join(allowed[:8]) + (" ..." if len(allowed) > 8 else "")
            problems.append(f"URL parameter `{key}`: {echo(raw)} is not one of: {listed}")
    return problems
