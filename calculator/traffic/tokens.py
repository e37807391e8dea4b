"""Tokens for prompt-log analysis: a built-in approximate tokenizer, an exact one from a local
Hugging Face ``tokenizer.json``, and a deterministic rendering of chat messages.

The built-in tokenizer (:class:`ApproxTokenizer`) needs no download. It splits text the way GPT-2 /
cl100k-style BPE tokenizers pre-tokenize it (words with their leading space, digit groups of up to
three, punctuation runs, whitespace runs) and then applies a length rule: a pre-token becomes
``ceil(length / n)`` tokens, with ``n`` depending on what the pre-token is made of (ASCII letters,
other letters, punctuation, whitespace). Each token id is a stable 64-bit hash of its text, so the
same text always gives the same ids, across runs and machines.

How close it comes (``benchmarks/tokenizer_accuracy.py``, against Mistral's Tekken BPE tokenizer
``tekken_240911``, 131k vocabulary, shipped offline in the ``mistral-common`` package; corpus: this
repository's Markdown, YAML and Python, licence texts, and Python standard-library modules, 219 chunks
of 200 lines, 357k real tokens): approximate / real token count 0.97 over the whole corpus (prose
1.07, Python 0.97 to 1.01, YAML 0.83, since Tekken splits numbers digit by digit); per chunk mean
0.97, standard deviation 0.09, 90% of chunks between 0.80 and 1.10, extremes 0.71 and 1.28.
That is accurate enough for a *share* (prefix share and hit rate
are ratios of token counts, and the error largely cancels) and for a cost estimate; it is not exact.
For exact counts give the model's own ``tokenizer.json`` (:class:`HuggingFaceTokenizer`; needs the
optional ``tokenizers`` package, imported only when used).

Chat messages are rendered message by message (:func:`render_chat`), roles and tool definitions
included, and each part is tokenized on its own (:func:`chat_tokens`): a conversation's start always
gives the same tokens, whatever follows it, as a chat template's special tokens do in a real engine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from calculator.errors import InputError
from calculator.traffic.hashing import id_lanes
from calculator.traffic.pieces import PieceTable, ascii_cuts, join_texts

__all__ = [
    "ApproxTokenizer",
    "HuggingFaceTokenizer",
    "Tokenizer",
    "chat_tokens",
    "encode_flat",
    "encode_many",
    "load_tokenizer",
    "render_chat",
]


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that turns text into token ids."""

    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool:
        """True when the ids are the model's own (a real vocabulary), False for an approximation."""
        ...

    def encode(self, text: str) -> list[int]: ...


# --- the built-in approximation -------------------------------------------------------------------

# cl100k's pre-tokenizer, written for the standard ``re`` module: \p{L} is [^\W\d_], \p{N} is \d.
_PRETOKEN = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
    r"|(?:[^\r\n\w]|_)?[^\W\d_]+"
    r"|\d{1,3}"
    r"| ?(?:[^\s\w]|_)+[\r\n]*"
    r"|\s*[\r\n]+"
    r"|\s+(?!\S)"
    r"|\s+"
)
_ASCII_WORD = re.compile(r"[ -~]?[A-Za-z]+")

# Characters per token by kind of pre-token; calibrated with benchmarks/tokenizer_accuracy.py.
ASCII_LETTERS_PER_TOKEN = 8
"""A word with its leading space: common English words are one token in a 100k+ vocabulary."""
OTHER_BYTES_PER_TOKEN = 4
"""Non-ASCII words, counted in UTF-8 bytes: a CJK character (3 bytes) is 0.75 token, between Tekken's ~0.7
and cl100k's ~1 to 1.3; Cyrillic or Greek (2 bytes a letter) 2 letters a token."""
PUNCTUATION_PER_TOKEN = 2
WHITESPACE_PER_TOKEN = 16


# _PRETOKEN for ASCII text, over bytes: the same pieces about twice as fast (most of the tokenizer's time).
# Whitespace is spelled out: Python's Unicode \s also takes the separators \x1c-\x1f, bytes' \s does not.
_S = rb"\t\n\x0b\x0c\r\x1c-\x1f "
_PRETOKEN_ASCII = re.compile(
    rb"'(?:[sStTmMdD]|[rR][eE]|[vV][eE]|[lL][lL])"
    rb"|[^\r\n0-9A-Za-z]?[A-Za-z]++"
    rb"|[0-9]{1,3}"
    rb"| ?[^" + _S + rb"0-9A-Za-z]++[\r\n]*+"
    rb"|[" + _S + rb"]*[\r\n]+"
    rb"|[" + _S + rb"]+(?![^" + _S + rb"])"
    rb"|[" + _S + rb"]+"
)


