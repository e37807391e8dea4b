"""Reading the files users bring (request logs, traces, benchmark results) so that no content can crash
a command or keep it running without end.

Every command that reads the same kind of file reads it the same way, through this module:

- A path must name a regular file or a pipe: a device (``/dev/zero``, ``/dev/urandom``) never ends, and
  a folder is not a file; both are refused by name.
- Compression is recognised by its first bytes, whatever the file is called: gzip, and zstd (with the
  optional ``zstandard`` package). A truncated or corrupt stream is one error naming the file: a log cut
  short would give numbers for part of it without saying so. A zip archive is refused by name (it is a
  folder of files, not a compressed stream).
- Text is UTF-8. Lines end at ``\\n``, ``\\r\\n`` or ``\\r``, and the last line needs no line break. A line
  longer than :data:`MAX_LINE_CHARS` ends the read: a file without line breaks is not one record a line.
- JSON is read with two limits a real file never reaches and a hostile one cannot pass: nesting at most
  :data:`MAX_JSON_DEPTH` deep, integers at most :data:`MAX_INT_DIGITS` digits (larger ones overflow
  floats later). In a log (JSON Lines), a line that is not UTF-8, not JSON or beyond a limit is
  malformed: skipped, counted, and the first :data:`MAX_REPORTED` named ``file:line: what is wrong``.
- A benchmark result is read as a stream (:func:`json_documents`): per-request detail arrays are passed
  over without being decoded, so memory stays bounded whatever the file's size.
- ``max_chars`` caps how much text is read, counted unpacked (the app passes :data:`APP_MAX_CHARS`);
  the command line streams with no cap.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, AnyStr, cast

from calculator.catalog.datafile import DataFileError
from calculator.errors import CalculatorError

__all__ = [
    "APP_MAX_CHARS",
    "COMPRESSIONS",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "MAX_LINE_CHARS",
    "MAX_REPORTED",
    "MIN_LINE_CHARS",
    "UPLOAD_MAX_CHARS",
    "JsonDocument",
    "LineError",
    "Malformed",
    "Source",
    "TooLarge",
    "check_readable",
    "check_regular",
    "open_binary",
    "compression",
    "is_utf8",
    "json_documents",
    "json_lines",
    "json_values",
    "json_words",
    "line_limit",
    "open_text",
    "parse_json",
    "raw_lines",
    "read_error",
    "read_text",
    "text_lines",
    "unpacked",
    "unpacked_bytes",
    "unpacked_length",
]

MAX_LINE_CHARS = 64 * 1024 * 1024
"""Longest line of a log: a request body with a long context and inline images stays far below."""
MAX_JSON_DEPTH = 100
"""Deepest nesting of JSON arrays and objects: requests and benchmark results nest a dozen levels."""
MAX_INT_DIGITS = 20
"""Longest integer in JSON: a 64-bit hash id has 20 digits; more is no count, id or time."""
MAX_REPORTED = 20
"""Malformed lines named one by one; beyond this they are only counted."""
APP_MAX_CHARS = 1_000_000_000
"""What the app reads of one upload, unpacked (about 1 GB): a gzip bomb stops here."""
MIN_LINE_CHARS = 50
"""Characters of a size cap each line is allowed: a request record is longer (``{"prompt": ...}`` alone is 14),
so a capped read of real records meets the size cap first, and a flood of blank lines meets this."""
UPLOAD_MAX_CHARS = 64 * 1024 * 1024
"""What a result file, config or scenario uploaded to the app may unpack to (64 MB; the upload itself is at
most 5 MB): a summary is kilobytes, a result with every request's detail megabytes."""
MAX_KEPT_CHARS = 8 * 1024 * 1024
"""JSON a benchmark result may hold besides its per-request details: summaries are a few kilobytes."""

EXPANSION = 1000
"""Times its own size a compressed log may unpack to, past :data:`EXPANSION_FLOOR`: gzip cannot pack more
than 1,032 times, and a real log of requests packs tens of times (a chat log's repeated history with zstd,
a few hundred); only a bomb unpacks further. The same ratio bounds a Parquet part on the command line."""
EXPANSION_FLOOR = 1_000_000_000
"""Characters any compressed log may unpack to whatever its size (the app's 1 GB)."""
LINES_PER_BYTE = EXPANSION // MIN_LINE_CHARS
"""Lines a compressed log may hold per byte of it (20), past :data:`LINES_FLOOR`: one line per
:data:`MIN_LINE_CHARS` of what it may unpack to, blank lines included."""
LINES_FLOOR = EXPANSION_FLOOR // MIN_LINE_CHARS
"""Lines any compressed log may hold whatever its size (20 million, as the app allows)."""

_CHUNK = 1 << 20
_DIRECT = 1 << 20
"""A JSON value up to this size is decoded by the standard library in one call; a larger one is walked."""
_COMPACT = _CHUNK

Source = Path | str | IO[bytes] | Iterable[str | bytes]
"""A path, a binary handle (an upload) or lines already split (str or bytes)."""


class TooLarge(DataFileError):
    """More text than ``max_chars`` (the app's limit), or more lines than :func:`line_limit` allows with it:
    the one error a caller may answer with "use the command line", which streams any size."""

    def __init__(self, name: str, limit: int, unit: str = "characters unpacked") -> None:
        super().__init__([f"{name}: more than {limit:,} {unit}; the limit here"])
        self.limit = limit


