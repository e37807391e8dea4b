"""Where a prompt log comes from: one file, many files (a folder or a glob), local or in an object store,
as JSON Lines, a JSON array or Parquet, plain or compressed; read as a stream of records.

- :func:`open_log` resolves what the user gave (a path, a folder, a glob, an ``s3://`` or ``gs://`` URL,
  any of them a pattern) into a :class:`LogInput`: its parts (files), in name order. Logs are written one
  file per hour or day with the time in the name, so name order is time order; a part is read in its own
  order. The parts are listed so that work can be split by part (a shard is one or more whole parts).
- :func:`part_records` reads one part as ``(number, record)`` pairs: a line number (JSON Lines), the line
  an item starts on (a JSON array) or a row number (Parquet). The kind is told by the content, never by
  the name: Parquet by its magic bytes, gzip and zstd by theirs (:func:`calculator.catalog.textfile.unpacked`),
  a JSON array by its opening bracket; anything else is read as JSON Lines, and a first line that is not
  JSON says that JSON Lines or a JSON array is expected.
- Memory holds one line, one array item or one Parquet row group, whatever the size of the log.

Object stores go through fsspec (``s3fs`` for ``s3://``, ``gcsfs`` for ``gs://``): credentials come from
each store's standard chain (environment, config files, instance roles), never from the command line, and
are never printed: a URL with credentials in it is refused without echoing them, and a store's error is
shown as its kind, with the location stripped of any query string. An S3-compatible server elsewhere is
named the standard way (``AWS_ENDPOINT_URL``).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from calculator.catalog.datafile import DataFileError
from calculator.catalog.download import shown_url
from calculator.catalog.textfile import (
    READ_ERRORS,
    LineError,
    Malformed,
    TooLarge,
    check_readable,
    json_array_items,
    line_limit,
    open_binary,
    open_text,
    parse_json,
    raw_lines,
    read_error,
    text_lines,
)
from calculator.traffic.globs import folder_files, glob_files

__all__ = [
    "LOG_SUFFIXES",
    "SCHEMES",
    "Columns",
    "LogInput",
    "LogPart",
    "open_log",
    "part_records",
    "records",
    "shown_location",
]

LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".parquet", ".pq")
"""Files a folder's log is made of (each may end in .gz or .zst as well)."""
PACKED_SUFFIXES = (".gz", ".zst", ".zstd")
SCHEMES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "memory": "fsspec"}
"""URL schemes read through fsspec, and the package each needs."""
PARQUET_MAGIC = b"PAR1"
PARQUET_BATCH = 1024
"""Rows decoded at a time from a Parquet row group."""
JSON_LINES_EXPECTED = "a log is JSON Lines (one JSON object per line) or a JSON array of requests or conversations"
MESSAGE_COLUMNS = ("messages", "conversations", "conversation", "prompt", "text", "text_input")
"""Columns tried, in order, for a Parquet log's prompt when no column is named."""
TIMESTAMP_COLUMNS = ("timestamp", "created", "time", "request_time")
OUTPUT_COLUMNS = ("usage", "output_tokens", "output_length")
"""Kept from a Parquet row when present: the output tokens the request formats read."""
_SNIFF = 64 * 1024
_GLOB = re.compile(r"[*?\[]")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def shown_location(location: str) -> str:
    """A location as messages show it: by the one rule every command uses
    (:func:`calculator.catalog.download.shown_url`), so no message carries credentials (``user:secret@``) or
    a signed URL's signature."""
    return shown_url(location) if _URL.match(location) else location


def _scheme(location: str) -> str | None:
    match = _URL.match(location)
    return match.group(1).lower() if match else None


