"""From parsed log records to block hashes, a batch of requests at a time.

A log reader (:class:`calculator.traffic.prefix.LogReader`) checks each record and turns it into a
:class:`Pending` request: its text segments (or token ids, or a Mooncake trace's block ids) and its
counts. :func:`build` then tokenises and hashes a whole batch at once:

- each distinct text segment is tokenised once while it stays in a :class:`TokenCache`: a chat log
  sends the conversation so far with every turn, so most segments (system prompt, tool list, earlier
  messages) were seen a moment ago; new segments go to the tokenizer in one batch call;
- the chained block hashes of every request of the batch come from :mod:`calculator.traffic.hashing`
  (numpy, equal to Python's ``hash((parent, block))`` chain bit for bit).

The result, a :class:`RequestBatch`, is arrays only: block hashes and counts, no prompt text. It is
what a worker process or a cluster worker sends back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import numpy.typing as npt

from calculator.traffic.hashing import ROOT, block_seconds, chain, chain_blocks, id_lanes, int_lanes
from calculator.traffic.tokens import Tokenizer, encode_flat, encode_many

__all__ = ["BATCH_REQUESTS", "Pending", "RequestBatch", "TokenCache", "build"]

BATCH_REQUESTS = 512
"""Requests hashed together: wide enough that one vector step per block position costs little per block."""
BATCH_CHARS = 16_000_000
"""...or this much text, whichever comes first (bounds the memory a batch holds)."""
CACHE_CHARS = 16_000_000
"""Text of the segments whose tokens are kept (about 50 MB with their token hashes)."""

START_BLOCKS = 4_000_000
"""Block hashes of recent requests kept for the requests that go on from them (32 MB)."""
LOOK_BACK = 4
"""A request goes on from one with all its segments but the last 0 to 4 (a turn adds an answer and a
question, or tool calls and their results)."""

Lanes = npt.NDArray[np.uint64]


@dataclass(slots=True)
class Pending:
    """One valid request of a log, read but not yet tokenised or hashed."""

    line: int
    timestamp: float | None
    output_tokens: int | None
    segments: list[str] | None = None
    """Text to tokenise, segment by segment (a chat request's rendered messages, or a prompt)."""
    ids: list[int] | None = None
    """Token ids given in the log."""
    block_ids: list[int] | None = None
    """A Mooncake trace's hash ids of the request's full blocks."""
    input_tokens: int = 0
    """Given for block ids (a Mooncake ``input_length``); counted from the tokens otherwise."""

    @property
    def chars(self) -> int:
        return sum(map(len, self.segments)) if self.segments else len(self.ids or self.block_ids or ())


class TokenCache:
    """Token hashes of recently seen text segments, so a repeated segment is tokenised once.

    Keeps segments up to :data:`CACHE_CHARS` of text, then starts again (the answers never change, only
    the time): a conversation's earlier messages come back within a few requests.
    """

    def __init__(self, tokenizer: Tokenizer, max_chars: int = CACHE_CHARS) -> None:
        self.tokenizer = tokenizer
        self.max_chars = max_chars
        self.held = 0
        self.lanes_of: dict[str, Lanes] = {}
        self.starts: dict[tuple[object, ...], tuple[int, npt.NDArray[np.int64]]] = {}
        """(block size, *segments) of requests hashed -> their number of tokens and full blocks' hashes."""
        self.start_blocks = 0

    def remember(self, key: tuple[object, ...], tokens: int, blocks: npt.NDArray[np.int64]) -> None:
        """A request's blocks, for the requests that go on from it (up to :data:`START_BLOCKS` blocks)."""
        if self.start_blocks + len(blocks) > START_BLOCKS:
            self.starts.clear()
            self.start_blocks = 0
        self.starts[key] = (tokens, blocks)
        self.start_blocks += len(blocks)

    def lanes(self, requests: Sequence[Sequence[str]]) -> list[Lanes]:
        """Each request's token lanes (Python's hash of each token id), its segments joined."""
        known = self.lanes_of
        new = list(dict.fromkeys(s for segments in requests for s in segments if s not in known))
        if new:
            size = sum(map(len, new))
            if self.held + size > self.max_chars:
                known.clear()
                self.held = 0
            lanes, counts = encode_flat(self.tokenizer, new, lanes=True)
            at = 0
            for text, n in zip(new, counts, strict=True):
                known[text] = lanes[at : at + n]
                at += n
            self.held += size
        empty = np.empty(0, dtype=np.uint64)
        # A batch larger than the cache may have dropped its own first segments: those come back here.
        out = []
        for segments in requests:
            found = [known.get(s) for s in segments]
            if any(p is None for p in found):
                fresh = iter(
                    encode_many(self.tokenizer, [s for s, p in zip(segments, found, strict=True) if p is None])
                )
                parts = [id_lanes(next(fresh)) if p is None else p for p in found]
            else:
                parts = cast(list[Lanes], found)
            out.append(np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else empty)
        return out


@dataclass
class RequestBatch:
    """Requests as block hashes and counts, never prompt text (what workers send back)."""

    blocks: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    """Every request's chained full-block hashes, one request after another."""
    block_counts: list[int] = field(default_factory=list)
    input_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int | None] = field(default_factory=list)
    timestamps: list[float | None] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.block_counts)

    def shifted(self, lines: int) -> RequestBatch:
        """The same requests with ``lines`` added to their line numbers (a shard's place in the file)."""
        return RequestBatch(
            self.blocks,
            self.block_counts,
            self.input_tokens,
            self.output_tokens,
            self.timestamps,
            [n + lines for n in self.lines],
        )


