"""Reading one streamed attempt: SDK stream events folded into what the turn has so far.

Kept apart from ``agent_cli.model.client`` (retries, errors, the SDK client); nothing here
imports the SDK: events and blocks are read by their attributes.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_cli.model.turn import AssistantTurn
from agent_cli.model.usage import Usage

__all__ = [
    "Attempt",
    "BadStream",
    "TextCallback",
    "ToolUseCallback",
    "block_to_dict",
    "call_back",
    "handle_event",
    "sdk_events",
]

TextCallback = Callable[[str], Any]
ToolUseCallback = Callable[[str, str, dict[str, Any]], Any]


def block_to_dict(block: Any) -> dict[str, Any]:
    """An SDK content block as the plain dict the API accepts back (no SDK-only fields)."""
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        # The API takes back only an object; a model that sent anything else gets its call
        # rejected by the pipeline (which is handed the raw value), the message keeps ``{}``.
        raw = block.input
        tool_input = dict(raw) if isinstance(raw, Mapping) else {}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return dumped


async def call_back(fn: Callable[..., Any] | None, *args: Any) -> None:
    """Call a sync or async callback, if there is one."""
    if fn is None:
        return
    result = fn(*args)
    if inspect.isawaitable(result):
        await result


class BadStream(Exception):
    """The stream's content could not be read (the SDK failed to parse a tool's input JSON)."""


@dataclass
class Attempt:
    """What one attempt has received so far."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)  # fully received
    open_text: dict[int, str] = field(default_factory=dict)  # text blocks still streaming
    open_json: dict[int, str] = field(default_factory=dict)  # tool inputs still streaming
    truncated: set[int] = field(default_factory=set)  # tool_use blocks cut off mid-input
    renamed: dict[int, str] = field(default_factory=dict)  # duplicate tool_use ids, made unique
    handed_out: list[str] = field(default_factory=list)
    text_sent: str = ""
    usage: Usage = field(default_factory=Usage)
    message_id: str | None = None
    model: str = ""

    def turn(
        self, attempts: int, *, aborted: bool = False, error: str | None = None
    ) -> AssistantTurn:
        parts = dict(self.blocks)
        if aborted:  # the user saw this text; keep it (an unfinished tool_use is never kept)
            parts.update({i: {"type": "text", "text": t} for i, t in self.open_text.items() if t})
        content = [parts[i] for i in sorted(parts)]
        has_tool = any(b["type"] == "tool_use" for b in content)
        return AssistantTurn(
            content=content,
            stop_reason="tool_use" if has_tool else None,
            usage=self.usage,
            model=self.model,
            message_id=self.message_id,
            partial=not aborted,
            aborted=aborted,
            error=error,
            attempts=attempts,
        )


async def handle_event(
    raw: Any,
    state: Attempt,
    on_text: TextCallback | None,
    on_tool_use: ToolUseCallback | None,
) -> None:
    """Fold one SDK stream event into ``state``; hand text deltas and complete tool calls to
    the callbacks as they arrive."""
    event: Any = raw  # a union the type checker cannot narrow by .type
    kind = event.type
    if kind == "message_start":
        state.message_id = event.message.id
        state.model = event.message.model
        state.usage = Usage.from_api(event.message.usage)
    elif kind == "content_block_delta" and event.delta.type == "text_delta":
        piece = event.delta.text
        state.open_text[event.index] = state.open_text.get(event.index, "") + piece
        state.text_sent += piece
        await call_back(on_text, piece)
    elif kind == "content_block_delta" and event.delta.type == "input_json_delta":
        state.open_json[event.index] = (
            state.open_json.get(event.index, "") + event.delta.partial_json
        )
    elif kind == "content_block_stop":
        block = block_to_dict(event.content_block)
        state.open_text.pop(event.index, None)
        raw_json = state.open_json.pop(event.index, "")
        if block["type"] == "tool_use" and not _complete_json(raw_json):
            # Cut off (max_tokens): the SDK filled in a partial input. Never run it, never
            # send it back; the turn's stop_reason tells the loop what happened.
            state.truncated.add(event.index)
            return
        if block["type"] == "tool_use" and block["id"] in state.handed_out:
            # The API rejects a conversation with two tool_use blocks of one id (and would
            # go on rejecting it on every --continue): the repeat gets an id of its own.
            block["id"] = f"{block['id']}_{event.index}"
            state.renamed[event.index] = block["id"]
        state.blocks[event.index] = block
        if block["type"] == "tool_use":
            state.handed_out.append(block["id"])
            await call_back(
                on_tool_use, block["id"], block["name"], _raw_input(event.content_block)
            )


async def sdk_events(stream: Any) -> AsyncIterator[Any]:
    """The SDK's events; its accumulator's ValueError (tool input JSON it cannot parse, e.g. a
    bare string) becomes ``BadStream`` so the caller reports it as a bad response."""
    iterator = stream.__aiter__()
    while True:
        try:
            event = await iterator.__anext__()
        except StopAsyncIteration:
            return
        except ValueError as exc:
            raise BadStream(str(exc).split(". Please retry")[0]) from exc
        yield event


def _complete_json(raw: str) -> bool:
    """True when a tool_use's streamed input is whole (no deltas at all means ``{}``)."""
    if not raw:
        return True
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def _raw_input(block: Any) -> Any:
    """What the model sent as input: a copy of an object, anything else as it is."""
    raw = block.input
    return dict(raw) if isinstance(raw, Mapping) else raw