def _filesystem(location: str) -> tuple[Any, str]:
    """The fsspec file system of a URL and the path within it; a clear error for what cannot be read."""
    scheme = _scheme(location)
    shown = shown_location(location)
    if scheme not in SCHEMES and scheme != "file":
        allowed = ", ".join(f"{s}://" for s in SCHEMES if s != "memory")
        raise DataFileError([f"{shown}: {scheme}:// is not a place logs are read from; give a path, or {allowed}"])
    host = location[len(scheme) + 3 :].split("/", 1)[0]
    if "@" in host:
        raise DataFileError(
            [
                f"{shown}: credentials are not taken in a URL (they would show in the shell's history); "
                "leave them to the store's standard chain (environment, config file or instance role)"
            ]
        )
    try:
        import fsspec
    except ImportError:
        raise DataFileError([f"{shown}: reading {scheme}:// needs the fsspec package (pip install fsspec)"]) from None
    try:
        fs, path = fsspec.core.url_to_fs(location)
    except ImportError:
        need = SCHEMES.get(scheme, scheme)
        raise DataFileError([f"{shown}: reading {scheme}:// needs the {need} package (pip install {need})"]) from None
    except (ValueError, OSError) as exc:
        raise _store_error(shown, exc) from None
    return fs, path


def _store_error(shown: str, exc: BaseException) -> DataFileError:
    """A store's failure in words; its own text is left out, as it may quote a signed URL or a key."""
    if isinstance(exc, FileNotFoundError):
        return DataFileError([f"{shown}: no such file or folder"])
    if isinstance(exc, PermissionError):
        return DataFileError(
            [f"{shown}: access denied; check the credentials the store's standard chain gives (they are not shown)"]
        )
    if isinstance(exc, DataFileError):
        return exc
    if "Credentials" in type(exc).__name__:  # botocore's NoCredentialsError, google-auth's DefaultCredentialsError
        return DataFileError(
            [
                f"{shown}: no credentials found in the store's standard chain (S3: AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, ~/.aws/credentials or an instance role; Google Cloud: application "
                "default credentials)"
            ]
        )
    return DataFileError([f"{shown}: cannot read it ({type(exc).__name__})"])


@dataclass(frozen=True)
class LogPart:
    """One file of a log: a local path or a URL, reopened wherever it is read (a worker opens it itself)."""

    location: str
    name: str
    """As messages show it (no secret)."""

    @contextlib.contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        """The part's raw bytes (still compressed), seekable where the store allows it."""
        if _scheme(self.location) is None:
            local = Path(self.location)
            check_readable(local, self.name)
            try:
                handle = open_binary(local)
            except OSError as exc:
                raise read_error(self.name, exc) from None
            with handle:
                yield handle
            return
        fs, path = _filesystem(self.location)
        try:
            handle = fs.open(path, "rb")
        except Exception as exc:  # each store raises its own kinds; all are said the same way
            raise _store_error(self.name, exc) from None
        with handle:
            yield handle


@dataclass(frozen=True)
class LogInput:
    """What the user gave, resolved: its parts in name order."""

    spec: str
    name: str
    parts: tuple[LogPart, ...]


def _is_log(name: str) -> bool:
    lower = name.lower()
    for packed in PACKED_SUFFIXES:
        lower = lower.removesuffix(packed)
    return lower.endswith(LOG_SUFFIXES) and not name.rsplit("/", 1)[-1].startswith(".")


def _allowed_files() -> str:
    return f"{', '.join(LOG_SUFFIXES)} files (each may end in {', '.join(PACKED_SUFFIXES)})"