def line_limit(max_chars: int | None) -> int | None:
    """The lines a read capped at ``max_chars`` may take: one per :data:`MIN_LINE_CHARS` of the cap (20 million
    for the app's 1 GB), blank ones included, since each costs a read however short it is; no cap, no limit."""
    return None if max_chars is None else max(1, max_chars // MIN_LINE_CHARS)


def _too_many_lines(name: str, limit: int) -> TooLarge:
    return TooLarge(name, limit, "lines (blank ones count)")


class LineError(CalculatorError, ValueError):
    """One line or value cannot be read; ``str()`` says why, without the file or line."""


# --- files -----------------------------------------------------------------------------------------


def check_readable(path: Path, name: str | None = None) -> None:
    """Refuse, by name, a path that is missing, a folder, or a device that never ends (/dev/zero)."""
    label = name or str(path)
    try:
        found = os.stat(path)
    except OSError as exc:
        raise DataFileError([f"{label}: cannot read file: {exc.strerror or exc}"]) from exc
    if stat.S_ISDIR(found.st_mode):
        raise DataFileError([f"{label}: is a folder, not a file"])
    if not (stat.S_ISREG(found.st_mode) or stat.S_ISFIFO(found.st_mode)):
        raise DataFileError([f"{label}: not a regular file (a device or socket); give a file or a pipe"])


def check_regular(path: Path, name: str | None = None, max_bytes: int | None = None) -> None:
    """Refuse, by its type and before it is opened, anything but a regular file: a device never ends
    (``/dev/zero``), a FIFO without a writer blocks the open for ever, a socket cannot be read as a file.
    With ``max_bytes``, a file larger than that is refused by its size (what a config file can be)."""
    label = name or str(path)
    try:
        found = os.stat(path)
    except OSError as exc:
        raise DataFileError([f"{label}: cannot read file: {exc.strerror or exc}"]) from exc
    if stat.S_ISDIR(found.st_mode):
        raise DataFileError([f"{label}: is a folder, not a file"])
    if not stat.S_ISREG(found.st_mode):
        kind = "a pipe (FIFO)" if stat.S_ISFIFO(found.st_mode) else "a device or socket"
        raise DataFileError([f"{label}: {kind}, not a regular file; save what it holds to a file and give that"])
    if max_bytes is not None and found.st_size > max_bytes:
        raise DataFileError([f"{label}: {found.st_size:,} bytes; a file read here is at most {max_bytes:,}"])


def open_binary(path: Path) -> IO[bytes]:
    """``path`` opened for reading; a FIFO without a writer yet reads as empty instead of blocking the open."""
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        return path.open("rb")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)  # a writer that is there is read to its end, as from any pipe
    return os.fdopen(fd, "rb")


GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZIP_MAGIC = b"PK\x03\x04"
COMPRESSIONS = ("gzip", "zstd")
"""Compressed streams read as the text they hold (recognised by their first bytes)."""
_ZSTD_FEED = 512
"""Compressed bytes given to the zstd decoder at a time: a 128 KB block can be written in 4 bytes, so this
bounds what one call unpacks (16 MB) whatever the ratio; a bomb is then stopped by the caller's limit."""


class _Corrupt(OSError):
    """Compressed data the decoder refuses (zstandard's own error, kept out of the messages)."""


