"""Prompt datasets that are not request logs, as the requests they stand for.

- ShareGPT and similar conversation datasets (FastChat, LLaMA-Factory): ``{"conversations": [{"from",
  "value"}, ...]}``. A chat service answers a conversation one user turn at a time, each request carrying
  the whole conversation so far: so a conversation of n user turns is n requests, the k-th holding every
  message before the k-th user turn's answer, and the answer's tokens are that request's output. The
  dataset has no times: requests come conversation by conversation, in the file's order (a TTL cannot be
  simulated on it, and no interleaving of users is invented).
- genai-perf input files: ``{"text": ...}`` (or the older ``text_input``) per line, a prompt each, and the
  payload form (``--input-file payload:FILE``) that adds ``timestamp`` (milliseconds), ``session_id``,
  ``delay`` and ``output_length``. A payload line without text asks genai-perf to make up a synthetic
  prompt: it holds nothing to measure, unless it has ``hash_ids`` (then it is a Mooncake trace line).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["GENAI_PERF_TEXT", "ROLES", "genai_perf_prompt", "sharegpt_turns"]

ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
    "system": "system",
    "function_call": "assistant",
    "observation": "tool",
    "tool": "tool",
    "function": "tool",
}
"""ShareGPT speakers as chat roles (FastChat's and LLaMA-Factory's names; a tool call is the assistant's)."""
GENAI_PERF_TEXT = ("text", "text_input")


def sharegpt_turns(record: dict[str, Any]) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
    """(messages so far, the answer's text or None) for each user turn of one ShareGPT conversation.

    A ``system`` member of the record (LLaMA-Factory) opens the conversation. Raises ValueError naming the
    message at fault: a speaker that is no known role, a value that is not text, no user turn at all.
    """
    turns = record.get("conversations", record.get("conversation"))
    if not isinstance(turns, list) or not turns:
        raise ValueError("'conversations' must be a non-empty list of {'from', 'value'} messages")
    messages: list[dict[str, Any]] = []
    system = record.get("system")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": system})
    asked: list[dict[str, Any]] | None = None
    any_user = False
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise ValueError(f"conversations[{i}] is {type(turn).__name__}, expected an object with 'from' and 'value'")
        speaker = turn.get("from", turn.get("role"))
        role = ROLES.get(speaker.lower()) if isinstance(speaker, str) else None
        if role is None:
            raise ValueError(f"conversations[{i}]: 'from' {speaker!r} is not a speaker; allowed: {', '.join(ROLES)}")
        value = turn.get("value", turn.get("content"))
        if not isinstance(value, str):
            raise ValueError(f"conversations[{i}]: 'value' must be text, got {type(value).__name__}")
        if role == "assistant" and asked is not None:
            yield asked, value
            asked = None
        elif role == "user":
            if asked is not None:  # two user turns in a row: the first was sent without an answer
                yield asked, None
            any_user = True
        messages.append({"role": role, "content": value})
        if role == "user":
            asked = list(messages)
    if asked is not None:
        yield asked, None
    if not any_user:
        raise ValueError("the conversation has no user turn ('from': 'human' or 'user'), so no request")


def genai_perf_prompt(record: dict[str, Any]) -> tuple[str, float | None, int | None]:
    """(prompt text, timestamp in seconds or None, output tokens or None) of a genai-perf input line."""
    texts = [record[k] for k in GENAI_PERF_TEXT if record.get(k) is not None]
    if len(texts) > 1:
        raise ValueError("both 'text' and 'text_input': genai-perf takes one of them")
    if not texts:
        raise ValueError(
            "no 'text': genai-perf makes up a synthetic prompt for this line, so there is nothing to measure"
        )
    text = texts[0]
    if not isinstance(text, str):
        raise ValueError(f"'text' must be a string, got {type(text).__name__}")
    stamp = record.get("timestamp")
    seconds: float | None = None
    if stamp is not None:
        if isinstance(stamp, bool) or not isinstance(stamp, int | float) or stamp != stamp or abs(stamp) > 1e18:
            raise ValueError("'timestamp' must be a number of milliseconds (genai-perf payload)")
        seconds = stamp / 1000
    output = record.get("output_length")
    if output is not None and (isinstance(output, bool) or not isinstance(output, int) or output < 0):
        raise ValueError(f"'output_length' must be a whole number 0 or more, got {output!r}")
    return text, seconds, output
