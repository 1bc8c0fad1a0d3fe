"""Keeping the conversation inside the context window: the budget check and the summary turn.

Before each request the loop calls ``check_budget``; over the policy's threshold it first clears
old tool results and, if that is not enough, compacts: one summary turn (a model call with
``compaction_prompt.summary_request``), then the conversation is replaced by the summary, the
files read most recently (``reattach``), the todo list, and — when the turn's own prompt has not
been answered yet — that prompt, kept word for word. ``/compact`` calls ``compact`` directly.

A compaction is all or nothing: the conversation is replaced only after a summary came back
whole. A summary call that fails, is cut off, returns nothing or is cancelled (Esc) leaves the
conversation, the transcript and the read-file state as they were, and says why.

In the transcript a compaction is Claude Code's pair: a ``system`` ``compact_boundary`` record
(``compactMetadata: {trigger, preTokens}``), then the summary as a ``user`` record with
``isCompactSummary``; what follows it is the new conversation, which a resume reads from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agent_cli.loop.compaction_prompt import (
    chunk_lines,
    continuation,
    extract_summary,
    part_request,
    render_transcript,
    summary_request,
)
from agent_cli.loop.context_meter import CHARS_PER_TOKEN, ContextMeter, estimate_tokens
from agent_cli.loop.context_policy import ContextPolicy, clear_old_tool_results
from agent_cli.loop.events import CompactProgress, Notice, retry_event
from agent_cli.loop.messages import normalize_messages_for_api, system_reminder
from agent_cli.loop.reattach import reattach_files
from agent_cli.loop.recorder import TurnRecorder
from agent_cli.model.turn import AssistantTurn, ModelError, TurnCallbacks, TurnRequest
from agent_cli.model.usage import SessionUsage
from tools.base import Tool
from tools.context import AbortSignal, ReadFileState, ToolUseContext
from tools.messages import Message
from tools.pipeline.budget import ConversationBudget
from tools.records import datarecord
from tools.registry import tools_for_api

__all__ = [
    "CompactOutcome",
    "Compaction",
    "CompactionHost",
    "format_k",
    "is_prompt_too_long",
    "split_tail",
]

Emit = Callable[[Any], None]
_PROGRESS_EVERY_CHARS = 400
_PART_ATTEMPTS = 3


def format_k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def is_prompt_too_long(exc: ModelError) -> bool:
    """The API refused the request for its size ("prompt is too long", 413 too large)."""
    text = (exc.message or "").lower()
    if exc.status == 413 or exc.error_type == "request_too_large":
        return True
    return exc.status == 400 and ("prompt is too long" in text or "too many tokens" in text)


class CompactionHost(Protocol):
    """What a compaction needs of the agent loop (``AgentLoop`` is one)."""

    model: Any  # agent_cli.loop.agent_loop.ModelPort
    model_name: str
    ctx: ToolUseContext
    system_prompt: str
    messages: list[Message]
    recorder: TurnRecorder
    usage: SessionUsage
    budget: ConversationBudget

    @property
    def tools(self) -> Sequence[Tool[Any]]: ...

    @property
    def abort_signal(self) -> AbortSignal: ...

    def renamed_prompt(self, old_uuid: str, new_uuid: str) -> None:
        """A kept prompt was recorded again after the boundary under ``new_uuid``."""
        ...


@datarecord(frozen=True, slots=True)
class CompactOutcome:
    """How a compaction ended (``stage`` as in ``CompactProgress``) and the sizes around it."""

    stage: str
    pre_tokens: int
    post_tokens: int = 0
    message: str = ""

    @property
    def compacted(self) -> bool:
        return self.stage == "done"


class _Stop(Exception):
    """Ends a compaction without changing anything: ``stage`` says how."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


