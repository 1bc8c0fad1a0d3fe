"""The model client: one streamed assistant turn over the Anthropic SDK, with our own retries.

The only module that imports ``anthropic`` (and ``httpx2``): import it lazily, after the first
frame. Facts this code relies on (SDK 2.x, see reference/stack.md §3): a stream cut mid-body
raises a raw ``httpx2.RemoteProtocolError`` that the SDK neither wraps nor retries; an in-stream
``event: error`` becomes ``APIStatusError`` with ``status_code == 200``; the SDK's own retries
obey ``retry-after`` uncapped and silently. So the SDK runs with ``max_retries=0`` by default
and this client retries everything itself (capped, announced through ``on_retry``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anthropic
import httpx2

from agent_cli.model.config import ModelConfig
from agent_cli.model.retry import RetryNotice, RetryPolicy, parse_retry_after
from agent_cli.model.turn import AssistantTurn, ModelError
from agent_cli.model.usage import Usage

__all__ = [
    "AbortLike",
    "ErrorInfo",
    "ModelClient",
    "block_to_dict",
    "classify_error",
    "system_blocks",
]

TextCallback = Callable[[str], Any]
ToolUseCallback = Callable[[str, str, dict[str, Any]], Any]
RetryCallback = Callable[[RetryNotice], Any]
RETRYABLE_IN_STREAM = frozenset({"overloaded_error", "api_error"})
STATUS_LABELS = {408: "request timeout", 409: "conflict", 429: "rate limited", 529: "overloaded"}


class AbortLike(Protocol):
    """What ``abort`` must offer (``tools.context.AbortSignal`` does)."""

    @property
    def aborted(self) -> bool: ...

    async def wait(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A failure of one attempt, classified."""

    retryable: bool
    reason: str  # short, for the user ("rate limited (429): ...")
    status: int | None = None
    error_type: str | None = None
    message: str = ""
    retry_after: float | None = None
    request_id: str | None = None


def _error_fields(body: object, fallback: str) -> tuple[str | None, str]:
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping):
            return (str(err.get("type") or "") or None, str(err.get("message") or fallback))
    return None, fallback


