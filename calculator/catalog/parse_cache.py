"""A per-user cache of the bundled catalogues' parsed YAML, so a command starts without parsing them again.

Parsing the bundled price sheets, GPU and model specs and measurements with PyYAML took about 50 ms of a
command's start (libyaml parses, but PyYAML builds every value in Python); reading the same data back as
JSON takes a few. Only the parse is cached: what comes back is the plain data (mappings, lists, text,
numbers, dates) the loader gave, and every command still validates it with the catalogue's pydantic
model, as it validates a freshly parsed file.

An entry is used only when all of these hold; otherwise the file is parsed as before, silently:

- it holds the exact text of the file being read, so any edit (or another checkout's file) misses;
- it was written by the same PyYAML version, cache format and loader source (their files' size and
  modification time), so a change in how YAML is read never serves data read the old way;
- it sits in a folder owned by this user that no one else can write to, is a regular file (never a
  link) owned by this user and writable by no one else: another user's file is never read;
- it is JSON, which reading cannot turn into code (no pickle), and decodes without error.

The folder is ``$INFERENCE_CALC_CACHE_DIR`` when set (an empty value turns the cache off), else
``$XDG_CACHE_HOME/inference-calc`` or ``~/.cache/inference-calc``. One entry per bundled file, replaced
when the file changes. Any failure to read or write an entry is ignored: the cache can only save time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

__all__ = ["CACHE_ENV", "cache_dir", "cached", "store"]

CACHE_ENV = "INFERENCE_CALC_CACHE_DIR"
_FORMAT = 1
"""Raise when what an entry holds, or how the data in it is written, changes."""
_DATE, _DATETIME = "\x00date", "\x00datetime"
"""Keys of the one-key objects standing for a date or a timestamp (JSON has neither); a mapping read
from YAML with a key starting with NUL is not cached, so the two can never be confused."""
_LOADERS = ("datafile.py", "parse_cache.py")
"""The modules whose code decides what a parse gives: a change to either invalidates every entry."""


class _Unsupported(Exception):
    """A value JSON cannot carry exactly (binary, a set, a non-text key): that file is not cached."""


def cache_dir() -> str | None:
    """The cache folder this process uses, or None when the cache is off (plain strings: this runs for every
    file a command reads, and building a ``Path`` cost more than the rest of a lookup)."""
    if not hasattr(os, "getuid") or not hasattr(os, "O_NOFOLLOW"):
        return None  # the ownership checks below need a POSIX system
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return chosen if chosen.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None  # no home folder (a service without one): never a folder relative to where it runs
        base = os.path.join(home, ".cache")
    return os.path.join(base, "inference-calc")


@functools.cache  # once per process: the loaders' files do not change under a running command
def _stamp() -> list[Any]:
    """What an entry must have been written by (a list, as JSON gives it back); never modified."""
    here = Path(__file__).resolve().parent
    files = [os.stat(here / name) for name in _LOADERS]
    return [_FORMAT, yaml.__version__, [[f.st_size, f.st_mtime_ns] for f in files]]


def _entry_name(path: Path) -> str:
    return hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json"


def _private(fd: int) -> bool:
    """Whether an open file or folder is this user's and no one else may write to it."""
    found = os.fstat(fd)
    return found.st_uid == os.getuid() and not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _open_folder(folder: str, create: bool) -> int | None:
    """A descriptor of the cache folder, or None when it is missing or not private (never a link)."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.makedirs(os.path.dirname(folder) or ".", exist_ok=True)
            os.mkdir(folder, 0o700)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    if stat.S_ISDIR(os.fstat(fd).st_mode) and _private(fd):
        return fd
    os.close(fd)
    return None


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) and not k.startswith("\x00") for k in value):
            raise _Unsupported
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, dt.datetime):  # before date: a datetime is a date
        return {_DATETIME: value.isoformat()}
    if isinstance(value, dt.date):
        return {_DATE: value.isoformat()}
    raise _Unsupported


def _decode_object(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if _DATE in obj:
            return dt.date.fromisoformat(obj[_DATE])
        if _DATETIME in obj:
            return dt.datetime.fromisoformat(obj[_DATETIME])
    return obj


def cached(path: Path, text: str) -> tuple[bool, Any]:
    """``(True, data)`` when a valid entry for ``path`` holds exactly ``text``; ``(False, None)`` otherwise."""
    try:
        folder = cache_dir()
        if folder is None:
            return False, None
        dir_fd = _open_folder(folder, create=False)
        if dir_fd is None:
            return False, None
        try:
            fd = os.open(_entry_name(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as fh:
            if not (stat.S_ISREG(os.fstat(fh.fileno()).st_mode) and _private(fh.fileno())):
                return False, None
            entry = json.loads(fh.read(), object_hook=_decode_object)
        if entry["stamp"] == _stamp() and entry["text"] == text:
            return True, entry["data"]
    except Exception:  # a missing, unreadable or broken entry is a miss, never an error
        pass
    return False, None


def store(path: Path, text: str, data: Any) -> None:
    """Keep ``data``, parsed from ``text``, as ``path``'s entry; silently nothing when it cannot be kept."""
    try:
        folder = cache_dir()
        if folder is None:
            return
        payload = json.dumps(
            {"stamp": _stamp(), "text": text, "data": _encode(data)}, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8", "surrogateescape")
        dir_fd = _open_folder(folder, create=True)
        if dir_fd is None:
            return
        try:
            name = _entry_name(path)
            tmp = f".{name}.{os.getpid()}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(payload)
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # readers see all of it or none
            except BaseException:
                os.unlink(tmp, dir_fd=dir_fd)
                raise
        finally:
            os.close(dir_fd)
    except Exception:  # a read-only or full disk, a foreign folder: the next run parses again
        pass
