"""Carrying a scenario's evidence (or a whole scenario) in a link: one compact, URL-safe parameter.

Scalar inputs travel as readable parameters (``in=20000``); the user's evidence (measurement records,
a prefix analysis, a load profile) does not fit that shape, so it travels as JSON, compressed and
base64url-encoded. On the way in a value is checked step by step, each step bounded (its length, the
size it inflates to, the JSON's depth and numbers), then validated by the same pydantic model the
scenario file uses; every failure is one sentence naming the parameter, never a traceback.

The rule for what a link cannot carry: an encoding longer than :data:`MAX_CHARS` (a load profile read
from days of request log holds thousands of numbers) is left out of the link and the page says so;
the scenario file (YAML) carries any evidence. Raw uploaded files (a log, a benchmark result) never
travel: what they measured does, once added to the scenario.

No streamlit import: the pages and the tests share it.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import zlib
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app_pages import _words
from calculator.catalog.textfile import json_words

M = TypeVar("M", bound=BaseModel)

MAX_CHARS = 24_000
"""Longest encoded value a link carries: well inside what browsers and the server accept in a URL."""
MAX_BYTES = 512_000
"""Most bytes an encoded value may inflate to (a small value cannot unpack into a huge one)."""
MAX_DEPTH = 12
"""Deepest nesting of lists and objects the JSON may have (a scenario needs 5)."""
_ALPHABET = re.compile(r"[A-Za-z0-9_-]*={0,2}")


class LinkError(ValueError):
    """A link value that cannot be used; the message names the parameter and says why."""


def encode(model: BaseModel) -> str:
    """The model as a compact URL-safe string (fields left at their defaults are left out)."""
    text = model.model_dump_json(exclude_defaults=True)
    packed = zlib.compress(text.encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def fits(encoded: str) -> bool:
    return len(encoded) <= MAX_CHARS


def decode(raw: str, kind: type[M], param: str, label: str) -> M:
    """The model a link value holds; :class:`LinkError` naming ``param`` (``label``) when it cannot be used."""
    where = f"URL parameter `{param}` ({label})"
    if len(raw) > MAX_CHARS:
        raise LinkError(f"{where}: {len(raw):,} characters; a link carries at most {MAX_CHARS:,}")
    if not _ALPHABET.fullmatch(raw):
        raise LinkError(f"{where}: not a value this app wrote (letters, digits, - and _ only)")
    try:
        packed = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        raise LinkError(f"{where}: not a value this app wrote (cut short?)") from None
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(packed, MAX_BYTES)
    except zlib.error:
        raise LinkError(f"{where}: not a value this app wrote (corrupt or cut short)") from None
    if inflate.unconsumed_tail:
        raise LinkError(f"{where}: unpacks to more than {MAX_BYTES:,} bytes")
    if not inflate.eof:
        raise LinkError(f"{where}: not a value this app wrote (cut short)")
    try:
        parsed = json.loads(data.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise LinkError(f"{where}: nested deeper than a scenario is") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise LinkError(f"{where}: not a value this app wrote ({_short(exc)})") from None
    if _depth(parsed) > MAX_DEPTH:
        raise LinkError(f"{where}: nested deeper than a scenario is")
    try:
        return kind.model_validate(parsed)
    except ValidationError as exc:
        lines = _words.invalid(exc, {"sc": "scenario", "ev": "evidence"}.get(param, param))
        more = f" (and {len(lines) - 3} more)" if len(lines) > 3 else ""
        raise LinkError(f"{where}: " + "; ".join(lines[:3]) + more) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of range")
    return value


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def _short(exc: BaseException) -> str:
    """Why the unpacked text is not JSON, in words (not the decoder's)."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {json_words(exc.msg)}"
    text = str(exc) or "not JSON"
    if text.startswith("Exceeds the limit"):  # Python's cap on the digits of an integer
        return "a number with too many digits"
    return text if len(text) <= 120 else text[:117] + "..."
