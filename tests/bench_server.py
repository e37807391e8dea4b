"""A minimal OpenAI-compatible streaming server with known timing and injectable faults (stdlib only).

Run as a process: ``python tests/bench_server.py --port 0 --ttft-ms 50 --itl-ms 5 --tokens 16``; it
prints ``listening on 127.0.0.1:PORT`` on its first stdout line once it accepts connections. It
binds 127.0.0.1 only.

``POST /v1/chat/completions`` with ``"stream": true`` answers with server-sent events the way vLLM
does: a role chunk, one chunk per token after ``--ttft-ms`` and then every ``--itl-ms``, a final
chunk with ``finish_reason`` and, when ``stream_options.include_usage`` is set, a usage chunk with
``prompt_tokens`` (words in the messages), ``completion_tokens`` and
``prompt_tokens_details.cached_tokens`` (``--cached-tokens``, at most the prompt tokens), then
``data: [DONE]``. Faults are deterministic by arrival number (see :func:`fault_for`) so a test can
compute the exact expected counts: HTTP 500, a connection dropped mid-stream, a malformed chunk.
``--stall-ms`` answers one request in N (``--stall-every``) only after that delay (for timeouts).
A hostile server: ``--inject-share`` of the arrivals get ``--inject-chunk TEXT`` (sent verbatim as one
event's data half-way through the stream, e.g. ``{"choices":"abc"}``) and/or ``--inject-usage TEXT``
(sent verbatim as the usage object, e.g. ``{"prompt_tokens":"12"}`` or ``{"prompt_tokens":NaN}``);
the other arrivals are answered normally.
``--expect-key-env VAR`` answers 401 unless ``Authorization: Bearer $VAR`` is sent.
``GET /stats`` returns what the server saw (requests, faults, whether any header carried the key).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Config:
    ttft_ms: float = 20.0
    itl_ms: float = 2.0
    tokens: int = 16
    tokens_per_write: int = 1
    tokens_spread: float = 0.0
    """Output lengths vary by up to this share either side of ``tokens`` (deterministic by arrival)."""
    cached_tokens: int = 0
    usage: bool = True
    error_share: float = 0.0
    disconnect_share: float = 0.0
    malformed_share: float = 0.0
    inject_share: float = 0.0
    inject_chunk: str | None = None
    inject_usage: str | None = None
    stall_every: int = 0
    stall_ms: float = 0.0
    expected_key: str | None = None


@dataclass
class Stats:
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    authorized: int = 0
    unauthorized: int = 0


def fault_for(n: int, cfg: Config) -> str | None:
    """The fault arrival ``n`` (0-based) gets: 'error', 'disconnect', 'malformed', 'inject', 'stall' or None.

    Arrivals map to slots 0..999 by a fixed permutation (``n * 389 % 1000``), so every block of
    1,000 arrivals holds exactly each share, spread evenly; the shares take disjoint slot ranges.
    """
    slot = (n * 389) % 1000
    edge = 0
    for name, share in (
        ("error", cfg.error_share),
        ("disconnect", cfg.disconnect_share),
        ("malformed", cfg.malformed_share),
        ("inject", cfg.inject_share),
    ):
        edge += round(share * 1000)
        if slot < edge:
            return name
    if cfg.stall_every and n % cfg.stall_every == cfg.stall_every - 1:
        return "stall"
    return None


class Server:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.stats = Stats()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                keep = await self.respond(method, path, headers, body, writer)
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def respond(
        self, method: str, path: str, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        if method == "GET" and path == "/stats":
            data = json.dumps(
                {
                    "requests": self.stats.requests,
                    "faults": self.stats.faults,
                    "authorized": self.stats.authorized,
                    "unauthorized": self.stats.unauthorized,
                    "max_in_flight": self.stats.max_in_flight,
                }
            ).encode()
            self._plain(writer, 200, data)
            return True
        if method == "GET" and path == "/health":  # vLLM answers it; GuideLLM checks it before a run
            self._plain(writer, 200, b"{}")
            return True
        if method == "GET" and path == "/v1/models":
            self._plain(writer, 200, json.dumps({"object": "list", "data": [{"id": "test", "object": "model"}]}))
            return True
        if method != "POST" or path not in ("/v1/chat/completions", "/v1/completions"):
            self._plain(writer, 404, b'{"error": {"message": "not found"}}')
            return True
        self.stats.in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            return await self._chat(headers, body, writer, text=path == "/v1/completions")
        finally:
            self.stats.in_flight -= 1

    async def _chat(
        self, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter, text: bool = False
    ) -> bool:
        """A streamed chat completion, or with ``text`` a text completion (``/v1/completions``: a prompt in,
        ``choices[].text`` out; older benchmark clients such as GuideLLM 0.2 send those)."""
        arrival = time.perf_counter()
        if self.cfg.expected_key is not None:
            if headers.get("authorization") != f"Bearer {self.cfg.expected_key}":
                self.stats.unauthorized += 1
                self._plain(writer, 401, b'{"error": {"message": "bad key"}}')
                return True
            self.stats.authorized += 1
        n = self.stats.requests
        self.stats.requests += 1
        fault = fault_for(n, self.cfg)
        if fault:
            self.stats.faults[fault] = self.stats.faults.get(fault, 0) + 1
        if fault == "error":
            self._plain(writer, 500, b'{"error": {"message": "injected"}}')
            return True
        request = json.loads(body)
        words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []) if isinstance(m, dict))
        words += len(str(request.get("prompt", "")).split()) if text else 0
        prompt_tokens = max(words, 1)
        spread = self.cfg.tokens_spread
        tokens = max(round(self.cfg.tokens * (1 - spread + 2 * spread * ((n * 613) % 1000) / 1000)), 1)
        if request.get("max_tokens"):
            tokens = min(tokens, int(request["max_tokens"]))
        include_usage = bool((request.get("stream_options") or {}).get("include_usage")) and self.cfg.usage
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": request["model"]}

        def event(payload: dict[str, Any] | str) -> bytes:
            text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
            return f"data: {text}\n\n".encode()

        def chunk(data: bytes) -> bytes:
            return b"%x\r\n%s\r\n" % (len(data), data)

        if not text:
            writer.write(
                chunk(event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
            )
        await writer.drain()
        delay = self.cfg.ttft_ms + (self.cfg.stall_ms if fault == "stall" else 0)
        # sleep to absolute deadlines so the timing stays known however long the writes take
        deadline = arrival + delay / 1000
        per_write = max(self.cfg.tokens_per_write, 1)
        sent = 0
        while sent < tokens:
            await asyncio.sleep(max(deadline - time.perf_counter(), 0))
            batch = min(per_write, tokens - sent)
            data = b"".join(
                event(
                    {
                        **base,
                        "choices": [
                            {"index": 0, "text": f" t{sent + i}"}
                            if text
                            else {"index": 0, "delta": {"content": f" t{sent + i}"}}
                        ],
                    }
                )
                for i in range(batch)
            )
            if fault == "inject" and self.cfg.inject_chunk is not None and sent <= tokens // 2 < sent + batch:
                writer.write(chunk(event(self.cfg.inject_chunk) + data))
            elif fault == "malformed" and sent >= tokens // 2:
                data = b'data: {"choices": [{"delta": {"content": "broken\n\n'
                writer.write(chunk(data))
                fault = "malformed-sent"
            elif fault == "disconnect" and sent >= tokens // 2:
                writer.write(chunk(data))
                await writer.drain()
                writer.transport.abort()
                return False
            else:
                writer.write(chunk(data))
            await writer.drain()
            sent += batch
            deadline += self.cfg.itl_ms * batch / 1000
        last = (
            {"index": 0, "text": "", "finish_reason": "length"}
            if text
            else {"index": 0, "delta": {}, "finish_reason": "length"}
        )
        writer.write(chunk(event({**base, "choices": [last]})))
        if include_usage:
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": tokens,
                "total_tokens": prompt_tokens + tokens,
                "prompt_tokens_details": {"cached_tokens": min(self.cfg.cached_tokens, prompt_tokens)},
            }
            if fault == "inject" and self.cfg.inject_usage is not None:
                writer.write(chunk(event(f'{{"choices":[],"usage":{self.cfg.inject_usage}}}')))
            else:
                writer.write(chunk(event({**base, "choices": [], "usage": usage})))
        writer.write(chunk(event("[DONE]")) + b"0\r\n\r\n")
        await writer.drain()
        return True

    @staticmethod
    def _plain(writer: asyncio.StreamWriter, status: int, data: bytes | str) -> None:
        body = data.encode() if isinstance(data, str) else data
        reason = {200: "OK", 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error"}[status]
        head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        writer.write(head.encode() + body)


def parse_args(argv: list[str] | None = None) -> tuple[int, Config]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--ttft-ms", type=float, default=20.0)
    p.add_argument("--itl-ms", type=float, default=2.0)
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--tokens-per-write", type=int, default=1)
    p.add_argument("--tokens-spread", type=float, default=0.0)
    p.add_argument("--cached-tokens", type=int, default=0)
    p.add_argument("--no-usage", action="store_true")
    p.add_argument("--error-share", type=float, default=0.0)
    p.add_argument("--disconnect-share", type=float, default=0.0)
    p.add_argument("--malformed-share", type=float, default=0.0)
    p.add_argument("--inject-share", type=float, default=0.0)
    p.add_argument("--inject-chunk", help="an event's data sent verbatim half-way through an injected stream")
    p.add_argument("--inject-usage", help="the usage object sent verbatim in an injected stream")
    p.add_argument("--stall-every", type=int, default=0)
    p.add_argument("--stall-ms", type=float, default=0.0)
    p.add_argument("--expect-key-env")
    a = p.parse_args(argv)
    cfg = Config(
        ttft_ms=a.ttft_ms,
        itl_ms=a.itl_ms,
        tokens=a.tokens,
        tokens_per_write=a.tokens_per_write,
        tokens_spread=a.tokens_spread,
        cached_tokens=a.cached_tokens,
        usage=not a.no_usage,
        error_share=a.error_share,
        disconnect_share=a.disconnect_share,
        malformed_share=a.malformed_share,
        inject_share=a.inject_share,
        inject_chunk=a.inject_chunk,
        inject_usage=a.inject_usage,
        stall_every=a.stall_every,
        stall_ms=a.stall_ms,
        expected_key=os.environ[a.expect_key_env] if a.expect_key_env else None,
    )
    return a.port, cfg


async def serve(port: int, cfg: Config) -> None:
    app = Server(cfg)
    server = await asyncio.start_server(app.handle, "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    print(f"listening on 127.0.0.1:{bound}", flush=True)
    async with server:
        await server.serve_forever()


@contextlib.contextmanager
def running(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start this server as its own process on a free 127.0.0.1 port; yield its /v1 base URL; stop it."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--port", "0", *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line
        yield f"http://{line.split()[-1]}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout:
            proc.stdout.close()


def main(argv: list[str] | None = None) -> None:
    port, cfg = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(port, cfg))


if __name__ == "__main__":
    main()