def compression(head: bytes) -> str | None:
    """``gzip`` or ``zstd`` from a file's first bytes, None for anything else."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return None


def read_error(name: str, exc: BaseException) -> DataFileError:
    """A failure reading ``name`` (a compressed stream cut short or corrupt, an OS error) in words, naming it."""
    if isinstance(exc, EOFError):
        return DataFileError([f"{name}: the compressed file is cut short (it ends inside the compressed stream)"])
    if isinstance(exc, gzip.BadGzipFile | zlib.error | _Corrupt):  # their own text is the library's ("Error -3 ...")
        return DataFileError(
            [f"{name}: the compressed data is corrupt (not gzip or zstd data, or damaged); compress it again"]
        )
    if isinstance(exc, OSError):
        return DataFileError([f"{name}: cannot read file: {exc.strerror or exc}"])
    return DataFileError([f"{name}: cannot read file: {exc}"])


READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)
"""What reading a (compressed) stream may raise; :func:`read_error` says each in words."""


class _Zstd(io.RawIOBase):
    """A zstd stream unpacked as it is read, frame after frame. A stream cut inside a frame is an EOFError
    (the zstandard package's own reader ends quietly there, which would analyse part of a log unsaid)."""

    def __init__(self, raw: IO[bytes], zstd: Any) -> None:
        self.raw = raw
        self.zstd = zstd
        self.frame = zstd.ZstdDecompressor().decompressobj()
        self.out = b""
        self.at = 0
        self.open_frame = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.at >= len(self.out):
            data = self.raw.read(_ZSTD_FEED)
            if not data:
                if self.open_frame:
                    raise EOFError("the stream ends inside a zstd frame")
                return 0
            out = []
            try:
                while data:
                    if self.frame.eof:
                        self.frame = self.zstd.ZstdDecompressor().decompressobj()
                    out.append(self.frame.decompress(data))
                    self.open_frame = not self.frame.eof
                    data = self.frame.unused_data if self.frame.eof else b""
            except self.zstd.ZstdError as exc:
                raise _Corrupt(str(exc)) from None
            self.out, self.at = b"".join(out), 0
        n = min(len(buffer), len(self.out) - self.at)
        buffer[:n] = self.out[self.at : self.at + n]
        self.at += n
        return n


class TooPacked(DataFileError):
    """A compressed stream that unpacks to more than :data:`EXPANSION` times its size, or to more lines than
    :data:`LINES_PER_BYTE` a byte of it (each past its floor): a bomb, refused wherever it is read, since
    no log of records is packed that tightly."""


class _Packed(io.RawIOBase):
    """The compressed bytes as they are read, counted (what :class:`_Budget` measures the unpacked against)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw, self.count = raw, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.count += n
        return n


class _Budget(io.RawIOBase):
    """An unpacked stream that stops with :class:`TooPacked` once it passes :data:`EXPANSION` times the
    compressed bytes read so far (at least :data:`EXPANSION_FLOOR`), or :data:`LINES_PER_BYTE` line breaks
    a compressed byte (at least :data:`LINES_FLOOR`). The line breaks are counted a chunk at a time in C,
    so a flood of blank lines stops in the time it takes to unpack 20 MB, whoever reads it."""

    def __init__(self, inner: IO[bytes], packed: _Packed, name: str) -> None:
        self.inner, self.packed, self.name = inner, packed, name
        self.chars = self.lines = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(len(buffer))
        n = len(data)
        if n:
            self.chars += n
            self.lines += data.count(b"\n")
            if b"\r" in data:  # a \r alone ends a line too; \r\n once
                self.lines += data.count(b"\r") - data.count(b"\r\n")
            packed = self.packed.count
            if self.lines > (limit := max(LINES_FLOOR, LINES_PER_BYTE * packed)):
                raise TooPacked(
                    [
                        f"{self.name}: unpacks to more than {limit:,} lines (blank ones count): a compressed log "
                        f"may hold {LINES_PER_BYTE} lines a byte of it, and {LINES_FLOOR:,} whatever its size"
                    ]
                )
            if self.chars > (limit := max(EXPANSION_FLOOR, EXPANSION * packed)):
                raise TooPacked(
                    [
                        f"{self.name}: unpacks to more than {limit:,} characters: a compressed log may unpack to "
                        f"{EXPANSION:,} times its size, and {EXPANSION_FLOOR:,} characters whatever its size"
                    ]
                )
        buffer[:n] = data
        return n


def unpacked(raw: IO[bytes], name: str) -> IO[bytes]:
    """``raw`` unpacked when it starts with gzip's or zstd's magic bytes, else as it is (buffered).

    What a compressed stream unpacks to is counted as it is read (:class:`_Budget`): past :data:`EXPANSION`
    times the compressed bytes, or :data:`LINES_PER_BYTE` lines a compressed byte (each past its floor),
    it is a :class:`TooPacked` error naming ``name`` and the limit, on the command line as in the app.
    A zip archive, or zstd without the ``zstandard`` package, is a :class:`DataFileError` naming ``name``.
    """
    buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(cast(Any, raw))
    head = buffered.peek(4)[:4]
    kind = compression(head)
    if kind == "gzip":
        packed = _Packed(buffered)
        inner: IO[bytes] = cast(IO[bytes], gzip.GzipFile(fileobj=cast(Any, packed), mode="rb"))
        return cast(IO[bytes], io.BufferedReader(_Budget(inner, packed, name), _CHUNK))
    if kind == "zstd":
        try:
            import zstandard
        except ImportError:
            raise DataFileError(
                [f"{name}: zstd-compressed; reading it needs the zstandard package (pip install zstandard)"]
            ) from None
        packed = _Packed(buffered)
        inner = cast(IO[bytes], _Zstd(cast(IO[bytes], packed), zstandard))
        return cast(IO[bytes], io.BufferedReader(_Budget(inner, packed, name), _CHUNK))
    if head.startswith(_ZIP_MAGIC):
        raise DataFileError(
            [f"{name}: a zip archive, not a log; unpack it, or compress the log itself with gzip or zstd (.gz, .zst)"]
        )
    return cast(IO[bytes], buffered)


def unpacked_bytes(data: bytes, name: str, max_chars: int) -> bytes:
    """An upload's bytes unpacked when they are gzip or zstd (told by their first bytes), at most ``max_chars``
    of them (:class:`TooLarge` past it); plain bytes are returned as they are. A broken stream is a
    :class:`DataFileError` naming ``name``."""
    if compression(data[:4]) is None:
        return data
    try:
        stream = unpacked(io.BytesIO(data), name)
        out = stream.read(max_chars + 1)
    except READ_ERRORS as exc:
        raise read_error(name, exc) from None
    if len(out) > max_chars:
        raise TooLarge(name, max_chars)
    return out


def unpacked_length(handle: IO[bytes], name: str, limit: int) -> int:
    """How many bytes a seekable file unpacks to, counted by unpacking it and keeping nothing (zlib and zstd
    unpack hundreds of MB a second), stopping as soon as it passes ``limit`` (then more than ``limit`` is
    all it says). A 1 MB archive of 1 GB is thus refused in a second or two instead of analysed for minutes;
    a compressed header's own claim of its size is not trusted (a cut file's last bytes are any number).
    A broken stream is a :class:`DataFileError` naming ``name``. The handle is left at its start."""
    buffered: Any = handle if hasattr(handle, "peek") else io.BufferedReader(cast(Any, handle))
    total = 0
    try:
        stream = unpacked(buffered, name)
        while total <= limit:
            chunk = stream.read(1 << 20)
            if not chunk:
                break
            total += len(chunk)
    except READ_ERRORS as exc:
        raise read_error(name, exc) from None
    finally:
        if buffered is not handle:
            buffered.detach()  # the caller's handle stays open
        handle.seek(0)
    return total


@contextlib.contextmanager
def open_text(source: Path | str | IO[bytes], name: str) -> Iterator[IO[str]]:
    """A text stream over a file or binary handle: unpacked when compressed, universal newlines, and
    undecodable bytes kept as surrogates so that the line they are on is found and named (not the file).

    Opening and reading errors are :class:`DataFileError` naming ``name``.
    """
    with contextlib.ExitStack() as stack:
        try:
            if isinstance(source, Path | str):
                check_readable(Path(source), name)
                raw: IO[bytes] = stack.enter_context(open_binary(Path(source)))
            else:
                raw = source
            text = io.TextIOWrapper(unpacked(raw, name), encoding="utf-8", errors="surrogateescape", newline=None)
        except READ_ERRORS as exc:
            raise read_error(name, exc) from exc
        try:
            yield text
        except READ_ERRORS as exc:
            raise read_error(name, exc) from exc
        finally:
            if not isinstance(source, Path | str):
                text.detach()  # the caller's handle stays open


def read_text(path: Path, name: str | None = None, max_chars: int = 16 * 1024 * 1024) -> str:
    """A whole small text file (a data file), at most ``max_chars``; non-UTF-8 is named with its line."""
    label = name or str(path)
    with open_text(path, label) as fh:
        text = fh.read(max_chars + 1)
    if len(text) > max_chars:
        raise DataFileError([f"{label}: larger than {max_chars:,} characters; data files are small text files"])
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise DataFileError([f"{label}:{text.count(chr(10), 0, bad.start()) + 1}: not UTF-8 text"])
    return text.removeprefix("\ufeff")


# --- lines -----------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\udc80-\udcff]")


def is_utf8(line: str) -> bool:
    """Whether a line read by :func:`text_lines` was UTF-8 (its undecodable bytes stay in it as surrogates)."""
    return line.isascii() or _SURROGATE.search(line) is None


_BLANK_RUN = re.compile(r"(?:[ \t]*\n)+")
_BLANK_RUN_BYTES = re.compile(rb"(?:[ \t\r]*\n)+")
_LINE_READ = 1 << 20
"""Characters read at a time by :func:`raw_lines`."""


def raw_lines(
    handle: IO[AnyStr], name: str, max_chars: int | None = None, first: int = 1
) -> Iterator[tuple[int, AnyStr]]:
    """Numbered lines (from ``first``: a handle on part of a file) of a handle, text or binary, each with its
    line break, within the line limit and ``max_chars`` (counted as read, unpacked): a file with no line
    breaks is never held whole.

    Blank lines (spaces and tabs at most) are counted, numbered and passed over, never given: a run of them
    is passed in one step, so a flood of them costs the time to unpack it, not a read a line."""
    number, total = first - 1, 0
    last = None if (lines := line_limit(max_chars)) is None else first - 1 + lines
    buf = handle.read(_LINE_READ)
    if not buf:
        return
    newline: Any = "\n" if isinstance(buf, str) else b"\n"
    blank: re.Pattern[Any] = _BLANK_RUN if isinstance(buf, str) else _BLANK_RUN_BYTES
    pos, eof = 0, False

    def too_long(at: int) -> DataFileError:
        return DataFileError([f"{name}:{at}: a line longer than {MAX_LINE_CHARS:,} characters: not one record a line"])

    starts: tuple[Any, ...] = ("\n", " ", "\t") if isinstance(buf, str) else (b"\n", b" ", b"\t", b"\r")
    spaces: Any = " \t" if isinstance(buf, str) else b" \t\r"
    while True:
        run = blank.match(buf, pos) if buf[pos : pos + 1] in starts else None
        if run is not None:
            number += buf.count(newline, pos, run.end())
            total += run.end() - pos
            pos = run.end()
            if last is not None and number > last:
                raise _too_many_lines(name, last - first + 1)
            if max_chars is not None and total > max_chars:
                raise TooLarge(name, max_chars)
        at = buf.find(newline, pos)
        if at >= 0:
            line = buf[pos : at + 1]
            pos = at + 1
        else:  # the line goes on past what is read (or the file ends without a line break)
            pieces, held = [buf[pos:]], len(buf) - pos
            buf, pos = buf[:0], 0
            while not eof and held <= MAX_LINE_CHARS:
                more = handle.read(_LINE_READ)
                if not more:
                    eof = True
                    break
                at = more.find(newline)
                if at >= 0:
                    pieces.append(more[: at + 1])
                    buf, pos = more, at + 1
                    break
                pieces.append(more)
                held += len(more)
            line = buf[:0].join(pieces)
            if not line:
                return
            if not line.endswith(newline) and held <= MAX_LINE_CHARS and not eof:
                continue  # pragma: no cover - a read that returned nothing new without an end
            if blank.fullmatch(line) is not None or (eof and not line.strip(spaces)):  # blank, across reads
                number += 1
                total += len(line)
                if last is not None and number > last:
                    raise _too_many_lines(name, last - first + 1)
                continue
        number += 1
        if last is not None and number > last:
            raise _too_many_lines(name, last - first + 1)
        if len(line) - (1 if line.endswith(newline) else 0) > MAX_LINE_CHARS:
            raise too_long(number)
        total += len(line)
        if max_chars is not None and total > max_chars:
            raise TooLarge(name, max_chars)
        yield number, line
        if pos >= len(buf) and not eof:
            buf, pos = handle.read(_LINE_READ), 0
            if not buf:
                eof = True
        if eof and pos >= len(buf):
            return


def text_lines(source: Source, name: str, max_chars: int | None = None) -> Iterator[tuple[int, str]]:
    """Numbered lines (from 1, without their line break) of a file, handle or iterable of lines.

    Undecodable bytes stay in the line as surrogates (:func:`parse_json` names them); a file's
    reading errors are :class:`DataFileError`; a leading byte-order mark is dropped. From a file or
    handle, blank lines are counted and passed over (:func:`raw_lines`).
    """
    first = True
    if isinstance(source, Path | str) or hasattr(source, "read"):
        with open_text(cast(Path | str | IO[bytes], source), name) as fh:
            for number, line in raw_lines(fh, name, max_chars):
                line = line.rstrip("\n")
                yield number, line.removeprefix("\ufeff") if number == 1 else line
        return
    total = 0
    lines = line_limit(max_chars)
    for number, raw in enumerate(source, start=1):
        if lines is not None and number > lines:
            raise _too_many_lines(name, lines)
        line = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
        line = line.rstrip("\r\n")
        if len(line) > MAX_LINE_CHARS:
            raise DataFileError(
                [f"{name}:{number}: a line longer than {MAX_LINE_CHARS:,} characters: not one record a line"]
            )
        total += len(line) + 1
        if max_chars is not None and total > max_chars:
            raise TooLarge(name, max_chars)
        yield number, line.removeprefix("\ufeff") if first else line
        first = False


# --- JSON with limits ------------------------------------------------------------------------------

_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_LONG_DIGITS = re.compile(f"[0-9]{{{MAX_INT_DIGITS + 1}}}")


def _too_deep() -> LineError:
    return LineError(f"nested deeper than {MAX_JSON_DEPTH} levels")


def _check_depth(text: str) -> None:
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return  # fewer openers than the limit: no need to look closer
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):  # strings match whole, so their brackets do not count
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise _too_deep()
        elif char in "]}":
            depth -= 1


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise LineError(f"a number with more than {MAX_INT_DIGITS} digits")
    return int(digits)


_PLAIN = json.JSONDecoder()
_SCAN_BELOW = 4096
_BOUNDED = json.JSONDecoder(parse_int=_bounded_int)


def _loads(text: str) -> Any:
    """``json.loads`` within the limits (depth checked by the caller); NaN and Infinity are read as floats."""
    # The hook costs by the integer, a scan for long digit runs by the character: long lines are mostly
    # text (chat requests, where the scan took most of the reading time), short ones numbers (traces).
    if len(text) > _SCAN_BELOW or _LONG_DIGITS.search(text):
        return _BOUNDED.decode(text)
    return _PLAIN.decode(text)


_JSON_WORDS = {
    "Expecting value": "no value where one should be",
    "Expecting property name enclosed in double quotes": "a name not in double quotes",
    "Expecting ',' delimiter": "a comma missing",
    "Expecting ':' delimiter": "a colon missing after a name",
    "Extra data": "more text after the value",
    "Unterminated string starting at": "a string that is never closed",
    "Invalid control character at": "a line break or control character inside a string",
    "Invalid \\escape": "a backslash escape JSON does not have",
    "Invalid \\uXXXX escape": "a \\u escape without four hex digits",
    "Illegal trailing comma before end of object": "a comma before the closing brace",
    "Illegal trailing comma before end of array": "a comma before the closing bracket",
}
"""Python's JSON messages in words, by their start (their positions are given as line and column instead)."""


