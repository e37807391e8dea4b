"""The fast paths of prefix analysis give what the plain Python definitions give, bit for bit: block hashes
over numpy arrays, the ASCII pre-tokenizer over bytes, batch encoding and the segment cache."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.traffic.batches import TokenCache
from calculator.traffic.hashing import chain, chained_blocks, id_lanes, int_lanes
from calculator.traffic.prefix import LogReader
from calculator.traffic.tokens import _PRETOKEN, _PRETOKEN_ASCII, ApproxTokenizer, chat_tokens

ROOT = 0x5EED


def reference_blocks(tokens: list[int], bs: int) -> list[int]:
    """The definition: each full block named hash((parent, tuple(block))), from a fixed root."""
    parent, out = ROOT, []
    for start in range(0, len(tokens) - bs + 1, bs):
        parent = hash((parent, tuple(tokens[start : start + bs])))
        out.append(parent)
    return out


def reference_chain(ids: list[int]) -> list[int]:
    parent, out = ROOT, []
    for i in ids:
        parent = hash((parent, i))
        out.append(parent)
    return out


token = st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 300_000), st.integers(-(2**70), 2**70))
requests = st.lists(st.lists(token, max_size=120), max_size=40)


@settings(max_examples=60, deadline=None)
@given(requests, st.sampled_from([1, 2, 3, 16]))
def test_block_hashes_over_arrays_equal_pythons_tuple_hash_chain(reqs: list[list[int]], bs: int) -> None:
    got = chained_blocks([int_lanes(t) for t in reqs], bs)
    assert [g.tolist() for g in got] == [reference_blocks(t, bs) for t in reqs]


@settings(max_examples=40, deadline=None)
@given(requests)
def test_chained_block_ids_equal_pythons_hash_chain(reqs: list[list[int]]) -> None:
    assert [g.tolist() for g in chain([int_lanes(t) for t in reqs])] == [reference_chain(t) for t in reqs]


def test_long_chains_and_many_short_ones_hash_alike_in_one_batch() -> None:
    # More than the vector width of long chains, then a few longer still, walked one block at a time.
    rng = np.random.default_rng(7)
    reqs = [rng.integers(0, 2**63, size=n).tolist() for n in [40] * 30 + [900, 700, 5]]
    got = chained_blocks([int_lanes(t) for t in reqs], 4)
    assert [g.tolist() for g in got] == [reference_blocks(t, 4) for t in reqs]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=200))
def test_token_id_lanes_are_pythons_hash_of_each_id(ids: list[int]) -> None:
    assert id_lanes(np.array(ids, dtype=np.uint64)).view(np.int64).tolist() == [hash(i) for i in ids]


ascii_text = st.lists(
    st.sampled_from(list("aZk09 _'.,;!-\t\n\r\x0b\x0c\x1c\x1f\x00{}\"") + ["'s", "'LL", "'re", "  ", "word"]),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(ascii_text)
def test_ascii_pre_tokenizer_over_bytes_splits_like_the_unicode_one(text: str) -> None:
    assert [p.decode() for p in _PRETOKEN_ASCII.findall(text.encode())] == _PRETOKEN.findall(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(ascii_text, st.text(max_size=40)), max_size=6))
def test_batch_encoding_and_the_segment_cache_give_each_text_its_own_tokens(texts: list[str]) -> None:
    tok = ApproxTokenizer()
    assert [a.tolist() for a in tok.encode_many(texts)] == [tok.encode(t) for t in texts]
    cache = TokenCache(tok, max_chars=50)  # small: the cache starts again within the batch
    for _ in range(2):
        got = cache.lanes([texts, texts[::-1]])
        want = [sum((tok.encode(t) for t in ts), []) for ts in (texts, texts[::-1])]
        assert [g.view(np.int64).tolist() for g in got] == [[hash(i) for i in w] for w in want]


def test_a_chat_log_read_in_batches_gives_each_request_the_blocks_of_its_own_tokens() -> None:
    tok = ApproxTokenizer()
    system = {"role": "system", "content": "You are terse. " * 30}
    lines, expected = [], []
    for i in range(30):
        messages = [system, {"role": "user", "content": f"question {i} " * (i + 1)}]
        lines.append(json.dumps({"messages": messages}))
        expected.append(reference_blocks(chat_tokens(tok, messages), 16))
    got = [list(r.blocks) for r in LogReader(lines, name="chat")]
    assert got == expected
