"""Conversation messages and the boundary to the API (``normalize_messages_for_api``).

Inside Nerve a message is an API-shaped dict, typed ``tools.messages.Message`` (``role``,
``content``), that may carry private keys starting with ``_``:

* ``_uuid``: the transcript record of a prompt (``/rewind`` returns to it);
* ``_ui_only``: shown in the UI and kept in the transcript, never sent to the model;
* ``_ephemeral``: a system reminder meant for the next request only; sent once, then dropped.

Blocks are read as plain dicts (``content_blocks``): a conversation read back from a transcript
may hold anything, so readers use ``.get``.

``normalize_messages_for_api`` is the single place that turns the conversation into a valid
request: private keys and UI-only messages go, tool_result blocks stay first in the user message
right after their tool_use, tool_use ids are unique (``agent_cli.loop.tool_ids``), every tool_use
gets exactly one tool_result (an "interrupted" one if it has none), consecutive messages of the
same role are merged, and no empty message is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from agent_cli.loop.tool_ids import unique_tool_ids
from tools.messages import ContentBlock, Message, tool_result_block
from tools.messages import system_reminder as lasting_reminder

__all__ = [
    "INTERRUPTED_RESULT",
    "answer_dangling_tool_uses",
    "content_blocks",
    "encodable",
    "normalize_messages_for_api",
    "system_reminder",
    "text_of",
    "tool_use_ids",
]

INTERRUPTED_RESULT = "[Request interrupted by user for tool use]"


def system_reminder(text: str, *, ephemeral: bool = True) -> Message:
    """A user-role reminder for the model (hook context, notices)."""
    msg = lasting_reminder(text)
    if ephemeral:
        msg["_ephemeral"] = True
    return msg


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as blocks (a string is one text block; anything else, none).

    Plain dicts, read with ``.get``: a conversation read back from a transcript may hold
    anything. ``as_content`` makes them a message's content again."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return []
    return [dict(b) for b in content if isinstance(b, dict)]


def as_content(blocks: list[dict[str, Any]]) -> list[ContentBlock]:
    """Blocks read with ``content_blocks`` as a message's content (the API judges their shape)."""
    return cast("list[ContentBlock]", blocks)


def text_of(message: Mapping[str, Any]) -> str:
    return "".join(
        b.get("text", "") for b in content_blocks(message.get("content")) if b.get("type") == "text"
    )


def tool_use_ids(message: Mapping[str, Any]) -> list[str]:
    return [b["id"] for b in content_blocks(message.get("content")) if b.get("type") == "tool_use"]


def _is_empty_text(block: dict[str, Any]) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def answer_dangling_tool_uses(
    messages: Sequence[Message], note: str = INTERRUPTED_RESULT
) -> list[Message]:
    """Give every tool_use without a tool_result an "interrupted" error result (in place order)."""
    out: list[Message] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        out.append(msg)
        if msg.get("role") == "assistant":
            ids = tool_use_ids(msg)
            if ids:
                nxt = messages[i + 1] if i + 1 < len(messages) else None
                answered: set[str] = set()
                if nxt is not None and nxt.get("role") == "user":
                    answered = {
                        b.get("tool_use_id", "")
                        for b in content_blocks(nxt.get("content"))
                        if b.get("type") == "tool_result"
                    }
                missing = [t for t in ids if t not in answered]
                if missing:
                    results: list[ContentBlock] = [
                        tool_result_block(t, note, is_error=True) for t in missing
                    ]
                    if nxt is not None and nxt.get("role") == "user":
                        rest = as_content(content_blocks(nxt.get("content")))
                        merged: Message = {**nxt, "content": results + rest}
                        out.append(merged)
                        i += 2
                        continue
                    out.append({"role": "user", "content": results})
        i += 1
    return out


def encodable(value: Any) -> Any:
    """``value`` with every string UTF-8 can encode: a lone surrogate (half an emoji in a
    model's JSON, an undecodable file name) becomes its escape (``\\udcff``) as text.

    The request body is UTF-8: one such character anywhere would fail every later request of
    the session. Returns ``value`` itself when nothing needed escaping.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        fixed = {k: encodable(v) for k, v in value.items()}
        return value if all(fixed[k] is value[k] for k in value) else fixed
    if isinstance(value, list):
        items = [encodable(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def normalize_messages_for_api(messages: Iterable[Message]) -> list[Message]:
    """The conversation as the Messages API must see it (see module docstring)."""
    valid = _without_orphan_results(unique_tool_ids(_merged_api_messages(messages)))
    while valid and valid[0]["role"] != "user":
        valid.pop(0)
    return answer_dangling_tool_uses(cast("list[Message]", valid))


def _merged_api_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The user and assistant messages without private keys, empty text or UI-only messages,
    consecutive ones of a role merged, tool_results first in each user message."""
    cleaned: list[dict[str, Any]] = []
    for msg in messages:
        if msg.get("_ui_only") or msg.get("role") not in ("user", "assistant"):
            continue
        blocks = [b for b in content_blocks(msg.get("content")) if not _is_empty_text(b)]
        blocks = [{k: encodable(v) for k, v in b.items() if not k.startswith("_")} for b in blocks]
        if not blocks:
            continue  # never send an empty message
        role = msg["role"]
        if cleaned and cleaned[-1]["role"] == role:
            prev = cleaned[-1]["content"]
            if role == "user":
                # tool_results must come first in a user message
                results = [b for b in prev + blocks if b.get("type") == "tool_result"]
                others = [b for b in prev + blocks if b.get("type") != "tool_result"]
                cleaned[-1]["content"] = results + others
            else:
                cleaned[-1]["content"] = prev + blocks
            continue
        if role == "user":
            results = [b for b in blocks if b.get("type") == "tool_result"]
            blocks = results + [b for b in blocks if b.get("type") != "tool_result"]
        cleaned.append({"role": role, "content": blocks})
    return cleaned


def _without_orphan_results(cleaned: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop tool_results that answer no tool_use of the preceding assistant message (orphans
    would make the request invalid), merging what then meets a message of its own role."""
    valid: list[dict[str, Any]] = []
    for idx, raw in enumerate(cleaned):
        if raw["role"] == "user":
            prev_ids = set(tool_use_ids(cleaned[idx - 1])) if idx > 0 else set()
            blocks = [
                b
                for b in raw["content"]
                if b.get("type") != "tool_result" or b.get("tool_use_id") in prev_ids
            ]
            if not blocks:
                continue
            raw = {"role": "user", "content": blocks}
        if valid and valid[-1]["role"] == raw["role"]:
            valid[-1]["content"] = valid[-1]["content"] + raw["content"]
        else:
            valid.append(raw)
    return valid