def json_words(message: str) -> str:
    """A JSON parser's message as a user reads it (``Expecting value`` -> ``no value where one should be``)."""
    for start, words in _JSON_WORDS.items():
        if message.startswith(start):
            return words
    return message


def parse_json(text: str) -> Any:
    """One JSON value from a line of text, within the limits; :class:`LineError` says what is wrong."""
    if not text.isascii() and _SURROGATE.search(text):
        raise LineError("not UTF-8 text")
    try:
        value = _loads(text)
    except (ValueError, RecursionError) as exc:
        _check_depth(text)  # too deep is said first, whatever else is wrong
        if isinstance(exc, json.JSONDecodeError):
            raise LineError(f"not valid JSON: {json_words(exc.msg)} (column {exc.colno})") from None
        if isinstance(exc, RecursionError):  # pragma: no cover - deeper than the check's limit
            raise _too_deep() from None
        raise LineError(str(exc).split(";")[0]) from None  # the standard library's own limit on integer digits
    # Decoded, the value's own depth is the brackets' outside strings: cheaper than scanning text with many.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        raise _too_deep()
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner: list[Any] = []
        for item in level:
            values = item.values() if isinstance(item, dict) else item
            inner.extend(v for v in values if isinstance(v, dict | list))
        level = inner
    return False


