"""What the commands print: JSON on stdout (numbers as JSON numbers) and plain-text tables."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from calculator.catalog.datafile import write_atomically
from calculator.errors import InputError

__all__ = ["emit", "num", "save", "table"]


def num(value: Decimal | float | None) -> float | None:
    """Money and rates as JSON numbers; None stays null."""
    return None if value is None else float(value)


def _default(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else str(value)


def emit(data: Any) -> None:
    """``data`` as indented JSON on stdout: a Decimal left in it is a number, anything else unknown a string."""
    json.dump(data, sys.stdout, indent=2, default=_default)
    sys.stdout.write("\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned columns two spaces apart under a dashed rule, trailing spaces trimmed."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=False)]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *[line(r) for r in rows]])


def save(path: Path, text: str, flag: str) -> None:
    """Write a file a command was asked for (``--save``, ``--out``) whole or not at all, naming the flag."""
    try:
        write_atomically(path, text)
    except OSError as exc:
        raise InputError(flag, f"cannot write {path}: {exc.strerror or exc}") from None
