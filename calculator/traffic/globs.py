"""The files a local glob or folder names, found by a walk that visits each real folder once.

Python's ``glob`` follows links to folders at every ``**`` level, so six planted ``..`` links make
``logs/**/*.jsonl`` walk for ever (the walk grows exponentially with the depth the links allow). Here a
folder reached again through a link, by its device and inode, is not walked again, and the walk stops at
:data:`MAX_LOG_FILES` files (and as many folders): a log written one file an hour for ten years is 87,600.

The pattern language is the glob module's: ``*`` any part of a name, ``?`` one character, ``[ab]`` a
set (``[!ab]`` its complement), ``**`` as a whole component any depth of folders; a wildcard never
matches a name starting with ``.`` (hidden files and folders are left out unless named).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from calculator.catalog.datafile import DataFileError

__all__ = ["MAX_LOG_FILES", "folder_files", "glob_files", "pattern_regex"]

MAX_LOG_FILES = 100_000
"""Most files one log may be made of (and folders walked to find them)."""

_WILDCARD = re.compile(r"[*?\[]")


def _component(part: str) -> str:
    """One path component of a glob as a regular expression that never crosses a ``/``."""
    out = [r"(?!\.)" if part[:1] in ("*", "?", "[") else ""]
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = part[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append(f"[{'^' if negate else ''}{body.replace(chr(92), chr(92) * 2).replace('^', chr(92) + '^')}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def pattern_regex(parts: list[str]) -> re.Pattern[str]:
    """The components of a glob (below its fixed root) as one expression over ``/``-joined relative paths."""
    pieces: list[str] = []
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            pieces.append(r"(?:(?!\.)[^/]+/)*(?!\.)[^/]+" if last else r"(?:(?!\.)[^/]+/)*")
        else:
            pieces.append(_component(part) + ("" if last else "/"))
    return re.compile("".join(pieces) + r"\Z", re.DOTALL)


def _walk(root: Path, shown: str, keep: Callable[[str], bool], descend: Callable[[str], bool]) -> Iterator[str]:
    """Relative paths (``/``-joined) of the files under ``root`` that ``keep`` accepts, each real folder once;
    ``descend`` says whether a folder's relative path can lead to a match."""
    seen: set[tuple[int, int]] = set()
    folders = 0
    found = 0
    stack = [""]
    while stack:
        relative = stack.pop()
        folder = root / relative if relative else root
        try:
            info = folder.stat()
        except OSError:
            continue  # a dangling link, or a folder that went away
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        folders += 1
        if folders > MAX_LOG_FILES:
            raise DataFileError([f"{shown}: more than {MAX_LOG_FILES:,} folders to look through; name fewer"])
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            if not relative:
                raise DataFileError([f"{shown}: cannot read the folder: {exc.strerror or exc}"]) from None
            continue
        for entry in entries:
            name = f"{relative}/{entry.name}" if relative else entry.name
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir:
                if descend(name):
                    stack.append(name)
            elif is_file and keep(name):
                found += 1
                if found > MAX_LOG_FILES:
                    raise DataFileError(
                        [f"{shown}: more than {MAX_LOG_FILES:,} files; a log is read from at most that many"]
                    )
                yield name


def _fixed_root(text: str) -> tuple[str, list[str]]:
    """The part of a glob before its first wildcard component (as written), and the components after it."""
    parts = text.split("/")
    for k, part in enumerate(parts):
        if _WILDCARD.search(part):
            root = "/".join(parts[:k]) or ("/" if text.startswith("/") else "")
            return root, [p for p in parts[k:] if p]
    return text, []


def glob_files(text: str) -> list[str]:
    """The files the glob ``text`` matches (not folders), in walk order; [] when none (or no root)."""
    root, parts = _fixed_root(os.path.expanduser(text))
    folder = Path(root or ".")
    if not parts or not folder.is_dir():
        return []
    regex = pattern_regex(parts)
    deep = "**" in parts
    depth = len(parts) - 1

    def descend(relative: str) -> bool:
        return deep or relative.count("/") < depth

    prefix = root if not root or root.endswith("/") else root + "/"
    return [prefix + name for name in _walk(folder, text, lambda name: regex.match(name) is not None, descend)]


def folder_files(folder: Path, keep: Callable[[str], bool], shown: str) -> list[str]:
    """The files under ``folder``, at any depth and each real folder once, whose name ``keep`` accepts;
    hidden files and folders are left out."""
    return [
        str(folder / name)
        for name in _walk(
            folder,
            shown,
            lambda name: keep(name.rsplit("/", 1)[-1]) and not name.rsplit("/", 1)[-1].startswith("."),
            lambda name: not name.rsplit("/", 1)[-1].startswith("."),
        )
    ]
