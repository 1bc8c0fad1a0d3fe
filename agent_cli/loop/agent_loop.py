"""The agent loop: prompt -> model -> tools -> model ... until the model stops asking for tools.

``AgentLoop.run_turn(prompt)`` is an async generator of events (``agent_cli.loop.events``); it imports
no UI. One turn reads like this:

    submit_prompt        UserPromptSubmit hooks; the prompt joins the conversation (and is a
                         checkpoint /rewind can return to)
    while the model asks for tools:
        check_context_budget  over the threshold: clear old tool results, then compact
        request_model    stream the answer; each tool_use goes to the executor as it closes
                         ("prompt is too long": compact, and ask once more)
        record_assistant the assistant message joins the conversation and the transcript
        collect_results  every tool_use gets exactly one tool_result, in call order
    stop_hooks           Stop hooks may send the model back to work
    finish               usage and cost for the turn

Abort (Esc) stops the stream and the tools; every tool_use still gets a tool_result, so the
conversation stays valid for the next turn. The transcript side of each step is
``agent_cli.loop.recorder.TurnRecorder``; the callbacks the tools get are
``agent_cli.loop.turn_context.context_for_turn``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import field
from typing import Any, Protocol

from agent_cli.loop.compaction import Compaction, is_prompt_too_long
from agent_cli.loop.events import (
    AgentEvent,
    ErrorEvent,
    Notice,
    PermissionDecided,
    TextDelta,
    ThinkingBlock,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    api_error_event,
    retry_event,
)
from agent_cli.loop.messages import normalize_messages_for_api, system_reminder
from agent_cli.loop.pump import pump
from agent_cli.loop.recorder import TranscriptPort, TurnRecorder
from agent_cli.loop.turn_context import (
    Emit,
    PermissionHandlerFn,
    RulesSink,
    apply_modifiers,
    context_for_turn,
    result_summary,
    usage_dict,
)
from agent_cli.model.thinking import ThinkingChoice
from agent_cli.model.turn import AssistantTurn, ModelError, TurnCallbacks, TurnRequest
from agent_cli.model.usage import SessionUsage, Usage, cost_usd
from permissions.types import Decision
from tools.base import Tool
from tools.context import AbortSignal, ToolUseContext
from tools.messages import Message
from tools.pipeline.budget import ConversationBudget
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.types import CallOutcome, ToolCall, call_header
from tools.records import datarecord
from tools.registry import tools_for_api

__all__ = ["AgentLoop", "LoopConfig", "ModelPort", "SessionLinks", "TranscriptPort"]

MAX_STOP_HOOK_CONTINUATIONS = 8
_STOP_NOTICES = {
    # The client never hands out a tool call whose input was cut off, so none of it ran.
    "max_tokens": "The answer hit the output token limit (max_tokens) and was cut off; "
    "an unfinished tool call in it was not run.",
    "refusal": "The model declined to continue (stop_reason: refusal).",
}


class ModelPort(Protocol):
    """What the loop needs from the model client (``agent_cli.model.client.ModelClient``)."""

    async def stream_turn(
        self, request: TurnRequest, callbacks: TurnCallbacks, *, abort: AbortSignal
    ) -> AssistantTurn: ...


@datarecord
class LoopConfig:
    max_turns: int | None = None
    max_parallel_tools: int = 10
    max_budget_usd: float | None = None  # no new request once the session's cost reached it


@datarecord
class SessionLinks:
    """What the session that runs the loop shares with it; a sub-agent gets its parent's
    transcript (a sidechain) and usage totals, a hook's agent only the usage."""

    transcript: TranscriptPort | None = None
    usage: SessionUsage | None = None  # a new one when None
    messages: list[Message] | None = None  # the conversation so far (a resume)
    permission_handler: PermissionHandlerFn | None = None  # who answers an ask
    on_rules_to_persist: RulesSink | None = None  # "always allow" rules to save


