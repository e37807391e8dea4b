"""An upload as a file, for core readers that take a path: a copy in a private temporary folder of its own.

The folder is new for each upload (``tempfile``: a unique name, readable by this user only) and removed
with the copy when the reading is done, whatever happened. The copy's name is made here: the upload's
name only lends it a readable stem (letters, digits, ``-`` and ``_``) and one of the suffixes the reader
expects, so whatever a browser sends as the name, the file stays in that folder.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from calculator.catalog.textfile import APP_MAX_CHARS, UPLOAD_MAX_CHARS, unpacked_bytes

MAX_MB = 5
"""Largest upload in MB for result files and scenarios (a tokenizer.json and a request log may be larger)."""
LOG_MAX_MB = APP_MAX_CHARS // 1_000_000
"""Largest request log uploaded for prefix analysis, in MB: the app analyses up to 1 GB of text (unpacked;
the one size rule, :data:`calculator.catalog.textfile.APP_MAX_CHARS`), and past that shows the command,
which streams any size. ``server.maxUploadSize`` in .streamlit/config.toml is at least this."""
STEM_CHARS = 64
COMPRESSED = ("gz", "zst", "zstd")
"""Suffixes of the compressed streams every reader unpacks (gzip, zstd), as on the command line."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def safe_name(name: str, suffixes: Sequence[str]) -> str:
    """A file name for an upload called ``name``: the first of ``suffixes`` it ends with (else the first of
    them), after at most :data:`STEM_CHARS` safe characters of the rest (``upload`` when none are left)."""
    lower = name.lower()
    suffix = next((s for s in suffixes if lower.endswith(s.lower())), suffixes[0])
    stem = name[: len(name) - len(suffix)] if lower.endswith(suffix.lower()) else name
    stem = _UNSAFE.sub("-", stem.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]).strip("-_")[:STEM_CHARS]
    return f"{stem or 'upload'}{suffix}"


@contextlib.contextmanager
def upload_copy(data: bytes, name: str, suffixes: Sequence[str]) -> Iterator[Path]:
    """The upload's bytes as a file (see :func:`safe_name`) in a new private folder, removed on leaving."""
    with tempfile.TemporaryDirectory(prefix="calculator-upload-") as folder:
        path = Path(folder) / safe_name(name, suffixes)
        with path.open("xb") as handle:  # a new file in a folder nobody else can write to
            handle.write(data)
        yield path


SHOWN_CHARS = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def shown_name(name: str) -> str:
    """The upload's name as its user knows it, for messages, labels and a core reader's ``name``: the browser's
    name without a folder or control characters, at most :data:`SHOWN_CHARS` (the end kept: it holds the
    suffix that tells the format). Never a path on this server."""
    base = _CONTROL.sub(" ", name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]).strip()
    if len(base) > SHOWN_CHARS:
        base = "..." + base[-(SHOWN_CHARS - 3) :]
    return base or "the uploaded file"


def _taken(name: str, types: Sequence[str]) -> bool:
    lower = name.lower()
    return any(lower.endswith(f".{t}") for t in (*types, *COMPRESSED))


def _refusal(label: str, name: str, types: Sequence[str]) -> str:
    plain = ", ".join(f".{t}" for t in types)
    return f"{shown_name(name)}: only {plain} files are read here, plain or compressed (.gz, .zst); pick another file"


def uploader(label: str, types: Sequence[str], **kwargs: Any) -> Any:
    """``st.file_uploader`` taking ``types`` plain or compressed (:data:`COMPRESSED`), as the command line
    reads them. A file of another kind (a client that skips the browser's filter can send one) is left out
    with a sentence naming what is read: the MIME type in the list tells Streamlit to leave the check to
    the browser and to this page, instead of raising its own exception before the page runs."""
    files = st.file_uploader(label, type=[*types, *COMPRESSED, "application/gzip"], **kwargs)
    many = bool(kwargs.get("accept_multiple_files"))
    items = list(files or []) if many else ([files] if files is not None else [])
    for item in items:
        if not _taken(item.name, types):
            st.error(_refusal(label, item.name, types))
    kept = [item for item in items if _taken(item.name, types)]
    return kept if many else (kept[0] if kept else None)


def uploaded(state: Any, key: str, types: Sequence[str]) -> Any:
    """The one file a keyed :func:`uploader` holds, for code that reads it from the session state (an
    on-change callback runs before the uploader): None when there is none or it is of another kind."""
    item = state.get(key)
    return item if item is not None and _taken(item.name, types) else None


def refusal(state: Any, key: str, label: str, types: Sequence[str]) -> str | None:
    """Why the file a keyed :func:`uploader` holds is not read (of another kind), or None."""
    item = state.get(key)
    return None if item is None or _taken(item.name, types) else _refusal(label, item.name, types)


def unpacked_upload(data: bytes, name: str) -> bytes:
    """An upload's bytes as its reader takes them: unpacked when gzip or zstd, at most
    :data:`~calculator.catalog.textfile.UPLOAD_MAX_CHARS`."""
    return unpacked_bytes(data, shown_name(name), UPLOAD_MAX_CHARS)
