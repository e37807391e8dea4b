"""The built-in tokenizer, the exact one from a tokenizer.json, and deterministic chat rendering."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from calculator.errors import InputError
from calculator.traffic.tokens import ApproxTokenizer, HuggingFaceTokenizer, chat_tokens, load_tokenizer, render_chat


def _id(piece: str) -> int:
    return int.from_bytes(hashlib.blake2b(piece.encode(), digest_size=8).digest(), "big")


def test_approx_ids_are_stable_hashes_of_pre_tokens() -> None:
    # Independent of process and machine: ids are blake2b of the text pieces, words keep their leading space.
    assert ApproxTokenizer().encode("Hello world") == [_id("Hello"), _id(" world")]


def test_approx_splits_like_cl100k_pre_tokenizer() -> None:
    tok = ApproxTokenizer()
    assert tok.count("I'm here") == 3  # "I", "'m", " here"
    assert tok.count("1234567") == 3  # digit groups of at most three
    assert tok.count("internationalization") == 3  # 20 letters, 8 per token
    assert tok.count("") == 0


def test_approx_counts_cjk_at_about_three_quarters_of_a_token_per_character() -> None:
    # Tekken (tekken_240911) gives 4 tokens for these 6 characters; cl100k-style vocabularies 6 to 8.
    assert ApproxTokenizer().count("東京都渋谷区") == 5


def test_chat_rendering_is_deterministic_and_includes_roles() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert render_chat(messages) == ["<|system|>\nBe brief.<|end|>\n", "<|user|>\nHi<|end|>\n"]
    swapped = [{"role": "user", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    tok = ApproxTokenizer()
    assert chat_tokens(tok, messages) == chat_tokens(tok, [dict(m) for m in messages])
    assert chat_tokens(tok, messages) != chat_tokens(tok, swapped)


def test_same_conversation_start_gives_the_same_tokens_whatever_follows() -> None:
    tok = ApproxTokenizer()
    start = [{"role": "system", "content": "You help with tax forms."}, {"role": "user", "content": "Form 1040?"}]
    longer = [*start, {"role": "assistant", "content": "Yes"}, {"role": "user", "content": "thanks"}]
    a, b = chat_tokens(tok, start), chat_tokens(tok, longer)
    assert b[: len(a)] == a


def test_chat_rendering_covers_tools_parts_and_tool_calls() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": 2}}}]
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "u"}}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    segments = render_chat(messages, tools)
    assert segments[0] == '<|tools|>\n[{"function":{"name":"f","parameters":{"a":2,"b":1}},"type":"function"}]<|end|>\n'
    assert segments[1].startswith("<|user|>\nlook\n<image_url:")
    assert '<|tool_calls|>[{"function":{"name":"f"},"id":"c1"}]' in segments[2]
    assert segments[3] == "<|tool tool_call_id=c1|>\n42<|end|>\n"


@pytest.mark.parametrize(
    "messages",
    [[], "hello", [{"content": "no role"}], [{"role": "user", "content": 5}], ["not an object"]],
)
def test_malformed_messages_are_refused(messages: object) -> None:
    with pytest.raises(ValueError):
        render_chat(messages)  # type: ignore[arg-type]


def test_exact_tokenizer_from_a_local_tokenizer_json(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    hf = tokenizers.Tokenizer(WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, unk_token="[UNK]"))
    hf.pre_tokenizer = Whitespace()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = load_tokenizer(path)
    assert tok.exact and tok.encode("hello world again") == [0, 1, 2]


def test_a_bad_tokenizer_json_names_the_path(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    path = tmp_path / "tokenizer.json"
    path.write_text('{"this is": "not a tokenizer"}')
    with pytest.raises(InputError) as exc:
        HuggingFaceTokenizer(path)
    assert exc.value.field == "tokenizer" and str(path) in exc.value.message


def test_missing_tokenizers_package_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(InputError) as exc:
        HuggingFaceTokenizer(tmp_path / "tokenizer.json")
    assert "pip install" in exc.value.message


def test_default_is_the_builtin_approximation() -> None:
    tok = load_tokenizer(None)
    assert not tok.exact and isinstance(tok, ApproxTokenizer)
