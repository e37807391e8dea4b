"""The built-in tokenizer's pre-tokens of ASCII text found with numpy, many texts at once, and their ids
from a table of the pieces seen so far.

:class:`calculator.traffic.tokens.ApproxTokenizer` cuts text with a regular expression (cl100k's
pre-tokenizer) and gives each piece its ids by a length rule. On a log whose prompts never repeat that
was most of the analysis' time, for one Python object and one dictionary look-up per piece (about one
piece every four characters). Here the same cuts come from the classes of neighbouring bytes (letters,
digits, punctuation, whitespace, line breaks), all texts of a batch at once, and each piece's ids from
a hash table in numpy arrays: only pieces not seen before go through Python (a log's vocabulary mostly
fits in the table).

The cuts are exactly the regular expression's (:data:`calculator.traffic.tokens._PRETOKEN_ASCII`; a
test compares them on random text), worked out from its alternatives, tried in order at each cut:

1. a contraction: ``'`` then ``s t m d re ve ll`` (any case);
2. letters, after at most one character that is not a letter, digit or line break;
3. one to three digits;
4. an optional space, a run of punctuation (all of it), then any line breaks;
5. whitespace up to its last line break;
6. whitespace but its last character when something other than whitespace follows;
7. whitespace.

So: a digit run is cut every three digits; a run of whitespace whose last character is not a line break
gives that character to what follows (as the prefix of a word, as the space before punctuation, or as a
piece of its own); a lone punctuation character before letters goes with them (unless a space took it,
or it starts a contraction); a run of punctuation takes the line breaks right after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from calculator.traffic.hashing import id_lanes

__all__ = ["PieceTable", "ascii_cuts", "join_texts"]

Ids = npt.NDArray[np.uint64]
Positions = npt.NDArray[np.int64]

SEPARATOR = 0x80
"""Between texts: a byte no ASCII text holds, so no piece crosses from one text to the next."""
PAD = 18
"""Separators after the last text: the 16-byte reads of the last piece stay inside the buffer."""

_L, _D, _P, _S, _N, _B = range(6)
"""Letter, digit, punctuation (anything else), whitespace other than line breaks, line break, separator."""
_CLASS = np.full(256, _P, dtype=np.uint8)
_CLASS[np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", np.uint8)] = _L
_CLASS[np.frombuffer(b"0123456789", np.uint8)] = _D
# The regular expression's whitespace for bytes (Python's \s for str also takes \x1c-\x1f).
_CLASS[np.frombuffer(b"\t\x0b\x0c\x1c\x1d\x1e\x1f ", np.uint8)] = _S
_CLASS[np.frombuffer(b"\r\n", np.uint8)] = _N
_CLASS[SEPARATOR] = _B
_CLASS_BYTES = _CLASS.tobytes()
"""For ``bytes.translate``: a byte's class, faster than indexing an array."""
_SPACE, _APOSTROPHE = ord(" "), ord("'")
_CONTRACTION_1 = np.zeros(256, dtype=bool)
_CONTRACTION_1[np.frombuffer(b"sStTmMdD", np.uint8)] = True
_CONTRACTION_2 = np.zeros((256, 256), dtype=bool)
for _pair in ("re", "ve", "ll"):
    for _a in (_pair[0], _pair[0].upper()):
        for _b in (_pair[1], _pair[1].upper()):
            _CONTRACTION_2[ord(_a), ord(_b)] = True


def join_texts(texts: Sequence[bytes]) -> bytes:
    """ASCII texts in one buffer, each after a separator (two before the first), padded at the end."""
    return b"\x80\x80" + b"\x80".join(texts) + b"\x80" * PAD