@dataclass
class Malformed:
    """Lines of a file that could not be used: counted, and the first :data:`MAX_REPORTED` named."""

    name: str
    count: int = 0
    lines: list[str] = field(default_factory=list)

    def add(self, number: int, message: str) -> None:
        self.count += 1
        if len(self.lines) < MAX_REPORTED:
            self.lines.append(f"{self.name}:{number}: {message}")

    def merge(self, other: Malformed) -> None:
        """Add the malformed lines of a later part of the same file (read elsewhere, e.g. by a worker)."""
        self.count += other.count
        self.lines.extend(other.lines[: MAX_REPORTED - len(self.lines)])

    def error(self, empty: str) -> DataFileError:
        """The error for a file with nothing usable: its problems, or ``empty`` when it had none."""
        lines = self.lines or [f"{self.name}: {empty}"]
        if self.count > len(self.lines):
            lines = [*lines, f"{self.name}: ... {self.count - len(self.lines)} more malformed lines"]
        return DataFileError(lines)


def json_lines(
    source: Source, name: str, malformed: Malformed, max_chars: int | None = None
) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSON Lines file; the others go to ``malformed``."""
    return json_values(text_lines(source, name, max_chars), malformed)


def json_values(lines: Iterable[tuple[int, str]], malformed: Malformed) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank numbered line (:func:`text_lines`); the others go to ``malformed``."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except LineError as exc:
            malformed.add(number, str(exc))
            continue
        yield number, value


# --- JSON documents as a stream ---------------------------------------------------------------------


@dataclass
class JsonDocument:
    """One top-level JSON value of a file, with the lines its parts start on."""

    value: Any
    line: int
    key_lines: dict[str, int] = field(default_factory=dict)
    """Members of a top-level object: the line of each key."""
    item_lines: dict[str, list[int]] = field(default_factory=dict)
    """Members of a top-level object that are arrays: the line each item starts on."""


class _Invalid(Exception):
    """Not valid JSON at a position (absolute offset into the stream)."""

    def __init__(self, message: str, at: int, syntax: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.at = at
        self.syntax = syntax
        """False for a limit (depth, digits, encoding) rather than a JSON syntax error."""


_WS = re.compile(r"[ \t\r\n]*")
_LINE_WS = re.compile(r"[ \t\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_CONSTANTS = {"true": True, "false": False, "null": None, "NaN": float("nan"), "Infinity": float("inf")}
_CONSTANTS["-Infinity"] = float("-inf")
_STRUCTURE = re.compile(r'[\[\]{}"\n]')
_STRING_STOP = re.compile(r'[\\"\n]')


class _Scanner:
    """Top-level JSON values of a text stream, read in chunks.

    A value up to ``_DIRECT`` characters is decoded by the standard library; a larger one is walked
    member by member, and members named in ``skip`` are passed over without being decoded. In
    ``one_line`` mode (JSON Lines) a value must end on the line it starts on. Offsets held across
    reads are absolute (from the start of the stream); ``hold`` keeps the text from that offset on
    in the buffer while a value's end is looked for.
    """

    def __init__(self, fh: IO[str], name: str, skip: frozenset[str], max_kept: int) -> None:
        self.fh = fh
        self.name = name
        self.skip = skip
        self.max_kept = max_kept
        self.kept = 0
        self.buf = ""
        self.base = 0
        """Absolute offset of ``buf[0]``."""
        self.pos = 0
        """Local index of the next character to read."""
        self.hold: int | None = None
        self.line = 1
        self.line_start = 0
        """Absolute offset where the current line starts (for columns)."""
        self.eof = False
        self.one_line = False

    # buffer ------------------------------------------------------------------------------------------

    @property
    def here(self) -> int:
        return self.base + self.pos

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.fh.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        keep = self.pos if self.hold is None else min(self.pos, self.hold - self.base)
        if keep > _COMPACT:
            self.buf = self.buf[keep:]
            self.base += keep
            self.pos -= keep
        self.buf += chunk
        return True

    def _advance_to(self, at: int) -> None:
        """Move to absolute offset ``at`` (already in the buffer), counting the lines passed."""
        to = at - self.base
        newlines = self.buf.count("\n", self.pos, to)
        if newlines:
            self.line += newlines
            self.line_start = self.base + self.buf.rfind("\n", self.pos, to) + 1
        self.pos = to

    def _step(self) -> None:
        self._advance_to(self.here + 1)

    def peek(self) -> str:
        while self.pos >= len(self.buf):
            if not self._more():
                return ""
        return self.buf[self.pos]

    def where(self, at: int) -> tuple[int, int]:
        """(line, column) of an absolute offset at or after the current line's start."""
        between = self.buf[self.pos : max(self.pos, at - self.base)]
        newlines = between.count("\n")
        if newlines:
            return self.line + newlines, len(between) - between.rfind("\n")
        return self.line, at - self.line_start + 1

    def invalid(self, message: str, at: int | None = None, syntax: bool = True) -> _Invalid:
        return _Invalid(json_words(message), self.here if at is None else at, syntax)

    def ws(self) -> None:
        pattern = _LINE_WS if self.one_line else _WS
        while True:
            match = pattern.match(self.buf, self.pos)
            end = match.end() if match else self.pos
            self._advance_to(self.base + end)
            if end < len(self.buf) or not self._more():
                return

    # extents -----------------------------------------------------------------------------------------

    def _string_end(self, start: int, limit: int | None, consume: bool) -> int | None:
        """Absolute offset just past the string opening at ``start``; None past ``limit`` characters.
        ``consume`` moves along while looking (to pass over a long string in bounded memory)."""
        p = start + 1
        while True:
            match = _STRING_STOP.search(self.buf, p - self.base)
            if match is None:
                p = self.base + len(self.buf)
                if limit is not None and p - start > limit:
                    return None
                if consume:
                    self._advance_to(p)
                if not self._more():
                    raise self.invalid("Unterminated string starting at", start)
                continue
            char = match.group()
            if char == '"':
                return self.base + match.end()
            if char == "\n":
                raise self.invalid("Invalid control character at", self.base + match.start())
            p = self.base + match.end() + 1  # past the escaped character
            while p - self.base > len(self.buf) and self._more():
                pass

    def _container_end(self, start: int, depth: int, limit: int) -> int | None:
        """Absolute offset just past the array or object opening at ``start`` (brackets and strings only:
        the decoder checks the rest), looked for over at most ``limit`` characters (else None).
        The depth is checked on the way."""
        level = 0
        p = start
        while True:
            match = _STRUCTURE.search(self.buf, p - self.base)
            if match is None:
                p = self.base + len(self.buf)
                if p - start > limit:
                    return None
                if not self._more():
                    raise self.invalid("Expecting ',' delimiter", p)
                continue
            char = match.group()
            p = self.base + match.end()
            if char == '"':
                end = self._string_end(self.base + match.start(), limit - (p - start), consume=False)
                if end is None:
                    return None
                p = end
            elif char in "[{":
                level += 1
                if depth + level > MAX_JSON_DEPTH:
                    raise self.invalid(f"nested deeper than {MAX_JSON_DEPTH} levels", p - 1, syntax=False)
            elif char in "]}":
                level -= 1
                if level == 0:
                    return p
            elif self.one_line:
                raise self.invalid("the line ends inside a value", p - 1)
            if p - start > limit:
                return None

    def skip_value(self, depth: int) -> None:
        """Pass over one value, moving along as it goes (memory stays at a chunk)."""
        char = self.peek()
        if char == '"':
            end = self._string_end(self.here, None, consume=True)
            assert end is not None
            self._advance_to(end)
            return
        if char not in ("[", "{"):
            self.scalar()
            return
        level = 0
        while True:
            match = _STRUCTURE.search(self.buf, self.pos)
            if match is None:
                self._advance_to(self.base + len(self.buf))
                if not self._more():
                    raise self.invalid("Expecting ',' delimiter")
                continue
            found = match.group()
            self._advance_to(self.base + match.start())
            if found == '"':
                end = self._string_end(self.here, None, consume=True)
                assert end is not None
                self._advance_to(end)
                continue
            if found == "\n" and self.one_line:
                raise self.invalid("the line ends inside a value")
            self._step()
            if found in "[{":
                level += 1
                if depth + level > MAX_JSON_DEPTH:
                    raise self.invalid(f"nested deeper than {MAX_JSON_DEPTH} levels", self.here - 1, syntax=False)
            elif found in "]}":
                level -= 1
                if level == 0:
                    return

    # values ------------------------------------------------------------------------------------------

    def _keep(self, chars: int) -> None:
        self.kept += chars
        if self.kept > self.max_kept:
            names = ", ".join(sorted(self.skip)) or "none"
            raise DataFileError(
                [
                    f"{self.name}:{self.line}: more than {self.max_kept:,} characters of JSON besides the "
                    f"per-request details, which are skipped ({names}): not a benchmark result read here"
                ]
            )

    def _decode(self, start: int, end: int) -> Any:
        text = self.buf[start - self.base : end - self.base]
        self._keep(len(text))
        if not text.isascii() and (bad := _SURROGATE.search(text)) is not None:
            raise self.invalid("not UTF-8 text", start + bad.start(), syntax=False)
        try:
            value = _loads(text)
        except json.JSONDecodeError as exc:
            raise self.invalid(exc.msg, start + exc.pos) from None
        except ValueError as exc:  # a long integer (LineError) or the standard library's digit limit
            raise self.invalid(str(exc).split(";")[0], start, syntax=False) from None
        self._advance_to(end)
        return _pruned(value, self.skip)

    def scalar(self) -> Any:
        while len(self.buf) - self.pos < 400 and self._more():
            pass
        char = self.peek()
        start = self.here
        if char == '"':
            self.hold = start
            try:
                end = self._string_end(start, self.max_kept - self.kept, consume=False)
            finally:
                self.hold = None
            if end is None:
                self._keep(self.max_kept + 1)
            assert end is not None
            return self._decode(start, end)
        match = _NUMBER.match(self.buf, self.pos)
        if match is not None:
            while match.end() == len(self.buf) and self._more():
                match = _NUMBER.match(self.buf, self.pos)
                assert match is not None
            if match.group(1) is None and match.group(2) is None and len(match.group().lstrip("-")) > MAX_INT_DIGITS:
                raise self.invalid(f"a number with more than {MAX_INT_DIGITS} digits", syntax=False)
            return self._decode(start, self.base + match.end())
        for word, value in _CONSTANTS.items():
            if self.buf.startswith(word, self.pos):
                self._advance_to(start + len(word))
                return value
        raise self.invalid("Expecting value")

    def value(self, depth: int) -> Any:
        char = self.peek()
        if char in ("[", "{"):
            start = self.here
            self.hold = start
            try:
                end = self._container_end(start, depth, _DIRECT)
            finally:
                self.hold = None
            if end is not None:
                return self._decode(start, end)
            return self.members(depth)[0] if char == "{" else self.items(depth)[0]
        return self.scalar()

    def _more_items(self, close: str) -> bool:
        """After an item: True at ',' (more follow), False at the closing bracket."""
        self.ws()
        char = self.peek()
        if char == ",":
            self._step()
            self.ws()
            return True
        if char == close:
            self._step()
            return False
        raise self.invalid("Expecting ',' delimiter")

    def _open(self, depth: int) -> None:
        if depth + 1 > MAX_JSON_DEPTH:
            raise self.invalid(f"nested deeper than {MAX_JSON_DEPTH} levels", syntax=False)
        self._step()
        self.ws()

    def members(self, depth: int) -> tuple[dict[str, Any], dict[str, int], dict[str, list[int]]]:
        """The object here, walked member by member: (object, key lines, item lines of array members)."""
        self._open(depth)
        out: dict[str, Any] = {}
        key_lines: dict[str, int] = {}
        item_lines: dict[str, list[int]] = {}
        if self.peek() == "}":
            self._step()
            return out, key_lines, item_lines
        while True:
            if self.peek() != '"':
                raise self.invalid("Expecting property name enclosed in double quotes")
            line = self.line
            key = self.scalar()
            self.ws()
            if self.peek() != ":":
                raise self.invalid("Expecting ':' delimiter")
            self._step()
            self.ws()
            if key in self.skip:
                self.skip_value(depth + 1)
            elif depth == 0 and self.peek() == "[":
                out[key], item_lines[key] = self.items(depth + 1)
            else:
                out[key] = self.value(depth + 1)
            key_lines.setdefault(key, line)
            if not self._more_items("}"):
                return out, key_lines, item_lines

    def items(self, depth: int) -> tuple[list[Any], list[int]]:
        """The array here, walked item by item: (array, the line each item starts on)."""
        self._open(depth)
        out: list[Any] = []
        lines: list[int] = []
        if self.peek() == "]":
            self._step()
            return out, lines
        while True:
            lines.append(self.line)
            out.append(self.value(depth + 1))
            if not self._more_items("]"):
                return out, lines

    def document(self) -> JsonDocument:
        line = self.line
        if self.peek() == "{":
            value, key_lines, item_lines = self.members(0)
            return JsonDocument(value, line, key_lines, item_lines)
        return JsonDocument(self.value(0), line)

    def rest_of_line(self) -> None:
        """Pass to the start of the next line (after a broken line of JSON Lines)."""
        while True:
            found = self.buf.find("\n", self.pos)
            if found >= 0:
                self._advance_to(self.base + found + 1)
                return
            self._advance_to(self.base + len(self.buf))
            if not self._more():
                return