def classify_error(exc: BaseException) -> ErrorInfo | None:
    """Classify an exception from one attempt; None means it is not a model-call failure."""
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        etype, message = _error_fields(exc.body, exc.message)
        headers = exc.response.headers
        if status == 200:  # an `event: error` inside a 200 stream
            retryable = etype in RETRYABLE_IN_STREAM
            label = f"{(etype or 'error').replace('_', ' ')} mid-stream"
            retry_after = None
        else:
            retryable = status in (408, 409, 429) or status >= 500
            label = STATUS_LABELS.get(status, "server error" if status >= 500 else "error")
            label = f"{label} ({status})"
            retry_after = parse_retry_after(headers)
        # The server's explicit word wins, as in the SDK (our scripted server says "false" on
        # unexpected requests so a test fails once, loudly, instead of after every retry).
        hint = headers.get("x-should-retry")
        if hint in ("true", "false"):
            retryable = hint == "true"
        return ErrorInfo(
            retryable,
            f"{label}: {message}",
            status,
            etype,
            message,
            retry_after,
            headers.get("request-id"),
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ErrorInfo(True, "request timed out", message="request timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        return ErrorInfo(True, f"connection error: {cause}", message=str(cause))
    if isinstance(exc, httpx2.TransportError):
        return ErrorInfo(True, f"connection lost: {exc}", message=str(exc))
    if isinstance(exc, anthropic.APIError):
        return ErrorInfo(False, f"bad response: {exc.message}", message=exc.message)
    if isinstance(exc, _BadStream):
        return ErrorInfo(
            False, f"bad response: {exc}", message=f"bad response from the model: {exc}"
        )
    return None


def system_blocks(system: str | Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The system prompt as blocks with a cache breakpoint after its last block.

    The prompt is frozen per session, so everything up to here is cached across turns.
    """
    if not system:
        return []
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": system}] if isinstance(system, str) else [dict(b) for b in system]
    )
    if blocks and not any("cache_control" in b for b in blocks):
        blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
    return blocks


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


async def _call(fn: Callable[..., Any] | None, *args: Any) -> None:
    if fn is None:
        return
    result = fn(*args)
    if inspect.isawaitable(result):
        await result


class _Aborted(Exception):
    pass


class _BadStream(Exception):
    """The stream's content could not be read (the SDK failed to parse a tool's input JSON)."""


@dataclass
class _Attempt:
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


class ModelClient:
    """Streams assistant turns. See ``stream_turn`` for the contract with the agent loop."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        policy: RetryPolicy | None = None,
        sdk_max_retries: int = 0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.config = config
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key,
            base_url=config.base_url,
            max_retries=sdk_max_retries,
            timeout=config.timeout,
            http_client=http_client,
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def build_params(
        self,
        system: str | Sequence[Mapping[str, Any]] | None,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The request body (minus ``stream``); tools pass through as given (with their
        cache breakpoint, set by the registry after the last built-in tool)."""
        params: dict[str, Any] = {
            "model": model or self.config.model,
            "max_tokens": max_tokens or self.config.max_tokens,
            "messages": list(messages),
        }
        if blocks := system_blocks(system):
            params["system"] = blocks
        if tools:
            params["tools"] = list(tools)
        params.update(extra or {})
        return params

    async def stream_turn(
        self,
        system: str | Sequence[Mapping[str, Any]] | None,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_text: TextCallback | None = None,
        on_tool_use: ToolUseCallback | None = None,
        on_retry: RetryCallback | None = None,
        abort: AbortLike | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> AssistantTurn:
        """Stream one assistant turn.

        ``on_text(delta)`` gets each text delta. ``on_tool_use(id, name, input)`` is called the
        moment a tool_use block's ``content_block_stop`` arrives, with its complete input, before
        the message ends — hand the call to the executor and return quickly (the stream waits
        for the callback). Callbacks may be sync or async.

        Failures and tools (strategy (a): buffer nothing, never run a tool twice):

        * Nothing handed out yet and the failure is retryable (connection lost mid-stream,
          in-stream ``overloaded_error``/``api_error``, 408/409/429/5xx, connection errors):
          ``on_retry(RetryNotice)`` is called (with the text already streamed, so the UI can drop
          it), the client waits (backoff with jitter, ``retry-after`` capped) and asks again.
        * Some tool_use blocks already handed out: the client does NOT ask again (the model
          could answer differently and tools would run twice). It returns a partial turn:
          ``content`` = the blocks fully received, ``stop_reason="tool_use"``, ``partial=True``,
          ``error`` = what broke. The loop answers those tools and the conversation continues.
        * Not retryable (400, 401, 403, 404, 413, ...) or out of attempts: ``ModelError``.
        * ``abort`` fires: the stream is cancelled promptly and an ``aborted=True`` turn is
          returned (tools handed out so far are in it; the loop must answer them).
        """
        params = self.build_params(
            system, messages, tools, model=model, max_tokens=max_tokens, extra=extra
        )
        attempt = 0
        while True:
            attempt += 1
            state = _Attempt()
            if abort is not None and abort.aborted:
                return state.turn(attempt, aborted=True)
            try:
                return await self._until_abort(
                    self._attempt(params, state, attempt, on_text, on_tool_use), abort
                )
            except _Aborted:
                return state.turn(attempt, aborted=True)
            except Exception as exc:
                info = classify_error(exc)
                if info is None:
                    raise
                if state.handed_out:
                    return state.turn(attempt, error=info.reason)
                if not info.retryable or attempt >= self.policy.max_attempts:
                    raise ModelError(
                        info.message or info.reason,
                        status=info.status,
                        error_type=info.error_type,
                        request_id=info.request_id,
                        retryable=info.retryable,
                        attempts=attempt,
                    ) from exc
                delay = self.policy.delay(attempt, info.retry_after)
                notice = RetryNotice(
                    attempt, delay, info.reason, state.text_sent, tuple(state.handed_out)
                )
                await _call(on_retry, notice)
                try:
                    await self._until_abort(self._sleep(delay), abort)
                except _Aborted:
                    return _Attempt().turn(attempt, aborted=True, error=info.reason)

    @staticmethod
    async def _until_abort(work: Awaitable[Any], abort: AbortLike | None) -> Any:
        """Await ``work``; if ``abort`` fires first, cancel it and raise _Aborted."""
        task = asyncio.ensure_future(work)
        if abort is None:
            return await task
        waiter = asyncio.ensure_future(abort.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if task.cancelled():
            raise _Aborted
        return task.result()

    async def _attempt(
        self,
        params: dict[str, Any],
        state: _Attempt,
        attempt: int,
        on_text: TextCallback | None,
        on_tool_use: ToolUseCallback | None,
    ) -> AssistantTurn:
        async with self._client.messages.stream(**params) as stream:
            async for raw in _sdk_events(stream):
                await self._on_event(raw, state, on_text, on_tool_use)
            final = await stream.get_final_message()
        content = [block_to_dict(b) for b in final.content]
        for index, new_id in state.renamed.items():
            content[index]["id"] = new_id
        return AssistantTurn(
            content=[b for i, b in enumerate(content) if i not in state.truncated],
            stop_reason=final.stop_reason,
            usage=Usage.from_api(final.usage),
            model=final.model,
            message_id=final.id,
            attempts=attempt,
        )

    @staticmethod
    async def _on_event(
        raw: Any,
        state: _Attempt,
        on_text: TextCallback | None,
        on_tool_use: ToolUseCallback | None,
    ) -> None:
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
            await _call(on_text, piece)
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
                await _call(
                    on_tool_use, block["id"], block["name"], _raw_input(event.content_block)
                )


async def _sdk_events(stream: Any) -> AsyncIterator[Any]:
    """The SDK's events; its accumulator's ValueError (tool input JSON it cannot parse, e.g. a
    bare string) becomes ``_BadStream`` so the caller reports it as a bad response."""
    iterator = stream.__aiter__()
    while True:
        try:
            event = await iterator.__anext__()
        except StopAsyncIteration:
            return
        except ValueError as exc:
            raise _BadStream(str(exc).split(". Please retry")[0]) from exc
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