def ascii_cuts(buf: bytes) -> Positions:
    """Where the pieces of the texts in ``buf`` (:func:`join_texts`) start, in order; each separator is
    listed too (a piece ends at the next position listed), up to the one after the last text, and one more."""
    c = np.frombuffer(buf, dtype=np.uint8)
    k = np.frombuffer(buf.translate(_CLASS_BYTES), dtype=np.uint8)
    n = len(c)
    is_l, is_d, is_p, is_s, is_n = (k == _L), (k == _D), (k == _P), (k == _S), (k == _N)
    is_w = is_s | is_n
    space = c == _SPACE
    starts = k == _B

    def at(a: npt.NDArray[np.bool_], offset: int) -> npt.NDArray[np.bool_]:
        """``a`` at i + offset, for i from 2 to n - 2 (the buffer's ends are separators)."""
        return a[2 + offset : n - 1 + offset]

    inner = starts[2:-1]  # a view: setting it sets ``starts``
    # (For booleans ``x > y`` is ``x and not y``.)

    # Letters: a run starts a piece unless the character before it takes it as its prefix: whitespace other
    # than a line break (always the last of its run, always starting a piece), or a lone punctuation
    # character that no space took and that starts no contraction.
    letters = at(is_l, 0) > at(is_l, -1)
    lone = at(is_p, -1) > (at(is_p, -2) | at(space, -2))
    inner |= letters > (at(is_s, -1) | lone)
    after = np.flatnonzero(c == _APOSTROPHE) + 1
    after = after[is_l[after] & ~is_p[after - 2] & ~space[after - 2]]  # letters after a lone apostrophe
    if len(after):
        one = _CONTRACTION_1[c[after]]
        two = ~one & _CONTRACTION_2[c[after], c[after + 1]]
        # The contraction (from the apostrophe, a piece's start already) ends one or two letters on; the
        # rest of the letters start a piece.
        rest = np.concatenate((after[one] + 1, after[two] + 2))
        starts[rest[is_l[rest]]] = True

    # Punctuation: a run starts a piece unless a space before it does (alternative 4).
    inner |= at(is_p, 0) > (at(is_p, -1) | at(space, -1))

    # Digits: a run is cut every three.
    digits = at(is_d, 0) > at(is_d, -1)
    inner |= digits
    first = np.flatnonzero(digits) + 2
    first = first[is_d[first + 1] & is_d[first + 2] & is_d[first + 3]]  # runs of four digits or more
    if len(first):
        ends = np.flatnonzero(at(is_d, 0) > at(is_d, 1)) + 3
        lengths = ends[np.searchsorted(ends, first)] - first
        extra = (lengths - 1) // 3
        base = np.repeat(first, extra)
        step = np.arange(len(base)) - np.repeat(np.cumsum(extra) - extra, extra) + 1
        starts[base + 3 * step] = True

    # Whitespace runs [j, e).
    j = np.flatnonzero(at(is_w, 0) > at(is_w, -1)) + 2
    if len(j):
        e = np.flatnonzero(at(is_w, 0) > at(is_w, 1)) + 3
        breaks = np.flatnonzero(is_n)
        # After punctuation the line breaks at the run's start went with it (alternative 4).
        begin = j
        after_punct = is_p[j - 1] & is_n[j]
        if after_punct.any():
            begin = j.copy()
            run_ends = np.flatnonzero(is_n[:-1] > is_n[1:]) + 1
            begin[after_punct] = run_ends[np.searchsorted(run_ends, j[after_punct])]
            nonempty = begin < e
            starts[begin[nonempty]] = True
        else:
            nonempty = np.ones(len(j), dtype=bool)
            starts[begin] = True
        # Alternative 5 ends after the run's last line break; what is left starts a piece.
        if len(breaks):
            last = np.searchsorted(breaks, e) - 1
            last_break = breaks[np.maximum(last, 0)]
            has_break = (last >= 0) & (last_break >= begin) & nonempty
            rest = last_break[has_break] + 1
            starts[rest[rest < e[has_break]]] = True
    # Alternative 6: the last character of a run of whitespace, not a line break, before something other than
    # whitespace or the text's end, starts a piece of its own (alone, or with the letters or punctuation after
    # it).
    inner |= at(is_s, 0) & (at(is_l, 1) | at(is_d, 1) | at(is_p, 1))
    return np.flatnonzero(starts[: n - PAD + 2])  # up to the separator after the last text, and one more


# --- the ids of pieces ------------------------------------------------------------------------------------

