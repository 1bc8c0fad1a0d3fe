"""The model client: one streamed assistant turn over a ``Transport``, with our own retries.

No SDK here: the first-party transport speaks HTTP itself (``agent_cli.model.http_transport``)
and the SDK is imported only for Bedrock and Vertex (``agent_cli.model.sdk_transport``). Every
failure arrives classified (``ErrorInfo``), so retries, partial turns and final errors are
decided here alone, the same for both.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from agent_cli.model.config import ModelConfig
from agent_cli.model.errors import AttemptError, BadStream, ErrorInfo, connection_lost
from agent_cli.model.key_helper import KeyHelperError
from agent_cli.model.retry import OVERLOADS_BEFORE_FALLBACK, RetryNotice, RetryPolicy
from agent_cli.model.stream import (
    Attempt,
    BlockCallback,
    EventCallback,
    TextCallback,
    ToolUseCallback,
    call_back,
    handle_event,
)
from agent_cli.model.thinking import ThinkingChoice, thinking_fields
from agent_cli.model.transport import Transport, make_transport
from agent_cli.model.turn import AssistantTurn, ModelError

__all__ = ["AbortLike", "ErrorInfo", "ModelClient", "classify_error", "system_blocks"]

RetryCallback = Callable[[RetryNotice], Any]
# After message_stop the body normally just ends; a server that keeps it open gets this long.
_DRAIN_S = 2.0


class AbortLike(Protocol):
    """What ``abort`` must offer (``tools.context.AbortSignal`` does)."""

    @property
    def aborted(self) -> bool: ...

    async def wait(self) -> None: ...


def classify_error(exc: BaseException) -> ErrorInfo | None:
    """Classify an exception from one attempt; None means it is not a model-call failure."""
    if isinstance(exc, AttemptError):
        return exc.info
    if isinstance(exc, BadStream):  # as a broken connection: retried, or a partial turn
        return ErrorInfo(True, f"bad stream: {exc}", message=f"bad stream from the model: {exc}")
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
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: Transport | None = None,
    ) -> None:
        self.config = config
        self.policy = policy or RetryPolicy(max_attempts=config.max_retries + 1)
        self._sleep = sleep
        self.transport = transport or make_transport(config)
        # model -> the fallback that replaced it after repeated overload (for the session)
        self.fallen_back: dict[str, str] = {}

    async def aclose(self) -> None:
        await self.transport.aclose()

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
        thinking: bool | ThinkingChoice = False,
        on_block: BlockCallback | None = None,
        on_event: EventCallback | None = None,
    ) -> AssistantTurn:
        """Stream one assistant turn (``thinking``: with extended thinking, when configured;
        a ``ThinkingChoice`` (``/model``) overrides the configured thinking and effort).
        ``on_block(block)`` gets each thinking or redacted_thinking block as it closes.
        ``on_event(event)`` gets every raw API stream event as it arrives (stream-json's
        partial messages; a retried attempt's events are followed by the next attempt's).

        ``on_text(delta)`` gets each text delta. ``on_tool_use(id, name, input)`` is called the
        moment a tool_use block's ``content_block_stop`` arrives, with its complete input, before
        the message ends — hand the call to the executor and return quickly (the stream waits
        for the callback). Callbacks may be sync or async. An input that is not valid JSON is
        handed out (at the message's end) as an ``UnparsedToolInput``, so the model is told.

        Failures and tools (strategy (a): buffer nothing, never run a tool twice):

        * Nothing handed out yet and the failure is retryable (connection lost or stalled, a
          stream that ends before ``message_stop`` or breaks the protocol, in-stream
          ``overloaded_error``/``api_error``, 408/409/429/5xx): ``on_retry(RetryNotice)`` is
          called (with the text already streamed, so the UI can drop it), the client waits
          (backoff with jitter, ``retry-after`` capped) and asks again. A 401 with an
          ``apiKeyHelper`` re-runs the helper and asks once more.
        * Some tool_use blocks already handed out: the client does NOT ask again (the model
          could answer differently and tools would run twice). It returns a partial turn:
          ``content`` = the blocks fully received, ``stop_reason="tool_use"``, ``partial=True``,
          ``error`` = what broke. The loop answers those tools and the conversation continues.
        * Not retryable (400, 401, 403, 404, 413, ...) or out of attempts: ``ModelError``.
        * ``OVERLOADS_BEFORE_FALLBACK`` overloaded answers (529) in a row with a fallback model
          configured: the request goes to the fallback at once (``on_retry`` is told, with
          ``fallback_model`` set), with fresh attempts; later requests for that model too.
        * ``abort`` fires: the stream is cancelled promptly and an ``aborted=True`` turn is
          returned (tools handed out so far are in it; the loop must answer them).
        """
        params = self.build_params(
            system, messages, tools, model=model, max_tokens=max_tokens, extra=extra
        )
        if thinking and "thinking" not in params:  # adaptive or a budget, and effort, per model
            config = (self.config.thinking_budget, self.config.always_thinking, self.config.effort)
            budget, always, effort = (
                thinking.over(*config) if isinstance(thinking, ThinkingChoice) else config
            )
            params.update(
                thinking_fields(
                    str(params["model"]),
                    int(params["max_tokens"]),
                    budget=budget,
                    always=always,
                    effort=effort,
                )
            )
        fallback = self.config.fallback_model
        if params["model"] in self.fallen_back:
            params["model"] = self.fallen_back[params["model"]]
        attempt = 0
        overloads = 0
        reauthenticated = False
        while True:
            attempt += 1
            state = Attempt(on_block=on_block, on_event=on_event)
            if abort is not None and abort.aborted:
                return state.turn(attempt, aborted=True)
            try:
                return await self._until_abort(
                    self._attempt(params, state, attempt, on_text, on_tool_use), abort
                )
            except _Aborted:
                return state.turn(attempt, aborted=True)
            except KeyHelperError as exc:
                raise ModelError(str(exc), attempts=attempt) from exc
            except Exception as exc:
                info = classify_error(exc)
                if info is None:
                    raise
                if state.handed_out:
                    await state.release_unparsed(on_tool_use)
                    return state.turn(attempt, error=info.reason)
                if info.status == 401 and not reauthenticated:
                    reauthenticated = await self.transport.reauthenticate()
                    if reauthenticated:  # a fresh key from the helper, at once
                        notice = RetryNotice(attempt, 0.0, info.reason, **self._where(info))
                        await call_back(on_retry, notice)
                        continue
                overloads = overloads + 1 if _overloaded(info) else 0
                if (
                    fallback
                    and overloads >= OVERLOADS_BEFORE_FALLBACK
                    and params["model"] != fallback
                ):
                    original, params["model"] = params["model"], fallback
                    self.fallen_back[original] = fallback
                    reason = (
                        f"{original} is overloaded ({overloads} overloaded answers in a row); "
                        f"switching to the fallback model {fallback}"
                    )
                    notice = RetryNotice(
                        attempt,
                        0.0,
                        reason,
                        state.text_sent,
                        fallback_model=fallback,
                        **self._where(info),
                    )
                    await call_back(on_retry, notice)
                    attempt = overloads = 0
                    continue
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
                    attempt,
                    delay,
                    info.reason,
                    state.text_sent,
                    tuple(state.handed_out),
                    **self._where(info),
                )
                await call_back(on_retry, notice)
                try:
                    await self._until_abort(self._sleep(delay), abort)
                except _Aborted:
                    return Attempt().turn(attempt, aborted=True, error=info.reason)

    @property
    def endpoint(self) -> str:
        """Where requests go, for the user: the URL, or the cloud provider and its region."""
        url = getattr(self.transport, "url", None)
        if isinstance(url, str) and url:
            return url
        cloud = self.config.cloud
        if cloud is not None:
            return cloud.base_url or f"{cloud.provider} ({cloud.region})"
        return self.config.base_url or ""

    def _where(self, info: Any) -> dict[str, Any]:
        """The notice's fields about the endpoint and the failed attempt's answer."""
        return {
            "endpoint": self.endpoint,
            "max_attempts": self.policy.max_attempts,
            "status": info.status,
            "error_type": info.error_type,
        }

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
        async with self.transport.stream(params, state.warnings.append) as events:
            state.request_id = getattr(events, "request_id", None)
            async for event in events:
                if state.on_event is not None:
                    state.on_event(event)
                await handle_event(event, state, on_text, on_tool_use)
                if state.stopped:
                    break
            if state.stopped:
                await _drain(events)
        if not state.stopped:
            # A clean end of the body is not an answer: without message_stop the model may
            # have been cut off anywhere (a proxy timing out, a dropped connection).
            what = "after message_start" if state.started else "before message_start"
            raise AttemptError(connection_lost(f"the stream ended {what} without message_stop"))
        await state.release_unparsed(on_tool_use)
        return state.turn(attempt)


def _overloaded(info: ErrorInfo) -> bool:
    return info.status == 529 or info.error_type == "overloaded_error"


async def _drain(events: AsyncIterator[Any]) -> None:
    """Read to the end of the body after ``message_stop``: the answer is complete, and a body
    read to its end leaves no half-read stream generators for the event loop to close at exit."""
    try:
        async with asyncio.timeout(_DRAIN_S):
            async for _ in events:
                pass
    except (TimeoutError, AttemptError, BadStream):
        pass
