"""Writing several files of one folder all or nothing (``sheets refresh --write`` rewrites one sheet per provider).

Each file alone is written atomically by :func:`calculator.catalog.datafile.write_atomically`; a set is not:
with the disk full at the third sheet, two would be new and the rest old. So a set is written in three steps:

1. Stage: every new text goes to a fresh hidden file beside its target (``.NAME.staged-TOKEN``, which no
   ``*.yaml`` glob reads), flushed to disk. Any failure here (disk full, a read-only file or mount) removes
   the staged files: nothing was changed, and the error says so.
2. Commit: a journal (``.staged-write.json``) naming each target and its staged file is written atomically.
   Its existence is the commit point: from here on the set is finished, never undone.
3. Swap: each staged file is renamed over its target (the old one kept as a hard-linked backup until the
   end), then the journal and backups are removed. A rename that fails puts every backup back (the
   message says nothing was changed); a process killed here leaves the journal, and the next write to
   the folder (:func:`finish_interrupted`) finishes the set before doing anything else.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from calculator.catalog.datafile import DataFileError, check_writable

__all__ = ["JOURNAL", "finish_interrupted", "write_all"]

JOURNAL = ".staged-write.json"
"""The journal of a set being swapped in, in the set's folder."""


@dataclass(frozen=True)
class _Entry:
    target: Path
    staged: Path
    backup: Path


def _stage(path: Path, text: str, token: str) -> Path:
    """``text`` in a new file beside ``path``, with ``path``'s permissions, on disk."""
    staged = path.with_name(f".{path.name}.staged-{token}")
    mode = stat.S_IMODE(os.lstat(path).st_mode) if path.exists() else 0o666
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(staged, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise
    return staged


def _sync(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _write_journal(folder: Path, entries: Sequence[_Entry]) -> None:
    journal = folder / JOURNAL
    tmp = folder / f"{JOURNAL}.{secrets.token_hex(8)}.tmp"
    data = [{"target": e.target.name, "staged": e.staged.name, "backup": e.backup.name} for e in entries]
    with open(tmp, "x", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, journal)
    _sync(folder)


def finish_interrupted(folder: Path) -> list[Path]:
    """Finish a set whose swap was interrupted (its journal is still in ``folder``): the staged files still
    there are renamed over their targets. Returns the files finished ([] when nothing was pending)."""
    journal = folder / JOURNAL
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise DataFileError(
            [f"{journal}: an interrupted write's journal cannot be read ({exc}); check the folder's files by hand"]
        ) from None
    finished = []
    for item in data:
        target, staged, backup = (folder / Path(str(item[k])).name for k in ("target", "staged", "backup"))
        if staged.exists():
            os.replace(staged, target)
            finished.append(target)
        _remove(backup)
    _sync(folder)
    journal.unlink()
    return finished


def write_all(files: Sequence[tuple[Path, str]]) -> None:
    """Write every ``(path, text)`` or none (see the module docstring); all paths in one folder.

    A failure is a :class:`DataFileError` naming the file and saying that no file was changed.
    """
    if not files:
        return
    folder = files[0][0].parent
    if any(path.parent != folder for path, _ in files):
        raise ValueError("write_all writes the files of one folder")
    finish_interrupted(folder)
    token = secrets.token_hex(8)
    entries: list[_Entry] = []
    for path, text in files:  # 1. stage
        try:
            check_writable(path)
            staged = _stage(path, text, token)
        except OSError as exc:
            _remove(*(e.staged for e in entries))
            raise DataFileError(
                [f"{path}: cannot write: {exc.strerror or exc}; no file was changed (all {len(files)} or none)"]
            ) from None
        entries.append(_Entry(path, staged, path.with_name(f".{path.name}.backup-{token}")))
    try:  # 2. commit
        _write_journal(folder, entries)
    except OSError as exc:
        _remove(*(e.staged for e in entries), folder / JOURNAL)
        raise DataFileError(
            [f"{folder / JOURNAL}: cannot write: {exc.strerror or exc}; no file was changed (all {len(files)} or none)"]
        ) from None
    done: list[_Entry] = []
    try:  # 3. swap
        for entry in entries:
            if entry.target.exists():
                os.link(entry.target, entry.backup)
            os.replace(entry.staged, entry.target)
            done.append(entry)
    except BaseException as exc:
        failed = entry.target
        if not isinstance(exc, OSError):  # Ctrl-C: the set is committed, so it is finished before stopping
            finish_interrupted(folder)
            _remove(*(e.backup for e in entries))
            raise
        for entry in reversed(done):  # put the old files back, then forget the set
            if entry.backup.exists():
                os.replace(entry.backup, entry.target)
            else:
                _remove(entry.target)
        _remove(*(e.staged for e in entries), *(e.backup for e in entries), folder / JOURNAL)
        raise DataFileError(
            [f"{failed}: cannot write: {exc.strerror or exc}; no file was changed (all {len(files)} or none)"]
        ) from None
    _remove(*(e.backup for e in entries))
    _sync(folder)
    _remove(folder / JOURNAL)
