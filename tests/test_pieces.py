"""The numpy pre-tokenizer and piece table, and the reuse of a resent conversation's blocks, give what the
plain definitions give: the regular expression's pieces, blake2b ids, Python's tuple-hash chain."""

from __future__ import annotations

import json
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.traffic.batches import Pending, TokenCache, build
from calculator.traffic.hashing import chained_blocks, id_lanes
from calculator.traffic.pieces import PieceTable, ascii_cuts, join_texts
from calculator.traffic.prefix import LogReader
from calculator.traffic.tokens import (
    _PRETOKEN_ASCII,
    ApproxTokenizer,
    _ascii_pretoken_ids,
    _pretoken_ids,
    chat_tokens,
    render_chat,
)
from tests.test_hashing import reference_blocks

# Every character class the cuts tell apart, and the contractions' letters in both cases.
ascii_text = st.lists(
    st.sampled_from(
        list("sStTmMdDrReEvVlLaZ09 _'.(\"-\t\n\r\x0b\x0c\x1c\x1f\x00\x7f~")
        + ["'s", "'LL", "'re", "  ", "\r\n", " .\n", "1234567", "word", "x" * 20, " " * 18]
    ),
    max_size=40,
).map("".join)


def pieces_of(texts: list[str]) -> list[list[bytes]]:
    """Each text's pieces from the numpy cuts of all texts in one buffer."""
    buf = join_texts([t.encode() for t in texts])
    cuts = ascii_cuts(buf).tolist()
    out: list[list[bytes]] = [[] for _ in texts]
    text = -2  # two separators come before the first text
    for a, b in zip(cuts, cuts[1:], strict=False):
        if buf[a] == 0x80:
            text += 1
        else:
            out[text].append(buf[a:b])
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(ascii_text, min_size=1, max_size=5))
def test_numpy_cuts_are_the_regular_expressions_pieces_text_by_text(texts: list[str]) -> None:
    assert pieces_of(texts) == [_PRETOKEN_ASCII.findall(t.encode()) for t in texts]


def test_numpy_cuts_on_source_code_and_prose() -> None:
    texts = [
        "def f(x):\n    return x  # it's 12345 o'clock\n\n\tdon't   stop!\r\n",
        "The LICENSE's terms...\n\n  (a) 'quoted' \"words\" -- and_snake_case\x0c\n",
        "",
        "   ",
        "x\n",
    ]
    assert pieces_of(texts) == [_PRETOKEN_ASCII.findall(t.encode()) for t in texts]


@settings(max_examples=200, deadline=None)
@given(ascii_text)
def test_ids_of_a_piece_given_as_bytes_are_the_length_rules(text: str) -> None:
    for piece in _PRETOKEN_ASCII.findall(text.encode()):
        assert _ascii_pretoken_ids(piece) == _pretoken_ids(piece.decode())


def test_piece_table_grows_and_starts_again_without_changing_an_id() -> None:
    # 20,000 distinct pieces (short and long): the table doubles from 2**14 slots past half full; a second
    # table, cleared and refilled, and the regular expression's path all give the same ids.
    rng = random.Random(3)
    words = [" " + "".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 24))) for _ in range(20_000)]
    texts = ["".join(words[i : i + 50]) for i in range(0, len(words), 50)]
    want = [ApproxTokenizer().encode(t) for t in texts]
    table = PieceTable(_ascii_pretoken_ids)
    for _ in range(2):
        buf = join_texts([t.encode() for t in texts])
        ids, ends = table.ids(buf, ascii_cuts(buf))
        assert ids.tolist() == [i for w in want for i in w]
        assert int(ends[-1]) == sum(map(len, want))
    assert table.bits > 14
    table._clear()
    buf = join_texts([t.encode() for t in texts[:3]])
    lanes, _ = table.ids(buf, ascii_cuts(buf), lanes=True)
    assert lanes.tolist() == id_lanes(np.array([i for w in want[:3] for i in w], dtype=np.uint64)).tolist()


def test_a_chain_goes_on_from_a_given_root_as_from_its_start() -> None:
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, 2**63, size=200).tolist()
    whole = reference_blocks(tokens, 16)
    lanes = id_lanes(np.array(tokens, dtype=np.uint64))
    [rest] = chained_blocks([lanes[5 * 16 :]], 16, roots=[whole[4]])
    assert rest.tolist() == whole[5:]


def conversation_requests(seed: int) -> tuple[list[list[dict[str, str]]], list[list[int]]]:
    """Agent turns resending the conversation, tool calls among them, some conversations edited (a turn
    that is not a longer copy of the last), some turns repeated; and each request's blocks by definition."""
    rng = random.Random(seed)
    tok = ApproxTokenizer()
    requests = []
    for c in range(6):
        messages = [{"role": "system", "content": f"system {c % 2} " * rng.randint(5, 40)}]
        for _turn in range(rng.randint(1, 7)):
            messages = [*messages, {"role": "user", "content": "ask " * rng.randint(1, 60)}]
            if rng.random() < 0.3:
                messages = [*messages, {"role": "tool", "content": "result " * rng.randint(1, 30)}]
            requests.append(messages)
            if rng.random() < 0.2:
                requests.append(messages)  # the same request again
            if rng.random() < 0.2:
                messages = messages[:1]  # the conversation starts over
            else:
                messages = [*messages, {"role": "assistant", "content": "answer " * rng.randint(1, 50)}]
    expected = [reference_blocks(chat_tokens(tok, m), 16) for m in requests]
    return requests, expected


def test_a_resent_conversation_hashes_as_each_request_alone_in_one_batch_or_many() -> None:
    for seed in range(4):
        requests, expected = conversation_requests(seed)
        lines = [json.dumps({"messages": m}) for m in requests]
        # One reader: the requests of a conversation in one batch go on from one another in turns.
        assert [list(r.blocks) for r in LogReader(lines, name="chat")] == expected
        # Batches of three requests sharing one cache: a turn goes on from blocks of an earlier batch.
        cache = TokenCache(ApproxTokenizer())
        got: list[list[int]] = []
        for at in range(0, len(requests), 3):
            pending = [Pending(i, None, None, segments=render_chat(m)) for i, m in enumerate(requests[at : at + 3])]
            batch = build(pending, cache, 16)
            blocks, start = batch.blocks.tolist(), 0
            for n in batch.block_counts:
                got.append(blocks[start : start + n])
                start += n
        assert got == expected