def _natural(name: str) -> list[Any]:
    """Sort key: numbers by value (part-2 before part-10), as logs split by number are meant to be read."""
    return [int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", name)]


def open_log(spec: str | Path) -> LogInput:
    """Resolve a path, folder, glob or URL into the files of one log (see the module docstring).

    A folder means the log files under it, at any depth (:data:`LOG_SUFFIXES`, hidden files left out); a
    glob (``*``, ``?``, ``[...]``; ``**`` for any depth) the files it matches. Nothing found, an unknown
    URL scheme, a missing package or a store's refusal is a :class:`DataFileError` naming the place.
    """
    text = str(spec)
    shown = shown_location(text)
    if not text.strip():
        raise DataFileError(["the log: no path given; give a file, a folder, a glob or an s3:// or gs:// URL"])
    if _scheme(text) is None:
        return _local(text)
    fs, path = _filesystem(text)
    protocol = fs.protocol[0] if isinstance(fs.protocol, tuple | list) else fs.protocol
    scheme = _scheme(text) or protocol
    try:
        if _GLOB.search(path):
            found = [p for p in fs.glob(path) if not fs.isdir(p)]
            what = "matches the pattern"
        elif fs.isdir(path):
            found = [p for p in fs.find(path) if _is_log(p)]
            what = f"is in the folder ({_allowed_files()})"
        elif fs.exists(path):
            found = [path]
            what = ""
        else:
            raise FileNotFoundError(path)
    except DataFileError:
        raise
    except Exception as exc:  # a store's own errors (credentials, network) are said by their kind
        raise _store_error(shown, exc) from None
    if not found:
        raise DataFileError([f"{shown}: no file {what}"])
    located = [fs.unstrip_protocol(p) for p in sorted(found, key=_natural)]
    if scheme != protocol:  # as the user wrote it (gs://, s3a://), which names the same store
        located = [f"{scheme}://{p.split('://', 1)[1]}" for p in located]
    return LogInput(text, shown, tuple(LogPart(p, shown_location(p)) for p in located))


def _local(text: str) -> LogInput:
    path = Path(text).expanduser()
    try:
        exists, folder = path.exists(), path.is_dir()
    except OSError as exc:  # a name longer than the file system takes
        raise DataFileError([f"{text}: cannot read file: {exc.strerror or exc}"]) from None
    if _GLOB.search(text) and not exists:
        try:
            files = glob_files(text)  # each real folder once: planted links to '..' cannot make it walk for ever
        except (ValueError, OSError, re.error) as exc:  # a pattern that cannot be read
            raise DataFileError([f"{text}: not a pattern that can be read ({exc})"]) from None
        if not files:
            raise DataFileError(
                [f"{text}: no file matches the pattern (* any name, ? one character, [ab] a set, ** any folders)"]
            )
        return LogInput(text, text, tuple(LogPart(f, f) for f in sorted(files, key=_natural)))
    if folder:
        try:
            files = folder_files(path, _is_log, text)
        except OSError as exc:
            raise DataFileError([f"{text}: cannot read the folder: {exc.strerror or exc}"]) from None
        if not files:
            raise DataFileError([f"{text}: a folder with no log in it; it may hold {_allowed_files()}"])
        return LogInput(text, text, tuple(LogPart(f, f) for f in sorted(files, key=_natural)))
    check_readable(path, text)
    return LogInput(text, text, (LogPart(text, text),))


# --- reading a part ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """Which Parquet columns hold a request's prompt and its time (None: the usual names, tried in order)."""

    messages: str | None = None
    timestamp: str | None = None


class _Prefixed:
    """A text stream with the text already read to sniff it put back in front."""

    def __init__(self, head: str, fh: IO[str]) -> None:
        self.head, self.fh = head, fh

    def read(self, size: int = -1) -> str:
        if self.head:
            if size < 0:
                out, self.head = self.head + self.fh.read(), ""
                return out
            out, self.head = self.head[:size], self.head[size:]
            return out
        return self.fh.read(size)

    def readline(self, size: int = -1) -> str:
        if self.head:
            cut = self.head.find("\n")
            end = len(self.head) if cut < 0 else cut + 1
            if size >= 0:
                end = min(end, size)
            out, self.head = self.head[:end], self.head[end:]
            if out.endswith("\n") or (size >= 0 and len(out) >= size):
                return out
            return out + self.fh.readline(-1 if size < 0 else size - len(out))
        return self.fh.readline(size)


def _json_lines(fh: Any, name: str, malformed: Malformed, max_chars: int | None) -> Iterator[tuple[int, Any]]:
    """JSON Lines, as :func:`calculator.catalog.textfile.json_lines`, but a first line that is not JSON says
    what a log must be (a pretty-printed JSON object, a CSV, a YAML file land here)."""
    first = True
    for number, line in raw_lines(fh, name, max_chars):
        text = line.rstrip("\r\n")
        if first:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            continue
        try:
            value = parse_json(text)
        except LineError as exc:
            message = str(exc)
            if first and message.startswith("not valid JSON"):
                message += f"; {JSON_LINES_EXPECTED}"
            malformed.add(number, message)
            first = False
            continue
        first = False
        yield number, value


def _text_records(raw: IO[bytes], name: str, malformed: Malformed, max_chars: int | None) -> Iterator[tuple[int, Any]]:
    with open_text(raw, name) as fh:
        head = ""
        while len(head) < _SNIFF:  # the first character that is not whitespace (blank lines are JSON Lines')
            chunk = fh.read(4096)
            head += chunk
            stripped = head.lstrip(" \t\r\n\ufeff")
            if stripped or not chunk:
                break
        stream = _Prefixed(head, fh)
        if stripped.startswith("["):
            yield from json_array_items(cast(IO[str], stream), name, max_chars)
        else:
            yield from _json_lines(stream, name, malformed, max_chars)


def _plain(value: Any) -> Any:
    """A Parquet value as JSON would hold it: times as ISO 8601 text, bytes as text."""
    import datetime as dt

    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _prompt_record(value: Any) -> dict[str, Any]:
    """A Parquet prompt cell as a request record: chat messages, a ShareGPT conversation or a prompt."""
    if isinstance(value, str) and value.lstrip().startswith(("[", "{")):
        with contextlib.suppress(LineError):
            value = parse_json(value)  # messages stored as JSON text
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and value and isinstance(value[0], dict) and "from" in value[0]:
        return {"conversations": value}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return {"messages": value}
    return {"prompt": value}  # a text column too: its times are the table's own (seconds or a time type)


def _parquet_records(raw: IO[bytes], name: str, columns: Columns, max_chars: int | None) -> Iterator[tuple[int, Any]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataFileError([f"{name}: a Parquet file; reading it needs the pyarrow package"]) from None
    try:
        table = pq.ParquetFile(raw)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataFileError(
            [f"{name}: a Parquet file that cannot be read ({str(exc).splitlines()[0][:200]}); is it complete?"]
        ) from None
    have = list(table.schema_arrow.names)

    def pick(given: str | None, usual: tuple[str, ...], flag: str, required: bool) -> str | None:
        if given is not None:
            if given not in have:
                raise DataFileError(
                    [f"{name}: no column {given!r} ({flag}); its columns are: {', '.join(have) or 'none'}"]
                )
            return given
        found = next((c for c in usual if c in have), None)
        if found is None and required:
            raise DataFileError(
                [
                    f"{name}: no prompt column; name it with {flag} (tried {', '.join(usual)}); "
                    f"its columns are: {', '.join(have) or 'none'}"
                ]
            )
        return found

    message = pick(columns.messages, MESSAGE_COLUMNS, "--messages-column", True)
    assert message is not None
    stamp = pick(columns.timestamp, TIMESTAMP_COLUMNS, "--timestamp-column", False)
    extra = [c for c in OUTPUT_COLUMNS if c in have and c not in (message, stamp)]
    wanted = [message, *([stamp] if stamp else []), *extra]
    budget = _parquet_budget(table, name, wanted, max_chars)
    text_columns = [c for c in wanted if _is_text(table.schema_arrow.field(c).type)]
    if text_columns:  # read as dictionaries: a repeated value stays one value (see _Rows), however often used
        table = pq.ParquetFile(raw, read_dictionary=text_columns)
    rows = _Rows(name, budget, max_chars is not None)
    number = 0
    try:
        for batch in table.iter_batches(batch_size=_batch_rows(table, wanted), columns=wanted):
            for row in rows.of(batch, number):
                number += 1
                record = _prompt_record(_plain(row[message]))
                if stamp is not None and row.get(stamp) is not None:
                    record = {**record, "timestamp": _plain(row[stamp])}
                for column in extra:
                    if row.get(column) is not None:
                        record = {**record, column: _plain(row[column])}
                yield number, record
    except (pa.ArrowException, OSError) as exc:
        raise DataFileError(
            [f"{name}: row {number + 1}: the Parquet data cannot be read ({str(exc).splitlines()[0][:200]})"]
        ) from None
    except MemoryError:
        raise DataFileError([f"{name}: row {number + 1}: the Parquet data does not fit in memory"]) from None


PARQUET_EXPANSION = 1000
"""How many times its size in the file a Parquet log may decode to on the command line (and at least
:data:`PARQUET_FLOOR` characters): text compresses 5-20x, dictionary encoding of repeated prompts some
more; a dictionary page of one long value repeated over every row (a 7 KB file of gigabytes) far more."""
PARQUET_FLOOR = 1024**3
PARQUET_BATCH_BYTES = 64 * 1024**2
"""Decoded bytes a batch of rows may hold, as the file's metadata sizes them: rows are decoded this much
at a time, so a row group of large values is not expanded at once."""


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind))


