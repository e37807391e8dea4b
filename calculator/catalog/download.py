"""Fetching a file over HTTP(S) within stated limits, whatever the server sends.

A price list comes from a URL the user gives, so the server is anyone's. Three limits hold for every
download, and each failure is one sentence naming the URL (as :func:`shown_url` shows it) and the limit:

- Size, counted after content decoding: a 100 KB body with ``Content-Encoding: zstd`` can unpack to
  gigabytes, so the body is unpacked here, a bounded piece at a time (:data:`_FEED` compressed bytes per
  call), and the count stops the download at ``max_bytes``. One encoding is read (``gzip``, ``deflate``,
  ``zstd`` with the zstandard package, or none); two stacked (``gzip, gzip``) or any other is refused.
- Time: ``timeout`` seconds for each wait (connecting, the next bytes) and ``deadline`` seconds for the
  whole download, redirects included: a server trickling a byte every two seconds never trips the first.
  The download runs in a worker thread so that even a server trickling its headers cannot hold the
  command past the deadline.
- The URL itself: http or https only, at most :data:`MAX_URL_CHARS` characters, no control characters;
  a URL httpx cannot parse (``http://[::1/x``) is refused by name, not with httpx's exception.

No secret reaches a message: URLs are shown by :func:`shown_url`, which every command uses.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from calculator.errors import InputError

__all__ = [
    "DOWNLOAD_DEADLINE_S",
    "ENCODINGS",
    "MAX_URL_CHARS",
    "Downloaded",
    "check_url",
    "download",
    "shown_text",
    "shown_url",
    "shown_urls_in",
]

MAX_URL_CHARS = 8192
"""Longest URL read: browsers and servers refuse longer ones (8 KB is the usual request-line limit)."""
DOWNLOAD_DEADLINE_S = 120.0
"""Seconds a whole download may take: a 32 MB list over a 2 Mbit/s line takes about as long."""
ENCODINGS = ("identity", "gzip", "x-gzip", "deflate", "zstd")
"""``Content-Encoding`` values unpacked (one of them, not stacked)."""
_FEED = 512
"""Compressed bytes unpacked per call: zstd writes a 128 KB block in 4 bytes, so one call yields at most
16 MB whatever the ratio, and the size limit is checked between calls."""
_RAW_CHUNK = 64 * 1024

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SECRET_NAME = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential|session|cookie|code", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_IN_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def shown_text(text: str, *, lines: bool = False) -> str:
    """Text from a file or a server as the terminal shows it: control characters (escape sequences,
    line breaks, bidirectional overrides) written as escapes, so it can neither move the cursor nor
    pose as another line. ``lines``: line breaks and tabs are kept (a command's own output)."""
    return (_CONTROL_IN_LINES if lines else _CONTROL).sub(_escaped, text)


def shown_url(url: str) -> str:
    """A URL as messages and citations show it: credentials (``user:password@``) as ``***@``, the values
    of query parameters named like secrets (``api_key``, ``token``, ``X-Amz-Signature``, ``sig``) as
    ``***``, no fragment (it may carry an ``access_token``), and control characters escaped."""
    match = _SCHEME.match(url)
    if not match:
        return shown_text(url)
    rest = url[match.end() :].split("#", 1)[0]
    authority_end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    host, tail = rest[:authority_end], rest[authority_end:]
    if "@" in host:
        host = "***@" + host.rsplit("@", 1)[1]
    path, question, query = tail.partition("?")
    if question:
        pairs = parse_qsl(query, keep_blank_values=True)
        masked = [(k, "***" if _SECRET_NAME.search(k) else v) for k, v in pairs]
        query = urlencode(masked, safe="*/:") if pairs else query
    return shown_text(f"{match.group(1)}://{host}{path}{question}{query}")


def shown_urls_in(message: str) -> str:
    """``message`` with every URL in it shown by :func:`shown_url` (a library's error may quote one)."""
    return _URL_IN_TEXT.sub(lambda m: shown_url(m.group()), shown_text(message))


def check_url(url: str, field: str, schemes: tuple[str, ...] = ("http", "https")) -> None:
    """Refuse, in one sentence naming ``field``, a URL this module would not fetch."""
    if len(url) > MAX_URL_CHARS:
        raise InputError(field, f"a URL of {len(url):,} characters; a URL is at most {MAX_URL_CHARS:,}")
    if _CONTROL.search(url) or " " in url:
        raise InputError(field, f"{shown_url(url)}: a URL cannot hold spaces or control characters; encode them")
    scheme = url.split(":", 1)[0].lower()
    if scheme not in schemes:
        allowed = " and ".join(f"{s}://" for s in schemes)
        raise InputError(field, f"{shown_url(url)}: only {allowed} URLs are read")
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise InputError(field, f"{shown_url(url)}: not a URL that can be read ({shown_urls_in(str(exc))})") from None
    if not parsed.host:
        raise InputError(field, f"{shown_url(url)}: the URL names no host")


@dataclass(frozen=True)
class Downloaded:
    """A body as unpacked, and the response's headers (lower-case names)."""

    body: bytes
    headers: dict[str, str]


class _Refused(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _decoder(encoding: str) -> Callable[[bytes], Iterator[bytes]] | None:
    """A function unpacking one raw chunk into bounded pieces, or None for an identity body."""
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        state: dict[str, Any] = {"z": zlib.decompressobj(47 if encoding != "deflate" else 15), "raw": False}

        def inflate(data: bytes) -> Iterator[bytes]:
            while data:
                z = state["z"]
                try:
                    out = z.decompress(data, 1 << 20)
                except zlib.error:
                    if encoding == "deflate" and not state["raw"]:  # servers send raw deflate too
                        state["z"], state["raw"] = zlib.decompressobj(-15), True
                        continue
                    raise _Refused("the compressed body is corrupt") from None
                yield out
                data = z.unconsumed_tail
                if z.eof and z.unused_data and encoding != "deflate":  # concatenated gzip members
                    data, state["z"] = z.unused_data, zlib.decompressobj(47)

        return inflate
    if encoding == "zstd":
        try:
            import zstandard
        except ImportError:
            raise _Refused("the server sent zstd, which needs the zstandard package") from None
        frame: dict[str, Any] = {"d": zstandard.ZstdDecompressor().decompressobj()}

        def unzstd(data: bytes) -> Iterator[bytes]:
            for at in range(0, len(data), _FEED):
                piece = data[at : at + _FEED]
                while piece:
                    d = frame["d"]
                    if d.eof:
                        d = frame["d"] = zstandard.ZstdDecompressor().decompressobj()
                    try:
                        yield d.decompress(piece)
                    except zstandard.ZstdError:
                        raise _Refused("the compressed body is corrupt") from None
                    piece = d.unused_data if d.eof else b""

        return unzstd
    raise _Refused(f"the server sent Content-Encoding {encoding!r}; {', '.join(ENCODINGS)} are read")


def _get(url: str, max_bytes: int, timeout: float, deadline: float, accept: str) -> Downloaded:
    import httpx

    ends = time.monotonic() + deadline
    too_big = f"larger than {max_bytes:,} bytes unpacked; download it and give the file"
    wait = httpx.Timeout(min(timeout, deadline))
    with (
        httpx.Client(timeout=wait, follow_redirects=True, max_redirects=10) as client,
        client.stream("GET", url, headers={"Accept": accept, "Accept-Encoding": "gzip, deflate, zstd"}) as response,
    ):
        if response.status_code >= 400:
            raise _Refused(f"the server answered {response.status_code} {shown_text(response.reason_phrase)}")
        encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
        encodings = [e for e in encodings if e != "identity"]
        if len(encodings) > 1:
            raise _Refused(
                f"the server stacked encodings ({', '.join(encodings)}); one of {', '.join(ENCODINGS)} is read"
            )
        decode = _decoder(encodings[0] if encodings else "")
        declared = response.headers.get("content-length", "")
        if (
            not encodings
            and declared.isascii()
            and declared.isdigit()
            and len(declared) < 20
            and int(declared) > max_bytes
        ):
            raise _Refused(too_big)
        chunks: list[bytes] = []
        size = 0
        for raw in response.iter_raw(_RAW_CHUNK):
            for chunk in decode(raw) if decode else (raw,):
                size += len(chunk)
                if size > max_bytes:
                    raise _Refused(too_big)
                chunks.append(chunk)
            if time.monotonic() > ends:
                raise _Refused(f"not all sent within {deadline:g} s (the limit for a whole download)")
        return Downloaded(b"".join(chunks), {k.lower(): v for k, v in response.headers.items()})


def download(
    url: str,
    field: str,
    *,
    max_bytes: int,
    timeout: float,
    deadline: float | None = None,
    accept: str = "application/json",
) -> Downloaded:
    """The body at ``url``, unpacked, within ``max_bytes`` and ``deadline`` seconds (see the module
    docstring); anything else is an :class:`InputError` naming ``field`` and the URL as shown.
    ``deadline``: :data:`DOWNLOAD_DEADLINE_S` unless given."""
    deadline = DOWNLOAD_DEADLINE_S if deadline is None else deadline
    check_url(url, field)
    shown = shown_url(url)
    outcome: list[Downloaded | BaseException] = []

    def run() -> None:
        try:
            outcome.append(_get(url, max_bytes, timeout, deadline, accept))
        except BaseException as exc:  # handed to the caller's thread, which says it in words
            outcome.append(exc)

    worker = threading.Thread(target=run, name="download", daemon=True)
    worker.start()
    worker.join(deadline + 1)
    if not outcome:  # still waiting for headers, or in a read: the thread is left to die with the process
        raise InputError(field, f"{shown}: not all sent within {deadline:g} s (the limit for a whole download)")
    result = outcome[0]
    if isinstance(result, Downloaded):
        return result
    raise _said(result, field, shown, timeout) from None


def _said(exc: BaseException, field: str, shown: str, timeout: float) -> BaseException:
    import httpx

    if isinstance(exc, _Refused):
        return InputError(field, f"{shown}: {exc.message}")
    if isinstance(exc, httpx.TimeoutException):
        return InputError(field, f"{shown}: no answer within {timeout:g} s")
    if isinstance(exc, httpx.TooManyRedirects):
        return InputError(field, f"{shown}: more than 10 redirects; give the URL they end at")
    if isinstance(exc, httpx.RemoteProtocolError):
        text = shown_urls_in(str(exc).splitlines()[0][:200] if str(exc) else "cut short")
        return InputError(field, f"{shown}: the answer is not HTTP this reads ({text})")
    if isinstance(exc, httpx.HTTPError | httpx.InvalidURL | httpx.StreamError | OSError | ValueError):
        text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return InputError(field, f"{shown}: cannot read: {shown_urls_in(text)}")
    if isinstance(exc, MemoryError):
        return InputError(field, f"{shown}: not enough memory to hold the list; download it and give the file")
    return exc
