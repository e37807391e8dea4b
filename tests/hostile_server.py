"""A local HTTP server that answers with what a hostile or broken server sends (stdlib only).

Each path is one behaviour (:data:`BEHAVIOURS`): trickles, compression bombs, stacked or unknown
encodings, huge headers, dates out of range, redirect loops and redirects to other schemes or to
URLs carrying secrets. It binds 127.0.0.1 only, and every answer stops by itself: a trickle after
:data:`TRICKLE_LIMIT_S` seconds, the server when its ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import zstandard

TRICKLE_LIMIT_S = 20.0
"""A trickling answer gives up after this long, whether or not the client is still there."""
SECRET = "hunter2-s3cr3t"
BOMB_UNPACKED = 2 * 1024**3
"""What the zstd bomb unpacks to: 2 GB of zeros, sent as 64 KB (the gzip one: 512 MB in 500 KB)."""

BODY = b'{"sample_spec": {"max_tokens": 1}}'
LITELLM = Path(__file__).resolve().parent / "fixtures" / "price_lists" / "litellm_model_prices.json"


def _zstd_bomb() -> bytes:
    packer = zstandard.ZstdCompressor(level=3).compressobj()
    zeros = b"\0" * 1024**2  # packed a megabyte at a time: making the bomb holds no more than that
    return b"".join(packer.compress(zeros) for _ in range(BOMB_UNPACKED // len(zeros))) + packer.flush()


def _gzip_bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * 1024**2  # a quarter of the zstd bomb's size: gzip packs at most 1,032:1, so this is 500 KB
    return b"".join(packer.compress(zeros) for _ in range(BOMB_UNPACKED // 4 // len(zeros))) + packer.flush()


_BOMBS: dict[str, bytes] = {}


def bomb(kind: str) -> bytes:
    """A compressed body unpacking to :data:`BOMB_UNPACKED` bytes (made once per process)."""
    if kind not in _BOMBS:
        _BOMBS[kind] = _zstd_bomb() if kind == "zstd" else _gzip_bomb()
    return _BOMBS[kind]


GOOD_DATE = "Mon, 30 Nov 2026 09:15:00 GMT"
BEHAVIOURS = (
    "/trickle-body",
    "/trickle-headers",
    "/zstd-bomb",
    "/gzip-bomb",
    "/gzip-gzip",
    "/brotli",
    "/huge-header",
    "/many-headers",
    "/date-overflow",
    "/date-year-one",
    "/date-garbage",
    "/redirect-loop",
    "/redirect-ftp",
    "/redirect-secret",
    "/drop",
    "/bad-length",
    "/escape-status",
)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response_only(status)
        for key, value in {"Content-Length": str(len(body)), "Date": GOOD_DATE, **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _trickle(self, data: bytes) -> None:
        ends = time.monotonic() + TRICKLE_LIMIT_S
        with contextlib.suppress(OSError):
            for byte in data:
                if time.monotonic() > ends:
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/trickle-body":
            self.send_response_only(200)
            self.send_header("Content-Length", "100000")
            self.send_header("Date", GOOD_DATE)
            self.end_headers()
            self._trickle(b" " * 100_000)
        elif path == "/trickle-headers":
            self._trickle(b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 10_000 + b"\r\n\r\n")
            self.close_connection = True
        elif path in ("/zstd-bomb", "/gzip-bomb"):
            kind = path[1:].split("-")[0]
            self._send(200, bomb(kind), {"Content-Encoding": kind})
        elif path == "/gzip-gzip":
            self._send(200, gzip.compress(gzip.compress(BODY)), {"Content-Encoding": "gzip, gzip"})
        elif path == "/brotli":
            self._send(200, b"\x0b\x02\x80", {"Content-Encoding": "br"})
        elif path == "/huge-header":
            self._send(200, BODY, {"X-Huge": "a" * 200_000})
        elif path == "/many-headers":
            self.send_response_only(200)
            for i in range(20_000):
                self.send_header(f"X-{i}", "b")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)
        elif path == "/date-overflow":
            self._send(200, BODY, {"Date": "Fri, 31 Dec 9999 23:59:59 -2359"})
        elif path == "/date-year-one":
            self._send(200, BODY, {"Date": "Mon, 01 Jan 0001 00:00:00 +2359"})
        elif path == "/date-garbage":
            self._send(200, BODY, {"Date": "Fri, 99 Foo 99999999999999999999 99:99:99 +9999"})
        elif path == "/redirect-loop":
            self._send(302, b"", {"Location": "/redirect-loop"})
        elif path == "/redirect-ftp":
            self._send(302, b"", {"Location": "ftp://127.0.0.1/data.json"})
        elif path == "/redirect-secret":
            port = self.server.server_address[1]  # type: ignore[index]
            target = f"http://user:{SECRET}@127.0.0.1:{port}/nowhere?api_key={SECRET}"
            self._send(302, b"", {"Location": target})
        elif path == "/drop":
            self.send_response_only(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"[1, 2")
            self.close_connection = True
        elif path == "/bad-length":
            self.send_response_only(200)
            self.send_header("Content-Length", "9" * 40)
            self.end_headers()
            self.close_connection = True
        elif path == "/litellm.json":  # an honest list, to read behind a URL carrying secrets
            self._send(200, LITELLM.read_bytes(), {})
        elif path == "/escape-status":
            self.wfile.write(b"HTTP/1.1 404 \x1b[2JGone\x1b]0;owned\x07\r\nContent-Length: 0\r\n\r\n")
            self.close_connection = True
        else:
            self._send(404, b"not here", {})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client hanging up on a bomb or a trickle is what the tests expect


@contextlib.contextmanager
def hostile_server() -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT``) of a hostile server, stopped when the block ends."""
    httpd = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def free_port() -> int:
    """A port nothing listens on (bound and released), for connection-refused cases."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
