"""How full the context window is: the API's own count after each response, plus an estimate.

After each response the API says how many tokens it read (input + cache writes + cache reads)
and wrote; the conversation since then (tool results, a new prompt) is estimated at four
characters a token, as Claude Code does. Without a response to start from (a resumed session, just
after a compaction) everything is estimated. Estimates walk the message structure once and
never serialise a big conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agent_cli.model.usage import Usage

__all__ = ["CHARS_PER_TOKEN", "IMAGE_TOKENS", "ContextMeter", "estimate_tokens"]

CHARS_PER_TOKEN = 4
# An image or a PDF page costs about this much whatever its bytes (the API scales images down).
IMAGE_TOKENS = 1_600
_MEDIA = frozenset({"image", "document"})


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return _dict_chars(value)
    if isinstance(value, list | tuple):
        return sum(_chars(v) for v in value)
    if value is None:
        return 0
    return len(str(value))


def _dict_chars(value: dict[Any, Any]) -> int:
    """A block by its type (``_BLOCK_CHARS``), a message by its content, else every public
    field (a JSON schema's "type" may be anything: not a block type)."""
    kind = value.get("type")
    measure = _BLOCK_CHARS.get(kind) if isinstance(kind, str) else None
    if measure is not None:
        return measure(value)
    if "role" in value and "content" in value:
        return _chars(value["content"]) + 8
    total = 0
    for key, item in value.items():
        if not str(key).startswith("_"):
            total += _chars(item)
    return total


def _media_chars(_block: dict[Any, Any]) -> int:
    return IMAGE_TOKENS * CHARS_PER_TOKEN


def _text_chars(block: dict[Any, Any]) -> int:
    return len(str(block.get("text", "")))


def _tool_use_chars(block: dict[Any, Any]) -> int:
    try:
        body = json.dumps(block.get("input"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        body = str(block.get("input"))
    return len(body) + len(str(block.get("name", "")))


def _tool_result_chars(block: dict[Any, Any]) -> int:
    return _chars(block.get("content")) + 16


def _thinking_chars(block: dict[Any, Any]) -> int:
    return len(str(block.get("thinking") or block.get("data") or ""))


_BLOCK_CHARS: dict[str, Callable[[dict[Any, Any]], int]] = {
    **dict.fromkeys(_MEDIA, _media_chars),
    "text": _text_chars,
    "tool_use": _tool_use_chars,
    "tool_result": _tool_result_chars,
    "thinking": _thinking_chars,
    "redacted_thinking": _thinking_chars,
}


def estimate_tokens(value: Any) -> int:
    """Tokens of a string, a message, a block, or a list of them (chars / 4, media flat)."""
    return (_chars(value) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


class ContextMeter:
    """The context size before the next request.

    ``observe`` after each response (its usage and how many messages the conversation then
    had); ``discount`` when tokens are removed from messages already counted (cleared tool
    results); ``reset`` when the conversation was replaced (compaction, resume, /clear).
    """

    def __init__(self) -> None:
        self._api_tokens: int | None = None
        self._mark = 0
        self._adjust = 0

    @property
    def measured(self) -> bool:
        """True when the count starts from the API's own figure, not only from an estimate."""
        return self._api_tokens is not None

    def observe(self, usage: Usage, n_messages: int) -> None:
        counted = usage.total_input + usage.output
        if counted <= 0:
            return  # an aborted or empty response says nothing about the context
        self._api_tokens = counted
        self._mark = n_messages
        self._adjust = 0

    def discount(self, tokens: int) -> None:
        self._adjust -= max(0, tokens)

    def reset(self) -> None:
        self._api_tokens = None
        self._mark = 0
        self._adjust = 0

    def tokens(
        self, system: str, tools: Iterable[dict[str, Any]], messages: Sequence[Mapping[str, Any]]
    ) -> int:
        """The estimated size of the next request: system prompt, tools and messages."""
        if self._api_tokens is None or self._mark > len(messages):
            return (
                estimate_tokens(system)
                + estimate_tokens(list(tools))
                + estimate_tokens(list(messages))
            )
        since = estimate_tokens(list(messages[self._mark :]))
        return max(0, self._api_tokens + self._adjust + since)
