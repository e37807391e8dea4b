"""What the commands print: JSON on stdout (numbers as JSON numbers) and plain-text tables."""

from __future__ import annotations

import argparse
import json
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


def save(path: Path, text: str, flag: str) -> None:
    """Write a file a command was asked for (``--save``, ``--out``) whole or not at all, naming the flag."""
    try:
        write_atomically(path, text)
    except OSError as exc:
        raise InputError(flag, f"cannot write {path}: {exc.strerror or exc}") from None