_SHORT = 16
"""Pieces of up to this many bytes are held in the table by their bytes, in two 64-bit words; longer ones (a
long word, a run of spaces) in a dictionary."""
_MIN_BITS, _MAX_BITS = 14, 20
"""The table starts with 2**14 slots, small enough to stay in the processor's cache, and doubles while a
log's vocabulary of pieces grows, up to 2**20 slots; past half of that it starts again (ids are recomputed
then, never different)."""
_KEEP = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_FILL = np.uint64(0x8080808080808080) & ~_KEEP
"""A piece's word is filled out with the separator byte, which no ASCII text holds: the two words say the
piece exactly, its length included."""
_EMPTY_WORD = np.uint64(0x8080808080808080)
_K1, _K2, _K3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9)
_COUNT_BITS = 24
"""An entry's value is (where its ids start) * 2**24 + (how many, at least 1); 0 is an empty slot."""


def _mix(lo: Ids, hi: Ids) -> Ids:
    h = lo * _K1
    h ^= hi * _K2
    h ^= h >> np.uint64(29)
    h *= _K3
    return h


class PieceTable:
    """The ids of pieces seen so far; ``ids_of(piece)`` (in Python, once each) for those not yet seen.

    Ids are kept one piece after another in ``store``. Pieces of up to :data:`_SHORT` bytes are found in an
    open-addressing hash table of numpy arrays, all pieces of a batch at once; longer ones in a dictionary.
    """

    def __init__(self, ids_of: Callable[[bytes], Sequence[int]]) -> None:
        self.ids_of = ids_of
        self._clear()

    def _clear(self) -> None:
        self._size(_MIN_BITS)
        self.long: dict[bytes, int] = {}
        self.store: Ids = np.empty(0, dtype=np.uint64)
        self.lane_store: Ids = np.empty(0, dtype=np.uint64)
        # The separator between texts is a piece of no ids (its value says 0 ids, from 1: not an empty slot).
        words = np.array([_EMPTY_WORD], dtype=np.uint64)
        self._place(words, words, np.array([1 << _COUNT_BITS], dtype=np.int64))

    def _size(self, bits: int) -> None:
        self.bits = bits
        self.lo = np.zeros(1 << bits, dtype=np.uint64)
        self.hi = np.zeros(1 << bits, dtype=np.uint64)
        self.value = np.zeros(1 << bits, dtype=np.int64)
        self.entries = 0

    def _slots(self, lo: Ids) -> Positions:
        """A piece's first slot, from its first word only: one multiplication a piece (pieces that start
        with the same 8 bytes, rare, probe on)."""
        return ((lo * _K1) >> np.uint64(64 - self.bits)).astype(np.int64)

    def _place(self, lo: Ids, hi: Ids, value: Positions) -> None:
        """Enter pieces not in the table (distinct), all at once: each takes the first free slot from its own,
        the first of several taking the same slot winning it."""
        mask = (1 << self.bits) - 1
        slot = self._slots(lo)
        todo = np.arange(len(lo))
        while len(todo):
            at = slot[todo]
            free = self.value[at] == 0
            _, won = np.unique(at[free], return_index=True)
            winners = todo[free][won]
            where = slot[winners]
            self.lo[where], self.hi[where], self.value[where] = lo[winners], hi[winners], value[winners]
            placed = np.zeros(len(lo), dtype=bool)
            placed[winners] = True
            todo = todo[~placed[todo]]
            slot[todo] = (slot[todo] + 1) & mask  # every slot tried is taken now
        self.entries += len(lo)

    def _grow(self) -> None:
        held = np.flatnonzero(self.value)
        lo, hi, value = self.lo[held], self.hi[held], self.value[held]
        self._size(self.bits + 1)
        self._place(lo, hi, value)

    def ids(self, buf: bytes, starts: Positions, lanes: bool = False) -> tuple[Ids, Positions]:
        """The ids of the pieces starting at ``starts`` (:func:`ascii_cuts`; each ends where the next starts)
        one after another, or their lanes (Python's hash of each id: what block hashing reads); and the
        number of ids before each piece's end (separators have none)."""
        if self.entries + len(self.long) >= 1 << (_MAX_BITS - 1):
            self._clear()
        lengths = np.diff(starts)
        starts = starts[:-1]
        every = lengths.max(initial=0) <= _SHORT
        short = np.flatnonzero(lengths <= _SHORT) if not every else None
        s = starts if short is None else starts[short]
        ln = lengths if short is None else lengths[short]
        words = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
        first_word = np.minimum(ln, 8)
        lo = (words[s] & _KEEP[first_word]) | _FILL[first_word]
        hi = np.full(len(s), _EMPTY_WORD, dtype=np.uint64)
        two = np.flatnonzero(ln > 8)
        if len(two):
            second = ln[two] - 8
            hi[two] = (words[s[two] + 8] & _KEEP[second]) | _FILL[second]
        slot = self._slots(lo)
        mask = (1 << self.bits) - 1
        # The first probe for every piece, then the few that met another piece's entry probe on.
        values = self.value[slot]
        hit = (self.lo[slot] == lo) & (self.hi[slot] == hi)  # an empty slot holds no piece's words
        todo = np.flatnonzero(~hit)
        missing = todo[values[todo] == 0]
        todo = todo[values[todo] != 0]
        while len(todo):
            at = (slot[todo] + 1) & mask
            slot[todo] = at
            held = self.value[at]
            hit = (self.lo[at] == lo[todo]) & (self.hi[at] == hi[todo])
            values[todo] = held
            missing = np.concatenate((missing, todo[held == 0]))
            todo = todo[(held != 0) & ~hit]
        added: list[int] = []
        size = len(self.store)
        if len(missing):
            values[missing] = self._enter(buf, s, ln, lo, hi, missing, size, added)
        if short is None:
            value = values
        else:
            value = np.empty(len(starts), dtype=np.int64)
            value[short] = values
            long_at = np.flatnonzero(lengths > _SHORT)
            table = self.long
            got = []
            for a, n in zip(starts[long_at].tolist(), lengths[long_at].tolist(), strict=True):
                piece = buf[a : a + n]
                entry = table.get(piece)
                if entry is None:
                    piece_ids = self.ids_of(piece)
                    entry = table[piece] = ((size + len(added)) << _COUNT_BITS) | len(piece_ids)
                    added.extend(piece_ids)
                got.append(entry)
            value[long_at] = got
        if added:
            new_ids = np.array(added, dtype=np.uint64)
            self.store = np.concatenate((self.store, new_ids))
            self.lane_store = np.concatenate((self.lane_store, id_lanes(new_ids)))
        count = value & ((1 << _COUNT_BITS) - 1)
        ends = np.cumsum(count)
        index = np.repeat((value >> _COUNT_BITS) - (ends - count), count) + np.arange(ends[-1] if len(ends) else 0)
        return (self.lane_store if lanes else self.store)[index], ends

    def _enter(
        self,
        buf: bytes,
        s: Positions,
        ln: Positions,
        lo: Ids,
        hi: Ids,
        missing: Positions,
        size: int,
        added: list[int],
    ) -> Positions:
        """The values of pieces not in the table (found once each, their ids appended to ``added``), entered."""
        _, one, which = np.unique(_mix(lo[missing], hi[missing]), return_index=True, return_inverse=True)
        new = missing[one]
        if not (
            np.array_equal(lo[new][which], lo[missing]) and np.array_equal(hi[new][which], hi[missing])
        ):  # pragma: no cover - two pieces whose 64-bit mixes are equal: told apart one by one
            seen: dict[tuple[int, int], int] = {}
            order = [
                seen.setdefault(k, len(seen)) for k in zip(lo[missing].tolist(), hi[missing].tolist(), strict=True)
            ]
            which = np.array(order, dtype=np.int64)
            new = missing[np.unique(which, return_index=True)[1]]
        counts = []
        for a, n in zip(s[new].tolist(), ln[new].tolist(), strict=True):
            piece_ids = self.ids_of(buf[a : a + n])
            counts.append(len(piece_ids))
            added.extend(piece_ids)
        count = np.array(counts, dtype=np.int64)
        value = ((size + np.cumsum(count) - count) << _COUNT_BITS) | count
        while self.entries + len(new) > 1 << (self.bits - 1) and self.bits < _MAX_BITS:
            self._grow()
        if self.entries + len(new) <= 1 << (_MAX_BITS - 1):
            self._place(lo[new], hi[new], value)
        return value[which]