def _piece_id(piece: str) -> int:
    return int.from_bytes(hashlib.blake2b(piece.encode("utf-8"), digest_size=8).digest(), "big")


def _pretoken_ids(pre: str) -> tuple[int, ...]:
    if _ASCII_WORD.fullmatch(pre):
        n = math.ceil(len(pre) / ASCII_LETTERS_PER_TOKEN)
    elif pre.isspace():
        n = math.ceil(len(pre) / WHITESPACE_PER_TOKEN)
    elif pre.isascii():
        # Digit groups (already at most three digits) and punctuation runs.
        n = 1 if pre.strip().isdigit() else math.ceil(len(pre.strip() or pre) / PUNCTUATION_PER_TOKEN)
    else:
        n = math.ceil(len(pre.encode("utf-8")) / OTHER_BYTES_PER_TOKEN)
    n = max(1, n)
    if n == 1:
        return (_piece_id(pre),)
    n = min(n, len(pre))
    cuts = [len(pre) * i // n for i in range(n + 1)]
    return tuple(_piece_id(pre[a:b]) for a, b in zip(cuts, cuts[1:], strict=False))


def _ascii_pretoken_ids(pre: bytes) -> tuple[int, ...]:
    """:func:`_pretoken_ids` of an ASCII piece given as bytes, without a regular expression (the numpy path
    calls it once for each piece it has not seen)."""
    size = len(pre)
    if pre.isalpha() or (size > 1 and 0x20 <= pre[0] <= 0x7E and pre[1:].isalpha()):  # _ASCII_WORD
        n = -(-size // ASCII_LETTERS_PER_TOKEN)
    else:
        text = pre.decode("ascii")  # str's whitespace, which also takes \x1c-\x1f
        if text.isspace():
            n = -(-size // WHITESPACE_PER_TOKEN)
        else:
            kept = text.strip()
            n = 1 if kept.isdigit() else -(-len(kept or text) // PUNCTUATION_PER_TOKEN)
    if n <= 1:
        return (int.from_bytes(_blake2b(pre, digest_size=8).digest(), "big"),)
    n = min(n, size)
    return tuple(
        int.from_bytes(_blake2b(pre[size * i // n : size * (i + 1) // n], digest_size=8).digest(), "big")
        for i in range(n)
    )


_blake2b = hashlib.blake2b
_KNOWN_PIECES = 1 << 18
"""Pre-tokens whose ids are kept (ASCII ones by their bytes): a log's vocabulary of words mostly fits,
in tens of megabytes; beyond it the table starts again (ids are recomputed, never different)."""
_ids_of: dict[str | bytes, tuple[int, ...]] = {}


def _pieces(text: str) -> list[Any]:
    return _PRETOKEN_ASCII.findall(text.encode("ascii")) if text.isascii() else _PRETOKEN.findall(text)


def _ids(pieces: list[Any]) -> list[tuple[int, ...]]:
    table = _ids_of
    found: list[tuple[int, ...] | None] = list(map(table.get, pieces))
    if all(found):  # id tuples are never empty: only a missing one is false
        return cast(list[tuple[int, ...]], found)
    if len(table) > _KNOWN_PIECES:
        table.clear()
    for i, ids in enumerate(found):
        if ids is None:
            p = pieces[i]
            found[i] = table.get(p) or table.setdefault(p, _pretoken_ids(p.decode() if isinstance(p, bytes) else p))
    return cast(list[tuple[int, ...]], found)


GROUP_CHARS = 1 << 18
"""ASCII text cut at once: the arrays of a group stay in the processor's cache."""
_table: PieceTable | None = None


def _encode_group(texts: list[bytes], parts: list[npt.NDArray[np.uint64]], counts: list[int], lanes: bool) -> None:
    """The ids (or lanes) of ASCII texts (appended to ``parts``, one array) and each one's number of ids (to
    ``counts``)."""
    global _table
    if _table is None:
        _table = PieceTable(_ascii_pretoken_ids)
    buf = join_texts(texts)
    cuts = ascii_cuts(buf)
    ids, ends = _table.ids(buf, cuts, lanes)
    # Each text lies between two separators, pieces of no ids: the ids up to the one after it, less those
    # up to the one before it.
    after = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1) + 1
    at = np.searchsorted(cuts, np.concatenate(([1], after)))
    totals = ends[at]
    parts.append(ids)
    counts.extend(np.diff(totals).tolist())


class ApproxTokenizer:
    """Built-in approximate tokenizer: cl100k-style pre-tokenizing plus a length rule (see the module
    docstring for how close it comes to a real BPE tokenizer). Deterministic; needs no download."""

    name = "built-in approximation (cl100k-style pre-tokenizer + length rule)"
    exact = False

    def encode(self, text: str) -> list[int]:
        return list(itertools.chain.from_iterable(_ids(_pieces(text))))

    def encode_many(self, texts: Sequence[str]) -> list[npt.NDArray[np.uint64]]:
        """The ids of each text, as arrays (what block hashing reads)."""
        ids, counts = self.encode_flat(texts)
        return np.split(ids, np.cumsum(counts)[:-1]) if len(texts) else []

    def encode_flat(self, texts: Sequence[str], lanes: bool = False) -> tuple[npt.NDArray[np.uint64], list[int]]:
        """The ids of all texts one after another (or their lanes: Python's hash of each id, what block
        hashing reads), and each text's number of ids. ASCII texts are cut with numpy (:mod:`.pieces`, the
        same cuts as :meth:`encode`), in groups of about :data:`GROUP_CHARS`."""
        parts: list[npt.NDArray[np.uint64]] = []
        counts: list[int] = []
        group: list[bytes] = []
        size = 0
        for text in texts:
            if text.isascii():
                group.append(text.encode("ascii"))
                size += len(text)
                if size >= GROUP_CHARS:
                    _encode_group(group, parts, counts, lanes)
                    group, size = [], 0
            else:
                if group:
                    _encode_group(group, parts, counts, lanes)
                    group, size = [], 0
                ids = np.fromiter(itertools.chain.from_iterable(_ids(_pieces(text))), dtype=np.uint64)
                parts.append(id_lanes(ids) if lanes else ids)
                counts.append(len(ids))
        if group:
            _encode_group(group, parts, counts, lanes)
        return (np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)), counts

    def count(self, text: str) -> int:
        return len(self.encode(text))


# --- an exact tokenizer from a local tokenizer.json -------------------------------------------------


_RUST_WORDS = (
    (re.compile(r"stream did not contain valid UTF-8"), "not UTF-8 text"),
    (re.compile(r"EOF while parsing.*"), "the file is empty or ends too soon"),
    (re.compile(r"expected value at line (\d+) column (\d+)"), r"not JSON: no value where one should be, line \1"),
    (re.compile(r"invalid type: .*, expected struct Tokenizer.*"), "its JSON is not one object holding a tokenizer"),
    (
        re.compile(r"data did not match any variant of untagged enum (\w+).*"),
        "its model section is of no kind it knows",
    ),
    (re.compile(r"missing field `(\w+)`.*"), r"no '\1' in it"),
    (re.compile(r"unknown variant `([^`]*)`.*"), r"'\1' is no kind of model or step it knows"),
)
"""The tokenizers library's messages (Rust's serde) in words, by pattern; a message not here is kept."""


def _rust_words(message: str) -> str:
    for pattern, words in _RUST_WORDS:
        if pattern.search(message):
            return pattern.sub(words, message) if "\\" in words else words
    return message or "the library gave no reason"


class HuggingFaceTokenizer:
    """The model's own tokenizer from a local Hugging Face ``tokenizer.json`` (loaded offline with the
    ``tokenizers`` package, imported here and nowhere else). Special tokens are not added."""

    exact = True

    def __init__(self, path: Path | str, field: str = "tokenizer", name: str | None = None) -> None:
        path = Path(path)
        self.path = path
        shown = name or str(path)  # an upload is named by its own name, not the temporary copy's path
        try:
            from tokenizers import Tokenizer as _HFTokenizer
        except ImportError:
            raise InputError(
                field,
                f"reading {shown} needs the 'tokenizers' package (pip install 'tokenizers>=0.19'); "
                "without it, leave the tokenizer out to use the built-in approximation",
            ) from None
        try:
            found = path.is_file()
        except OSError as exc:  # a name longer than the file system takes
            raise InputError(field, f"{shown}: cannot read it ({exc.strerror or exc})") from None
        if not found:
            raise InputError(field, f"{shown}: no such file; give the path of a Hugging Face tokenizer.json")
        try:
            self._tok = _HFTokenizer.from_file(str(path))
        except Exception as exc:  # the Rust side raises a bare Exception for every kind of bad file
            detail = _rust_words(str(exc).splitlines()[0] if str(exc) else "")
            raise InputError(field, f"{shown}: not a usable Hugging Face tokenizer.json ({detail})") from None
        self.name = f"{name} (uploaded)" if name else f"{path.name} ({path})"

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def encode_many(self, texts: Sequence[str]) -> list[npt.NDArray[np.uint64]]:
        """The ids of each text, encoded in one batch call (the library spreads a batch over its threads)."""
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [np.asarray(e.ids, dtype=np.uint64) for e in encodings]

    def count(self, text: str) -> int:
        return len(self.encode(text))


def encode_flat(
    tokenizer: Tokenizer, texts: Sequence[str], lanes: bool = False
) -> tuple[npt.NDArray[np.uint64], list[int]]:
    """Token ids of all texts one after another (or their lanes, :func:`calculator.traffic.hashing.id_lanes`),
    and each text's number of ids."""
    flat = getattr(tokenizer, "encode_flat", None)
    if flat is not None:
        return cast(tuple[npt.NDArray[np.uint64], list[int]], flat(texts, lanes))
    arrays = encode_many(tokenizer, texts)
    joined = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)
    return (id_lanes(joined) if lanes else joined), [len(a) for a in arrays]


def encode_many(tokenizer: Tokenizer, texts: Sequence[str]) -> list[npt.NDArray[np.uint64]]:
    """Token ids of each text as arrays: the tokenizer's own batch call when it has one."""
    batch = getattr(tokenizer, "encode_many", None)
    if batch is not None:
        return cast(list[npt.NDArray[np.uint64]], batch(texts))
    return [np.asarray(tokenizer.encode(t), dtype=np.uint64) for t in texts]


def load_tokenizer(path: Path | str | None, field: str = "tokenizer") -> Tokenizer:
    """The exact tokenizer at ``path``, or the built-in approximation when ``path`` is None."""
    return ApproxTokenizer() if path is None else HuggingFaceTokenizer(path, field)


# --- chat rendering --------------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, Mapping):
                # Images, audio, files: their bytes are not text we can count; the same part always
                # renders the same way, so a repeated image still counts as a repeated start.
                parts.append(f"<{part.get('type', 'part')}:{_dumps(part)}>")
            else:
                raise ValueError(f"a content part is {type(part).__name__}, expected an object or a string")
        return "\n".join(parts)
    raise ValueError(f"message content is {type(content).__name__}, expected a string or a list of parts")


def render_chat(messages: Sequence[Any], tools: Sequence[Any] | None = None) -> list[str]:
    """Render an OpenAI chat request into text segments, one per tool list and per message.

    Deterministic and prefix-stable: segment k depends only on message k, so two requests that
    start with the same messages start with the same segments. Roles, names, tool calls and tool
    definitions are all included (they are all prompt text to the engine). Raises ValueError on a
    malformed message.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    segments = []
    if tools:
        segments.append(f"<|tools|>\n{_dumps(list(tools))}<|end|>\n")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"messages[{i}] is {type(message).__name__}, expected an object")
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise ValueError(f"messages[{i}] has no 'role'")
        try:
            text = _content_text(message.get("content"))
        except ValueError as exc:
            raise ValueError(f"messages[{i}]: {exc}") from None
        head = role
        if isinstance(message.get("name"), str):
            head += f" name={message['name']}"
        if isinstance(message.get("tool_call_id"), str):
            head += f" tool_call_id={message['tool_call_id']}"
        extra = ""
        if message.get("tool_calls"):
            extra = f"\n<|tool_calls|>{_dumps(message['tool_calls'])}"
        segments.append(f"<|{head}|>\n{text}{extra}<|end|>\n")
    return segments


def chat_tokens(tokenizer: Tokenizer, messages: Sequence[Any], tools: Sequence[Any] | None = None) -> list[int]:
    """Token ids of a chat request: each rendered segment tokenized on its own, then joined."""
    ids: list[int] = []
    for segment in render_chat(messages, tools):
        ids.extend(tokenizer.encode(segment))
    return ids


def encode_all(tokenizer: Tokenizer, texts: Iterable[str]) -> list[list[int]]:
    """Convenience for tests and benchmarks."""
    return [tokenizer.encode(t) for t in texts]