def _pruned(value: Any, skip: frozenset[str]) -> Any:
    """``value`` without the members named in ``skip``, at any depth (the depth is already bounded)."""
    if not skip:
        return value
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in skip & item.keys():
                del item[key]
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))
    return value


def json_documents(
    source: Path | str | IO[bytes] | str,
    name: str,
    *,
    skip: frozenset[str] = frozenset(),
    text: str | None = None,
    max_kept: int = MAX_KEPT_CHARS,
) -> tuple[list[JsonDocument], list[str], bool]:
    """The top-level values of a JSON file or of JSON Lines, read as a stream: (values, problems, lines).

    A file whose first value spans several lines is one document: anything after it, or a value that is
    not valid JSON, is a :class:`DataFileError`. Otherwise each line is a value of its own (JSON Lines):
    a line that is not valid JSON becomes a problem (``name:line: not valid JSON: ...``) and the others are
    still read. ``lines`` says which it was (True only when there was more than one line). Members named
    in ``skip`` (per-request detail) are never decoded; the rest may hold at most ``max_kept`` characters.
    ``text`` reads a string instead of ``source`` (an upload).
    """
    documents: list[JsonDocument] = []
    problems: list[str] = []
    opened: contextlib.AbstractContextManager[IO[str]] = (
        contextlib.nullcontext(io.StringIO(text)) if text is not None else open_text(source, name)
    )
    with opened as fh:
        scan = _Scanner(fh, name, skip, max_kept)

        def problem(exc: _Invalid) -> str:
            line, column = scan.where(exc.at)
            return f"{name}:{line}: {'not valid JSON: ' if exc.syntax else ''}{exc.message} (column {column})"

        if scan.peek() == "\ufeff":
            scan._step()
            scan.line_start += 1
        scan.ws()
        if scan.peek() == "":
            raise DataFileError([f"{name}: the file is empty"])
        first = scan.line
        fresh = False
        """At the start of a line, where JSON Lines may begin a value."""
        try:
            documents.append(scan.document())
        except _Invalid as exc:
            if scan.where(exc.at)[0] != first:
                raise DataFileError([problem(exc)]) from None
            problems.append(problem(exc))  # a broken first line of JSON Lines: the next lines may be fine
            scan.rest_of_line()
            fresh = True
        else:
            if scan.line != first:  # one document over several lines: nothing may follow it
                scan.ws()
                if scan.peek() != "":
                    raise DataFileError([problem(scan.invalid("Extra data"))])
                return documents, problems, False
        scan.one_line = True
        while True:
            scan.ws()
            char = scan.peek()
            if char == "":
                break
            if char == "\n":
                scan._step()
                fresh = True
                continue
            try:
                if not fresh:
                    raise scan.invalid("Extra data")
                fresh = False
                documents.append(scan.document())
            except _Invalid as exc:
                problems.append(problem(exc))
                scan.rest_of_line()
                fresh = True
    return documents, problems, len(documents) + len(problems) > 1


