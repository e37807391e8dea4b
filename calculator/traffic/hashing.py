"""Chained block hashes of many requests at once, with numpy, equal bit for bit to Python's own.

A block is named ``hash((parent, tuple(block_tokens)))`` (:func:`calculator.traffic.prefix.block_hashes`):
CPython's tuple hash (xxHash-style lanes, since 3.8) over the parent's integer hash and the block's tuple
hash. Those are deterministic for integers (no per-process salt), so the hashes are the same in every
process and on every machine; here they are computed over numpy arrays instead of per-token Python
objects: each token's lane once, each block's tuple hash for all blocks of a batch in ``block_size``
vector steps, and the chain for all requests of a batch in one vector step per block position (the last
few long chains block by block in Python, where vectors would be all overhead).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["ROOT", "block_seconds", "chain", "chain_blocks", "chained_blocks", "id_lanes", "int_lanes"]

Lanes = npt.NDArray[np.uint64]

ROOT = 0x5EED
"""The parent of a request's first block."""

_M61 = np.uint64((1 << 61) - 1)
"""Python hashes an integer as its value modulo this prime (sys.hash_info.modulus)."""
_P1 = np.uint64(11400714785074694791)
_P2 = np.uint64(14029467366897019727)
_P5 = np.uint64(2870177450012600261)
_ALL_ONES = np.uint64((1 << 64) - 1)
_MINUS_TWO = np.uint64((1 << 64) - 2)
_FOR_MINUS_ONE = np.uint64(1546275796)
"""What a tuple hash that comes out as -1 becomes."""
_R31, _R33, _R61 = np.uint64(31), np.uint64(33), np.uint64(61)
_NARROW = 32
"""Below this many chains still running, the rest are walked block by block in Python (a vector step costs
about as much as 30 blocks walked, for tuple hashes, which mostly take the long way in :func:`_walk`)."""
_NARROW_INTS = 128
"""The same for chains of given ids (a Mooncake trace's), which Python walks four times as fast."""


def _length_mix(n: int) -> np.uint64:
    return np.uint64(n ^ (2870177450012600261 ^ 3527539))


def _mod61(x: Lanes) -> Lanes:
    """``x % (2**61 - 1)`` for unsigned 64-bit values, without a division."""
    r = (x & _M61) + (x >> _R61)
    return np.where(r >= _M61, r - _M61, r)


def id_lanes(ids: npt.NDArray[np.uint64]) -> Lanes:
    """Python's ``hash`` of each token id in ``ids`` (ids 0 to 2**64 - 1), as unsigned 64-bit lanes."""
    return _mod61(ids.astype(np.uint64, copy=False))


def int_lanes(values: Sequence[int]) -> Lanes:
    """Python's ``hash`` of each integer (any size or sign, e.g. token ids given in a log)."""
    return np.fromiter(map(hash, values), dtype=np.int64, count=len(values)).view(np.uint64)


def _signed_lanes(values: npt.NDArray[np.int64]) -> Lanes:
    """Python's ``hash`` of each signed 64-bit integer (a parent hash), as unsigned lanes."""
    negative = values < 0
    u = np.abs(values).view(np.uint64)  # abs(-2**63) stays -2**63, which is 2**63 unsigned: right
    m = (u & _M61) + (u >> _R61)
    m[m >= _M61] -= _M61
    np.negative(m, out=m, where=negative)
    # A negative integer whose hash would be -1 hashes to -2 (CPython keeps -1 for errors).
    m[m == _ALL_ONES] = _MINUS_TWO
    return m


def _round(acc: Lanes, lane: Lanes, tmp: Lanes) -> None:
    """One lane into the accumulators, in place."""
    np.multiply(lane, _P2, out=tmp)
    acc += tmp
    np.left_shift(acc, _R31, out=tmp)
    acc >>= _R33
    acc |= tmp
    acc *= _P1


def _finish(acc: Lanes, n: int) -> npt.NDArray[np.int64]:
    acc += _length_mix(n)
    acc[acc == _ALL_ONES] = _FOR_MINUS_ONE
    return acc.view(np.int64)


def _pair(parents: npt.NDArray[np.int64], second: Lanes) -> npt.NDArray[np.int64]:
    """``hash((parent, x))`` for each parent, where ``second`` holds ``hash(x)``."""
    acc = np.full(len(parents), _P5, dtype=np.uint64)
    tmp = np.empty_like(acc)
    _round(acc, _signed_lanes(parents), tmp)
    _round(acc, second, tmp)
    return _finish(acc, 2)


_ROWS_AT_ONCE = 8192
"""Rows of lanes hashed together: the column-by-column passes stay in the processor's cache (half the time
of one pass over a whole batch's rows)."""