def _chained(
    pending: Sequence[Pending], tokenized: list[int], lanes: dict[int, Lanes], cache: TokenCache | None, bs: int
) -> dict[int, npt.NDArray[np.int64]]:
    """The chained block hashes of the requests ``tokenized`` (indices into ``pending``) from their lanes.

    A request whose first segments are all the segments of a request hashed before (a chat log resends the
    conversation so far, a few messages longer each turn) goes on from that one's blocks: only the blocks
    after its last full block are hashed, from it. Requests of this batch that go on from one another are
    chained in turns (all those that need nothing of this batch first, then those that go on from them...)."""
    known = cache.starts if cache is not None else {}
    in_batch: dict[tuple[object, ...], int] = {}
    turn: dict[int, int] = {}
    start: dict[int, tuple[int, int | npt.NDArray[np.int64]]] = {}
    """A request's full blocks already hashed: how many, and from which request of this batch, or the blocks."""
    keys: dict[int, tuple[object, ...]] = {}
    for i in tokenized:
        segments = pending[i].segments
        turn[i], start[i] = 0, (0, np.empty(0, dtype=np.int64))
        if segments is None or cache is None:
            continue
        n = len(segments)
        keys[i] = (bs, *segments)
        for m in range(n, max(0, n - LOOK_BACK - 1), -1):
            key = keys[i] if m == n else (bs, *segments[:m])
            j = in_batch.get(key)
            if j is not None:
                turn[i], start[i] = turn[j] + 1, (len(lanes[j]) // bs, j)
                break
            found = known.get(key)
            if found is not None:
                start[i] = (found[0] // bs, found[1])
                break
        in_batch[keys[i]] = i
    seconds = dict(zip(tokenized, block_seconds([lanes[i][start[i][0] * bs :] for i in tokenized], bs), strict=True))
    out: dict[int, npt.NDArray[np.int64]] = {}
    for t in range(max(turn.values(), default=-1) + 1):
        members = [i for i in tokenized if turn[i] == t]
        heads = []
        for i in members:
            q, source = start[i]
            heads.append(out[source][:q] if isinstance(source, int) else source[:q])
        roots = [int(h[-1]) if len(h) else ROOT for h in heads]
        for i, head, tail in zip(members, heads, chain_blocks([seconds[i] for i in members], roots), strict=True):
            out[i] = np.concatenate((head, tail)) if len(head) else tail
    if cache is not None:
        for i, key in keys.items():
            cache.remember(key, len(lanes[i]), out[i])
    return out


def build(pending: Sequence[Pending], cache: TokenCache | None, block_size: int) -> RequestBatch:
    """Tokenise and hash a batch of requests (``cache`` tokenises text; None when there is none)."""
    if not pending:
        return RequestBatch()
    blocks: list[npt.NDArray[np.int64]] = [np.empty(0, dtype=np.int64)] * len(pending)
    inputs = [p.input_tokens for p in pending]
    tokenized = [i for i, p in enumerate(pending) if p.block_ids is None]
    if tokenized:
        texts = [i for i in tokenized if pending[i].segments is not None]
        lanes: dict[int, Lanes] = {}
        if texts:
            if cache is None:
                raise ValueError("text to tokenise, but no tokenizer")
            lanes.update(zip(texts, cache.lanes([pending[i].segments or [] for i in texts]), strict=True))
        for i in tokenized:
            if i not in lanes:
                lanes[i] = int_lanes(pending[i].ids or [])
        for i, hashes in _chained(pending, tokenized, lanes, cache, block_size).items():
            blocks[i] = hashes
            inputs[i] = len(lanes[i])
    given = [i for i, p in enumerate(pending) if p.block_ids is not None]
    if given:
        for i, hashes in zip(given, chain([int_lanes(pending[i].block_ids or []) for i in given]), strict=True):
            blocks[i] = hashes
    return RequestBatch(
        blocks=np.concatenate(blocks),
        block_counts=[len(b) for b in blocks],
        input_tokens=inputs,
        output_tokens=[p.output_tokens for p in pending],
        timestamps=[p.timestamp for p in pending],
        lines=[p.line for p in pending],
    )
