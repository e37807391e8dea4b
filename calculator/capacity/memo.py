"""Remembering a pure sizing step for the catalogue objects it was given, by their identity.

A sweep sizes the same record, GPU and model twenty times over with only the prefix share or hit rate
changed, and the roofline of a replica (its memory fit, prefill and decode speeds) reads none of those:
worked out once per point it was a tenth of a Compare rerun. The catalogue objects are frozen, so one
object always gives the same answer; keying on identity skips hashing every field of a record, and the
entry holds its arguments so that no identity is reused while its answer is kept.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel

__all__ = ["by_identity"]

P = ParamSpec("P")
R = TypeVar("R")


def _key(value: Any) -> Any:
    return (_BY_ID, id(value)) if isinstance(value, BaseModel) else value


_BY_ID = object()
"""Marks an identity in a key, so that no plain number given as an argument can stand for one."""
_BY_NAME = object()
"""Marks where the named arguments start in a key."""


def by_identity(maxsize: int = 256) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Keep the latest ``maxsize`` answers of a pure function of frozen models and plain values; an exception
    is not kept (it is raised again on the next call)."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        kept: OrderedDict[Any, tuple[Any, R]] = OrderedDict()
        lock = threading.Lock()

        @functools.wraps(fn)
        def remembered(*args: P.args, **kwargs: P.kwargs) -> R:
            key = tuple([_key(a) for a in args])
            if kwargs:
                key += (_BY_NAME, *[(k, _key(v)) for k, v in sorted(kwargs.items())])
            with lock:
                hit = kept.get(key)
                if hit is not None:
                    kept.move_to_end(key)
                    return hit[1]
            value = fn(*args, **kwargs)
            with lock:
                kept[key] = ((args, kwargs), value)
                while len(kept) > maxsize:
                    kept.popitem(last=False)
            return value

        return remembered

    return decorate
