"""The wire form of a scripted turn: SSE events in the real API's order, or a full Message."""

from __future__ import annotations

import json
from typing import Any

from agent_cli.testing.scenario import Turn

__all__ = ["Event", "message_json", "turn_events"]

Event = tuple[str, dict[str, Any]]


def _chunks(value: str, size: int) -> list[str]:
    if not value:
        return [""]
    size = max(1, min(size, (len(value) + 1) // 2)) if len(value) > 1 else 1
    return [value[i : i + size] for i in range(0, len(value), size)]


def message_json(turn: Turn, message_id: str, model: str, *, final: bool) -> dict[str, Any]:
    """The Message object: complete (non-streaming) or as ``message_start`` carries it."""
    usage = turn.usage()
    if not final:
        usage["output_tokens"] = 1
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(turn.blocks) if final else [],
        "stop_reason": turn.resolved_stop_reason() if final else None,
        "stop_sequence": None,
        "usage": usage,
    }


def turn_events(
    turn: Turn, message_id: str, model: str, text_chunk: int, json_chunk: int
) -> list[Event]:
    """The SSE events of one turn, in the real API's order."""
    message = message_json(turn, message_id, model, final=False)
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
    ]
    usage = turn.usage()
    for i, block in enumerate(turn.blocks):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in _chunks(block["text"], text_chunk)]
        elif block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": c}
                for c in _chunks(block["thinking"], text_chunk)
            ]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        elif block["type"] in ("web_search_tool_result", "redacted_thinking"):
            start, deltas = dict(block), []  # arrives whole, as the API sends it
        else:
            start = {"type": block["type"], "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            deltas = [
                {"type": "input_json_delta", "partial_json": c} for c in _chunks(raw, json_chunk)
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        for d in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": turn.resolved_stop_reason(), "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