def split_tail(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """(what to summarise, what to keep): the user messages after the last assistant message
    are kept when none of them is a tool result — the prompt the turn has not answered yet."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    tail = messages[last + 1 :]
    has_results = any(
        isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
        for m in tail
    )
    if last < 0 or has_results:
        return list(messages), []
    return list(messages[: last + 1]), list(tail)


class Compaction:
    """The loop's context keeper: its meter, its policy, and the compaction itself."""

    def __init__(self, policy: ContextPolicy | None = None) -> None:
        self.policy = policy or ContextPolicy()
        self.meter = ContextMeter()
        self._auto_failed = False  # one failed automatic attempt per turn is enough
        self._warned_off = False

    # -- measuring -----------------------------------------------------------------------

    def tokens(self, host: CompactionHost) -> int:
        tools = [] if self.meter.measured else _api_tools(host)
        return self.meter.tokens(host.system_prompt, tools, host.messages)

    def observe(self, host: CompactionHost, turn: AssistantTurn) -> None:
        """After a response: the API's count is the new starting point."""
        self.meter.observe(turn.usage, len(host.messages))

    def begin_turn(self) -> None:
        self._auto_failed = False

    # -- the step before each request ----------------------------------------------------

    async def check_budget(self, host: CompactionHost, emit: Emit) -> bool:
        """Clear old tool results, then compact, when over the threshold. False: cancelled.

        Runs before the conversation budget persists big results (``_stream_request``): a
        result cleared here is never written to disk for nothing.
        """
        tokens = self.tokens(host)
        threshold = self.policy.threshold(host.model_name)
        if tokens <= threshold:
            return True
        if not self.policy.auto:
            if not self._warned_off:
                self._warned_off = True
                emit(
                    Notice(
                        f"The context holds about {format_k(tokens)} tokens, over the "
                        f"{format_k(threshold)} threshold; automatic compaction is off "
                        "(autoCompact: false). Run /compact to make room.",
                        "warning",
                    )
                )
            return True
        count, freed = clear_old_tool_results(
            host.messages, self.policy.keep_tool_results, host.budget.replaced
        )
        if count:
            self.meter.discount(freed)
            plural = "s" if count != 1 else ""
            emit(Notice(f"Cleared {count} old tool result{plural} (~{format_k(freed)} tokens)."))
            if self.tokens(host) <= threshold:
                return True
        if self._auto_failed:
            return True
        outcome = await self.compact(host, "auto", None, emit)
        if outcome.stage == "failed":
            self._auto_failed = True
        return outcome.stage != "cancelled"

    # -- the compaction ------------------------------------------------------------------

    async def compact(
        self,
        host: CompactionHost,
        trigger: str,
        instructions: str | None,
        emit: Emit,
        *,
        too_long: bool = False,
    ) -> CompactOutcome:
        """Summarise and replace the conversation (module docstring); never raises for the
        model's failures, which are reported as a ``failed`` outcome."""
        pre = self.tokens(host)
        head, tail = split_tail(host.messages) if trigger == "auto" else (host.messages, [])
        try:
            if not any(m.get("role") == "assistant" for m in head):
                raise _Stop("nothing", "Nothing to compact yet.")
            instructions = await self._pre_compact(host, trigger, instructions, emit)
            emit(CompactProgress("started", "Compacting the conversation…", pre, trigger))
            summary = await self._summarize(host, head, instructions, emit, too_long)
        except _Stop as stop:
            if stop.stage != "nothing" or trigger == "manual":  # an automatic no-op is silent
                emit(CompactProgress(stop.stage, stop.message, pre, trigger))
            return CompactOutcome(stop.stage, pre, message=stop.message)
        except ModelError as exc:
            message = f"Compaction failed, the conversation is unchanged: {exc.describe()}"
            emit(CompactProgress("failed", message, pre, trigger))
            return CompactOutcome("failed", pre, message=message)
        self._commit(host, trigger, pre, summary, tail)
        await self._after_compact(host, trigger, summary, emit)
        post = self.tokens(host)
        message = f"Compacted the conversation: {format_k(pre)} → {format_k(post)} tokens."
        emit(CompactProgress("done", message, post, trigger))
        return CompactOutcome("done", pre, post, message)

    async def _pre_compact(
        self, host: CompactionHost, trigger: str, instructions: str | None, emit: Emit
    ) -> str | None:
        hooks = host.ctx.hooks
        if hooks is None or not hooks.has_hooks("PreCompact"):
            return instructions
        payload = {"trigger": trigger, "custom_instructions": instructions or ""}
        out = await hooks.run_event("PreCompact", payload)
        for text in out.system_messages:
            emit(Notice(text, "warning"))
        if out.blocked or out.stop:
            reason = out.block_reason or out.stop_reason or "no reason given"
            raise _Stop("blocked", f"A PreCompact hook blocked the compaction: {reason}")
        extra = [instructions or "", *out.additional_context]
        joined = "\n".join(t for t in extra if t.strip())
        return joined or None

    async def _summarize(
        self,
        host: CompactionHost,
        head: list[Message],
        instructions: str | None,
        emit: Emit,
        too_long: bool,
    ) -> str:
        tools = _api_tools(host)
        window = self.policy.window(host.model_name)
        fits = (
            estimate_tokens(host.system_prompt) + estimate_tokens(tools) + estimate_tokens(head)
            <= window - self.policy.output_reserve - 2_000
        )
        if fits and not too_long:
            # The same system prompt, tools and messages as the last request, so the prompt
            # cache covers all but the question at the end.
            request = normalize_messages_for_api(
                [*head, {"role": "user", "content": summary_request(instructions)}]
            )
            try:
                return await self._ask(host, request, tools, emit)
            except ModelError as exc:
                if not is_prompt_too_long(exc):
                    raise
        return await self._summarize_in_parts(host, head, instructions, emit)

    async def _summarize_in_parts(
        self,
        host: CompactionHost,
        head: list[Message],
        instructions: str | None,
        emit: Emit,
    ) -> str:
        lines = list(render_transcript(head))
        part_chars = int(self.policy.window(host.model_name) * 0.4) * CHARS_PER_TOKEN
        for _ in range(_PART_ATTEMPTS):
            parts = chunk_lines(lines, part_chars)
            summary: str | None = None
            try:
                for index, part in enumerate(parts, 1):
                    if len(parts) > 1:
                        emit(
                            CompactProgress(
                                "summarizing", f"Summarising part {index} of {len(parts)}…"
                            )
                        )
                    text = part_request(summary, part, index, len(parts))
                    if instructions:
                        text += f"\n\nAdditional instructions for this summary:\n{instructions}"
                    summary = await self._ask(host, [{"role": "user", "content": text}], [], emit)
            except ModelError as exc:
                if not is_prompt_too_long(exc):
                    raise
                part_chars //= 2
                continue
            if summary:
                return summary
        raise _Stop("failed", "Compaction failed: the conversation is too long to summarise.")

    async def _ask(
        self,
        host: CompactionHost,
        messages: list[Message],
        tools: list[dict[str, Any]],
        emit: Emit,
    ) -> str:
        streamed = [0, 0]  # chars so far, chars at the last progress event

        def on_text(delta: str) -> None:
            streamed[0] += len(delta)
            if streamed[0] - streamed[1] >= _PROGRESS_EVERY_CHARS:
                streamed[1] = streamed[0]
                size = streamed[0] // CHARS_PER_TOKEN
                emit(CompactProgress("summarizing", f"Summarising… {format_k(size)} tokens", size))

        def on_retry(notice: Any) -> None:
            streamed[0] = streamed[1] = 0
            emit(retry_event(notice))

        turn = await host.model.stream_turn(
            TurnRequest(host.system_prompt, messages, tools, model=host.model_name),
            TurnCallbacks(
                on_text=on_text,
                on_tool_use=lambda *_: None,  # a summary turn runs nothing
                on_retry=on_retry,
            ),
            abort=host.abort_signal,
        )
        host.usage.add(host.model_name, turn.usage)
        keep = "the conversation is unchanged"
        if turn.aborted or host.abort_signal.aborted:
            raise _Stop("cancelled", f"Compaction cancelled; {keep}.")
        if turn.partial or turn.error:
            raise _Stop("failed", f"Compaction failed ({turn.error or 'broken answer'}); {keep}.")
        if turn.stop_reason == "max_tokens":
            raise _Stop("failed", f"Compaction failed: the summary was cut off; {keep}.")
        summary = extract_summary(turn.text)
        if not summary:
            raise _Stop("failed", f"Compaction failed: the model returned no summary; {keep}.")
        return summary

    # -- replacing the conversation ------------------------------------------------------

    def _commit(
        self,
        host: CompactionHost,
        trigger: str,
        pre: int,
        summary: str,
        tail: list[Message],
    ) -> None:
        rec = host.recorder
        rec.compact_boundary(trigger, pre)
        mid_turn = trigger == "auto" and not tail
        first: Message = {"role": "user", "content": continuation(summary, auto=mid_turn)}
        rec.user(first, isCompactSummary=True, isVisibleInTranscriptOnly=True)
        messages = [first]
        attached = reattach_files(host.ctx.state.read_files.records())
        reminders = [attached.text] if attached.text else []
        todos = _todo_text(host.ctx)
        if todos:
            reminders.append(todos)
            # The list itself, for a resume: the TodoWrite calls it came from are summarised.
            rec.meta("todo-list", todos=_current_todos(host.ctx))
        for text in reminders:
            reminder = system_reminder(text, ephemeral=False)
            messages.append(reminder)
            rec.user(reminder, isMeta=True)
        for message in tail:
            old = message.get("_uuid")
            new = rec.user(message) if old else rec.user(message, isMeta=True)
            if isinstance(old, str) and new:
                host.renamed_prompt(old, new)
                message = {**message, "_uuid": new}
            messages.append(message)
        host.messages[:] = messages
        state = ReadFileState(host.ctx.state.read_files.max_entries)
        for record in attached.records:
            state.record(record)
        host.ctx.state.read_files = state
        rec.read_state(host.ctx)
        self.meter.reset()

    async def _after_compact(
        self, host: CompactionHost, trigger: str, summary: str, emit: Emit
    ) -> None:
        """PostCompact hooks, then SessionStart hooks with source ``compact`` (their context
        joins the new conversation, as after a start)."""
        hooks = host.ctx.hooks
        if hooks is None:
            return
        if hooks.has_hooks("PostCompact"):
            out = await hooks.run_event(
                "PostCompact", {"trigger": trigger, "compact_summary": summary}
            )
            for text in out.system_messages:
                emit(Notice(text, "warning"))
        if hooks.has_hooks("SessionStart"):
            out = await hooks.run_event(
                "SessionStart", {"source": "compact", "model": host.model_name}
            )
            for text in out.system_messages:
                emit(Notice(text, "warning"))
            for text in out.additional_context:
                reminder = system_reminder(f"SessionStart hook context:\n{text}", ephemeral=False)
                host.messages.append(reminder)
                host.recorder.user(reminder, isMeta=True)


def _api_tools(host: CompactionHost) -> list[dict[str, Any]]:
    return tools_for_api(host.tools, host.ctx.options.loaded_deferred)


def _current_todos(ctx: ToolUseContext) -> list[dict[str, Any]]:
    from tools.builtin.todo import current_todos

    return current_todos(ctx)


def _todo_text(ctx: ToolUseContext) -> str:
    items = _current_todos(ctx)
    if not items:
        return ""
    lines = [f"- [{t.get('status', 'pending')}] {t.get('content', '')}" for t in items]
    return "The todo list (TodoWrite) as it stands:\n" + "\n".join(lines)
