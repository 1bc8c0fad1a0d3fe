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
from agent_cli.model.stream import Attempt, call_back, handle_event
from agent_cli.model.thinking import ThinkingChoice, thinking_fields
from agent_cli.model.transport import Transport, make_transport
from agent_cli.model.turn import AssistantTurn, ModelError, TurnCallbacks, TurnRequest
from tools.records import datarecord

__all__ = ["AbortLike", "ErrorInfo", "ModelClient", "classify_error", "system_blocks"]

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


@datarecord
class _Tries:
    """Where one ``stream_turn`` stands in its attempts."""

    fallback: str | None  # the configured fallback model
    attempt: int = 0
    overloads: int = 0  # overloaded answers in a row
    reauthenticated: bool = False


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

    def build_params(self, request: TurnRequest) -> dict[str, Any]:
        """The request body (minus ``stream``); tools pass through as given (with their
        cache breakpoint, set by the registry after the last built-in tool)."""
        params: dict[str, Any] = {
            "model": request.model or self.config.model,
            "max_tokens": request.max_tokens or self.config.max_tokens,
            "messages": list(request.messages),
        }
        if blocks := system_blocks(request.system):
            params["system"] = blocks
        if request.tools:
            params["tools"] = list(request.tools)
        params.update(request.extra or {})
        return params

    async def stream_turn(
        self,
        request: TurnRequest,
        callbacks: TurnCallbacks | None = None,
        *,
        abort: AbortLike | None = None,
    ) -> AssistantTurn:
        """Stream one assistant turn (``TurnRequest``), telling ``callbacks`` as it goes.

        ``on_event`` gets every raw API stream event (a retried attempt's events are followed
        by the next attempt's). ``on_tool_use(id, name, input)`` is called the moment a
        tool_use block's ``content_block_stop`` arrives, with its complete input, before the
        message ends — hand the call to the executor and return quickly (the stream waits for
        the callback). An input that is not valid JSON is handed out (at the message's end) as
        an ``UnparsedToolInput``, so the model is told.

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
        calls = callbacks or TurnCallbacks()
        params = self._request_body(request)
        tries = _Tries(self.config.fallback_model)
        while True:
            tries.attempt += 1
            state = Attempt(on_block=calls.on_block, on_event=calls.on_event)
            if abort is not None and abort.aborted:
                return state.turn(tries.attempt, aborted=True)
            try:
                work = self._attempt(params, state, tries.attempt, calls)
                return await self._until_abort(work, abort)
            except _Aborted:
                return state.turn(tries.attempt, aborted=True)
            except KeyHelperError as exc:
                raise ModelError(str(exc), attempts=tries.attempt) from exc
            except Exception as exc:
                info = classify_error(exc)
                if info is None:
                    raise
                if state.handed_out:  # asking again could run those tools twice
                    await state.release_unparsed(calls.on_tool_use)
                    return state.turn(tries.attempt, error=info.reason)
                if await self._ask_again_now(info, state, params, tries, calls):
                    continue
                if not info.retryable or tries.attempt >= self.policy.max_attempts:
                    raise _gave_up(info, tries.attempt) from exc
                if not await self._wait_to_retry(info, state, tries.attempt, calls, abort):
                    return Attempt().turn(tries.attempt, aborted=True, error=info.reason)

    def _request_body(self, request: TurnRequest) -> dict[str, Any]:
        """``build_params``, with the thinking fields when asked, for the fallback model when
        the model asked for was replaced after repeated overload."""
        params = self.build_params(request)
        thinking = request.thinking
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
        if params["model"] in self.fallen_back:
            params["model"] = self.fallen_back[params["model"]]
        return params

    async def _ask_again_now(
        self,
        info: ErrorInfo,
        state: Attempt,
        params: dict[str, Any],
        tries: _Tries,
        calls: TurnCallbacks,
    ) -> bool:
        """True when the request is to go again at once, without waiting: a 401 the key
        helper answered with a fresh key, or repeated overload with a fallback model to take."""
        if info.status == 401 and not tries.reauthenticated:
            tries.reauthenticated = await self.transport.reauthenticate()
            if tries.reauthenticated:  # a fresh key from the helper, at once
                notice = RetryNotice(tries.attempt, 0.0, info.reason, **self._where(info))
                await call_back(calls.on_retry, notice)
                return True
        tries.overloads = tries.overloads + 1 if _overloaded(info) else 0
        fallback = tries.fallback
        if not (
            fallback
            and tries.overloads >= OVERLOADS_BEFORE_FALLBACK
            and params["model"] != fallback
        ):
            return False
        original, params["model"] = params["model"], fallback
        self.fallen_back[original] = fallback
        reason = (
            f"{original} is overloaded ({tries.overloads} overloaded answers in a row); "
            f"switching to the fallback model {fallback}"
        )
        notice = RetryNotice(
            tries.attempt,
            0.0,
            reason,
            state.text_sent,
            fallback_model=fallback,
            **self._where(info),
        )
        await call_back(calls.on_retry, notice)
        tries.attempt = tries.overloads = 0
        return True

    async def _wait_to_retry(
        self,
        info: ErrorInfo,
        state: Attempt,
        attempt: int,
        calls: TurnCallbacks,
        abort: AbortLike | None,
    ) -> bool:
        """Tell ``on_retry``, then wait out the backoff; False when ``abort`` fired meanwhile."""
        delay = self.policy.delay(attempt, info.retry_after)
        notice = RetryNotice(
            attempt,
            delay,
            info.reason,
            state.text_sent,
            tuple(state.handed_out),
            **self._where(info),
        )
        await call_back(calls.on_retry, notice)
        try:
            await self._until_abort(self._sleep(delay), abort)
        except _Aborted:
            return False
        return True

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
        self, params: dict[str, Any], state: Attempt, attempt: int, calls: TurnCallbacks
    ) -> AssistantTurn:
        async with self.transport.stream(params, state.warnings.append) as events:
            state.request_id = getattr(events, "request_id", None)
            async for event in events:
                if state.on_event is not None:
                    state.on_event(event)
                await handle_event(event, state, calls.on_text, calls.on_tool_use)
                if state.stopped:
                    break
            if state.stopped:
                await _drain(events)
        if not state.stopped:
            # A clean end of the body is not an answer: without message_stop the model may
            # have been cut off anywhere (a proxy timing out, a dropped connection).
            what = "after message_start" if state.started else "before message_start"
            raise AttemptError(connection_lost(f"the stream ended {what} without message_stop"))
        await state.release_unparsed(calls.on_tool_use)
        return state.turn(attempt)


def _gave_up(info: ErrorInfo, attempts: int) -> ModelError:
    """The error for a failure no retry may fix, or the last of the attempts."""
    return ModelError(
        info.message or info.reason,
        status=info.status,
        error_type=info.error_type,
        request_id=info.request_id,
        retryable=info.retryable,
        attempts=attempts,
    )


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
