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

from calculator.catalog.textfile import APP_MAX_CHARS

MAX_MB = 5
"""Largest upload in MB for result files and scenarios (a tokenizer.json and a request log may be larger)."""
LOG_MAX_MB = APP_MAX_CHARS // 1_000_000
"""Largest request log uploaded for prefix analysis, in MB: the app analyses up to 1 GB of text (unpacked;
the one size rule, :data:`calculator.catalog.textfile.APP_MAX_CHARS`), and past that shows the command,
which streams any size. ``server.maxUploadSize`` in .streamlit/config.toml is at least this."""
STEM_CHARS = 64
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
