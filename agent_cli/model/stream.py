"""Reading one streamed attempt: wire events (plain dicts) folded into what the turn has so far.

Both transports hand over the events as the API sent them (``{"type": "content_block_delta",
"index": 0, "delta": {...}}``); this module is the only accumulator, so the first-party path
and the SDK path agree on every edge. It checks the protocol as it goes: an event for a block
that was never started, a delta without a body, a second ``message_start``... raise
``BadStream`` (nothing after such an event can be trusted), never an ``IndexError``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from agent_cli.model.errors import AttemptError, BadStream, in_stream_error
from agent_cli.model.turn import AssistantTurn
from agent_cli.model.usage import Usage
from tools.records import datarecord

__all__ = [
    "Attempt",
    "BlockCallback",
    "EventCallback",
    "TextCallback",
    "ToolUseCallback",
    "UnparsedToolInput",
    "call_back",
    "handle_event",
]

TextCallback = Callable[[str], Any]
BlockCallback = Callable[[dict[str, Any]], Any]  # a thinking or redacted_thinking block, whole
EventCallback = Callable[[Mapping[str, Any]], None]  # each raw API stream event, as it arrives
ToolUseCallback = Callable[[str, str, Any], Any]
_MESSAGE_EVENTS = frozenset(
    {
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class UnparsedToolInput(str):
    """A tool_use input that is not valid JSON, handed to ``on_tool_use`` as the raw text.

    The pipeline refuses any input that is not an object, so the call never runs; the model
    gets an ``is_error`` result naming ``parse_error`` instead of silence.
    """

    parse_error: str

    def __new__(cls, raw: str, parse_error: str) -> UnparsedToolInput:
        obj = super().__new__(cls, raw)
        obj.parse_error = parse_error
        return obj


async def call_back(fn: Callable[..., Any] | None, *args: Any) -> None:
    """Call a sync or async callback, if there is one."""
    if fn is None:
        return
    result = fn(*args)
    if inspect.isawaitable(result):
        await result


@datarecord
class _Open:
    """A content block still streaming."""

    start: dict[str, Any]
    text: str = ""
    json: str = ""
    thinking: str = ""
    signature: str = ""
    citations: list[Any] = field(default_factory=list)


@datarecord
class Attempt:
    """What one attempt has received so far."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)  # fully received
    open: dict[int, _Open] = field(default_factory=dict)  # blocks still streaming
    truncated: dict[int, tuple[dict[str, Any], str, str]] = field(default_factory=dict)
    renamed: dict[int, str] = field(default_factory=dict)  # duplicate tool_use ids, made unique
    handed_out: list[str] = field(default_factory=list)
    text_sent: str = ""
    usage: Usage = field(default_factory=Usage)
    usage_raw: dict[str, Any] = field(default_factory=dict)
    message_id: str | None = None
    request_id: str | None = None  # the response's request-id header, when the transport has it
    model: str = ""
    started: bool = False  # message_start seen
    stopped: bool = False  # message_stop seen
    stop_reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    on_block: BlockCallback | None = None  # told of each thinking block as it closes (the UI)
    on_event: EventCallback | None = None  # told of every raw event (partial messages)

    def turn(
        self, attempts: int, *, aborted: bool = False, error: str | None = None
    ) -> AssistantTurn:
        """The turn as received: complete (after ``message_stop``), partial or aborted."""
        parts = dict(self.blocks)
        if aborted:  # the user saw this text; keep it (an unfinished tool_use is never kept)
            parts.update(
                {i: {"type": "text", "text": o.text} for i, o in self.open.items() if o.text}
            )
        complete = self.stopped and not aborted and error is None
        content = [parts[i] for i in sorted(parts)]
        has_tool = any(b.get("type") == "tool_use" for b in content)
        stop_reason = self.stop_reason if complete else ("tool_use" if has_tool else None)
        return AssistantTurn(
            content=content,
            stop_reason=stop_reason,
            usage=self.usage,
            model=self.model,
            message_id=self.message_id,
            request_id=self.request_id,
            partial=not complete and not aborted,
            aborted=aborted,
            error=error,
            attempts=attempts,
            warnings=tuple(self.warnings),
        )

    async def release_unparsed(self, on_tool_use: ToolUseCallback | None) -> None:
        """Tool calls whose input JSON did not parse: dropped when ``max_tokens`` cut them (the
        loop says so), otherwise kept with ``{}`` and handed out so the model sees an error."""
        if self.stop_reason == "max_tokens" and self.stopped:
            return
        for index, (block, raw, problem) in sorted(self.truncated.items()):
            self.blocks[index] = block
            self.handed_out.append(block["id"])
            await call_back(
                on_tool_use, block["id"], block["name"], UnparsedToolInput(raw, problem)
            )
        self.truncated.clear()


def _index(event: Mapping[str, Any]) -> int:
    index = event.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise BadStream(f"{event.get('type')} without a valid block index ({index!r})")
    return index


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadStream(f"{what} is missing or not an object")
    return value


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise BadStream(f"{what} is missing or not a string")
    return value


def _merge_usage(state: Attempt, usage: Any) -> None:
    if isinstance(usage, Mapping):
        state.usage_raw.update(
            {k: v for k, v in usage.items() if k in _USAGE_KEYS and v is not None}
        )
        state.usage = Usage.from_api(state.usage_raw)