@datarecord
class _TurnState:
    prompt: str
    num_turns: int = 0
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "end_turn"
    is_error: bool = False
    last_text: str = ""
    stop_continuations: int = 0
    started: float = field(default_factory=time.perf_counter)
    content: Any = None  # the user message's content, when it is not just ``prompt``


class AgentLoop:
    """One conversation with the model; ``run_turn`` drives one user prompt to its end."""

    def __init__(
        self,
        *,
        model: ModelPort,
        model_name: str,
        ctx: ToolUseContext,
        system_prompt: str,
        config: LoopConfig | None = None,
        links: SessionLinks | None = None,
    ) -> None:
        links = links or SessionLinks()
        self.model = model
        self.model_name = model_name
        self.ctx = ctx
        self.system_prompt = system_prompt
        self.config = config or LoopConfig()
        self.recorder = TurnRecorder(links.transcript)
        self.usage = links.usage or SessionUsage()
        self.messages: list[Message] = links.messages if links.messages is not None else []
        self.permission_handler = links.permission_handler
        self.on_rules_to_persist = links.on_rules_to_persist
        # Many results each just under their own limit add up: this budget persists the largest
        # older ones once the conversation's total passes its limit.
        self.budget = ConversationBudget(session_dir=ctx.options.session_dir)
        # The context keeper (agent_cli.loop.compaction) and the file checkpoints of each
        # prompt (agent_cli.loop.checkpoints.CheckpointStore, set by the session).
        self.compaction = Compaction()
        self.checkpoints: Any = None
        self._abort: AbortSignal | None = None
        self.permission_denials: list[dict[str, Any]] = []
        self.thinking: bool | ThinkingChoice = True  # as configured, or what /model chose

    # -- public --------------------------------------------------------------------------------

    @property
    def tools(self) -> Sequence[Tool[Any]]:
        return self.ctx.options.tools

    @property
    def transcript(self) -> TranscriptPort | None:
        """Where the turn is recorded; the session swaps it on ``/clear`` and ``/resume``."""
        return self.recorder.transcript

    @transcript.setter
    def transcript(self, transcript: TranscriptPort | None) -> None:
        self.recorder.transcript = transcript

    @property
    def abort_signal(self) -> AbortSignal:
        """The running turn's (or compaction's) abort signal."""
        if self._abort is None:
            self._abort = AbortSignal()
        return self._abort

    def abort(self, reason: str = "interrupted") -> None:
        if self._abort is not None:
            self._abort.abort(reason)

    def renamed_prompt(self, old_uuid: str, new_uuid: str) -> None:
        """A compaction recorded the unanswered prompt again: its checkpoint follows it."""
        if self.checkpoints is not None:
            self.checkpoints.rename_turn(old_uuid, new_uuid)

    async def run_turn(self, prompt: str, *, content: Any = None) -> AsyncIterator[AgentEvent]:
        """``content``: the user message to send instead of ``prompt`` (an expanded custom
        command's blocks); hooks still see ``prompt``, as typed."""
        async for item in self._drive(lambda emit: self._produce(prompt, emit, content)):
            yield item

    async def compact(self, instructions: str = "") -> AsyncIterator[AgentEvent]:
        """``/compact``: summarise the conversation now; Esc (``abort``) cancels, losing nothing."""

        async def work(emit: Emit) -> None:
            try:
                await self.compaction.compact(self, "manual", instructions or None, emit)
            except Exception as exc:  # a bug must not take the session down
                emit(ErrorEvent(f"internal error: {type(exc).__name__}: {exc}"))

        async for item in self._drive(work):
            yield item

    async def _drive(self, work: Callable[[Emit], Awaitable[None]]) -> AsyncIterator[AgentEvent]:
        """Run ``work`` under a fresh abort signal and yield what it emits, as it emits it."""
        self._abort = AbortSignal()
        self.ctx.state.abort = self._abort

        async def run(emit: Emit) -> None:
            # Told once when the transcript stops being written; the work goes on.
            self.recorder.on_failure = lambda message: emit(Notice(message, "warning"))
            await work(emit)

        async for item in pump(run, abandon=lambda: self.abort("consumer went away")):
            yield item

    # -- the turn --------------------------------------------------------------------------------

    async def _produce(self, prompt: str, emit: Emit, content: Any = None) -> None:
        turn = _TurnState(prompt, content=content)
        self.compaction.begin_turn()
        try:
            if await self._submit_prompt(turn, emit):
                while await self._one_model_call(turn, emit):
                    pass
        except ModelError as exc:
            turn.is_error = True
            turn.stop_reason = "error"
            emit(api_error_event(exc))
        except Exception as exc:  # never let a bug kill the session: report it, keep the state
            turn.is_error = True
            turn.stop_reason = "error"
            emit(ErrorEvent(f"internal error: {type(exc).__name__}: {exc}"))
        finally:
            self._finish(turn, emit)

    async def _submit_prompt(self, turn: _TurnState, emit: Emit) -> bool:
        hooks = self.ctx.hooks
        extra: list[str] = []
        if hooks is not None and hooks.has_hooks("UserPromptSubmit"):
            outcome = await hooks.run_event(
                "UserPromptSubmit",
                {"prompt": turn.prompt, "permission_mode": self.ctx.permissions.mode.value},
            )
            for msg in outcome.system_messages:
                emit(Notice(msg, "warning"))
            if outcome.blocked or outcome.stop:
                turn.stop_reason = "blocked"
                turn.is_error = True
                reason = outcome.block_reason or outcome.stop_reason or "blocked by a hook"
                emit(ErrorEvent(f"Prompt blocked by UserPromptSubmit hook: {reason}"))
                return False
            extra = list(outcome.additional_context)
        content = turn.prompt if turn.content is None else turn.content
        message: Message = {"role": "user", "content": content}
        self.messages.append(message)
        message["_uuid"] = self.recorder.user(message) or str(uuid.uuid4())
        if self.checkpoints is not None:
            self.checkpoints.begin_turn(message["_uuid"])
        for text in extra:
            # Part of the conversation from here on: every request of this turn and later ones
            # (and a resume) carry it, as Claude Code keeps the hook's attachment.
            reminder = system_reminder(text, ephemeral=False)
            self.messages.append(reminder)
            self.recorder.user(reminder, isMeta=True)
        return True

    async def _one_model_call(self, turn: _TurnState, emit: Emit) -> bool:
        """One request and its tools. Returns True when the model should be called again."""
        if self.config.max_turns is not None and turn.num_turns >= self.config.max_turns:
            turn.stop_reason = "max_turns"
            emit(Notice(f"Reached the maximum number of turns ({self.config.max_turns})."))
            return False
        budget = self.config.max_budget_usd
        if budget is not None and self.usage.cost_usd >= budget:
            turn.stop_reason = "max_budget"
            emit(
                Notice(
                    f"Reached the budget of ${budget:g} (spent ${self.usage.cost_usd:.4f}); "
                    "no further request was made.",
                    "warning",
                )
            )
            return False
        if not await self._check_context_budget(turn, emit):
            return False
        turn.num_turns += 1
        ctx = context_for_turn(self, emit)
        executor = StreamingToolExecutor(ctx, max_parallel=self.config.max_parallel_tools)
        self.recorder.start_message()  # each tool_use is recorded as it is handed out
        collector = asyncio.create_task(self._collect_results(executor, emit))
        assistant = await self._request_model(executor, emit)
        for warning in assistant.warnings:
            emit(Notice(warning, "warning"))
        if assistant.partial:
            emit(Notice(_partial_notice(assistant), "warning"))
        turn.usage = turn.usage + assistant.usage
        self.usage.add(self.model_name, assistant.usage)
        self._record_assistant(assistant)
        self.compaction.observe(self, assistant)
        self.recorder.release_results()
        if assistant.aborted or self._abort_requested():
            executor.abort()
        outcomes = await executor.finish()
        await collector
        self.ctx = apply_modifiers(self.ctx, outcomes)
        if assistant.text:
            turn.last_text = assistant.text
        if outcomes:
            self._add_tool_results(outcomes)
        return await self._after_batch(turn, assistant, outcomes, emit)

    async def _check_context_budget(self, turn: _TurnState, emit: Emit) -> bool:
        """Over the threshold: clear old tool results, then compact (``compaction``)."""
        if await self.compaction.check_budget(self, emit) and not self._abort_requested():
            return True
        turn.stop_reason = "aborted"
        emit(Notice("Interrupted by user."))
        return False

    async def _request_model(self, executor: StreamingToolExecutor, emit: Emit) -> AssistantTurn:
        try:
            return await self._stream_request(executor, emit)
        except ModelError as exc:
            # The API measured the context as too big: compact and ask once more. Nothing was
            # handed to the executor, so asking again runs no tool twice.
            if not is_prompt_too_long(exc) or not self.compaction.policy.auto:
                raise
            emit(Notice("The conversation is too long for the model: compacting it.", "warning"))
            outcome = await self.compaction.compact(self, "auto", None, emit, too_long=True)
            if outcome.stage == "cancelled":  # Esc while compacting: the turn was interrupted
                return AssistantTurn(content=[], stop_reason=None, aborted=True)
            if not outcome.compacted:
                raise
            return await self._stream_request(executor, emit)

    async def _stream_request(self, executor: StreamingToolExecutor, emit: Emit) -> AssistantTurn:
        assert self._abort is not None
        self.budget.enforce(self.messages)
        request_messages = normalize_messages_for_api(self.messages)
        # Reminders meant for one request are sent once, then dropped from the conversation.
        self.messages[:] = [m for m in self.messages if not m.get("_ephemeral")]
        tools = tools_for_api(self.tools, self.ctx.options.loaded_deferred)

        def on_tool_use(block_id: str, name: str, tool_input: Any) -> None:
            # A non-object input is handed on as sent: the pipeline rejects it for the model.
            shown = dict(tool_input) if isinstance(tool_input, dict) else {}
            emit(ToolStarted(block_id, name, shown, call_header(self.tools, name, tool_input)))
            self.recorder.tool_use(block_id, name, tool_input)  # before it can run
            executor.add(ToolCall(block_id, name, tool_input))

        def on_text(piece: str) -> None:
            emit(TextDelta(piece))
            self.recorder.text(piece)

        def on_retry(notice: Any) -> None:
            self.recorder.retry()
            emit(retry_event(notice))

        request = TurnRequest(
            self.system_prompt,
            request_messages,
            tools,
            model=self.model_name,
            thinking=self.thinking,
        )
        callbacks = TurnCallbacks(
            on_text=on_text,
            on_tool_use=on_tool_use,
            on_retry=on_retry,
            on_block=lambda block: emit(ThinkingBlock.of(block)),  # shown as it closes
        )
        return await self.model.stream_turn(request, callbacks, abort=self._abort)

    def _record_assistant(self, turn: AssistantTurn) -> None:
        if not turn.content:
            return
        message = turn.to_message()
        self.messages.append(message)
        self.recorder.assistant(message, turn, self.model_name)

    async def _collect_results(self, executor: StreamingToolExecutor, emit: Emit) -> None:
        async for outcome in executor.results():
            verdict = outcome.verdict
            if verdict is not None and verdict.decision is Decision.DENY:
                self.permission_denials.append(
                    {
                        "tool_name": outcome.tool_name,
                        "tool_use_id": outcome.tool_use_id,
                        "tool_input": outcome.original_input,
                        "reason": verdict.reason,
                    }
                )
                emit(
                    PermissionDecided(
                        outcome.tool_use_id,
                        outcome.tool_name,
                        "deny",
                        verdict.reason,
                        "user" if outcome.user_decided else verdict.kind.value,
                        str(verdict.rule) if verdict.rule else None,
                    )
                )
            emit(
                ToolFinished(
                    outcome.tool_use_id,
                    outcome.tool_name,
                    outcome.tool_result.get("content"),
                    outcome.is_error,
                    summary=result_summary(outcome),
                    output=outcome.output,
                    duration_ms=int(outcome.duration_ms),
                )
            )
            self.recorder.result(outcome)

    def _add_tool_results(self, outcomes: Sequence[CallOutcome]) -> None:
        # The transcript already has each result (``recorder.result``); here the conversation.
        message: Message = {"role": "user", "content": [o.tool_result for o in outcomes]}
        self.messages.append(message)
        for o in outcomes:
            for extra in o.new_messages:
                self.messages.append(extra)
                self.recorder.user(extra, isMeta=True)
        self.recorder.batch_state(self.ctx)

    async def _after_batch(
        self,
        turn: _TurnState,
        assistant: AssistantTurn,
        outcomes: Sequence[CallOutcome],
        emit: Emit,
    ) -> bool:
        """Aborted, stopped by a hook, more tools to answer, or done (then the Stop hooks)."""
        if assistant.aborted or self._abort_requested():
            turn.stop_reason = "aborted"
            emit(Notice("Interrupted by user."))
            return False
        if assistant.stop_reason in _STOP_NOTICES:
            emit(Notice(_STOP_NOTICES[assistant.stop_reason], "warning"))
        if any(o.stop_turn for o in outcomes):
            reason = next((o.stop_reason for o in outcomes if o.stop_reason), None)
            turn.stop_reason = "stopped_by_hook"
            emit(Notice(f"Stopped by a hook: {reason or 'no reason given'}", "warning"))
            return False
        if outcomes:
            return True
        turn.stop_reason = assistant.stop_reason or "end_turn"
        return await self._stop_hooks(turn, emit)

    async def _stop_hooks(self, turn: _TurnState, emit: Emit) -> bool:
        hooks = self.ctx.hooks
        if hooks is None or not hooks.has_hooks("Stop"):
            return False
        outcome = await hooks.run_event(
            "Stop",
            {
                "stop_hook_active": turn.stop_continuations > 0,
                "last_assistant_message": turn.last_text,
                "permission_mode": self.ctx.permissions.mode.value,
            },
        )
        for msg in outcome.system_messages:
            emit(Notice(msg, "warning"))
        if outcome.stop:
            return False
        if outcome.blocked and turn.stop_continuations < MAX_STOP_HOOK_CONTINUATIONS:
            turn.stop_continuations += 1
            reason = outcome.block_reason or "A Stop hook asked you to continue."
            emit(Notice(f"Stop hook: continuing ({reason})"))
            reminder = system_reminder(f"Stop hook feedback:\n{reason}", ephemeral=False)
            self.messages.append(reminder)
            self.recorder.user(reminder, isMeta=True)
            return True
        return False

    def _finish(self, turn: _TurnState, emit: Emit) -> None:
        cost = cost_usd(self.model_name, turn.usage)
        emit(
            TurnFinished(
                stop_reason=turn.stop_reason,
                num_turns=turn.num_turns,
                usage=usage_dict(turn.usage),
                cost_usd=cost,
                is_error=turn.is_error,
                result_text=turn.last_text,
            )
        )

    def _abort_requested(self) -> bool:
        return self._abort is not None and self._abort.aborted


def _partial_notice(assistant: AssistantTurn) -> str:
    calls = len(assistant.tool_uses)
    return (
        f"The model's stream broke after {calls} tool call(s) were handed out "
        f"({assistant.error}); answering them and continuing without asking again."
    )
