"""What the commands print: JSON on stdout (numbers as JSON numbers) and plain-text tables.

The JSON is always valid JSON: a figure with no finite value is ``null``, never ``Infinity`` or
``NaN`` (which JSON does not have, and which most readers refuse). Input limits keep such figures
from arising; this is the last guard, so one slip cannot make a whole answer unreadable.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from calculator.catalog.datafile import check_writable, write_atomically
from calculator.errors import InputError

__all__ = ["check_save", "emit", "num", "save", "save_path", "table"]


def num(value: Decimal | float | None) -> float | None:
    """Money and rates as JSON numbers; None stays null."""
    return None if value is None else float(value)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return _finite(float(value)) if value.is_finite() else None
    if isinstance(value, numbers.Integral):  # numpy's integers
        return int(value)
    if isinstance(value, numbers.Real):  # numpy's floats
        return _finite(float(value))
    return str(value)


def _json_safe(data: Any) -> Any:
    """``data`` with every non-finite float as None (JSON's null)."""
    if isinstance(data, float):
        return _finite(data)
    if isinstance(data, dict):
        return {k: _json_safe(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_json_safe(v) for v in data]
    return data


def emit(data: Any) -> None:
    """``data`` as indented JSON on stdout: a Decimal left in it is a number, anything else unknown a string;
    a figure with no finite value is null."""
    json.dump(_json_safe(data), sys.stdout, indent=2, default=_default, allow_nan=False)
    sys.stdout.write("\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned columns two spaces apart under a dashed rule, trailing spaces trimmed."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=False)]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *[line(r) for r in rows]])


def save_path(text: str) -> Path:
    """The argparse type of a file a command writes (``--save``, ``--out``): an empty name is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a file name (an empty name would write nothing)")
    return Path(text)


def check_save(path: Path, flag: str) -> None:
    """Refuse, before the command does its work, a file it could not write or must not replace."""
    try:
        check_writable(path)
    except OSError as exc:
        raise InputError(flag, f"cannot write {path}: {exc.strerror or exc}") from None


def save(path: Path, text: str | bytes, flag: str) -> None:
    """Write a file a command was asked for (``--save``, ``--out``) whole or not at all, naming the flag."""
    try:
        write_atomically(path, text)
    except OSError as exc:
        raise InputError(flag, f"cannot write {path}: {exc.strerror or exc}") from None