class _Counted:
    """A text stream that stops with a :class:`DataFileError` past ``max_chars`` characters read."""

    def __init__(self, fh: IO[str], name: str, max_chars: int) -> None:
        self.fh, self.name, self.max_chars, self.total = fh, name, max_chars, 0

    def read(self, size: int = -1) -> str:
        chunk = self.fh.read(size)
        self.total += len(chunk)
        if self.total > self.max_chars:
            raise TooLarge(self.name, self.max_chars)
        return chunk


def json_array_items(fh: IO[str], name: str, max_chars: int | None = None) -> Iterator[tuple[int, Any]]:
    """(line, item) of each item of a text stream holding one JSON array, read as a stream: memory holds one
    item (at most :data:`MAX_LINE_CHARS` characters of it), whatever the array's length.

    Anything but one array (after whitespace and a byte-order mark), an item that is not valid JSON or beyond
    a limit, or text after the array, is a :class:`DataFileError` naming ``name``, the line and the column:
    past a broken item there is no telling where the next one starts.
    """
    stream: Any = fh if max_chars is None else _Counted(fh, name, max_chars)
    scan = _Scanner(stream, name, frozenset(), MAX_LINE_CHARS)

    def fail(exc: _Invalid) -> DataFileError:
        line, column = scan.where(exc.at)
        return DataFileError(
            [f"{name}:{line}: {'not valid JSON: ' if exc.syntax else ''}{exc.message} (column {column})"]
        )

    if scan.peek() == "\ufeff":
        scan._step()
        scan.line_start += 1
    scan.ws()
    if scan.peek() != "[":
        raise DataFileError([f"{name}: not a JSON array"])
    try:
        scan._open(0)
        if scan.peek() == "]":
            scan._step()
        else:
            while True:
                line = scan.line
                scan.kept = 0  # the limit is per item, as a line's is in JSON Lines
                item = scan.value(1)
                yield line, item
                if not scan._more_items("]"):
                    break
        scan.ws()
        if scan.peek() != "":
            raise scan.invalid("Extra data")
    except _Invalid as exc:
        raise fail(exc) from None