def _parquet_budget(table: Any, name: str, wanted: list[str], max_chars: int | None) -> int:
    """The characters the part may decode to, checked against its metadata before any page is decoded:
    with ``max_chars`` (the app) the rows are at most :func:`line_limit` and the stated sizes of the
    wanted columns at most ``max_chars``; the command line allows :data:`PARQUET_EXPANSION` times the
    file's size."""
    meta = table.metadata
    if max_chars is None:
        compressed = sum(
            meta.row_group(g).column(c).total_compressed_size
            for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)
        )
        return int(max(PARQUET_FLOOR, PARQUET_EXPANSION * compressed))
    rows_allowed = line_limit(max_chars)
    assert rows_allowed is not None
    if meta.num_rows > rows_allowed:
        raise TooLarge(name, rows_allowed, "rows")
    paths = set(wanted)
    stated = sum(
        meta.row_group(g).column(c).total_uncompressed_size
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
        if meta.row_group(g).column(c).path_in_schema.split(".", 1)[0] in paths
    )
    if stated > max_chars:
        raise TooLarge(name, max_chars)
    return max_chars


def _batch_rows(table: Any, wanted: list[str]) -> int:
    """Rows decoded at a time: :data:`PARQUET_BATCH`, fewer when a column chunk is so large (as its
    metadata states) that that many of its values could pass :data:`PARQUET_BATCH_BYTES`."""
    meta = table.metadata
    paths = set(wanted)
    largest = max(
        (
            meta.row_group(g).column(c).total_uncompressed_size
            for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)
            if meta.row_group(g).column(c).path_in_schema.split(".", 1)[0] in paths
        ),
        default=0,
    )
    return max(1, min(PARQUET_BATCH, PARQUET_BATCH_BYTES // max(1, largest)))


def _text_size(value: Any) -> int:
    """Characters of text in a nested value (its strings and bytes, at any depth), walked without recursion."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return total


class _Rows:
    """A batch's rows as dicts, each counted against the part's budget as it is made.

    A dictionary-encoded text column is turned into Python values once per dictionary (a row holds a
    reference to its value, never a copy), so a value repeated over a million rows costs one value, and
    the characters each row stands for are counted: the budget stops a bomb at its limit without its
    text ever being held more than once. A time no ``datetime`` can hold is an error naming the row."""

    def __init__(self, name: str, budget: int, capped: bool) -> None:
        self.name, self.budget, self.used, self.capped = name, budget, 0, capped
        self.dictionaries: dict[str, tuple[Any, list[Any], list[int]]] = {}

    def _column(self, name: str, column: Any) -> tuple[list[Any], list[int] | None]:
        import pyarrow as pa

        if not pa.types.is_dictionary(column.type):
            values = column.to_pylist()
            if pa.types.is_nested(column.type):  # its strings may be a dictionary's, repeated: count them
                return values, [_text_size(v) for v in values]
            return values, None
        dictionary = column.dictionary
        known = self.dictionaries.get(name)
        if known is None or not known[0].equals(dictionary):
            values = dictionary.to_pylist()
            sizes = [len(v) if isinstance(v, str | bytes) else 0 for v in values]
            self.dictionaries[name] = known = (dictionary, values, sizes)
        _, values, sizes = known
        indices = column.indices.to_pylist()
        return [None if i is None else values[i] for i in indices], [0 if i is None else sizes[i] for i in indices]

    def of(self, batch: Any, before: int) -> Iterator[dict[str, Any]]:
        columns: dict[str, list[Any]] = {}
        sizes: list[int] = [0] * batch.num_rows
        plain = 0
        try:
            for name, column in zip(batch.schema.names, batch.columns, strict=True):
                values, counted = self._column(name, column)
                columns[name] = values
                if counted is None:
                    plain += column.nbytes
                else:
                    sizes = [a + b for a, b in zip(sizes, counted, strict=True)]
        except (ValueError, OverflowError) as exc:  # a time past year 9999 (or before year 1)
            raise DataFileError(
                [
                    f"{self.name}: rows {before + 1} to {before + batch.num_rows}: a value out of range ({exc}); "
                    "times are read from the year 1 to 9999"
                ]
            ) from None
        share = plain // max(1, batch.num_rows)
        for i in range(batch.num_rows):
            self.used += sizes[i] + share
            if self.used > self.budget:
                if self.capped:
                    raise TooLarge(self.name, self.budget)
                raise DataFileError(
                    [
                        f"{self.name}: row {before + i + 1}: decodes to more than {self.budget:,} characters, "
                        f"{PARQUET_EXPANSION:,} times its compressed size (at least {PARQUET_FLOOR:,}): "
                        "a Parquet file packed this tightly is not a log"
                    ]
                )
            yield {name: values[i] for name, values in columns.items()}


def _handle_records(
    raw: IO[bytes], name: str, malformed: Malformed, max_chars: int | None, columns: Columns
) -> Iterator[tuple[int, Any]]:
    buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(cast(Any, raw))
    try:
        head = buffered.peek(4)[:4]
    except READ_ERRORS as exc:
        raise read_error(name, exc) from None
    if head == PARQUET_MAGIC:
        if not buffered.seekable():
            raise DataFileError([f"{name}: a Parquet file must be read from a file, not a pipe"])
        yield from _parquet_records(buffered, name, columns, max_chars)
        return
    yield from _text_records(buffered, name, malformed, max_chars)


def part_records(
    part: LogPart,
    malformed: Malformed,
    max_chars: int | None = None,
    columns: Columns = Columns(),
) -> Iterator[tuple[int, Any]]:
    """(number, record) of one part, as the module docstring says; problems of single lines go to
    ``malformed``, a broken file is a :class:`DataFileError` naming the part."""
    with part.open() as raw:
        yield from _handle_records(raw, part.name, malformed, max_chars, columns)


def records(
    source: Any,
    name: str,
    malformed: Malformed,
    max_chars: int | None = None,
    columns: Columns = Columns(),
) -> Iterator[tuple[str, int, Any]]:
    """(part name, number, record) of every part of ``source`` in order: a :class:`LogInput`, a
    :class:`LogPart`, a path, glob or URL (:func:`open_log`), a binary handle (an upload) or lines already
    split. ``malformed`` names each line by its part. ``max_chars`` caps each part, unpacked."""
    if isinstance(source, LogInput | LogPart | Path | str):
        if isinstance(source, LogInput):
            parts = source.parts
        elif isinstance(source, LogPart):
            parts = (source,)
        else:
            parts = open_log(source).parts
        for part in parts:
            malformed.name = part.name
            for number, record in part_records(part, malformed, max_chars, columns):
                yield part.name, number, record
        return
    if hasattr(source, "read"):
        for number, record in _handle_records(cast(IO[bytes], source), name, malformed, max_chars, columns):
            yield name, number, record
        return
    for number, line in text_lines(cast(Iterable[Any], source), name, max_chars):
        if not line.strip():
            continue
        try:
            yield name, number, parse_json(line)
        except LineError as exc:
            malformed.add(number, str(exc))