async def handle_event(
    event: Mapping[str, Any],
    state: Attempt,
    on_text: TextCallback | None,
    on_tool_use: ToolUseCallback | None,
) -> None:
    """Fold one wire event into ``state``; hand text deltas and complete tool calls to the
    callbacks as they arrive. Unknown event types are skipped (the API may add some)."""
    kind = event.get("type")
    if kind == "error":
        raise AttemptError(in_stream_error(event))
    if kind == "message_start":
        _message_start(event, state)
        return
    if kind not in _MESSAGE_EVENTS:
        return  # a ping, or a type the API added
    if not state.started:
        raise BadStream(f"{kind} before message_start")
    if kind == "content_block_delta":
        await _delta(event, state, on_text)
    elif kind == "content_block_start":
        _block_start(event, state)
    elif kind == "content_block_stop":
        await _stop(_index(event), state, on_tool_use)
    elif kind == "message_delta":
        _message_delta(event, state)
    else:
        _message_stop(state)


def _message_start(event: Mapping[str, Any], state: Attempt) -> None:
    if state.started:
        raise BadStream("a second message_start")
    message = _object(event.get("message"), "message_start's message")
    state.started = True
    state.message_id = str(message.get("id") or "") or None
    state.model = str(message.get("model") or "")
    _merge_usage(state, message.get("usage"))


def _block_start(event: Mapping[str, Any], state: Attempt) -> None:
    index = _index(event)
    if index in state.open or index in state.blocks or index in state.truncated:
        raise BadStream(f"block {index} started twice")
    block = dict(_object(event.get("content_block"), "content_block_start's content_block"))
    _str(block.get("type"), "content_block.type")
    if block["type"] == "tool_use":
        _str(block.get("id"), "tool_use id")
        _str(block.get("name"), "tool_use name")
    state.open[index] = _Open(block, text=str(block.get("text") or ""))


def _message_delta(event: Mapping[str, Any], state: Attempt) -> None:
    delta = event.get("delta")
    if isinstance(delta, Mapping) and delta.get("stop_reason") is not None:
        state.stop_reason = str(delta["stop_reason"])
    _merge_usage(state, event.get("usage"))


def _message_stop(state: Attempt) -> None:
    if state.open:
        state.warnings.append(
            f"the model's message ended with {len(state.open)} unfinished block(s); "
            "they were dropped"
        )
        state.open.clear()
    state.stopped = True


async def _delta(event: Mapping[str, Any], state: Attempt, on_text: TextCallback | None) -> None:
    index = _index(event)
    block = state.open.get(index)
    if block is None:
        raise BadStream(f"content_block_delta for block {index}, which is not open")
    delta = _object(event.get("delta"), "content_block_delta's delta")
    dtype = delta.get("type")
    btype = block.start["type"]
    if dtype == "text_delta" and btype == "text":
        piece = _str(delta.get("text"), "text_delta text")
        block.text += piece
        state.text_sent += piece
        await call_back(on_text, piece)
    elif dtype == "input_json_delta" and btype in ("tool_use", "server_tool_use"):
        block.json += _str(delta.get("partial_json"), "input_json_delta partial_json")
    elif dtype == "thinking_delta" and btype == "thinking":
        block.thinking += _str(delta.get("thinking"), "thinking_delta thinking")
    elif dtype == "signature_delta" and btype == "thinking":
        block.signature += _str(delta.get("signature"), "signature_delta signature")
    elif dtype == "citations_delta" and btype == "text":
        block.citations.append(delta.get("citation"))
    elif dtype in ("text_delta", "input_json_delta", "thinking_delta", "signature_delta"):
        raise BadStream(f"a {dtype} for block {index}, a {btype} block")


def _parse_json(raw: str) -> tuple[bool, Any, str]:
    """(ok, value, problem) for a streamed tool input."""
    try:
        return True, json.loads(raw), ""
    except ValueError as exc:
        return False, None, str(exc)


async def _stop(index: int, state: Attempt, on_tool_use: ToolUseCallback | None) -> None:
    block = state.open.pop(index, None)
    if block is None:
        raise BadStream(f"content_block_stop for block {index}, which is not open")
    start, btype = block.start, block.start["type"]
    if btype == "text":
        done: dict[str, Any] = {"type": "text", "text": block.text}
        if block.citations or start.get("citations"):
            done["citations"] = [*(start.get("citations") or []), *block.citations]
        state.blocks[index] = done
        return
    if btype == "thinking":
        state.blocks[index] = {
            "type": "thinking",
            "thinking": str(start.get("thinking") or "") + block.thinking,
            "signature": str(start.get("signature") or "") + block.signature,
        }
        await call_back(state.on_block, dict(state.blocks[index]))
        return
    if btype not in ("tool_use", "server_tool_use"):
        state.blocks[index] = start  # redacted_thinking, server tool results: whole at start
        if btype == "redacted_thinking":
            await call_back(state.on_block, dict(start))
        return
    if block.json:
        ok, value, problem = _parse_json(block.json)
    else:  # no deltas: the input came whole at the start (``{}`` from the real API)
        ok, value, problem = True, start.get("input", {}), ""
    # The API takes back only an object; a call with anything else is refused by the pipeline
    # (which is handed the raw value), the message keeps ``{}``.
    done = {
        "type": btype,
        "id": start["id"],
        "name": start["name"],
        "input": dict(value) if ok and isinstance(value, Mapping) else {},
    }
    if btype == "server_tool_use":
        state.blocks[index] = done
        return
    if done["id"] in state.handed_out or any(
        b.get("id") == done["id"] for b, _, _ in state.truncated.values()
    ):
        # The API rejects a conversation with two tool_use blocks of one id (and would go on
        # rejecting it on every --continue): the repeat gets an id of its own.
        done["id"] = f"{done['id']}_{index}"
        state.renamed[index] = done["id"]
    if not ok:
        # Cut off by max_tokens, or garbage: which one is known only at message_delta.
        state.truncated[index] = (done, block.json, problem)
        return
    state.blocks[index] = done
    state.handed_out.append(done["id"])
    await call_back(on_tool_use, done["id"], done["name"], value)
