"""Checks the scripted server runs on every request, to catch client bugs the real API rejects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["check_request", "check_thinking", "summarize_request"]


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def check_request(body: Mapping[str, Any]) -> list[str]:
    """Every problem with a Messages API request body; an empty list means it looks valid."""
    problems = _field_problems(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        problems.append("'messages' is missing or empty")
        return problems
    turns, well_formed = _turn_problems(messages)
    problems += turns
    if not well_formed:
        return problems
    problems += _unanswered_tool_uses(messages)
    problems += _orphan_tool_results(messages)
    problems += _repeated_tool_use_ids(messages)
    return problems


def _field_problems(body: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body.get("model"):
        problems.append("'model' is missing")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append("'max_tokens' is missing or not a positive integer")
    return problems


def _turn_problems(messages: list[Any]) -> tuple[list[str], bool]:
    """Problems with the messages' shapes and roles, and whether the other checks can read
    them (objects, alternating roles from 'user')."""
    problems: list[str] = []
    expected = "user"
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            problems.append(f"messages[{i}] is not an object")
            return problems, False
        role = msg.get("role")
        if role != expected:
            problems.append(f"messages[{i}] has role {role!r}; roles must alternate from 'user'")
            return problems, False
        content = msg.get("content")
        if role == "assistant" and (content in ("", None) or content == []):
            problems.append(f"messages[{i}] is an assistant message with empty content")
        if isinstance(content, list) and not content:
            problems.append(f"messages[{i}] has an empty content list")
        expected = "assistant" if role == "user" else "user"
    return problems, True


def _unanswered_tool_uses(messages: list[Any]) -> list[str]:
    """Each tool_use needs its tool_result in the very next (user) message."""
    problems: list[str] = []
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        ids = [b.get("id") for b in _blocks(msg.get("content")) if b.get("type") == "tool_use"]
        if not ids:
            continue
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = {
            b.get("tool_use_id")
            for b in _blocks(following.get("content") if following else None)
            if b.get("type") == "tool_result"
        }
        missing = [x for x in ids if x not in answered]
        if missing:
            problems.append(
                f"messages[{i}] has tool_use id(s) {missing} without a tool_result "
                f"in the immediately following user message"
            )
    return problems


def _orphan_tool_results(messages: list[Any]) -> list[str]:
    """Each tool_result answers a tool_use of the message before it, once."""
    problems: list[str] = []
    for i, msg in enumerate(messages):
        if msg.get("role") != "user":
            continue
        results = [
            b.get("tool_use_id")
            for b in _blocks(msg.get("content"))
            if b.get("type") == "tool_result"
        ]
        if not results:
            continue
        previous = messages[i - 1] if i > 0 else None
        asked = {
            b.get("id")
            for b in _blocks(previous.get("content") if previous else None)
            if b.get("type") == "tool_use"
        }
        orphans = [x for x in results if x not in asked]
        if orphans:
            problems.append(
                f"messages[{i}] has tool_result(s) for {orphans} with no matching tool_use "
                f"in the previous assistant message"
            )
        if len(results) != len(set(results)):
            repeated = sorted({str(x) for x in results if results.count(x) > 1})
            problems.append(f"messages[{i}] has more than one tool_result for {repeated}")
    return problems


def check_thinking(body: Mapping[str, Any], sent: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """Thinking blocks must come back exactly as the server sent them (the API checks their
    signatures): ``sent`` maps each tool_use id the server sent to the thinking and
    redacted_thinking blocks of that message. An assistant message answering such a call must
    start with those blocks, unchanged; a thinking block the server never sent is a problem."""
    problems: list[str] = []
    issued = [b for blocks in sent.values() for b in blocks]
    messages = body.get("messages")
    for i, msg in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(msg, Mapping) or msg.get("role") != "assistant":
            continue
        blocks = _blocks(msg.get("content"))
        thoughts = [dict(b) for b in blocks if b.get("type") in ("thinking", "redacted_thinking")]
        for t in thoughts:
            if issued and t not in issued:
                problems.append(f"messages[{i}] has a {t.get('type')} block that was altered")
        ids = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        expected = next((sent[x] for x in ids if x in sent), None)
        if expected and [dict(b) for b in blocks[: len(expected)]] != expected:
            problems.append(
                f"messages[{i}] does not start with the {len(expected)} thinking block(s) the "
                "model sent with its tool calls, unchanged"
            )
    return problems


def _repeated_tool_use_ids(messages: list[Any]) -> list[str]:
    """The API rejects a request in which two tool_use blocks (in any messages) share an id."""
    where: dict[Any, int] = {}
    problems: list[str] = []
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        for b in _blocks(msg.get("content")):
            if b.get("type") != "tool_use":
                continue
            if b.get("id") in where:
                problems.append(
                    f"messages[{i}]: tool_use id {b.get('id')!r} is not unique "
                    f"(also in messages[{where[b.get('id')]}])"
                )
            else:
                where[b.get("id")] = i
    return problems


def summarize_request(body: Any) -> str:
    """A one-line description of a request for failure messages."""
    if not isinstance(body, Mapping):
        return "body is not a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return f"{len(messages) if isinstance(messages, list) else 0} messages"
    last = messages[-1] if isinstance(messages[-1], Mapping) else {}
    content = last.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(repr(content[:60]))
    for b in _blocks(content):
        if b.get("type") == "text":
            parts.append(repr(str(b.get("text", ""))[:60]))
        elif b.get("type") == "tool_result":
            parts.append(f"tool_result({b.get('tool_use_id')})")
        else:
            parts.append(str(b.get("type")))
    return f"{len(messages)} messages, last {last.get('role')}: {', '.join(parts) or '(empty)'}"
