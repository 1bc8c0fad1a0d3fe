"""Unique tool_use ids across a conversation, for the API boundary.

The API rejects a request in which two tool_use blocks share an id, or one user message holds
two tool_results for one id, and it would go on rejecting every later request of that session.
Ids repeat when a model reuses one in a later message, when a transcript holds a line twice, or
when records of one message were merged. ``unique_tool_ids`` makes the request valid, the same
way every time (so the prompt cache stays warm): an exact repeat of a call in the same message is
dropped, a reused id gets a new one (``<id>_r2``, ``<id>_r3``...) together with the result that
answers it in the next message, and a repeated result for one id is dropped.
"""

from __future__ import annotations

from collections import deque
from typing import Any

__all__ = ["unique_tool_ids"]

# A message as ``normalize_messages_for_api`` builds it: role and a list of plain block dicts.
Message = dict[str, Any]


def unique_tool_ids(messages: list[Message]) -> list[Message]:
    """``messages`` (alternating roles, list content) with unique tool_use ids; see above."""
    all_ids = {
        b.get("id")
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "tool_use"
    }
    seen: set[Any] = set()
    repeats: dict[Any, int] = {}
    out: list[Message] = []
    renamed: dict[Any, deque[Any]] = {}  # old id -> the ids its results take, in call order
    for msg in messages:
        if msg["role"] == "assistant":
            msg, renamed = _assistant(msg, seen, repeats, all_ids)
        elif renamed or _has_repeated_result(msg):
            msg = _user(msg, renamed)
            renamed = {}
        out.append(msg)
    return out


def _assistant(
    msg: Message, seen: set[Any], repeats: dict[Any, int], all_ids: set[Any]
) -> tuple[Message, dict[Any, deque[Any]]]:
    blocks: list[dict[str, Any]] = []
    mine: list[dict[str, Any]] = []  # this message's calls, as sent
    order: dict[Any, deque[Any]] = {}
    changed = False
    for b in msg["content"]:
        if b.get("type") != "tool_use":
            blocks.append(b)
            continue
        old = b.get("id")
        if any(c == b for c in mine):
            changed = True  # the same call twice (a repeated record): one call
            continue
        mine.append(b)
        new = old
        if old in seen:
            new = _fresh(old, repeats, all_ids)
            b = {**b, "id": new}
            changed = True
        seen.add(new)
        order.setdefault(old, deque()).append(new)
        blocks.append(b)
    if not changed:
        return msg, {}
    return {**msg, "content": blocks}, order


def _fresh(old: Any, repeats: dict[Any, int], all_ids: set[Any]) -> str:
    n = repeats.get(old, 1)
    while True:
        n += 1
        candidate = f"{old}_r{n}"
        if candidate not in all_ids:
            repeats[old] = n
            all_ids.add(candidate)
            return candidate


def _has_repeated_result(msg: Message) -> bool:
    ids = [b.get("tool_use_id") for b in msg["content"] if b.get("type") == "tool_result"]
    return len(ids) != len(set(ids))


def _user(msg: Message, renamed: dict[Any, deque[Any]]) -> Message:
    blocks: list[dict[str, Any]] = []
    answered: set[Any] = set()
    for b in msg["content"]:
        if b.get("type") == "tool_result":
            queue = renamed.get(b.get("tool_use_id"))
            if queue:
                b = {**b, "tool_use_id": queue.popleft()}
            if b.get("tool_use_id") in answered:
                continue  # a second result for one call
            answered.add(b.get("tool_use_id"))
        blocks.append(b)
    return {**msg, "content": blocks}