def _tuple_hashes(rows: Lanes) -> Lanes:
    """The tuple hash of each row of lanes."""
    out = np.empty(rows.shape[0], dtype=np.uint64)
    for start in range(0, rows.shape[0], _ROWS_AT_ONCE):
        part = rows[start : start + _ROWS_AT_ONCE]
        acc = np.full(part.shape[0], _P5, dtype=np.uint64)
        tmp = np.empty_like(acc)
        for j in range(part.shape[1]):
            _round(acc, part[:, j], tmp)
        out[start : start + len(part)] = _finish(acc, part.shape[1]).view(np.uint64)
    return out


def chain(
    seconds: Sequence[Lanes], narrow: int = _NARROW_INTS, roots: Sequence[int] | None = None
) -> list[npt.NDArray[np.int64]]:
    """Per request, ``parent = hash((parent, x_k))`` along its ``x_k`` from :data:`ROOT` (or from
    ``roots[r]``: the last block of a start already hashed), where ``seconds[r][k]`` is ``hash(x_k)``: all
    requests advance together, one vector step per position, while at least ``narrow`` of them still do."""
    lengths = np.fromiter((len(s) for s in seconds), dtype=np.int64, count=len(seconds))
    out = [np.empty(n, dtype=np.int64) for n in lengths.tolist()]
    if not len(seconds) or not lengths.max(initial=0):
        return out
    order = np.argsort(-lengths, kind="stable")  # longest first: the chains still running are a prefix
    flat = np.concatenate([seconds[i] for i in order.tolist()])
    starts = np.concatenate(([0], np.cumsum(lengths[order])[:-1]))
    result = np.empty(len(flat), dtype=np.int64)
    sorted_lengths = lengths[order]
    running = np.searchsorted(-sorted_lengths, -np.arange(sorted_lengths[0]), side="left")
    # running[k]: how many chains have a k-th position (the lengths are sorted from the longest).
    first = np.full(len(seconds), ROOT, dtype=np.int64) if roots is None else np.array(roots, dtype=np.int64)[order]
    parents = first
    k = 0
    while k < len(running) and running[k] >= narrow:
        n = int(running[k])
        at = starts[:n] + k
        parents = _pair(parents[:n], flat[at])
        result[at] = parents
        k += 1
    for i in range(int(running[k]) if k < len(running) else 0):
        start, stop = int(starts[i]), int(starts[i] + sorted_lengths[i])
        result[start + k : stop] = _walk(int(parents[i]), flat[start + k : stop])
    for i, r in enumerate(order.tolist()):
        out[r] = result[starts[i] : starts[i] + sorted_lengths[i]]
    return out


def _walk(parent: int, seconds: Lanes) -> npt.NDArray[np.int64]:
    """One chain, block by block, in Python integers (the same formula as the vectors)."""
    done = []
    for x in seconds.view(np.int64).tolist():
        if -_LIMIT < x < _LIMIT and x != -1:  # an integer below the modulus hashes to itself
            parent = hash((parent, x))
        else:
            acc = ((hash(parent) & _MASK) * _Q2 + _Q5) & _MASK
            acc = (((acc << 31) | (acc >> 33)) & _MASK) * _Q1 & _MASK
            acc = (acc + (x & _MASK) * _Q2) & _MASK
            acc = ((((acc << 31) | (acc >> 33)) & _MASK) * _Q1 + _LEN2) & _MASK
            parent = 1546275796 if acc == _MASK else acc - (1 << 64) if acc >> 63 else acc
        done.append(parent)
    return np.array(done, dtype=np.int64)


_LIMIT = (1 << 61) - 1
_MASK = (1 << 64) - 1
_Q1, _Q2, _Q5 = int(_P1), int(_P2), int(_P5)
_LEN2 = 2 ^ (2870177450012600261 ^ 3527539)


def block_seconds(lanes: Iterable[Lanes], block_size: int) -> list[Lanes]:
    """Each request's full blocks' own tuple hashes, from its token lanes: what :func:`chain_blocks` chains."""
    lanes = list(lanes)
    full = [len(x) // block_size for x in lanes]
    if not any(full):
        return [np.empty(0, dtype=np.uint64) for _ in lanes]
    rows = [x[: n * block_size] for x, n in zip(lanes, full, strict=True)]
    inner = _tuple_hashes(np.concatenate(rows).reshape(-1, block_size))
    return np.split(inner, np.cumsum(full)[:-1])


def chain_blocks(seconds: Sequence[Lanes], roots: Sequence[int] | None = None) -> list[npt.NDArray[np.int64]]:
    """:func:`chain` of blocks' tuple hashes (:func:`block_seconds`)."""
    return chain(seconds, _NARROW, roots)


def chained_blocks(
    lanes: Iterable[Lanes], block_size: int, roots: Sequence[int] | None = None
) -> list[npt.NDArray[np.int64]]:
    """Each request's full-block hashes, chained, from its token lanes (:func:`id_lanes`, :func:`int_lanes`):
    equal to ``block_hashes(tokens, block_size)``; with ``roots``, each chain goes on from its root (the
    last block of a start hashed before, the lanes being what follows it)."""
    return chain_blocks(block_seconds(lanes, block_size), roots)
