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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anthropic
import httpx2

from agent_cli.model.config import ModelConfig
from agent_cli.model.retry import RetryNotice, RetryPolicy, parse_retry_after
from agent_cli.model.stream import (
    Attempt,
    BadStream,
    TextCallback,
    ToolUseCallback,
    block_to_dict,
    call_back,
    handle_event,
    sdk_events,
)
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
    if isinstance(exc, BadStream):
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


class _Aborted(Exception):
    pass


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
            state = Attempt()
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
                await call_back(on_retry, notice)
                try:
                    await self._until_abort(self._sleep(delay), abort)
                except _Aborted:
                    return Attempt().turn(attempt, aborted=True, error=info.reason)

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
        state: Attempt,
        attempt: int,
        on_text: TextCallback | None,
        on_tool_use: ToolUseCallback | None,
    ) -> AssistantTurn:
        async with self._client.messages.stream(**params) as stream:
            async for raw in sdk_events(stream):
                await handle_event(raw, state, on_text, on_tool_use)
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
